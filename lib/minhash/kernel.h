/*
 * lib/minhash internal: the exact arithmetic of h_i(x) = (a_i x + b_i) mod p
 * and the table of signing kernels (docs/minhash.md).
 *
 * A kernel turns n shingle hashes into the element-wise minimum of sig and
 * their MinHash values. The portable kernel is the specification; every
 * other kernel (AVX2, AVX-512) gives identical bits and is tested directly
 * against it (tests/test_kernels.c), not only through the dispatcher.
 */
#ifndef MINLSH_MINHASH_KERNEL_H
#define MINLSH_MINHASH_KERNEL_H

#include "common/common.h"

/* Contract of update: a[i] in [1, p), b[i] in [0, p) for i < k; k in
 * 1..MINLSH_FAMILY_K_MAX; hashes may be NULL only when n == 0 (then nothing
 * happens). For every i: sig[i] = min(sig[i], (min_j h_i(hashes[j] mod p)) >> 29).
 *
 * Contract of oph, one-permutation hashing's binning (docs/minhash.md
 * section 7): for each hash, v = (a x + b) mod p with x = h mod p,
 * bin = (v k) >> 61 and value ((v k) mod 2^61) >> 29;
 * bins[bin] = min(bins[bin], value). a in [1, p), b in [0, p), k in
 * 1..MINLSH_FAMILY_K_MAX; hashes may be NULL when n == 0. Exact however the
 * hashes are split into calls (a bin keeps a minimum of a value monotone in
 * v).
 *
 * Both pure: no allocation, no state, safe from any number of threads. */
typedef struct minlsh__minhash_kernel {
    const char *name;
    void (*update)(const uint64_t *a, const uint64_t *b, uint32_t k,
                   const uint64_t *hashes, size_t n, uint32_t *sig);
    void (*oph)(uint64_t a, uint64_t b, uint32_t k, const uint64_t *hashes, size_t n,
                uint32_t *bins);
} minlsh__minhash_kernel;

/* bins[bin] = min(bins[bin], val), without a branch: early in a document a
 * value beats its bin's minimum about half the time, a coin toss the branch
 * predictor loses, and the store it saves is cheaper than the miss. */
MINLSH__INLINE void minlsh__oph_keep_min(uint32_t *bins, uint32_t bin, uint32_t val) {
    uint32_t cur = bins[bin];
    bins[bin] = val < cur ? val : cur;
}

/* The active kernel's oph (the contract above). */
void minlsh__oph_update(uint64_t a, uint64_t b, uint32_t k, const uint64_t *hashes,
                        size_t n, uint32_t *bins);

/* The specification: 64x64->128-bit products via unsigned __int128 where the
 * compiler has it, else the 32-bit-limb code below. */
extern const minlsh__minhash_kernel minlsh__minhash_kernel_portable;
/* The same with 32-bit limbs always, so the fallback is tested on machines
 * that have __int128. */
extern const minlsh__minhash_kernel minlsh__minhash_kernel_portable_limb;

/* SIMD kernels, each in its own file compiled with its own flags
 * (kernel_avx2.c: -mavx2; kernel_avx512.c: -mavx512f -mavx512dq -mavx512bw
 * -mavx512vl). Defined only when compiled in (MINLSH__WITH_*); call one only
 * if minlsh__cpu_simd_level() reaches its level, as the dispatcher and
 * minlsh__minhash_kernels do. */
#if MINLSH__WITH_AVX2
extern const minlsh__minhash_kernel minlsh__minhash_kernel_avx2;
#endif
#if MINLSH__WITH_AVX512
extern const minlsh__minhash_kernel minlsh__minhash_kernel_avx512;
#endif

/* The kernel table (MINLSH__KERNEL_DISPATCH, lib/common/common.h): the
 * kernel of a level (NULL if not compiled in or not supported by the CPU),
 * the one the library uses (minlsh__simd_level(); never NULL, thread-safe),
 * and every usable one, narrowest first. */
const minlsh__minhash_kernel *minlsh__minhash_kernel_active(void);
#ifdef MINLSH_TESTING
const minlsh__minhash_kernel *minlsh__minhash_kernel_for_level(int level);
size_t minlsh__minhash_kernel_usable(const minlsh__minhash_kernel **out, size_t cap);
/* The usable kernels with the 32-bit-limb portable one second (for tests and
 * benches), whatever MINLSH_KERNEL says: writes up to cap pointers to out
 * and returns how many there are. */
size_t minlsh__minhash_kernels(const minlsh__minhash_kernel **out, size_t cap);

/* x mod p for a 64-bit shingle hash. */
uint64_t minlsh__minhash_reduce(uint64_t h);
/* (a * (h mod p) + b) mod p for a in [1, p), b in [0, p), any 64-bit h.
 * _wide uses unsigned __int128 when available (else it is _limb);
 * _limb always uses 32-bit limbs. */
uint64_t minlsh__minhash_apply_wide(uint64_t a, uint64_t b, uint64_t h);
uint64_t minlsh__minhash_apply_limb(uint64_t a, uint64_t b, uint64_t h);
/* 1 if _wide really uses unsigned __int128 in this build. */
int minlsh__minhash_has_int128(void);
#endif

#endif /* MINLSH_MINHASH_KERNEL_H */
