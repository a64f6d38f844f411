package minlsh

import (
	"errors"
	"testing"
	"time"
)

func TestInsertNovel(t *testing.T) {
	p, _ := Plan(PlanOptions{Threshold: 0.8, K: 128})
	x, err := NewIndex(IndexConfig{K: 128, Seed: 1, Bands: p.Bands, Rows: p.Rows})
	if err != nil {
		t.Fatal(err)
	}
	defer x.Close()
	a := minhashOf(t, 128, 1, wordRange("a", 0, 200)...)
	near := minhashOf(t, 128, 1, wordRange("a", 4, 204)...) // about 0.96
	c := minhashOf(t, 128, 1, wordRange("c", 0, 200)...)
	opts := NovelOptions{Threshold: 0.8}
	if r, err := x.InsertNovel(1, a, opts); err != nil || !r.Novel || r.HasMatch {
		t.Fatalf("first: %+v %v", r, err)
	}
	r, err := x.InsertNovel(2, near, opts)
	if err != nil || r.Novel || !r.HasMatch || r.Match != 1 || r.Similarity < 0.8 || x.Contains(2) {
		t.Fatalf("near-duplicate: %+v %v", r, err)
	}
	// The loop a caller would write gives the same best match.
	cands, _ := x.Query(near)
	if len(cands) != 1 || cands[0] != (Candidate{1, r.Similarity}) || r.Candidates != 1 {
		t.Fatalf("query %+v, novelty %+v", cands, r)
	}
	if r, err := x.InsertNovel(3, c, opts); err != nil || !r.Novel || !x.Contains(3) {
		t.Fatalf("novel: %+v %v", r, err)
	}
	if _, err := x.InsertNovel(3, c, opts); !errors.Is(err, ErrExists) {
		t.Fatalf("existing id: %v", err)
	}
	if _, err := x.InsertNovel(4, c, NovelOptions{Threshold: 2}); !errors.Is(err, ErrParam) {
		t.Fatalf("threshold 2: %v", err)
	}
	// A verifier of the caller's decides instead of the estimate.
	var calls []uint64
	r, err = x.InsertNovel(5, near, NovelOptions{Threshold: 0.8,
		Verify: func(id uint64, estimate float64) (float64, error) {
			calls = append(calls, id)
			return 0.3, nil
		}})
	if err != nil || !r.Novel || r.Match != 1 || r.Similarity != 0.3 || len(calls) != 1 ||
		!x.Contains(5) {
		t.Fatalf("verified: %+v %v %v", r, err, calls)
	}
	// Its error comes back and nothing is inserted.
	boom := errors.New("no shingle set stored")
	_, err = x.InsertNovel(6, near, NovelOptions{Verify: func(uint64, float64) (float64, error) {
		return 0, boom
	}})
	if !errors.Is(err, boom) || x.Contains(6) {
		t.Fatalf("verifier error: %v", err)
	}
}

func TestFileLock(t *testing.T) {
	path := t.TempDir() + "/crawl.mlsh"
	w, err := LockFile(path, true, -1)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := LockFile(path, false, 0); !errors.Is(err, ErrBusy) {
		t.Fatalf("shared while held: %v", err)
	}
	if _, err := LockFile(path, true, 30*time.Millisecond); !errors.Is(err, ErrBusy) {
		t.Fatalf("exclusive while held: %v", err)
	}
	w.Unlock()
	w.Unlock()
	r1, err1 := LockFile(path, false, 0)
	r2, err2 := LockFile(path, false, 0)
	if err1 != nil || err2 != nil {
		t.Fatalf("two readers: %v %v", err1, err2)
	}
	r1.Unlock()
	r2.Unlock()
	if _, err := LockFile(t.TempDir()+"/no/such/dir.mlsh", true, 0); !errors.Is(err, ErrIO) {
		t.Fatalf("missing directory: %v", err)
	}
}
