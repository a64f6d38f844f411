/* Shingle a document and sign it in one pass: the shingle layer emits its
 * hashes in batches straight into the kernel, so no sorted set is built
 * (duplicates are harmless to a minimum). */
#include "minhash.h"

#include "shingle/shingle.h"

typedef struct minlsh__sign_text_ctx {
    const minlsh_family *family;
    uint32_t *sig;
} minlsh__sign_text_ctx;

static int minlsh__sign_text_emit(void *ctx, const uint64_t *hashes, size_t n) {
    minlsh__sign_text_ctx *c = (minlsh__sign_text_ctx *)ctx;
    minlsh__family_update_raw(c->family, c->sig, hashes, n);
    return 0;
}

int minlsh_family_sign_text(const minlsh_family *family,
                            const minlsh_shingler *shingler, const void *text,
                            size_t len, uint32_t *sig, size_t cap,
                            size_t *n_out) {
    /* Work on a copy so that a failure half-way (NOMEM, TOOBIG) leaves the
     * caller's buffer as it was: the copy in work[0..k), the densifier's
     * work after it. */
    uint32_t stack[MINLSH__FAMILY_WORK_STACK + MINLSH__K_STACK], *work;
    minlsh__sign_text_ctx ctx;
    uint32_t i, k;
    int rc;
    if (family == NULL || shingler == NULL) return MINLSH_E_NULL;
    if (text == NULL && len > 0) return MINLSH_E_NULL;
    rc = minlsh__family_check_sig(family, sig, cap, n_out);
    if (rc != 0) return rc;
    k = minlsh_family_k(family);
    work = (uint32_t *)minlsh__kbuf_get(minlsh__family_alloc(family), stack,
                                        MINLSH__FAMILY_WORK_STACK + MINLSH__K_STACK,
                                        3 * (size_t)k, sizeof *stack);
    if (work == NULL) return MINLSH_E_NOMEM;
    for (i = 0; i < k; i++) work[i] = MINLSH_EMPTY_VALUE;
    ctx.family = family;
    ctx.sig = work;
    rc = minlsh__shingler_each(shingler, text, len, minlsh__sign_text_emit, &ctx);
    if (rc == 0) {
        minlsh__family_finish_raw(family, work, work + k);
        memcpy(sig, work, (size_t)k * sizeof *sig);
    }
    minlsh__kbuf_put(minlsh__family_alloc(family), stack, work);
    return rc;
}
