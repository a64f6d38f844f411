/*
 * lib/minhash internal: what the other files of the layer share, and what
 * tests may reach (docs/minhash.md). Upper layers use the public API.
 */
#ifndef MINLSH_MINHASH_H
#define MINLSH_MINHASH_H

#include "common/common.h"

/* One step of SplitMix64: advances *state, returns the next output. */
uint64_t minlsh__splitmix64(uint64_t *state);

/* The coefficients of the first k functions for seed (the specification:
 * SplitMix64 with rejection). a and b need k entries each. */
void minlsh__family_derive(uint64_t seed, uint32_t k, uint64_t *a, uint64_t *b);

/* Output-buffer checks shared by sign and sign_text: MINLSH_E_NULL (family),
 * MINLSH_E_BUFSIZE (cap < k; *n_out = k when n_out is non-NULL, also on
 * success), MINLSH_E_NULL (sig). */
int minlsh__family_check_sig(const minlsh_family *family, const uint32_t *sig,
                             size_t cap, size_t *n_out);

/* sig (k values) becomes min(sig, signature of the n hashes), with the
 * active kernel; for an OPH family sig holds the raw bins (before
 * densification). No checks: family and sig valid, hashes valid if n > 0.
 * Start from k MINLSH_EMPTY_VALUE values and end with _finish_raw. */
void minlsh__family_update_raw(const minlsh_family *family, uint32_t *sig,
                               const uint64_t *hashes, size_t n);
/* Turn what _update_raw accumulated into the signature: nothing for the
 * classic scheme, densification for OPH, which works in work (2k words, from
 * minlsh__family_work_get; unused by the classic scheme). */
void minlsh__family_finish_raw(const minlsh_family *family, uint32_t *sig, uint32_t *work);
/* The work of minlsh__family_finish_raw: stack (MINLSH__FAMILY_WORK_STACK
 * words) when it is enough, else a heap block (OPH with k above
 * MINLSH__K_STACK); NULL when that fails. Got before anything is written,
 * so that a failure leaves the caller's output as it was. */
/* The family's allocator (for scratch its callers need). */
const minlsh_allocator *minlsh__family_alloc(const minlsh_family *family);
#define MINLSH__FAMILY_WORK_STACK (2 * MINLSH__K_STACK)
uint32_t *minlsh__family_work_get(const minlsh_family *family, uint32_t *stack);
void minlsh__family_work_put(const minlsh_family *family, const uint32_t *stack,
                             uint32_t *work);

/* One-permutation hashing's densification (oph.c, docs/minhash.md section
 * 7; the binning is minlsh__oph_update in kernel.h): out (k values) = the densified signature of the raw bins (bins with
 * MINLSH_EMPTY_VALUE are empty); all bins empty gives the empty signature.
 * bins and out must not overlap; scratch holds 2k entries. */
void minlsh__oph_densify(uint64_t dkey, const uint16_t *probes, uint32_t k,
                         const uint32_t *bins, uint32_t *out, uint16_t *scratch);
/* Probes per empty bin before the circular fallback, and how many of them
 * the family's table holds (the rest are computed when reached). */
#define MINLSH__OPH_PROBES 64
#define MINLSH__OPH_TABLED 16
/* The bin that probe t of empty bin j reads: ((z >> 32) k) >> 32 for z
 * SplitMix64's first output from state dkey ^ (j << 32 | t). */
uint32_t minlsh__oph_probe(uint64_t dkey, uint32_t k, uint32_t j, uint32_t t);
/* The first MINLSH__OPH_TABLED probes of every bin, k * MINLSH__OPH_TABLED
 * entries (entry j * MINLSH__OPH_TABLED + t is probe t of bin j): a function
 * of (seed, k) only, so a family computes it once. */
void minlsh__oph_probes(uint64_t dkey, uint32_t k, uint16_t *probes);

#endif /* MINLSH_MINHASH_H */
