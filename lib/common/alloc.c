/* Allocation through the per-handle allocator, with checked sizes. */
#if defined(__linux__) && !defined(_DEFAULT_SOURCE)
#define _DEFAULT_SOURCE 1 /* posix_memalign, madvise, MADV_HUGEPAGE */
#endif
#include "common.h"

#include <stdlib.h>

#if defined(__linux__)
#include <sys/mman.h>
#include <unistd.h>
#endif

/* Blocks this large are the index's tables and signature chunks, touched at
 * random: 4 KiB pages make nearly every probe a TLB miss as well as a cache
 * miss. With the default allocator they are aligned to 2 MiB and offered to
 * the kernel as huge pages (a hint: with transparent huge pages off, or
 * elsewhere than Linux, nothing changes). */
#define MINLSH__HUGE_ALIGN ((size_t)2 << 20)

static void *minlsh__default_alloc(void *opaque, size_t size) {
    (void)opaque;
#if defined(__linux__) && defined(MADV_HUGEPAGE)
    if (size >= MINLSH__HUGE_ALIGN) {
        void *p = NULL;
        if (posix_memalign(&p, MINLSH__HUGE_ALIGN, size) != 0) return NULL;
        (void)madvise(p, size & ~(MINLSH__HUGE_ALIGN - 1), MADV_HUGEPAGE);
        return p;
    }
#endif
    return malloc(size);
}

static void minlsh__default_free(void *opaque, void *ptr) {
    (void)opaque;
    free(ptr);
}

int minlsh__alloc_setup(minlsh_allocator *dst, const minlsh_allocator *src) {
    if (src == NULL) {
        dst->alloc = minlsh__default_alloc;
        dst->free = minlsh__default_free;
        dst->opaque = NULL;
        return 0;
    }
    if (src->alloc == NULL || src->free == NULL) return MINLSH_E_PARAM;
    *dst = *src;
    return 0;
}

void *minlsh__malloc(const minlsh_allocator *a, size_t size) {
    if (size == 0) return NULL;
    return a->alloc(a->opaque, size);
}

void *minlsh__malloc_plain(const minlsh_allocator *a, size_t size) {
    if (size == 0) return NULL;
    if (a->alloc == minlsh__default_alloc) return malloc(size); /* no huge-page hint */
    return a->alloc(a->opaque, size);
}

void *minlsh__calloc(const minlsh_allocator *a, size_t count, size_t size) {
    size_t bytes;
    void *p;
    if (minlsh__mul_size(&bytes, count, size) != 0 || bytes == 0) return NULL;
    p = a->alloc(a->opaque, bytes);
    if (p != NULL) memset(p, 0, bytes);
    return p;
}

void minlsh__free(const minlsh_allocator *a, void *ptr) {
    if (ptr != NULL) a->free(a->opaque, ptr);
}

int minlsh__reserve(const minlsh_allocator *a, void **ptr, size_t *cap,
                    size_t used, size_t need, size_t elem) {
    size_t new_cap, bytes, used_bytes;
    void *p;
    if (need <= *cap) return 0;
    new_cap = *cap < 16 ? 16 : *cap;
    while (new_cap < need) {
        if (new_cap > SIZE_MAX / 2) {
            new_cap = need;
            break;
        }
        new_cap *= 2;
    }
    if (minlsh__mul_size(&bytes, new_cap, elem) != 0) {
        /* Geometric growth overflowed; try exactly what is needed. */
        new_cap = need;
        if (minlsh__mul_size(&bytes, new_cap, elem) != 0) return MINLSH_E_TOOBIG;
    }
    p = minlsh__malloc(a, bytes);
    if (p == NULL) return MINLSH_E_NOMEM;
    used_bytes = used * elem; /* used <= *cap, so this cannot overflow */
    if (used_bytes > 0) memcpy(p, *ptr, used_bytes);
    minlsh__free(a, *ptr);
    *ptr = p;
    *cap = new_cap;
    return 0;
}

void minlsh__touch_pages(void *p, size_t n) {
    uint8_t *b = (uint8_t *)p;
    size_t i;
    for (i = 0; i < n; i += 4096) b[i] = 0;
}

void minlsh__prefault(void *p, size_t n) {
#if defined(__linux__) && defined(MADV_POPULATE_WRITE)
    /* The whole pages inside [p, p + n): one call makes them all, where a
     * first write makes one per trap (several microseconds each under a
     * hypervisor). Refused (a kernel before 5.14, another page size...):
     * one write per page, as below. */
    long page = sysconf(_SC_PAGESIZE);
    if (page > 0 && ((size_t)page & ((size_t)page - 1)) == 0) {
        uintptr_t mask = (uintptr_t)page - 1;
        uintptr_t start = ((uintptr_t)p + mask) & ~mask, stop = ((uintptr_t)p + n) & ~mask;
        if (stop <= start || madvise((void *)start, stop - start, MADV_POPULATE_WRITE) == 0) return;
    }
#endif
    minlsh__touch_pages(p, n);
}

void minlsh__secure_zero(void *p, size_t n) {
    /* A volatile function pointer keeps the compiler from proving the
     * memset dead just before free. */
    static void *(*const volatile memset_v)(void *, int, size_t) = memset;
    if (p != NULL && n > 0) memset_v(p, 0, n);
}

void *minlsh__kbuf_get(const minlsh_allocator *a, void *stack, size_t stack_n, size_t n,
                       size_t size) {
    if (n <= stack_n) return stack;
    return minlsh__calloc(a, n, size);
}

void minlsh__kbuf_put(const minlsh_allocator *a, const void *stack, void *p) {
    if (p != stack) minlsh__free(a, p);
}
