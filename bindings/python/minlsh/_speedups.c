/* minlsh._speedups: an optional C accelerator for the ctypes binding.
 *
 * The package works, with the same bits, without it (docs/ffi.md); it only
 * removes Python work from the hot loops of datasketch's idioms (signing,
 * inserting, querying):
 *
 *  - join_tokens(docs): the NUL-joined bytes that _minhash._joined builds
 *    with str.join and str.encode, read straight from the token objects (a
 *    join costs a Python-level step per token; here it is a type check and a
 *    memcpy). None when the fast path does not apply, and the Python code
 *    takes its own path.
 *  - sign_tokens(family, key, docs, out, k): signatures_from_tokens' fast
 *    path: the address and length of every token's bytes (read from the str
 *    or bytes object, nothing copied) go to minlsh_family_sign_token_array a
 *    group of documents at a time. None when it does not apply, and the Python code
 *    takes its own path (same bits).
 *  - sign_minhashes(family, docs, k, cls, fam, sig_type, slots): the same
 *    signing for MinHash.bulk and MinHash.generator, each signature placed
 *    in a new MinHash object made here (what MinHash._from_raw does in
 *    Python, a Python call and a ctypes call per document). None when it
 *    does not apply, as for sign_tokens.
 *  - query(handle, sig, id_to_key): MinHashLSH.query's fast path, one C call
 *    instead of a ctypes call plus a list comprehension. None on any failure,
 *    and the Python code takes its locked path (same results, same errors).
 *  - session_insert(types, lsh, key, minhash): an insertion session's insert
 *    (MinHashLSH._session_insert) without a Python frame; anything but the
 *    plain case (a MinHash of the index's family, a new key) is handed to
 *    _session_insert itself, which raises what is due.
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
#include <structmember.h>

#include <stdint.h>
#include <string.h>

/* Python 3.8 (the oldest the package supports) has these under other names. */
#if PY_VERSION_HEX < 0x03090000
#define PyObject_CallNoArgs(f) PyObject_CallObject((f), NULL)
#define PyObject_CallMethodNoArgs(o, name) PyObject_CallMethodObjArgs((o), (name), NULL)
#define PyObject_Vectorcall _PyObject_Vectorcall
#endif

/* Bumped when a function's contract changes; _ffi refuses another one. */
#define SPEEDUPS_API 3
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
 * least this many tokens (the arrays, 16 bytes a token, stay in L2), or of
 * this many documents (their signatures stay in L1 when sign_minhashes
 * copies them out). */
#define SIGN_GROUP_TOKENS 8192
#define SIGN_GROUP_DOCS 64

/* The attribute names session_insert reads, interned once per module. */
enum {
    NAME_FAMILY,
    NAME_SIG,
    NAME_KEY_TO_ID,
    NAME_PENDING,
    NAME_PENDING_KEYS,
    NAME_BUFFER_SIZE,
    NAME_FLUSH,
    NAME_SESSION_INSERT,
    NAME_COUNT
};
static const char *const name_text[NAME_COUNT] = {
    "_family", "_sig", "_key_to_id", "_pending", "_pending_keys", "_buffer_size", "_flush",
    "_session_insert",
};

typedef struct {
    index_query_fn index_query; /* NULL until bind() */
    sign_token_array_fn sign_token_array;
    PyObject *name[NAME_COUNT];
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

/* What a group's signatures become: written at out (row first of the
 * whole batch), or, when out is NULL, made into objects by make. */
typedef struct {
    uint32_t *out;
    int (*make)(void *ctx, const uint32_t *sigs, size_t n_docs);
    void *ctx;
} sign_sink;

/* The signatures of docs (a list or tuple of lists or tuples of str or
 * bytes tokens) under family and key, k values a document, a group at a
 * time into the sink. 1 when every document was signed; 0 when the caller
 * must take its own path (another type, a str without UTF-8, the library
 * refused, docs changed while the lock was released), with an exception
 * set only when make failed. */
static int sign_docs(speedups_state *st, uintptr_t family, uintptr_t key, PyObject *docs,
                     size_t k, const sign_sink *sink)
{
    sign_group g = {NULL, NULL, NULL, 0, 0};
    size_t *doc_off = NULL;
    uint32_t *scratch = NULL;
    Py_ssize_t nd, d, first = 0;
    PyObject **dv;
    int ok = 0, rc;
    if (!family || !k || !st->sign_token_array || (!PyList_Check(docs) && !PyTuple_Check(docs)))
        return 0;
    nd = PySequence_Fast_GET_SIZE(docs);
    dv = PySequence_Fast_ITEMS(docs);
    doc_off = PyMem_Malloc(((size_t)nd + 1) * sizeof *doc_off);
    if (!doc_off)
        goto done;
    if (!sink->out && k > SIZE_MAX / sizeof *scratch / SIGN_GROUP_DOCS)
        goto done;
    if (!sink->out && !(scratch = PyMem_Malloc(SIGN_GROUP_DOCS * k * sizeof *scratch)))
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
        if (g.n >= SIGN_GROUP_TOKENS || d + 1 - first == SIGN_GROUP_DOCS || d + 1 == nd) {
            size_t m = (size_t)(d + 1 - first);
            uint32_t *dest = sink->out ? sink->out + (size_t)first * k : scratch;
            doc_off[m] = g.n;
            /* The references keep every token's bytes in place while other
             * threads run (a str's UTF-8 lives as long as the str), so the
             * signing need not hold the interpreter lock: threads that
             * sign at once run in parallel, as through ctypes. */
            Py_BEGIN_ALLOW_THREADS
            rc = st->sign_token_array((const void *)family, (const uint8_t *)key, g.tok, g.len,
                                      g.n, doc_off, m, dest, m * k, NULL);
            Py_END_ALLOW_THREADS
            sign_release(&g);
            if (rc != 0)
                goto done;
            if (!sink->out && sink->make(sink->ctx, scratch, m) < 0)
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
    PyMem_Free(scratch);
    if (!ok && !PyErr_Occurred())
        return 0;
    return ok ? 1 : -1;
}

static PyObject *sign_tokens(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    sign_sink sink = {NULL, NULL, NULL};
    uintptr_t family, key;
    size_t k;
    int ok = 0;
    if (nargs != 5) {
        PyErr_SetString(PyExc_TypeError, "sign_tokens takes 5 arguments");
        return NULL;
    }
    family = as_address(args[0]);
    key = args[1] == Py_None ? 0 : as_address(args[1]);
    sink.out = (uint32_t *)as_address(args[3]);
    k = PyLong_AsSize_t(args[4]);
    if (!PyErr_Occurred() && sink.out)
        ok = sign_docs(PyModule_GetState(module), family, key, args[2], k, &sink) == 1;
    PyErr_Clear(); /* the Python path raises whatever is due */
    if (ok)
        Py_RETURN_TRUE;
    Py_RETURN_NONE;
}

PyDoc_STRVAR(sign_minhashes_doc,
"sign_minhashes(family, docs, k, cls, fam, sig_type, slots) -> list or None\n\n"
"One new cls object a document of docs (as for sign_tokens, the default\n"
"key), made as object.__new__(cls) and given, through the member\n"
"descriptors slots = (_family, _sig, _hashfunc), the values fam, a new\n"
"sig_type (a ctypes array of k uint32) holding the document's signature,\n"
"and None: exactly MinHash._from_raw's objects. None when sign_tokens would\n"
"decline, or slots are not member descriptors or sig_type not k values.");

/* The objects of sign_minhashes, appended to out. */
typedef struct {
    PyObject *out, *cls, *fam, *sig_type;
    PyObject *slot_family, *slot_sig, *slot_hashfunc, *no_args;
    size_t k;
} minhash_maker;

static int set_slot(PyObject *descr, PyObject *obj, PyObject *value)
{
    return Py_TYPE(descr)->tp_descr_set(descr, obj, value);
}

static int make_minhashes(void *ctx, const uint32_t *sigs, size_t n_docs)
{
    minhash_maker *mk = ctx;
    size_t i, bytes = mk->k * sizeof *sigs;
    for (i = 0; i < n_docs; i++) {
        PyObject *sig = PyObject_CallNoArgs(mk->sig_type), *m = NULL;
        Py_buffer view;
        int rc = -1;
        if (!sig)
            return -1;
        if (PyObject_GetBuffer(sig, &view, PyBUF_WRITABLE) == 0) {
            if ((size_t)view.len == bytes) {
                memcpy(view.buf, sigs + i * mk->k, bytes);
                rc = 0;
            } else {
                PyErr_SetString(PyExc_ValueError, "sign_minhashes: sig_type is not k values");
            }
            PyBuffer_Release(&view);
        }
        /* object.__new__(cls), as _from_raw, then its three slots. */
        if (rc == 0)
            m = PyBaseObject_Type.tp_new((PyTypeObject *)mk->cls, mk->no_args, NULL);
        rc = !m || set_slot(mk->slot_family, m, mk->fam) < 0 || set_slot(mk->slot_sig, m, sig) < 0
                 || set_slot(mk->slot_hashfunc, m, Py_None) < 0 || PyList_Append(mk->out, m) < 0;
        Py_DECREF(sig);
        Py_XDECREF(m);
        if (rc)
            return -1;
    }
    return 0;
}

static PyObject *sign_minhashes(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    minhash_maker mk;
    sign_sink sink = {NULL, make_minhashes, &mk};
    uintptr_t family;
    PyObject *slots;
    Py_ssize_t i;
    if (nargs != 7) {
        PyErr_SetString(PyExc_TypeError, "sign_minhashes takes 7 arguments");
        return NULL;
    }
    family = as_address(args[0]);
    mk.k = PyLong_AsSize_t(args[2]);
    mk.cls = args[3];
    mk.fam = args[4];
    mk.sig_type = args[5];
    slots = args[6];
    if (PyErr_Occurred() || !PyType_Check(mk.cls) || !PyTuple_Check(slots)
            || PyTuple_GET_SIZE(slots) != 3)
        goto not_here;
    for (i = 0; i < 3; i++)
        if (!PyObject_TypeCheck(PyTuple_GET_ITEM(slots, i), &PyMemberDescr_Type)
                || !Py_TYPE(PyTuple_GET_ITEM(slots, i))->tp_descr_set)
            goto not_here;
    mk.slot_family = PyTuple_GET_ITEM(slots, 0);
    mk.slot_sig = PyTuple_GET_ITEM(slots, 1);
    mk.slot_hashfunc = PyTuple_GET_ITEM(slots, 2);
    if (!(mk.no_args = PyTuple_New(0)))
        goto not_here;
    if (!(mk.out = PyList_New(0))) {
        Py_DECREF(mk.no_args);
        goto not_here;
    }
    if (sign_docs(PyModule_GetState(module), family, 0, args[1], mk.k, &sink) == 1) {
        Py_DECREF(mk.no_args);
        return mk.out;
    }
    Py_DECREF(mk.no_args);
    Py_DECREF(mk.out);
not_here:
    PyErr_Clear(); /* the Python path raises whatever is due */
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

PyDoc_STRVAR(session_insert_doc,
"session_insert(types, lsh, key, minhash, check_duplication=True)\n\n"
"lsh._session_insert(key, minhash): when minhash's class is one of types\n"
"and its _family is lsh._family, and key is in neither lsh._key_to_id nor\n"
"lsh._pending_keys, (key, bytes(minhash._sig)) is appended to lsh._pending\n"
"and key added to lsh._pending_keys here, and lsh._flush() called once\n"
"lsh._buffer_size are pending; anything else calls lsh._session_insert.\n"
"check_duplication is accepted and ignored, as there.");

/* 1 when the insert was made here, 0 when it is _session_insert's, -1 on
 * an error to raise (the flush's). */
static int session_insert_here(speedups_state *st, PyObject *types, PyObject *lsh,
                               PyObject *key, PyObject *minhash)
{
    PyObject *fam = NULL, *lfam = NULL, *sig = NULL, *key_to_id = NULL, *pending = NULL,
             *pending_keys = NULL, *item = NULL, *size = NULL, *r;
    Py_buffer view;
    Py_ssize_t i, cap;
    int found = 0, here = 0;
    if (!PyTuple_Check(types))
        return 0;
    for (i = 0; i < PyTuple_GET_SIZE(types); i++)
        found |= (PyObject *)Py_TYPE(minhash) == PyTuple_GET_ITEM(types, i);
    if (!found || !(fam = PyObject_GetAttr(minhash, st->name[NAME_FAMILY]))
            || !(lfam = PyObject_GetAttr(lsh, st->name[NAME_FAMILY])) || fam != lfam
            || !(sig = PyObject_GetAttr(minhash, st->name[NAME_SIG]))
            || !(key_to_id = PyObject_GetAttr(lsh, st->name[NAME_KEY_TO_ID]))
            || !PyDict_CheckExact(key_to_id)
            || !(pending = PyObject_GetAttr(lsh, st->name[NAME_PENDING]))
            || !PyList_CheckExact(pending)
            || !(pending_keys = PyObject_GetAttr(lsh, st->name[NAME_PENDING_KEYS]))
            || !PySet_CheckExact(pending_keys)
            || !(size = PyObject_GetAttr(lsh, st->name[NAME_BUFFER_SIZE])))
        goto out;
    /* An unhashable key, or one already there: _session_insert raises. */
    if (PyDict_Contains(key_to_id, key) != 0 || PySet_Contains(pending_keys, key) != 0)
        goto out;
    cap = PyLong_AsSsize_t(size);
    if ((cap == -1 && PyErr_Occurred()) || PyObject_GetBuffer(sig, &view, PyBUF_SIMPLE) < 0)
        goto out;
    if ((item = PyTuple_New(2)) != NULL) {
        PyObject *raw = PyBytes_FromStringAndSize(view.buf, view.len);
        if (!raw) {
            Py_CLEAR(item);
        } else {
            Py_INCREF(key);
            PyTuple_SET_ITEM(item, 0, key);
            PyTuple_SET_ITEM(item, 1, raw);
        }
    }
    PyBuffer_Release(&view);
    if (!item || PySet_Add(pending_keys, key) < 0)
        goto out;
    if (PyList_Append(pending, item) < 0) {
        PySet_Discard(pending_keys, key);
        goto out;
    }
    here = 1;
    if (PyList_GET_SIZE(pending) >= cap) {
        r = PyObject_CallMethodNoArgs(lsh, st->name[NAME_FLUSH]);
        if (!r)
            here = -1;
        Py_XDECREF(r);
    }
out:
    Py_XDECREF(fam);
    Py_XDECREF(lfam);
    Py_XDECREF(sig);
    Py_XDECREF(key_to_id);
    Py_XDECREF(pending);
    Py_XDECREF(pending_keys);
    Py_XDECREF(size);
    Py_XDECREF(item);
    if (here == 0)
        PyErr_Clear(); /* _session_insert raises whatever is due */
    return here;
}

static PyObject *session_insert(PyObject *module, PyObject *const *args, Py_ssize_t nargs,
                                PyObject *kwnames)
{
    speedups_state *st = PyModule_GetState(module);
    Py_ssize_t nkw = kwnames ? PyTuple_GET_SIZE(kwnames) : 0;
    PyObject *m, *r;
    int here = 0;
    if (nargs < 2) {
        PyErr_SetString(PyExc_TypeError, "session_insert needs types and lsh");
        return NULL;
    }
    /* (key, minhash) and check_duplication, by position or by name: the
     * plain shape. Any other goes to _session_insert as it came. */
    if ((nargs == 4 && (nkw == 0 || (nkw == 1 && PyUnicode_Check(PyTuple_GET_ITEM(kwnames, 0))
                                     && PyUnicode_CompareWithASCIIString(
                                            PyTuple_GET_ITEM(kwnames, 0),
                                            "check_duplication") == 0)))
            || (nargs == 5 && nkw == 0))
        here = session_insert_here(st, args[0], args[1], args[2], args[3]);
    if (here < 0)
        return NULL;
    if (here > 0)
        Py_RETURN_NONE;
    if (!(m = PyObject_GetAttr(args[1], st->name[NAME_SESSION_INSERT])))
        return NULL;
    r = PyObject_Vectorcall(m, args + 2, (size_t)(nargs - 2), kwnames);
    Py_DECREF(m);
    return r;
}

static PyMethodDef methods[] = {
    {"join_tokens", join_tokens, METH_O, join_tokens_doc},
    {"bind", (PyCFunction)(void (*)(void))bind, METH_FASTCALL, bind_doc},
    {"sign_tokens", (PyCFunction)(void (*)(void))sign_tokens, METH_FASTCALL, sign_tokens_doc},
    {"sign_minhashes", (PyCFunction)(void (*)(void))sign_minhashes, METH_FASTCALL,
     sign_minhashes_doc},
    {"query", (PyCFunction)(void (*)(void))query, METH_FASTCALL, query_doc},
    {"session_insert", (PyCFunction)(void (*)(void))session_insert,
     METH_FASTCALL | METH_KEYWORDS, session_insert_doc},
    {NULL, NULL, 0, NULL},
};

static void module_free(void *module)
{
    speedups_state *st = PyModule_GetState((PyObject *)module);
    int i;
    if (!st)
        return;
    for (i = 0; i < NAME_COUNT; i++)
        Py_CLEAR(st->name[i]);
}

static struct PyModuleDef module_def = {
    PyModuleDef_HEAD_INIT,
    "minlsh._speedups",
    "Optional C accelerator of the minlsh ctypes binding (docs/ffi.md).",
    sizeof(speedups_state),
    methods,
    NULL, NULL, NULL, module_free,
};

PyMODINIT_FUNC PyInit__speedups(void);

PyMODINIT_FUNC PyInit__speedups(void)
{
    PyObject *m = PyModule_Create(&module_def);
    speedups_state *st;
    int i;
    if (!m)
        return NULL;
    /* PyModule_Create zeroes the state: no bound functions, no names yet. */
    st = PyModule_GetState(m);
    for (i = 0; i < NAME_COUNT; i++)
        if (!(st->name[i] = PyUnicode_InternFromString(name_text[i]))) {
            Py_DECREF(m);
            return NULL;
        }
    if (PyModule_AddIntConstant(m, "API", SPEEDUPS_API) < 0
            || PyModule_AddIntConstant(m, "E_BUFSIZE", E_BUFSIZE) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
