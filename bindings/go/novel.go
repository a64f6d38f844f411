package minlsh

/*
#define MINLSH_EXPERIMENTAL_API 1
#include <minlsh.h>
#include <stdint.h>

extern int minlshGoVerify(void *opaque, uint64_t id, double estimate, double *similarity);

// The verifier's handle travels as the opaque pointer: an integer, never a
// Go pointer, so C keeps nothing the Go collector must know about.
static void minlsh_go_set_verify(minlsh_novel_options *o, uintptr_t handle) {
	o->verify = minlshGoVerify;
	o->opaque = (void *)handle;
}
*/
import "C"

import (
	"fmt"
	"runtime/cgo"
)

// NovelOptions tells InsertNovel what a near-duplicate is.
type NovelOptions struct {
	// Threshold: a candidate whose similarity reaches it is a near-duplicate,
	// in (0, 1]; 0: the index's (IndexConfig.Threshold).
	Threshold float64
	// Verify, if set, gives a candidate's exact similarity (e.g. the Jaccard
	// of stored shingle sets) in place of its signature estimate. Candidates
	// with an estimate of at least MinEstimate are checked, best estimate
	// first; the first one that reaches Threshold ends the search. An error
	// it returns is InsertNovel's, and nothing is inserted. It runs while the
	// index's write lock is held: it must not call the Index.
	Verify      func(id uint64, estimate float64) (float64, error)
	MinEstimate float64
}

// Novelty is what InsertNovel decided.
type Novelty struct {
	Novel      bool    // true: no near-duplicate; the document was inserted
	HasMatch   bool    // Match names a candidate (a novel document may have one)
	Match      uint64  // the best match
	Similarity float64 // its similarity (verified, or the estimate)
	Candidates int     // LSH candidates found
}

type verifyState struct {
	fn  func(uint64, float64) (float64, error)
	err error
}

// InsertNovel inserts the document under id unless the index holds a
// near-duplicate of it (minlsh_index_insert_novel: the query, the
// verification and the insert as one step under the write lock). ErrExists
// if id is already there.
func (x *Index) InsertNovel(id uint64, m MinHash, opts NovelOptions) (Novelty, error) {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.p == nil {
		return Novelty{}, closedError("Index.InsertNovel")
	}
	if err := x.sig(m, "Index.InsertNovel"); err != nil {
		return Novelty{}, err
	}
	var o C.minlsh_novel_options
	if err := check(C.minlsh_novel_options_init(&o, C.MINLSH_NOVEL_OPTIONS_VERSION),
		"minlsh_novel_options_init"); err != nil {
		return Novelty{}, err
	}
	o.threshold = C.double(x.threshold)
	if opts.Threshold != 0 {
		o.threshold = C.double(opts.Threshold)
	}
	o.min_estimate = C.double(opts.MinEstimate)
	var st *verifyState
	if opts.Verify != nil {
		st = &verifyState{fn: opts.Verify}
		h := cgo.NewHandle(st)
		defer h.Delete()
		C.minlsh_go_set_verify(&o, C.uintptr_t(h))
	}
	var res C.minlsh_novel_result
	rc := C.minlsh_index_insert_novel(&res, x.p, C.uint64_t(id), u32Ptr(m.Values),
		C.size_t(len(m.Values)), &o)
	if st != nil && st.err != nil {
		return Novelty{}, st.err
	}
	if rc != 0 {
		return Novelty{}, newError(rc, "minlsh_index_insert_novel",
			fmt.Sprintf("id %d, threshold %g", id, float64(o.threshold)))
	}
	return Novelty{Novel: res.novel != 0, HasMatch: res.has_match != 0, Match: uint64(res.match),
		Similarity: float64(res.similarity), Candidates: int(res.candidates)}, nil
}
