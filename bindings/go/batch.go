package minlsh

/*
#define MINLSH_EXPERIMENTAL_API
#include <minlsh.h>
#include <stdlib.h>
*/
import "C"

import (
	"fmt"
	"runtime"
	"sync"
	"unsafe"
)

// Batch calls: one cgo call for many documents. data buffers are Go memory
// lent to C for the duration of one call (they hold no Go pointers, so cgo
// allows it), never copied.

// sizes converts offsets to the C type, checking that they are
// non-negative (the library checks the rest).
func sizes(op string, v []int) ([]C.size_t, error) {
	out := make([]C.size_t, len(v))
	for i, x := range v {
		if x < 0 {
			return nil, paramError(op, fmt.Sprintf("offset %d is negative", i))
		}
		out[i] = C.size_t(x)
	}
	return out, nil
}

func (f *Family) splitSigs(values []uint32, n int) []MinHash {
	out := make([]MinHash, n)
	for i := range out {
		out[i] = MinHash{Seed: f.seed, Scheme: f.scheme, Values: values[i*f.k : (i+1)*f.k : (i+1)*f.k]}
	}
	return out
}

// SignTokens signs pre-tokenized documents in one call
// (minlsh_family_sign_tokens), without copying them: token t is
// data[offsets[t]:offsets[t+1]] and document d is the tokens
// docs[d] .. docs[d+1]-1 (so len(docs) is the number of documents plus
// one). Each token is hashed as Update hashes an item, so signature d
// equals a MinHash updated with document d's tokens one by one.
func (f *Family) SignTokens(data []byte, offsets []int, docs []int) ([]MinHash, error) {
	const op = "Family.SignTokens"
	if len(offsets) == 0 || len(docs) == 0 {
		return nil, paramError(op, "offsets and docs need at least one entry")
	}
	coff, err := sizes(op, offsets)
	if err != nil {
		return nil, err
	}
	cdocs, err := sizes(op, docs)
	if err != nil {
		return nil, err
	}
	n := len(docs) - 1
	values := make([]uint32, n*f.k)
	f.mu.RLock()
	defer f.mu.RUnlock()
	if f.p == nil {
		return nil, closedError(op)
	}
	rc := C.minlsh_family_sign_tokens(f.p, nil, bytesPtr(data), &coff[0],
		C.size_t(len(offsets)-1), &cdocs[0], C.size_t(n), u32Ptr(values),
		C.size_t(len(values)), nil)
	runtime.KeepAlive(data)
	if rc != 0 {
		return nil, check(rc, "minlsh_family_sign_tokens")
	}
	return f.splitSigs(values, n), nil
}

// SignDelimited is SignTokens for tokens joined with a separator byte that
// no token contains (minlsh_family_sign_delimited): the docs[len(docs)-1]
// tokens are the pieces of data between separators, empty ones included;
// document d is the tokens docs[d] .. docs[d+1]-1. A wrong number of
// separators is ErrParam.
func (f *Family) SignDelimited(data []byte, sep byte, docs []int) ([]MinHash, error) {
	const op = "Family.SignDelimited"
	if len(docs) == 0 {
		return nil, paramError(op, "docs needs at least one entry")
	}
	cdocs, err := sizes(op, docs)
	if err != nil {
		return nil, err
	}
	n := len(docs) - 1
	values := make([]uint32, n*f.k)
	f.mu.RLock()
	defer f.mu.RUnlock()
	if f.p == nil {
		return nil, closedError(op)
	}
	rc := C.minlsh_family_sign_delimited(f.p, nil, bytesPtr(data), C.size_t(len(data)),
		C.uint32_t(sep), &cdocs[0], C.size_t(n), u32Ptr(values), C.size_t(len(values)), nil)
	runtime.KeepAlive(data)
	if rc != 0 {
		return nil, check(rc, "minlsh_family_sign_delimited")
	}
	return f.splitSigs(values, n), nil
}

// updateTokens folds items into values (a signature of f) in one cgo call
// for the hashing and signing and one for the merge, instead of one per
// item: the items are joined into one buffer (a copy, as [][]byte holds Go
// pointers C may not see) with offsets.
func (f *Family) updateTokens(values []uint32, items [][]byte) error {
	total := 0
	for _, it := range items {
		total += len(it)
	}
	data := make([]byte, 0, total)
	offsets := make([]C.size_t, len(items)+1)
	for i, it := range items {
		data = append(data, it...)
		offsets[i+1] = C.size_t(len(data))
	}
	docs := [2]C.size_t{0, C.size_t(len(items))}
	tmp := make([]uint32, f.k)
	f.mu.RLock()
	defer f.mu.RUnlock()
	if f.p == nil {
		return closedError("MinHash.Update")
	}
	if err := check(C.minlsh_family_sign_tokens(f.p, nil, bytesPtr(data), &offsets[0],
		C.size_t(len(items)), &docs[0], 1, u32Ptr(tmp), C.size_t(len(tmp)), nil),
		"minlsh_family_sign_tokens"); err != nil {
		return err
	}
	return check(C.minlsh_signature_merge(u32Ptr(values), u32Ptr(tmp), C.size_t(len(tmp))),
		"minlsh_signature_merge")
}

// ---- the index, many at a time ---------------------------------------------------

// packed puts the signatures side by side for one C call, checking each.
func (x *Index) packed(ms []MinHash, op string) ([]uint32, int, error) {
	k := int(C.minlsh_index_k(x.p))
	out := make([]uint32, 0, len(ms)*k)
	for i, m := range ms {
		if err := x.sig(m, fmt.Sprintf("%s (signature %d)", op, i)); err != nil {
			return nil, 0, err
		}
		out = append(out, m.Values...)
	}
	return out, k, nil
}

// InsertMany inserts ids[i] with ms[i] for every i in one call
// (minlsh_index_insert_many): the same as Insert in order, faster on large
// indexes. It stops at the first failure (ErrExists for an id present or
// repeated); those before it are inserted, and the count is returned.
func (x *Index) InsertMany(ids []uint64, ms []MinHash) (int, error) {
	const op = "Index.InsertMany"
	if len(ids) != len(ms) {
		return 0, paramError(op, fmt.Sprintf("%d ids, %d signatures", len(ids), len(ms)))
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.p == nil {
		return 0, closedError(op)
	}
	if len(ids) == 0 {
		return 0, nil
	}
	sigs, k, err := x.packed(ms, op)
	if err != nil {
		return 0, err
	}
	var done C.size_t
	rc := C.minlsh_index_insert_many(x.p, u64Ptr(ids), u32Ptr(sigs), C.size_t(len(ids)),
		C.size_t(k), &done)
	return int(done), check(rc, "minlsh_index_insert_many")
}

// QueryMany is Query for many signatures in one call
// (minlsh_index_query_many): result i is what Query(ms[i]) returns.
func (x *Index) QueryMany(ms []MinHash) ([][]Candidate, error) {
	const op = "Index.QueryMany"
	x.mu.RLock()
	defer x.mu.RUnlock()
	if x.p == nil {
		return nil, closedError(op)
	}
	out := make([][]Candidate, len(ms))
	if len(ms) == 0 {
		return out, nil
	}
	sigs, k, err := x.packed(ms, op)
	if err != nil {
		return nil, err
	}
	offsets := make([]C.size_t, len(ms)+1)
	capacity := 16 * len(ms)
	for {
		ids := make([]uint64, capacity)
		sims := make([]float64, capacity)
		var total C.size_t
		rc := C.minlsh_index_query_many(x.p, u32Ptr(sigs), C.size_t(len(ms)), C.size_t(k),
			&offsets[0], u64Ptr(ids), (*C.double)(unsafe.Pointer(&sims[0])),
			C.size_t(capacity), &total)
		if rc == CodeBufSize {
			capacity = int(total)
			continue
		}
		if rc != 0 {
			return nil, check(rc, "minlsh_index_query_many")
		}
		for i := range out {
			lo, hi := int(offsets[i]), int(offsets[i+1])
			cs := make([]Candidate, hi-lo)
			for j := range cs {
				cs[j] = Candidate{ID: ids[lo+j], Similarity: sims[lo+j]}
			}
			out[i] = cs
		}
		return out, nil
	}
}

// QueryLimited is Query with a bound on the work for hot buckets
// (minlsh_index_query_limited): bands are searched in order until the next
// one would bring the bucket members collected above maxMembers (0: no
// limit). bandsSearched is the index's band count when the answer is
// complete, fewer when it was cut short.
func (x *Index) QueryLimited(m MinHash, maxMembers uint64) (cands []Candidate,
	bandsSearched int, err error) {
	const op = "Index.QueryLimited"
	x.mu.RLock()
	defer x.mu.RUnlock()
	if x.p == nil {
		return nil, 0, closedError(op)
	}
	if err := x.sig(m, op); err != nil {
		return nil, 0, err
	}
	capacity := 64
	for {
		ids := make([]uint64, capacity)
		sims := make([]float64, capacity)
		var n C.size_t
		var searched C.uint32_t
		rc := C.minlsh_index_query_limited(x.p, u32Ptr(m.Values), C.size_t(len(m.Values)),
			C.uint64_t(maxMembers), u64Ptr(ids), (*C.double)(unsafe.Pointer(&sims[0])),
			C.size_t(capacity), &n, &searched)
		if rc == CodeBufSize {
			capacity = int(n)
			continue
		}
		if rc != 0 {
			return nil, 0, check(rc, "minlsh_index_query_limited")
		}
		out := make([]Candidate, int(n))
		for i := range out {
			out[i] = Candidate{ID: ids[i], Similarity: sims[i]}
		}
		return out, int(searched), nil
	}
}

// Merge inserts every document of src into x with its id plus idOffset
// (minlsh_index_merge), all or nothing: shards built apart answer, once
// merged, like one index. ErrMismatch if the parameters differ, ErrExists
// if a shifted id is already in x. src is only read.
func (x *Index) Merge(src *Index, idOffset uint64) error {
	const op = "Index.Merge"
	if src == x {
		return paramError(op, "an index cannot merge itself")
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	src.mu.RLock()
	defer src.mu.RUnlock()
	if x.p == nil || src.p == nil {
		return closedError(op)
	}
	return check(C.minlsh_index_merge(x.p, src.p, C.uint64_t(idOffset)), "minlsh_index_merge")
}

// PairsMax is Pairs with a bound: more than maxPairs pairs (0: no limit)
// return ErrTooBig and nothing is built.
func (x *Index) PairsMax(minSimilarity float64, maxPairs uint64) ([]Pair, error) {
	x.mu.RLock()
	defer x.mu.RUnlock()
	if x.p == nil {
		return nil, closedError("Index.PairsMax")
	}
	var ps *C.minlsh_pairs
	if rc := C.minlsh_pairs_from_index(&ps, x.p, C.double(minSimilarity),
		C.uint64_t(maxPairs), nil); rc != 0 {
		return nil, newError(rc, "minlsh_pairs_from_index", fmt.Sprintf("min similarity %g, "+
			"max pairs %d", minSimilarity, maxPairs))
	}
	return takePairs(ps)
}

// takePairs reads every pair of ps and frees it, whatever happens.
func takePairs(ps *C.minlsh_pairs) ([]Pair, error) {
	defer C.minlsh_pairs_free(ps)
	out := make([]Pair, int(C.minlsh_pairs_count(ps)))
	for i := range out {
		var a, b C.uint64_t
		var s C.double
		if err := check(C.minlsh_pairs_copy_pair(&a, &b, &s, ps, C.size_t(i)),
			"minlsh_pairs_copy_pair"); err != nil {
			return nil, err
		}
		out[i] = Pair{A: uint64(a), B: uint64(b), Similarity: float64(s)}
	}
	return out, nil
}

// takeClusters reads every group of cs (members ascending) and frees it,
// whatever happens.
func takeClusters(cs *C.minlsh_clusters) ([][]uint64, error) {
	defer C.minlsh_clusters_free(cs)
	out := make([][]uint64, int(C.minlsh_clusters_count(cs)))
	for i := range out {
		var n C.size_t
		rc := C.minlsh_clusters_copy_members(cs, C.size_t(i), nil, 0, &n)
		if rc != CodeBufSize && rc != 0 {
			return nil, check(rc, "minlsh_clusters_copy_members")
		}
		members := make([]uint64, int(n))
		if err := check(C.minlsh_clusters_copy_members(cs, C.size_t(i), u64Ptr(members), n, &n),
			"minlsh_clusters_copy_members"); err != nil {
			return nil, err
		}
		out[i] = members
	}
	return out, nil
}

// ---- the signature matrix ---------------------------------------------------------

// SigMatrix is signatures addressed by position 0..n-1, with the family's
// K and Seed and a config id, saved to and loaded or memory-mapped from a
// file (minlsh_sigmatrix). Reads may run concurrently; Append and Close
// take the write lock.
type SigMatrix struct {
	mu sync.RWMutex
	p  *C.minlsh_sigmatrix
}

// NewSigMatrix creates an empty matrix for the classic family (k, seed).
func NewSigMatrix(k int, seed uint64, configID uint64) (*SigMatrix, error) {
	return NewSigMatrixScheme(k, seed, SchemeClassic, configID)
}

// NewSigMatrixScheme creates an empty matrix for the family (k, seed)
// signing with scheme; its file keeps the scheme.
func NewSigMatrixScheme(k int, seed uint64, scheme Scheme, configID uint64) (*SigMatrix, error) {
	f, err := familyFor(k, seed, scheme)
	if err != nil {
		return nil, err
	}
	f.mu.RLock()
	defer f.mu.RUnlock()
	m := &SigMatrix{}
	if err := check(C.minlsh_sigmatrix_new(&m.p, f.p, C.uint64_t(configID), nil),
		"minlsh_sigmatrix_new"); err != nil {
		return nil, err
	}
	runtime.SetFinalizer(m, (*SigMatrix).Close)
	return m, nil
}

type openFn func(**C.minlsh_sigmatrix, *C.char, *C.minlsh_load_options) C.int

func openSigMatrix(fn openFn, name, path string, expect *IndexConfig) (*SigMatrix, error) {
	if versionErr != nil {
		return nil, versionErr
	}
	cpath := C.CString(path)
	defer C.free(unsafe.Pointer(cpath))
	m := &SigMatrix{}
	rc, err := loadWith(expect, func(opts *C.minlsh_load_options) C.int {
		return fn(&m.p, cpath, opts)
	})
	if err != nil {
		return nil, err
	}
	if rc != 0 {
		return nil, newError(rc, name, path)
	}
	runtime.SetFinalizer(m, (*SigMatrix).Close)
	return m, nil
}

// LoadSigMatrix reads a saved matrix. With expect nil any valid file loads;
// otherwise its K, Seed and ConfigID must match (else ErrMismatch).
func LoadSigMatrix(path string, expect *IndexConfig) (*SigMatrix, error) {
	return openSigMatrix(func(out **C.minlsh_sigmatrix, p *C.char,
		o *C.minlsh_load_options) C.int {
		return C.minlsh_sigmatrix_load(out, p, o)
	}, "minlsh_sigmatrix_load", path, expect)
}

// MapSigMatrix is LoadSigMatrix with the file memory-mapped read-only
// (minlsh_sigmatrix_map): Append then returns ErrState.
func MapSigMatrix(path string, expect *IndexConfig) (*SigMatrix, error) {
	return openSigMatrix(func(out **C.minlsh_sigmatrix, p *C.char,
		o *C.minlsh_load_options) C.int {
		return C.minlsh_sigmatrix_map(out, p, o)
	}, "minlsh_sigmatrix_map", path, expect)
}

// Close releases the matrix (a mapped one is unmapped).
func (m *SigMatrix) Close() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.p != nil {
		C.minlsh_sigmatrix_free(m.p)
		m.p = nil
		runtime.SetFinalizer(m, nil)
	}
	return nil
}

// Len is the number of signatures.
func (m *SigMatrix) Len() int {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return int(C.minlsh_sigmatrix_count(m.p))
}

// Append adds signatures in order and returns the position of the first.
func (m *SigMatrix) Append(sigs ...MinHash) (int, error) {
	const op = "SigMatrix.Append"
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.p == nil {
		return 0, closedError(op)
	}
	first := int(C.minlsh_sigmatrix_count(m.p))
	k, seed := int(C.minlsh_sigmatrix_k(m.p)), uint64(C.minlsh_sigmatrix_seed(m.p))
	scheme := Scheme(C.minlsh_sigmatrix_scheme(m.p))
	for i, s := range sigs {
		if len(s.Values) != k || s.Seed != seed || s.Scheme != scheme {
			return first, paramError(op, fmt.Sprintf("signature %d is of family (k %d, seed %d), "+
				"the matrix's is (k %d, seed %d)", i, len(s.Values), s.Seed, k, seed))
		}
		if err := check(C.minlsh_sigmatrix_append(m.p, u32Ptr(s.Values), C.size_t(k), nil),
			"minlsh_sigmatrix_append"); err != nil {
			return first, err
		}
	}
	return first, nil
}

// Column is the signature at position pos.
func (m *SigMatrix) Column(pos int) (MinHash, error) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	if m.p == nil {
		return MinHash{}, closedError("SigMatrix.Column")
	}
	k := int(C.minlsh_sigmatrix_k(m.p))
	out := MinHash{Seed: uint64(C.minlsh_sigmatrix_seed(m.p)),
		Scheme: Scheme(C.minlsh_sigmatrix_scheme(m.p)), Values: make([]uint32, k)}
	if pos < 0 {
		return MinHash{}, newError(CodeNotFound, "SigMatrix.Column", fmt.Sprint(pos))
	}
	return out, check(C.minlsh_sigmatrix_copy_column(m.p, C.uint64_t(pos), u32Ptr(out.Values),
		C.size_t(k), nil), "minlsh_sigmatrix_copy_column")
}

// Save writes the matrix atomically (minlsh_sigmatrix_save).
func (m *SigMatrix) Save(path string) error {
	m.mu.RLock()
	defer m.mu.RUnlock()
	if m.p == nil {
		return closedError("SigMatrix.Save")
	}
	cpath := C.CString(path)
	defer C.free(unsafe.Pointer(cpath))
	return newErrorIf(C.minlsh_sigmatrix_save(m.p, cpath), "minlsh_sigmatrix_save", path)
}

func newErrorIf(rc C.int, op, detail string) error {
	if rc == 0 {
		return nil
	}
	return newError(rc, op, detail)
}

// Pairs lists the positions (A < B) sharing one of bands bands of rows rows
// with estimate >= minSimilarity, without an index (minlsh_pairs_from_matrix);
// more than maxPairs (0: no limit) is ErrTooBig.
func (m *SigMatrix) Pairs(bands, rows int, minSimilarity float64, maxPairs uint64) ([]Pair,
	error) {
	b, r, err := bandsRows("minlsh_pairs_from_matrix", bands, rows)
	if err != nil {
		return nil, err
	}
	m.mu.RLock()
	defer m.mu.RUnlock()
	if m.p == nil {
		return nil, closedError("SigMatrix.Pairs")
	}
	var ps *C.minlsh_pairs
	if rc := C.minlsh_pairs_from_matrix(&ps, m.p, b, r, C.double(minSimilarity),
		C.uint64_t(maxPairs), nil); rc != 0 {
		return nil, check(rc, "minlsh_pairs_from_matrix")
	}
	return takePairs(ps)
}

// Clusters is the connected components of Pairs' graph, without listing
// the pairs (minlsh_clusters_from_matrix).
func (m *SigMatrix) Clusters(bands, rows int, minSimilarity float64) ([][]uint64, error) {
	b, r, err := bandsRows("minlsh_clusters_from_matrix", bands, rows)
	if err != nil {
		return nil, err
	}
	m.mu.RLock()
	defer m.mu.RUnlock()
	if m.p == nil {
		return nil, closedError("SigMatrix.Clusters")
	}
	var cs *C.minlsh_clusters
	if rc := C.minlsh_clusters_from_matrix(&cs, m.p, b, r, C.double(minSimilarity),
		nil); rc != 0 {
		return nil, check(rc, "minlsh_clusters_from_matrix")
	}
	return takeClusters(cs)
}
