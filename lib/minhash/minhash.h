/*
 * lib/minhash internal: what the other files of the layer share, and what
 * tests may reach (docs/minhash.md). Upper layers use the public API.
 */
#ifndef MINLSH_MINHASH_H
#define MINLSH_MINHASH_H

#include "common/common.h"

/* The coefficients of the first k functions for seed (the specification:
 * SplitMix64 with rejection). a and b need k entries each. */
void minlsh__family_derive(uint64_t seed, uint32_t k, uint64_t *a, uint64_t *b);

/* Output-buffer checks shared by sign and sign_text: MINLSH_E_NULL (family),
 * MINLSH_E_BUFSIZE (cap < k; *n_out = k when n_out is non-NULL, also on
 * success), MINLSH_E_NULL (sig). */
int minlsh__family_check_sig(const minlsh_family *family, const uint32_t *sig,
                             size_t cap, size_t *n_out);

/* sig (k values) becomes min(sig, signature of the n hashes), with the
 * active kernel. No checks: family and sig valid, hashes valid if n > 0. */
void minlsh__family_update_raw(const minlsh_family *family, uint32_t *sig,
                               const uint64_t *hashes, size_t n);

#endif /* MINLSH_MINHASH_H */
