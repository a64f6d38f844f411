package minlsh

/*
#define MINLSH_EXPERIMENTAL_API
#include <minlsh.h>
#include <stdlib.h>
*/
import "C"

import (
	"encoding/json"
	"fmt"
	"runtime"
	"strconv"
	"sync"
	"unsafe"
)

// Keep chooses the document a cluster keeps.
type Keep int

// Group chooses how documents are grouped around the kept ones.
type Group int

// Verify chooses how candidate pairs are confirmed.
type Verify int

// The policies of the dedup engine (docs/dedup.md); the zero value of each
// type is the default (KeepFirst, GroupComponents, VerifyExact).
const (
	KeepFirst   Keep = C.MINLSH_KEEP_FIRST   // the first document, in input order
	KeepLongest Keep = C.MINLSH_KEEP_LONGEST // the longest (most bytes); ties: the first

	GroupComponents Group = C.MINLSH_GROUP_COMPONENTS // one kept document per connected component
	GroupStrict     Group = C.MINLSH_GROUP_STRICT     // drop a document only for a kept near-duplicate

	VerifyExact     Verify = C.MINLSH_VERIFY_EXACT     // exact Jaccard of the shingle sets
	VerifySignature Verify = C.MINLSH_VERIFY_SIGNATURE // the signature estimate (no sets kept)
)

// DedupOptions configure a Dedup. Zero fields take the defaults (as in every
// options struct of this package): DedupOptions{} is DefaultDedupOptions().
type DedupOptions struct {
	Keep      Keep    // 0: KeepFirst
	Group     Group   // 0: GroupComponents
	Verify    Verify  // 0: VerifyExact
	Threshold float64 // Jaccard threshold in (0, 1]; 0: 0.8
	NumPerm   int     // MinHash values per signature, 1..FamilyKMax; 0: 128
	Seed      uint64  // MinHash family seed; 0: 1
	Scheme    Scheme  // how signatures are made; 0: SchemeClassic
	// Bands and Rows set the banding (both or neither, Bands*Rows <=
	// NumPerm); 0, 0: planned so that P(candidate | Threshold) >= 0.999.
	Bands, Rows int
	// Threads for shingling, signing and the run; 0: one per processor.
	// Results never depend on it.
	Threads int
	// MaxBucket leaves out band buckets of more distinct documents (counted
	// in DedupStats.CappedBuckets); 0: no cap.
	MaxBucket uint64
	// Memory is the bytes the engine's growing data may take before it goes
	// to temporary files in TmpDir ("": $TMPDIR, else /tmp); 0: half the
	// physical memory, as every front end; DedupMemoryUnlimited: no limit.
	// Results never depend on it.
	Memory uint64
	TmpDir string
	// Shingler shingles the texts (the engine keeps a copy, so it may be
	// closed after NewDedup); nil: word 5-shingles, default key.
	Shingler *Shingler
	// Preset names a published pipeline's settings (Presets lists them;
	// case ignored), as the command's --preset: every zero field among
	// Threshold, NumPerm, Bands, Rows and Shingler takes the preset's value
	// instead of the default, except that a NumPerm given leaves the
	// banding to be planned (or to the Bands or Rows given). "": none.
	Preset string
}

// DedupMemoryUnlimited as DedupOptions.Memory keeps everything in memory.
const DedupMemoryUnlimited = uint64(C.MINLSH_DEDUP_MEMORY_UNLIMITED)

// DefaultDedupOptions are the minlsh command's defaults: threshold 0.8,
// 128 values, seed 1, keep the first, connected components, exact
// verification.
func DefaultDedupOptions() DedupOptions {
	return DedupOptions{Keep: KeepFirst, Group: GroupComponents, Verify: VerifyExact,
		Threshold: 0.8, NumPerm: 128, Seed: 1}
}

// Decision is what happens to one document (minlsh_dedup_decision).
// Documents are numbered 0, 1, ... in the order they were added.
type Decision struct {
	// Cluster numbers its cluster (GroupComponents: a connected component;
	// GroupStrict: a kept document and those attributed to it) from 1, in the
	// order of the clusters' first documents, as Clusters lists them; 0 for a
	// document in none.
	Cluster uint64
	// Representative is the kept document it is attributed to (itself when
	// kept).
	Representative uint64
	// Similarity is the verified similarity to the representative (1 for
	// itself and for exact copies).
	Similarity float64
	Kept       bool // kept, or dropped
	Exact      bool // dropped as an exact copy of the representative
	// ID and RepresentativeID are the string ids of the document and of its
	// representative (AddNamed); the document numbers in decimal otherwise.
	ID, RepresentativeID string
}

// DedupStats are the engine's counts (minlsh_dedup_stats); those of the run
// are 0 before it.
type DedupStats struct {
	Documents     uint64 // added
	Empty         uint64 // with no shingle: never near-duplicates
	ExactGroups   uint64 // groups of two or more exact copies
	Candidates    uint64 // distinct candidate pairs of distinct texts
	Verified      uint64 // candidates that passed the threshold
	CappedBuckets uint64 // buckets left out by MaxBucket
	Kept          uint64
	Dropped       uint64
	Bytes         uint64 // memory the engine holds now
	TempBytes     uint64 // written to temporary files
	Bands, Rows   int    // the banding used
	// Documents of AddNamed and AddJSON skipped for their id: one already
	// used (compared as minlsh_dedup_canonical_id compares them), or one
	// that is not a JSON string or number.
	RepeatedIDs, RefusedIDs uint64
}

// Dedup is the library's dedup engine (minlsh_dedup, an experimental API):
// add documents, Run once, then read the decisions, pairs and clusters.
// It owns the whole policy: exact copies by fingerprint, near-duplicates by
// banding and verification, and a keep or drop decision for every document.
// It is safe for concurrent use: AddTexts, Run and Close take a write lock,
// the results a read lock.
type Dedup struct {
	mu sync.RWMutex
	p  *C.minlsh_dedup
	// ids[i] is document i's string id; nil until AddNamed*, then one per
	// document (a document added without one has its number, in decimal).
	ids []string
	// seen holds the canonical forms of the ids so far.
	seen              map[string]struct{}
	repeated, refused uint64
}

// NewDedup creates an engine.
func NewDedup(opts DedupOptions) (*Dedup, error) {
	if versionErr != nil {
		return nil, versionErr
	}
	const op = "minlsh_dedup_new"
	if opts.Preset != "" {
		p, err := LookupPreset(opts.Preset)
		if err != nil {
			return nil, err
		}
		if opts.Threshold == 0 {
			opts.Threshold = p.Threshold
		}
		if opts.NumPerm == 0 {
			opts.NumPerm = p.NumPerm
			if opts.Bands == 0 {
				opts.Bands = p.Bands
			}
			if opts.Rows == 0 {
				opts.Rows = p.Rows
			}
		}
		if opts.Shingler == nil {
			sh, err := NewShingler(p.Shingle)
			if err != nil {
				return nil, err
			}
			defer sh.Close()
			opts.Shingler = sh
		}
	}
	var eo C.minlsh_dedup_options
	if err := check(C.minlsh_dedup_options_init(&eo, C.MINLSH_DEDUP_OPTIONS_VERSION),
		"minlsh_dedup_options_init"); err != nil {
		return nil, err
	}
	if opts.Keep != 0 {
		if opts.Keep != KeepFirst && opts.Keep != KeepLongest {
			return nil, paramError(op, fmt.Sprintf("unknown Keep %d", opts.Keep))
		}
		eo.keep = C.uint32_t(opts.Keep)
	}
	if opts.Group != 0 {
		if opts.Group != GroupComponents && opts.Group != GroupStrict {
			return nil, paramError(op, fmt.Sprintf("unknown Group %d", opts.Group))
		}
		eo.group = C.uint32_t(opts.Group)
	}
	if opts.Verify != 0 {
		if opts.Verify != VerifyExact && opts.Verify != VerifySignature {
			return nil, paramError(op, fmt.Sprintf("unknown Verify %d", opts.Verify))
		}
		eo.verify = C.uint32_t(opts.Verify)
	}
	if opts.Threshold != 0 {
		eo.threshold = C.double(opts.Threshold)
	}
	b, r, err := bandsRows(op, opts.Bands, opts.Rows)
	if err != nil {
		return nil, err
	}
	eo.bands, eo.rows = b, r
	if opts.Threads < 0 || opts.Threads > 1<<31 {
		return nil, paramError(op, fmt.Sprintf("threads %d", opts.Threads))
	}
	eo.threads = C.uint32_t(opts.Threads)
	eo.max_bucket = C.uint64_t(opts.MaxBucket)
	eo.memory = C.uint64_t(opts.Memory)
	eo.all_pairs = 1 // Pairs lists every verified pair
	if opts.TmpDir != "" {
		dir := C.CString(opts.TmpDir)
		defer C.free(unsafe.Pointer(dir))
		eo.tmpdir = dir
	}
	k, seed := opts.NumPerm, opts.Seed
	if k == 0 {
		k = defaultK
	}
	if seed == 0 {
		seed = defaultSeed
	}
	f, err := familyFor(k, seed, opts.Scheme)
	if err != nil {
		return nil, err
	}
	sh := opts.Shingler
	if sh == nil {
		if sh, err = NewShingler(ShinglerOptions{}); err != nil {
			return nil, err
		}
		defer sh.Close()
	}
	f.mu.RLock()
	defer f.mu.RUnlock()
	sh.mu.RLock()
	defer sh.mu.RUnlock()
	if f.p == nil || sh.p == nil {
		return nil, closedError("NewDedup")
	}
	var pb, pr C.uint32_t
	if rc := C.minlsh_dedup_plan(&pb, &pr, &eo, C.uint32_t(k)); rc != 0 {
		return nil, newError(rc, "minlsh_dedup_plan", fmt.Sprintf("no banding of %d hash "+
			"values reaches recall 0.999 at threshold %g; use a larger NumPerm or give Bands "+
			"and Rows", k, float64(eo.threshold)))
	}
	d := &Dedup{}
	if rc := C.minlsh_dedup_new(&d.p, sh.p, f.p, &eo, nil); rc != 0 {
		return nil, newError(rc, op, fmt.Sprintf("threshold %g, k %d, bands %d, rows %d, "+
			"max bucket %d", float64(eo.threshold), k, opts.Bands, opts.Rows, opts.MaxBucket))
	}
	runtime.SetFinalizer(d, (*Dedup).Close)
	return d, nil
}

// Close releases the engine. Further calls return an error; Close itself
// may be called more than once.
func (d *Dedup) Close() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.p != nil {
		C.minlsh_dedup_free(d.p)
		d.p = nil
		runtime.SetFinalizer(d, nil)
	}
	return nil
}

// Count is the number of documents added so far (0 after Close).
func (d *Dedup) Count() uint64 {
	d.mu.RLock()
	defer d.mu.RUnlock()
	return uint64(C.minlsh_dedup_count(d.p))
}

// AddTexts shingles, fingerprints and signs the texts on the engine's
// threads and adds them in order: the next documents are numbered Count(),
// Count()+1, ... The texts are copied once, into one C buffer (cgo forbids
// C from holding Go pointers), and handed to the library in one call of
// minlsh_dedup_add_texts. A text the library refuses (over the shingler's
// MaxDocumentBytes) is not added, so the numbers of those after it move
// down by one; the others are added all the same and the refused ones are
// listed in a *BatchError (indexes into texts). Errors: ErrState after Run
// or Close, ErrNoMem.
func (d *Dedup) AddTexts(texts [][]byte) error {
	return d.add(len(texts), func(i int) int { return len(texts[i]) },
		func(i int, dst []byte) { copy(dst, texts[i]) })
}

// AddStrings is AddTexts for strings (their bytes, read as they are).
func (d *Dedup) AddStrings(texts []string) error {
	return d.add(len(texts), func(i int) int { return len(texts[i]) },
		func(i int, dst []byte) { copy(dst, texts[i]) })
}

// add copies text i with fill into the C buffer (Go's copy: no Go pointer
// ever reaches C) and makes one call for the n texts.
func (d *Dedup) add(n int, length func(int) int, fill func(int, []byte)) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.p == nil {
		return closedError("Dedup.AddTexts")
	}
	if n == 0 {
		return nil
	}
	total := 0
	for i := 0; i < n; i++ {
		total += length(i)
	}
	// One C block: n pointers, n lengths, n statuses, then every text.
	ptrSize := C.size_t(unsafe.Sizeof(uintptr(0)))
	lenSize := C.size_t(unsafe.Sizeof(C.size_t(0)))
	head := C.size_t(n) * (ptrSize + lenSize + 4)
	block := C.malloc(head + C.size_t(total) + 1)
	if block == nil {
		return newError(CodeNoMem, "Dedup.AddTexts", "copying the texts")
	}
	defer C.free(block)
	ptrs := unsafe.Slice((*unsafe.Pointer)(block), n)
	lens := unsafe.Slice((*C.size_t)(unsafe.Add(block, C.size_t(n)*ptrSize)), n)
	status := unsafe.Slice((*C.int32_t)(unsafe.Add(block, C.size_t(n)*(ptrSize+lenSize))), n)
	data := unsafe.Add(block, head)
	off := 0
	for i := 0; i < n; i++ {
		size := length(i)
		dst := unsafe.Add(data, off)
		fill(i, unsafe.Slice((*byte)(dst), size))
		ptrs[i] = dst
		lens[i] = C.size_t(size)
		off += size
	}
	rc := C.minlsh_dedup_add_texts(d.p, (*unsafe.Pointer)(block), &lens[0], C.size_t(n),
		&status[0])
	if rc == 0 {
		return nil
	}
	var berr *BatchError
	for i, st := range status {
		if st < 0 && st != CodeNoMem {
			if berr == nil {
				berr = &BatchError{}
			}
			berr.Index = append(berr.Index, i)
			berr.Errors = append(berr.Errors,
				newError(C.int(st), "minlsh_dedup_add_texts", fmt.Sprintf("text %d", i)).(*Error))
		}
	}
	if rc == CodeNoMem || berr == nil {
		return newError(rc, "minlsh_dedup_add_texts", fmt.Sprintf("%d texts", n))
	}
	return berr
}

// Run finds and verifies the near-duplicates and decides, once, after the
// last AddTexts. Errors: ErrState if run already or closed, ErrNoMem (Run
// may then be called again).
func (d *Dedup) Run() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.p == nil {
		return closedError("Dedup.Run")
	}
	return check(C.minlsh_dedup_run(d.p), "minlsh_dedup_run")
}

// Decisions returns the decision of every document, in document order.
// Errors: ErrState before Run or after Close.
func (d *Dedup) Decisions() ([]Decision, error) {
	d.mu.RLock()
	defer d.mu.RUnlock()
	if d.p == nil {
		return nil, closedError("Dedup.Decisions")
	}
	n := int(C.minlsh_dedup_count(d.p))
	raw := make([]C.minlsh_dedup_decision, n+1) // Go memory without Go pointers
	var got C.size_t
	if err := check(C.minlsh_dedup_copy_decisions(d.p, 0, &raw[0], C.size_t(n), &got),
		"minlsh_dedup_copy_decisions"); err != nil {
		return nil, err
	}
	out := make([]Decision, int(got))
	for i := range out {
		r := &raw[i]
		out[i] = Decision{Cluster: uint64(r.cluster), Representative: uint64(r.representative),
			Similarity: float64(r.similarity), Kept: r.kept != 0, Exact: r.exact != 0}
		out[i].ID, out[i].RepresentativeID = d.idOf(uint64(i)), d.idOf(out[i].Representative)
	}
	return out, nil
}

func (d *Dedup) idOf(doc uint64) string {
	if doc < uint64(len(d.ids)) {
		return d.ids[doc]
	}
	return strconv.FormatUint(doc, 10)
}

// AddNamed adds documents with string ids (a file name, a URL, a JSON
// record's id), as Python's minlsh.dedup takes (id, text) pairs and the
// command names its inputs: Decision.ID and Decision.RepresentativeID give
// them back. A document whose id was used already is skipped and counted
// (DedupStats.RepeatedIDs), as the command skips it; documents added by
// AddTexts have their number as id. ErrParam if the lengths differ.
func (d *Dedup) AddNamed(ids []string, texts [][]byte) error {
	if len(ids) != len(texts) {
		return paramError("Dedup.AddNamed", fmt.Sprintf("%d ids for %d texts", len(ids),
			len(texts)))
	}
	raw := make([][]byte, len(ids))
	for i, id := range ids {
		raw[i], _ = json.Marshal(id)
	}
	keep := d.fresh(raw)
	ids, texts = pick(ids, keep), pick(texts, keep)
	return d.addNamed(ids, func() error { return d.AddTexts(texts) })
}

// AddJSON adds documents whose ids are JSON values as written (a JSON Lines
// record's id field), as minlsh dedup --jsonl takes them: ids are compared
// by minlsh_dedup_canonical_id (numbers by value: 1 and 1.0 are one id), and
// a document whose id was used already, or is not a JSON string or number
// (true, null...), is skipped and counted (DedupStats.RepeatedIDs,
// RefusedIDs). Decision.ID is the id's canonical JSON text. ErrParam if the
// lengths differ.
func (d *Dedup) AddJSON(ids [][]byte, texts [][]byte) error {
	if len(ids) != len(texts) {
		return paramError("Dedup.AddJSON", fmt.Sprintf("%d ids for %d texts", len(ids),
			len(texts)))
	}
	keep := d.fresh(ids)
	names := make([]string, 0, len(keep))
	for _, i := range keep {
		names = append(names, canonicalID(ids[i]))
	}
	texts = pick(texts, keep)
	return d.addNamed(names, func() error { return d.AddTexts(texts) })
}

// canonicalID is minlsh_dedup_canonical_id of a JSON id, "" if refused.
func canonicalID(id []byte) string {
	if len(id) == 0 {
		return ""
	}
	out := make([]byte, len(id)+32)
	var n C.size_t
	if C.minlsh_dedup_canonical_id(unsafe.Pointer(&id[0]), C.size_t(len(id)),
		(*C.char)(unsafe.Pointer(&out[0])), C.size_t(len(out)), &n) != 0 {
		return ""
	}
	return string(out[:n])
}

// fresh gives the positions of the ids to add: not refused, not used
// before (in this call or an earlier one), counting the others.
func (d *Dedup) fresh(ids [][]byte) []int {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.seen == nil {
		d.seen = make(map[string]struct{})
	}
	keep := make([]int, 0, len(ids))
	for i, id := range ids {
		key := canonicalID(id)
		if key == "" {
			d.refused++
			continue
		}
		if _, dup := d.seen[key]; dup {
			d.repeated++
			continue
		}
		d.seen[key] = struct{}{}
		keep = append(keep, i)
	}
	return keep
}

func pick[T any](v []T, keep []int) []T {
	out := make([]T, len(keep))
	for j, i := range keep {
		out[j] = v[i]
	}
	return out
}

// AddNamedStrings is AddNamed for string texts.
func (d *Dedup) AddNamedStrings(ids []string, texts []string) error {
	if len(ids) != len(texts) {
		return paramError("Dedup.AddNamedStrings", fmt.Sprintf("%d ids for %d texts",
			len(ids), len(texts)))
	}
	raw := make([][]byte, len(ids))
	for i, id := range ids {
		raw[i], _ = json.Marshal(id)
	}
	keep := d.fresh(raw)
	ids, texts = pick(ids, keep), pick(texts, keep)
	return d.addNamed(ids, func() error { return d.AddStrings(texts) })
}

// addNamed records the ids of the documents add adds: all of them, or all
// but those a *BatchError lists.
func (d *Dedup) addNamed(ids []string, add func() error) error {
	before := d.Count()
	err := add()
	var refused []int
	if be, ok := err.(*BatchError); ok {
		refused = be.Index
	} else if err != nil {
		return err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	for uint64(len(d.ids)) < before {
		d.ids = append(d.ids, strconv.FormatUint(uint64(len(d.ids)), 10))
	}
	for i, id := range ids {
		if len(refused) > 0 && refused[0] == i {
			refused = refused[1:]
			continue
		}
		d.ids = append(d.ids, id)
	}
	return err
}

// Stats returns the engine's counts.
func (d *Dedup) Stats() (DedupStats, error) {
	d.mu.RLock()
	defer d.mu.RUnlock()
	if d.p == nil {
		return DedupStats{}, closedError("Dedup.Stats")
	}
	var s C.minlsh_dedup_stats
	if err := check(C.minlsh_dedup_copy_stats(&s, d.p), "minlsh_dedup_copy_stats"); err != nil {
		return DedupStats{}, err
	}
	return DedupStats{Documents: uint64(s.documents), Empty: uint64(s.empty),
		ExactGroups: uint64(s.exact_groups), Candidates: uint64(s.candidates),
		Verified: uint64(s.verified), CappedBuckets: uint64(s.capped_buckets),
		Kept: uint64(s.kept), Dropped: uint64(s.dropped), Bytes: uint64(s.bytes),
		TempBytes: uint64(s.temp_bytes),
		Bands:     int(s.bands), Rows: int(s.rows),
		RepeatedIDs: d.repeated, RefusedIDs: d.refused}, nil
}

// Estimate is the signature estimate of the Jaccard similarity of
// documents a and b (1 for exact copies). Errors: ErrNotFound.
func (d *Dedup) Estimate(a, b uint64) (float64, error) {
	d.mu.RLock()
	defer d.mu.RUnlock()
	if d.p == nil {
		return 0, closedError("Dedup.Estimate")
	}
	var out C.double
	err := check(C.minlsh_dedup_estimate(&out, d.p, C.uint64_t(a), C.uint64_t(b)),
		"minlsh_dedup_estimate")
	return float64(out), err
}

// Pairs lists every verified pair of documents (A < B), exact copies
// included with similarity 1, sorted by (A, B). Errors: ErrState before
// Run, ErrNoMem.
func (d *Dedup) Pairs() ([]Pair, error) {
	d.mu.RLock()
	defer d.mu.RUnlock()
	if d.p == nil {
		return nil, closedError("Dedup.Pairs")
	}
	var ps *C.minlsh_pairs
	if err := check(C.minlsh_pairs_from_dedup(&ps, d.p, 0, nil),
		"minlsh_pairs_from_dedup"); err != nil {
		return nil, err
	}
	return takePairs(ps)
}

// Clusters returns the clusters of the decisions: each kept document with
// the documents attributed to it (GroupComponents: the connected components
// of the verified pairs), two or more members ascending, ordered by their
// smallest member. Errors: ErrState before Run, ErrNoMem.
func (d *Dedup) Clusters() ([][]uint64, error) {
	d.mu.RLock()
	defer d.mu.RUnlock()
	if d.p == nil {
		return nil, closedError("Dedup.Clusters")
	}
	var cs *C.minlsh_clusters
	if err := check(C.minlsh_clusters_from_dedup(&cs, d.p, nil),
		"minlsh_clusters_from_dedup"); err != nil {
		return nil, err
	}
	return takeClusters(cs)
}
