package minlsh

/*
#define MINLSH_EXPERIMENTAL_API 1
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

// IndexConfig describes a band index: the signatures' family (K, Seed,
// Scheme), the similarity it is for (Threshold), the banding (Bands x Rows
// <= K) and a ConfigID stored with the index and checked on load (normally
// Shingler.ConfigID; 0 if unused).
//
// As in every options struct of this package, a zero field means its
// default: K 128, Seed 1 (the command's and Python's), Scheme SchemeClassic,
// Threshold 0.8, and Bands and Rows (both 0) planned from Threshold with
// Plan's defaults. ConfigID 0 is "no configuration". A family of seed 0 is
// reached only through NewFamily and the signatures it makes.
type IndexConfig struct {
	K         int
	Seed      uint64
	Scheme    Scheme
	Threshold float64 // InsertNovel's threshold unless its options give one
	Bands     int
	Rows      int
	ConfigID  uint64
}

const (
	defaultK         = 128
	defaultSeed      = 1
	defaultThreshold = 0.8
)

// withDefaults fills the zero fields but the banding.
func (c IndexConfig) withDefaults() IndexConfig {
	if c.K == 0 {
		c.K = defaultK
	}
	if c.Seed == 0 {
		c.Seed = defaultSeed
	}
	if c.Threshold == 0 {
		c.Threshold = defaultThreshold
	}
	return c
}

// Index is a band index over signatures, keyed by caller-chosen 64-bit ids
// (minlsh_index). It is safe for concurrent use: queries, pairs, clusters
// and saves share a read lock; Insert, Remove, SetMetadata and Close take
// the write lock. Every result is sorted and independent of insertion order.
type Index struct {
	mu        sync.RWMutex
	p         *C.minlsh_index
	threshold float64
}

// Candidate is a query result: an indexed id and its estimated Jaccard.
type Candidate struct {
	ID         uint64
	Similarity float64
}

// Pair is two indexed ids (A < B) sharing a band, with their estimate.
type Pair struct {
	A, B       uint64
	Similarity float64
}

// NewIndex creates an empty index (zero fields of cfg: see IndexConfig).
// With Bands and Rows both 0 the banding is planned from the threshold:
// Plan(PlanOptions{Threshold: cfg.Threshold, K: cfg.K}).
func NewIndex(cfg IndexConfig) (*Index, error) {
	cfg = cfg.withDefaults()
	f, err := familyFor(cfg.K, cfg.Seed, cfg.Scheme)
	if err != nil {
		return nil, err
	}
	if cfg.Bands == 0 && cfg.Rows == 0 {
		p, err := Plan(PlanOptions{Threshold: cfg.Threshold, K: cfg.K})
		if err != nil {
			return nil, err
		}
		cfg.Bands, cfg.Rows = p.Bands, p.Rows
	}
	b, r, err := bandsRows("minlsh_index_new", cfg.Bands, cfg.Rows)
	if err != nil {
		return nil, err
	}
	f.mu.RLock()
	defer f.mu.RUnlock()
	x := &Index{threshold: cfg.Threshold}
	if rc := C.minlsh_index_new(&x.p, f.p, C.uint64_t(cfg.ConfigID), b, r, nil); rc != 0 {
		return nil, newError(rc, "minlsh_index_new", fmt.Sprintf("k %d, bands %d, rows %d",
			cfg.K, cfg.Bands, cfg.Rows))
	}
	runtime.SetFinalizer(x, (*Index).Close)
	return x, nil
}

// loadWith calls load with the options expect asks for (nil: none): the
// family of its K and Seed (zero fields: their defaults), read-locked for the
// call, and its ConfigID.
func loadWith(expect *IndexConfig, load func(*C.minlsh_load_options) C.int) (C.int, error) {
	if expect == nil {
		return load(nil), nil
	}
	cfg := expect.withDefaults()
	f, err := familyFor(cfg.K, cfg.Seed, cfg.Scheme)
	if err != nil {
		return 0, err
	}
	f.mu.RLock()
	defer f.mu.RUnlock()
	opts := C.minlsh_load_options{version: C.MINLSH_LOAD_OPTIONS_VERSION,
		family: f.p, config_id: C.uint64_t(expect.ConfigID)}
	return load(&opts), nil
}

// LoadIndex loads an index file (minlsh_index_load). With expect nil any
// valid file loads; otherwise its K, Seed and ConfigID must match (else
// ErrMismatch; zero K and Seed mean 128 and 1, as for NewIndex). Bands and
// rows always come from the file; the threshold is expect's, else the
// banding's (1/Bands)^(1/Rows).
func LoadIndex(path string, expect *IndexConfig) (*Index, error) {
	return openIndex(path, expect, false)
}

// MapIndex opens an index file read-only in place (minlsh_index_map), with
// the checks of LoadIndex. A file written by SaveMapped is not loaded:
// queries (Query, QueryLimited, QueryBatch) read a few of its pages
// (processes mapping one file share them), so opening costs milliseconds at
// any size; an older file is loaded whole. Insert and InsertNovel go to an
// in-memory delta that every query merges with the file's answers, so the
// index answers as the loaded one would; Remove of a document of the file
// returns ErrState (load the file to remove it). Save, SaveMapped, Pairs,
// Clusters and Merge (as the source) work on a copy loaded for the call.
// The file must not be truncated while mapped (saves rename over it, which
// a mapping survives).
func MapIndex(path string, expect *IndexConfig) (*Index, error) {
	return openIndex(path, expect, true)
}

func openIndex(path string, expect *IndexConfig, mapped bool) (*Index, error) {
	if versionErr != nil {
		return nil, versionErr
	}
	cpath := C.CString(path)
	defer C.free(unsafe.Pointer(cpath))
	x := &Index{}
	op := "minlsh_index_load"
	if mapped {
		op = "minlsh_index_map"
	}
	rc, err := loadWith(expect, func(opts *C.minlsh_load_options) C.int {
		if mapped {
			return C.minlsh_index_map(&x.p, cpath, opts)
		}
		return C.minlsh_index_load(&x.p, cpath, opts)
	})
	if err != nil {
		return nil, err
	}
	if rc != 0 {
		return nil, newError(rc, op, path)
	}
	if expect != nil && expect.Threshold != 0 {
		x.threshold = expect.Threshold
	} else {
		var t C.double
		_ = C.minlsh_plan_threshold(&t, C.minlsh_index_bands(x.p), C.minlsh_index_rows(x.p))
		x.threshold = float64(t)
	}
	runtime.SetFinalizer(x, (*Index).Close)
	return x, nil
}

// Close releases the index. Further calls return an error.
func (x *Index) Close() error {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.p != nil {
		C.minlsh_index_free(x.p)
		x.p = nil
		runtime.SetFinalizer(x, nil)
	}
	return nil
}

// Config reports the index's parameters.
func (x *Index) Config() IndexConfig {
	x.mu.RLock()
	defer x.mu.RUnlock()
	return IndexConfig{K: int(C.minlsh_index_k(x.p)), Seed: uint64(C.minlsh_index_seed(x.p)),
		Threshold: x.threshold,
		Bands:     int(C.minlsh_index_bands(x.p)), Rows: int(C.minlsh_index_rows(x.p)),
		ConfigID: uint64(C.minlsh_index_config_id(x.p)),
		Scheme:   Scheme(C.minlsh_index_scheme(x.p))}
}

// Len is the number of documents.
func (x *Index) Len() int {
	x.mu.RLock()
	defer x.mu.RUnlock()
	return int(C.minlsh_index_count(x.p))
}

func (x *Index) sig(m MinHash, op string) error {
	k, seed := int(C.minlsh_index_k(x.p)), uint64(C.minlsh_index_seed(x.p))
	scheme := Scheme(C.minlsh_index_scheme(x.p))
	if len(m.Values) != k || m.Seed != seed || m.Scheme != scheme {
		return paramError(op, fmt.Sprintf("signature of family (k %d, seed %d, %v), the index's "+
			"is (k %d, seed %d, %v)", len(m.Values), m.Seed, m.Scheme, k, seed, scheme))
	}
	return nil
}

// Sign is the signature of a set of 64-bit hashes (e.g. Shingler.Hash)
// under the index's family: no K, Seed or Scheme to repeat.
func (x *Index) Sign(hashes []uint64) (MinHash, error) {
	f, err := x.family()
	if err != nil {
		return MinHash{}, err
	}
	return f.Sign(hashes)
}

// SignText shingles text with s and signs it under the index's family.
func (x *Index) SignText(s *Shingler, text []byte) (MinHash, error) {
	f, err := x.family()
	if err != nil {
		return MinHash{}, err
	}
	return f.SignText(s, text)
}

func (x *Index) family() (*Family, error) {
	x.mu.RLock()
	if x.p == nil {
		x.mu.RUnlock()
		return nil, closedError("Index.Sign")
	}
	k, seed := int(C.minlsh_index_k(x.p)), uint64(C.minlsh_index_seed(x.p))
	scheme := Scheme(C.minlsh_index_scheme(x.p))
	x.mu.RUnlock()
	return familyFor(k, seed, scheme)
}

// Insert adds a document; ErrExists if the id is already there. The
// signature is copied.
func (x *Index) Insert(id uint64, m MinHash) error {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.p == nil {
		return closedError("Index.Insert")
	}
	if err := x.sig(m, "Index.Insert"); err != nil {
		return err
	}
	if rc := C.minlsh_index_insert(x.p, C.uint64_t(id), u32Ptr(m.Values),
		C.size_t(len(m.Values))); rc != 0 {
		return newError(rc, "minlsh_index_insert", fmt.Sprintf("id %d", id))
	}
	return nil
}

// Remove deletes a document; ErrNotFound if it is not there.
func (x *Index) Remove(id uint64) error {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.p == nil {
		return closedError("Index.Remove")
	}
	if rc := C.minlsh_index_remove(x.p, C.uint64_t(id)); rc != 0 {
		return newError(rc, "minlsh_index_remove", fmt.Sprintf("id %d", id))
	}
	return nil
}

// Contains reports whether id is in the index.
func (x *Index) Contains(id uint64) bool {
	x.mu.RLock()
	defer x.mu.RUnlock()
	return x.p != nil && C.minlsh_index_contains(x.p, C.uint64_t(id)) == 1
}

// IDs lists every id, ascending.
func (x *Index) IDs() ([]uint64, error) {
	x.mu.RLock()
	defer x.mu.RUnlock()
	if x.p == nil {
		return nil, closedError("Index.IDs")
	}
	ids := make([]uint64, int(C.minlsh_index_count(x.p)))
	var n C.size_t
	err := check(C.minlsh_index_copy_ids(x.p, u64Ptr(ids), C.size_t(len(ids)), &n), "minlsh_index_copy_ids")
	return ids[:n], err
}

// Get returns the stored signature of id (ErrNotFound if absent).
func (x *Index) Get(id uint64) (MinHash, error) {
	x.mu.RLock()
	defer x.mu.RUnlock()
	if x.p == nil {
		return MinHash{}, closedError("Index.Get")
	}
	m := MinHash{Seed: uint64(C.minlsh_index_seed(x.p)), Scheme: Scheme(C.minlsh_index_scheme(x.p)),
		Values: make([]uint32, int(C.minlsh_index_k(x.p)))}
	if rc := C.minlsh_index_copy_signature(x.p, C.uint64_t(id), u32Ptr(m.Values), C.size_t(len(m.Values)),
		nil); rc != 0 {
		return MinHash{}, newError(rc, "minlsh_index_copy_signature", fmt.Sprintf("id %d", id))
	}
	return m, nil
}

// Query returns the documents sharing at least one band with m, ascending
// by id, with their estimated Jaccard. A stored document finds itself.
func (x *Index) Query(m MinHash) ([]Candidate, error) {
	x.mu.RLock()
	defer x.mu.RUnlock()
	if x.p == nil {
		return nil, closedError("Index.Query")
	}
	if err := x.sig(m, "Index.Query"); err != nil {
		return nil, err
	}
	capacity := 64
	for {
		ids := make([]uint64, capacity)
		sims := make([]float64, capacity)
		var n C.size_t
		rc := C.minlsh_index_query(x.p, u32Ptr(m.Values), C.size_t(len(m.Values)), u64Ptr(ids),
			(*C.double)(unsafe.Pointer(&sims[0])), C.size_t(capacity), &n)
		if rc == CodeBufSize {
			capacity = int(n)
			continue
		}
		if rc != 0 {
			return nil, check(rc, "minlsh_index_query")
		}
		out := make([]Candidate, int(n))
		for i := range out {
			out[i] = Candidate{ID: ids[i], Similarity: sims[i]}
		}
		return out, nil
	}
}

// Pairs lists every pair of documents sharing a band, once each, whose
// estimated Jaccard is >= minSimilarity (0: all candidates; the threshold:
// the pairs verified against the signatures), sorted by (A, B).
func (x *Index) Pairs(minSimilarity float64) ([]Pair, error) {
	x.mu.RLock()
	defer x.mu.RUnlock()
	if x.p == nil {
		return nil, closedError("Index.Pairs")
	}
	var ps *C.minlsh_pairs
	if rc := C.minlsh_pairs_from_index(&ps, x.p, C.double(minSimilarity), 0, nil); rc != 0 {
		return nil, newError(rc, "minlsh_pairs_from_index", fmt.Sprintf("min similarity %g",
			minSimilarity))
	}
	return takePairs(ps)
}

// Clusters groups near-duplicates: the connected components (two or more
// members) of the graph Pairs(minSimilarity) describes. Members ascending,
// groups ordered by their smallest member.
func (x *Index) Clusters(minSimilarity float64) ([][]uint64, error) {
	x.mu.RLock()
	defer x.mu.RUnlock()
	if x.p == nil {
		return nil, closedError("Index.Clusters")
	}
	var cs *C.minlsh_clusters
	if rc := C.minlsh_clusters_from_index(&cs, x.p, C.double(minSimilarity), nil); rc != 0 {
		return nil, newError(rc, "minlsh_clusters_from_index", fmt.Sprintf("min similarity %g",
			minSimilarity))
	}
	return takeClusters(cs)
}

// SetMetadata stores application bytes with the index (saved and loaded
// with it; the library never reads them). They are copied.
func (x *Index) SetMetadata(data []byte) error {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.p == nil {
		return closedError("Index.SetMetadata")
	}
	return check(C.minlsh_index_set_metadata(x.p, bytesPtr(data), C.size_t(len(data))),
		"minlsh_index_set_metadata")
}

// Metadata returns a copy of the application bytes.
func (x *Index) Metadata() ([]byte, error) {
	x.mu.RLock()
	defer x.mu.RUnlock()
	if x.p == nil {
		return nil, closedError("Index.Metadata")
	}
	var n C.size_t
	rc := C.minlsh_index_copy_metadata(x.p, nil, 0, &n)
	if rc == 0 {
		return []byte{}, nil
	}
	if rc != CodeBufSize {
		return nil, check(rc, "minlsh_index_copy_metadata")
	}
	buf := make([]byte, int(n))
	err := check(C.minlsh_index_copy_metadata(x.p, bytesPtr(buf), n, &n), "minlsh_index_copy_metadata")
	return buf[:n], err
}

// Save writes the index to path atomically (a temporary file, fsync,
// rename): a crash never leaves a half-written file.
func (x *Index) Save(path string) error {
	x.mu.RLock()
	defer x.mu.RUnlock()
	if x.p == nil {
		return closedError("Index.Save")
	}
	cpath := C.CString(path)
	defer C.free(unsafe.Pointer(cpath))
	return newError(C.minlsh_index_save(x.p, cpath), "minlsh_index_save", path)
}

// SaveMapped writes the index to path atomically in format version 2
// (minlsh_index_save_mapped): the documents, every band's entries sorted by
// band key and a checksum per 64 KiB block, so that MapIndex answers queries
// from the file in place. About 8 bytes per document and band larger than
// Save's file; LoadIndex reads both.
func (x *Index) SaveMapped(path string) error {
	x.mu.RLock()
	defer x.mu.RUnlock()
	if x.p == nil {
		return closedError("Index.SaveMapped")
	}
	cpath := C.CString(path)
	defer C.free(unsafe.Pointer(cpath))
	return newError(C.minlsh_index_save_mapped(x.p, cpath), "minlsh_index_save_mapped", path)
}
