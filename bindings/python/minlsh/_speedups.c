/* minlsh._speedups: an optional C accelerator for the ctypes binding.
 *
 * The package works, with the same bits, without it (docs/ffi.md); it only
 * removes Python work from the two hot loops of datasketch's idioms:
 *
 *  - join_tokens(docs): the NUL-joined bytes that _minhash._joined builds
 *    with str.join and str.encode, read straight from the token objects (a
 *    join costs a Python-level step per token; here it is a type check and a
 *    memcpy). None when the fast path does not apply, and the Python code
 *    takes its own path.
 *  - sign_tokens(family, key, docs, out, k): MinHash.bulk's fast path: the
 *    address and length of every token's bytes (read from the str or bytes
 *    object, nothing copied) go to minlsh_family_sign_token_array a group of
 *    documents at a time. None when it does not apply, and the Python code
 *    takes its own path (same bits).
 *  - query(handle, sig, id_to_key): MinHashLSH.query's fast path, one C call
 *    instead of a ctypes call plus a list comprehension. None on any failure,
 *    and the Python code takes its locked path (same results, same errors).
 *
 * It does not link libminlsh: bind() receives the addresses of
 * minlsh_index_query and minlsh_family_sign_token_array from the library
 * ctypes loaded, so there is never a
 * second copy of the library in the process. No Python code runs while
 * either function reads its inputs, and the interpreter lock is held
 * throughout (so, as for _ffi.gil_lib, no index writer can start during the
 * query).
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <stdint.h>
#include <string.h>

/* Bumped when a function's contract changes; _ffi refuses another one. */
#define SPEEDUPS_API 2
/* MINLSH_E_BUFSIZE of include/minlsh.h (error codes are never renumbered;
 * the tests compare it with _ffi.E_BUFSIZE). Not included: the package is
 * built without the C sources. */
#define E_BUFSIZE (-4)
/* Query ids that fit on the stack; more come from the heap. A per-call
 * buffer, so a call made from a finalizer during the list's allocation
 * cannot overwrite another's ids. */
#define STACK_IDS 256

/* minlsh_index_query */
typedef int (*index_query_fn)(const void *index, const uint32_t *sig, size_t k_sig,
                              uint64_t *ids, double *similarity, size_t cap,
                              size_t *n_out);

/* minlsh_family_sign_token_array */
typedef int (*sign_token_array_fn)(const void *family, const uint8_t *key,
                                   const void *const *tokens, const size_t *lengths,
                                   size_t n_tokens, const size_t *doc_offsets, size_t n_docs,
                                   uint32_t *sigs, size_t cap, size_t *n_out);
/* Tokens gathered before a library call: a group of whole documents of at
 * least this many tokens (the arrays, 16 bytes a token, stay in L2). */
#define SIGN_GROUP_TOKENS 8192

typedef struct {
    index_query_fn index_query; /* NULL until bind() */
    sign_token_array_fn sign_token_array;
} speedups_state;

/* A token's bytes: str as UTF-8 (kind 1), bytes as they are (kind 2).
 * Returns NULL with an exception set when a str has no UTF-8 form (a lone
 * surrogate), as str.encode("utf-8") raises. */
static const char *token_bytes(PyObject *t, int kind, Py_ssize_t *len)
{
    if (kind == 1) {
        /* An ASCII str is its own UTF-8: skip the call (a third of the
         * time per token once the objects are in cache). */
        if (PyUnicode_IS_COMPACT_ASCII(t)) {
            *len = PyUnicode_GET_LENGTH(t);
            return (const char *)PyUnicode_DATA(t);
        }
        return PyUnicode_AsUTF8AndSize(t, len);
    }
    *len = PyBytes_GET_SIZE(t);
    return PyBytes_AS_STRING(t);
}

/* 1 for str (subclasses too: str.join reads their value), 2 for bytes, 0
 * for anything else (bytes.join reads other bytes-like objects through
 * their buffers: the Python path's business). */
static int token_kind(PyObject *t)
{
    if (PyUnicode_Check(t))
        return 1;
    if (PyBytes_CheckExact(t))
        return 2;
    return 0;
}

PyDoc_STRVAR(join_tokens_doc,
"join_tokens(docs) -> bytes or None\n\n"
"Every token of every non-empty document of docs (a list or tuple of lists\n"
"or tuples) joined with one NUL byte: exactly _minhash._joined(docs). None\n"
"when the tokens are not all str or all bytes, or a document is neither a\n"
"list nor a tuple.");

static PyObject *join_tokens(PyObject *module, PyObject *docs)
{
    (void)module;
    if (!PyList_Check(docs) && !PyTuple_Check(docs))
        Py_RETURN_NONE;
    Py_ssize_t nd = PySequence_Fast_GET_SIZE(docs);
    PyObject **dv = PySequence_Fast_ITEMS(docs);
    int kind = 0;
    Py_ssize_t total = 0, ntok = 0, len;
    PyObject *unencodable = NULL;

    /* Sizes first. A token that cannot be encoded raises only once every
     * token's type is known: the Python path returns None for mixed types
     * before it encodes anything. */
    for (Py_ssize_t d = 0; d < nd; d++) {
        PyObject *doc = dv[d];
        if (!PyList_Check(doc) && !PyTuple_Check(doc))
            goto not_here;
        Py_ssize_t n = PySequence_Fast_GET_SIZE(doc);
        PyObject **tv = PySequence_Fast_ITEMS(doc);
        for (Py_ssize_t i = 0; i < n; i++) {
            int k = token_kind(tv[i]);
            if (k == 0 || (kind != 0 && k != kind))
                goto not_here;
            kind = k;
            if (unencodable)
                continue;
            if (!token_bytes(tv[i], kind, &len)) {
                PyErr_Clear();
                unencodable = tv[i];
                Py_INCREF(unencodable);
                continue;
            }
            if (len >= PY_SSIZE_T_MAX - total)
                goto not_here; /* cannot be allocated: let Python say so */
            total += len + 1;
        }
        ntok += n;
    }
    if (unencodable) {
        token_bytes(unencodable, kind, &len); /* raises again */
        Py_DECREF(unencodable);
        return NULL;
    }
    /* Documents without tokens add nothing, so the result is the flat
     * sequence of tokens with a NUL between two neighbours. */
    PyObject *out = PyBytes_FromStringAndSize(NULL, ntok ? total - 1 : 0);
    if (!out || !ntok)
        return out;
    char *pos = PyBytes_AS_STRING(out), *end = pos + (total - 1);
    for (Py_ssize_t d = 0; d < nd; d++) {
        Py_ssize_t n = PySequence_Fast_GET_SIZE(dv[d]);
        PyObject **tv = PySequence_Fast_ITEMS(dv[d]);
        for (Py_ssize_t i = 0; i < n; i++) {
            const char *s = token_bytes(tv[i], kind, &len); /* cached: cannot fail */
            /* Nothing can change the lists between the passes (no Python
             * code runs), but a write past the end must stay impossible. */
            if (!s || len > end - pos) {
                Py_DECREF(out);
                PyErr_SetString(PyExc_RuntimeError, "join_tokens: the tokens changed");
                return NULL;
            }
            memcpy(pos, s, (size_t)len);
            pos += len;
            if (pos < end)
                *pos++ = '\0';
        }
    }
    return out;

not_here:
    Py_XDECREF(unencodable);
    Py_RETURN_NONE;
}

PyDoc_STRVAR(bind_doc,
"bind(query_address, sign_address)\n\n"
"The addresses of minlsh_index_query and minlsh_family_sign_token_array in\n"
"the library the package loaded (ctypes.cast(fn, ctypes.c_void_p).value).");

/* An address given as a Python int (ctypes' c_void_p values are never
 * negative); 0 with an exception set for anything else. */
static uintptr_t as_address(PyObject *v)
{
    unsigned long long a = PyLong_AsUnsignedLongLong(v);
    if (a == (unsigned long long)-1 && PyErr_Occurred())
        return 0;
    if (a > UINTPTR_MAX) {
        PyErr_SetString(PyExc_OverflowError, "not an address");
        return 0;
    }
    return (uintptr_t)a;
}

static PyObject *bind(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    speedups_state *st = PyModule_GetState(module);
    uintptr_t q, s;
    if (nargs != 2) {
        PyErr_SetString(PyExc_TypeError, "bind takes 2 arguments");
        return NULL;
    }
    q = as_address(args[0]);
    s = q ? as_address(args[1]) : 0;
    if (!q || !s) {
        if (!PyErr_Occurred())
            PyErr_SetString(PyExc_ValueError, "bind: a NULL address");
        return NULL;
    }
    st->index_query = (index_query_fn)q;
    st->sign_token_array = (sign_token_array_fn)s;
    Py_RETURN_NONE;
}

PyDoc_STRVAR(sign_tokens_doc,
"sign_tokens(family, key, docs, out, k) -> True or None\n\n"
"The signatures of docs (a list or tuple of lists or tuples of str or bytes\n"
"tokens, str as UTF-8) under the family handle (int) and key (address of 16\n"
"bytes, or 0 for the default key), k uint32 values a document written at\n"
"address out, row after row: exactly _minhash._sign_chunk's. None, with\n"
"nothing to trust in out, when a document or a token is of another type, a\n"
"str has no UTF-8 form, the library refuses the call or bind() was not\n"
"called: the caller takes its own path, which raises what is due.");

/* The token arrays of one group: the objects (each holding a reference),
 * the addresses of their bytes and the lengths. */
typedef struct {
    PyObject **obj;
    const void **tok;
    size_t *len, cap, n;
} sign_group;

/* Grows the arrays to hold need entries; 0 on failure. */
static int sign_reserve(sign_group *g, size_t need)
{
    size_t c = g->cap ? g->cap : SIGN_GROUP_TOKENS;
    void *p;
    if (need <= g->cap)
        return 1;
    while (c < need)
        c *= 2;
    if (!(p = PyMem_Realloc(g->obj, c * sizeof *g->obj)))
        return 0;
    g->obj = p;
    if (!(p = PyMem_Realloc((void *)g->tok, c * sizeof *g->tok)))
        return 0;
    g->tok = p;
    if (!(p = PyMem_Realloc(g->len, c * sizeof *g->len)))
        return 0;
    g->len = p;
    g->cap = c;
    return 1;
}

/* Drops the group's references. */
static void sign_release(sign_group *g)
{
    size_t i;
    for (i = 0; i < g->n; i++)
        Py_DECREF(g->obj[i]);
    g->n = 0;
}

static PyObject *sign_tokens(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    speedups_state *st = PyModule_GetState(module);
    sign_group g = {NULL, NULL, NULL, 0, 0};
    size_t *doc_off = NULL, k;
    Py_ssize_t nd, d, first = 0;
    PyObject **dv, *docs;
    uintptr_t family, key, out;
    int ok = 0, rc;
    if (nargs != 5) {
        PyErr_SetString(PyExc_TypeError, "sign_tokens takes 5 arguments");
        return NULL;
    }
    family = as_address(args[0]);
    key = args[1] == Py_None ? 0 : as_address(args[1]);
    out = as_address(args[3]);
    k = PyLong_AsSize_t(args[4]);
    docs = args[2];
    if (PyErr_Occurred() || !family || !out || !k || !st->sign_token_array
            || (!PyList_Check(docs) && !PyTuple_Check(docs)))
        goto done;
    nd = PySequence_Fast_GET_SIZE(docs);
    dv = PySequence_Fast_ITEMS(docs);
    doc_off = PyMem_Malloc(((size_t)nd + 1) * sizeof *doc_off);
    if (!doc_off)
        goto done;
    for (d = 0; d < nd; d++) {
        PyObject *doc = dv[d], **tv;
        Py_ssize_t n, i;
        if (!PyList_Check(doc) && !PyTuple_Check(doc))
            goto done;
        n = PySequence_Fast_GET_SIZE(doc);
        tv = PySequence_Fast_ITEMS(doc);
        doc_off[d - first] = g.n;
        if (!sign_reserve(&g, g.n + (size_t)n))
            goto done;
        for (i = 0; i < n; i++) {
            PyObject *t = tv[i];
            Py_ssize_t l;
            const char *b;
            if (PyUnicode_Check(t))
                b = token_bytes(t, 1, &l);
            else if (PyBytes_CheckExact(t))
                b = token_bytes(t, 2, &l);
            else
                goto done;
            if (!b)
                goto done;
            Py_INCREF(t);
            g.obj[g.n] = t;
            g.tok[g.n] = b;
            g.len[g.n++] = (size_t)l;
        }
        if (g.n >= SIGN_GROUP_TOKENS || d + 1 == nd) {
            size_t m = (size_t)(d + 1 - first);
            doc_off[m] = g.n;
            /* The references keep every token's bytes in place while other
             * threads run (a str's UTF-8 lives as long as the str), so the
             * signing need not hold the interpreter lock: threads that
             * sign at once run in parallel, as through ctypes. */
            Py_BEGIN_ALLOW_THREADS
            rc = st->sign_token_array((const void *)family, (const uint8_t *)key, g.tok, g.len,
                                      g.n, doc_off, m, (uint32_t *)out + (size_t)first * k,
                                      m * k, NULL);
            Py_END_ALLOW_THREADS
            sign_release(&g);
            if (rc != 0)
                goto done;
            first = d + 1;
            /* Another thread may have resized docs meanwhile: never read
             * through a stale item array (the caller's path starts over). */
            if (PySequence_Fast_GET_SIZE(docs) != nd)
                goto done;
            dv = PySequence_Fast_ITEMS(docs);
        }
    }
    ok = 1;
done:
    sign_release(&g);
    PyMem_Free(g.obj);
    PyMem_Free((void *)g.tok);
    PyMem_Free(g.len);
    PyMem_Free(doc_off);
    PyErr_Clear(); /* the Python path raises whatever is due */
    if (ok)
        Py_RETURN_TRUE;
    Py_RETURN_NONE;
}

PyDoc_STRVAR(query_doc,
"query(handle, sig, id_to_key) -> list or None\n\n"
"The keys (id_to_key[id]) of minlsh_index_query's candidates for the\n"
"signature in sig (a buffer of uint32 values) in the index handle (int),\n"
"in id order; None if the call fails, an id has no key, or bind() was not\n"
"called, so that the caller asks again through its own path.");

static PyObject *query(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    speedups_state *st = PyModule_GetState(module);
    if (nargs != 3) {
        PyErr_SetString(PyExc_TypeError, "query takes 3 arguments");
        return NULL;
    }
    PyObject *id_to_key = args[2];
    void *index = (void *)as_address(args[0]);
    if (!st->index_query || !index || !PyDict_CheckExact(id_to_key))
        goto not_here;
    Py_buffer sig;
    if (PyObject_GetBuffer(args[1], &sig, PyBUF_SIMPLE) < 0)
        goto not_here;
    if (sig.len % (Py_ssize_t)sizeof(uint32_t)) {
        PyBuffer_Release(&sig);
        goto not_here;
    }
    size_t k = (size_t)sig.len / sizeof(uint32_t);
    uint64_t stack[STACK_IDS], *ids = stack;
    size_t n = 0;
    int rc = st->index_query(index, sig.buf, k, ids, NULL, STACK_IDS, &n);
    if (rc == E_BUFSIZE) {
        /* n is the count needed; the index cannot change meanwhile (the
         * interpreter lock is held, so no writer runs). */
        ids = PyMem_Malloc(n * sizeof *ids);
        rc = ids ? st->index_query(index, sig.buf, k, ids, NULL, n, &n) : -1;
    }
    PyBuffer_Release(&sig);
    PyObject *out = rc == 0 ? PyList_New((Py_ssize_t)n) : NULL;
    for (size_t i = 0; out && i < n; i++) {
        PyObject *id = PyLong_FromUnsignedLongLong(ids[i]);
        PyObject *key = id ? PyDict_GetItemWithError(id_to_key, id) : NULL; /* borrowed */
        Py_XDECREF(id);
        if (!key) {
            Py_CLEAR(out);
            break;
        }
        Py_INCREF(key);
        PyList_SET_ITEM(out, (Py_ssize_t)i, key);
    }
    if (ids != stack)
        PyMem_Free(ids);
    if (out)
        return out;

not_here:
    PyErr_Clear(); /* the locked path raises whatever is due */
    Py_RETURN_NONE;
}

static PyMethodDef methods[] = {
    {"join_tokens", join_tokens, METH_O, join_tokens_doc},
    {"bind", (PyCFunction)(void (*)(void))bind, METH_FASTCALL, bind_doc},
    {"sign_tokens", (PyCFunction)(void (*)(void))sign_tokens, METH_FASTCALL, sign_tokens_doc},
    {"query", (PyCFunction)(void (*)(void))query, METH_FASTCALL, query_doc},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module_def = {
    PyModuleDef_HEAD_INIT,
    "minlsh._speedups",
    "Optional C accelerator of the minlsh ctypes binding (docs/ffi.md).",
    sizeof(speedups_state),
    methods,
    NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit__speedups(void);

PyMODINIT_FUNC PyInit__speedups(void)
{
    PyObject *m = PyModule_Create(&module_def);
    if (!m)
        return NULL;
    ((speedups_state *)PyModule_GetState(m))->index_query = NULL;
    ((speedups_state *)PyModule_GetState(m))->sign_token_array = NULL;
    if (PyModule_AddIntConstant(m, "API", SPEEDUPS_API) < 0
            || PyModule_AddIntConstant(m, "E_BUFSIZE", E_BUFSIZE) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
