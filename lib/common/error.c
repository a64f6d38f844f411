/* Error codes, version and constants: the small answers FFI users ask for. */
#include "common.h"

typedef struct {
    int code;
    const char *name;
    const char *text;
} minlsh__error_entry;

static const minlsh__error_entry minlsh__errors[] = {
    {MINLSH_OK, "MINLSH_OK", "success"},
    {MINLSH_E_NULL, "MINLSH_E_NULL", "a required pointer argument is NULL"},
    {MINLSH_E_PARAM, "MINLSH_E_PARAM", "a parameter is out of range"},
    {MINLSH_E_NOMEM, "MINLSH_E_NOMEM", "out of memory"},
    {MINLSH_E_BUFSIZE, "MINLSH_E_BUFSIZE", "output buffer too small"},
    {MINLSH_E_IO, "MINLSH_E_IO", "input/output error"},
    {MINLSH_E_FORMAT, "MINLSH_E_FORMAT",
     "not a minlsh file or unsupported format version"},
    {MINLSH_E_CORRUPT, "MINLSH_E_CORRUPT",
     "data is truncated or corrupt (checksum or structure mismatch)"},
    {MINLSH_E_MISMATCH, "MINLSH_E_MISMATCH",
     "data was made with another family, seed, k, key or shape"},
    {MINLSH_E_TOOBIG, "MINLSH_E_TOOBIG", "input exceeds a size limit"},
    {MINLSH_E_EXISTS, "MINLSH_E_EXISTS", "id already present"},
    {MINLSH_E_NOTFOUND, "MINLSH_E_NOTFOUND", "no such id or position"},
    {MINLSH_E_VERSION, "MINLSH_E_VERSION", "options struct version not supported"},
    {MINLSH_E_STATE, "MINLSH_E_STATE", "call not valid in the current state"},
    {MINLSH_E_UNSUPPORTED, "MINLSH_E_UNSUPPORTED",
     "not supported by this build or CPU"},
    {MINLSH_E_BUSY, "MINLSH_E_BUSY", "a lock is held elsewhere (timed out waiting for it)"},
};

static const minlsh__error_entry *minlsh__error_find(int code) {
    size_t i;
    for (i = 0; i < sizeof minlsh__errors / sizeof minlsh__errors[0]; i++)
        if (minlsh__errors[i].code == code) return &minlsh__errors[i];
    return NULL;
}

const char *minlsh_strerror(int code) {
    const minlsh__error_entry *e = minlsh__error_find(code);
    return e ? e->text : "unknown error code";
}

const char *minlsh_error_name(int code) {
    const minlsh__error_entry *e = minlsh__error_find(code);
    return e ? e->name : "MINLSH_E_UNKNOWN";
}

uint32_t minlsh_version_number(void) { return MINLSH_VERSION_NUMBER; }
const char *minlsh_version_string(void) { return MINLSH_VERSION_STRING; }

size_t minlsh_key_bytes(void) { return MINLSH_KEY_BYTES; }
size_t minlsh_fingerprint_bytes(void) { return MINLSH_FINGERPRINT_BYTES; }
uint32_t minlsh_shingle_k_max(void) { return MINLSH_SHINGLE_K_MAX; }
uint32_t minlsh_family_k_max(void) { return MINLSH_FAMILY_K_MAX; }
uint64_t minlsh_prime(void) { return MINLSH_PRIME; }
uint32_t minlsh_empty_value(void) { return MINLSH_EMPTY_VALUE; }
