package minlsh

import (
	"errors"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"sync"
	"testing"
)

func minhashOf(t *testing.T, k int, seed uint64, words ...string) MinHash {
	t.Helper()
	m, err := NewMinHash(k, seed)
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range words {
		m.Update([]byte(w))
	}
	return m
}

func wordRange(prefix string, from, to int) []string {
	out := []string{}
	for i := from; i < to; i++ {
		out = append(out, fmt.Sprintf("%s%d", prefix, i))
	}
	return out
}

func TestIndexInsertQueryRemove(t *testing.T) {
	p, _ := Plan(PlanOptions{Threshold: 0.5, K: 128})
	x, err := NewIndex(IndexConfig{K: 128, Seed: 1, Bands: p.Bands, Rows: p.Rows})
	if err != nil {
		t.Fatal(err)
	}
	defer x.Close()
	a := minhashOf(t, 128, 1, wordRange("a", 0, 100)...)
	b := minhashOf(t, 128, 1, wordRange("a", 5, 105)...)
	c := minhashOf(t, 128, 1, wordRange("c", 0, 100)...)
	for id, m := range map[uint64]MinHash{10: a, 20: b, 30: c} {
		if err := x.Insert(id, m); err != nil {
			t.Fatal(err)
		}
	}
	if x.Len() != 3 || !x.Contains(20) || x.Contains(40) {
		t.Fatal("contents")
	}
	got, err := x.Query(a)
	if err != nil || len(got) != 2 || got[0] != (Candidate{10, 1}) || got[1].ID != 20 ||
		got[1].Similarity < 0.7 {
		t.Fatalf("query %+v %v", got, err)
	}
	if err := x.Insert(10, c); !errors.Is(err, ErrExists) {
		t.Fatalf("duplicate id: %v", err)
	}
	if err := x.Insert(50, minhashOf(t, 64, 1, "x")); !errors.Is(err, ErrParam) {
		t.Fatalf("wrong k: %v", err)
	}
	if err := x.Insert(50, minhashOf(t, 128, 2, "x")); !errors.Is(err, ErrParam) {
		t.Fatalf("wrong seed: %v", err)
	}
	if err := x.Remove(10); err != nil {
		t.Fatal(err)
	}
	if err := x.Remove(10); !errors.Is(err, ErrNotFound) {
		t.Fatalf("remove twice: %v", err)
	}
	if got, _ := x.Query(a); len(got) != 1 || got[0].ID != 20 {
		t.Fatalf("after remove %+v", got)
	}
	if ids, _ := x.IDs(); !reflect.DeepEqual(ids, []uint64{20, 30}) {
		t.Fatal(ids)
	}
	if m, err := x.Get(30); err != nil || !m.Equal(c) {
		t.Fatal("get")
	}
	if _, err := x.Get(99); !errors.Is(err, ErrNotFound) {
		t.Fatal(err)
	}
	if cfg := x.Config(); cfg != (IndexConfig{K: 128, Seed: 1, Threshold: 0.8, Bands: p.Bands, Rows: p.Rows}) {
		t.Fatalf("%+v", cfg)
	}
	if _, err := NewIndex(IndexConfig{K: 64, Seed: 1, Bands: 9, Rows: 8}); !errors.Is(err, ErrParam) {
		t.Fatalf("b*r > k: %v", err)
	}
	x.Close()
	if _, err := x.Query(a); !errors.Is(err, ErrState) {
		t.Fatalf("closed: %v", err)
	}
}

// planted builds groups of near-duplicates among unrelated documents.
func planted(t *testing.T, rng *rand.Rand) (map[uint64]MinHash, [][]uint64) {
	docs := map[uint64]MinHash{}
	var groups [][]uint64
	id := uint64(1000)
	for g := 0; g < 20; g++ {
		var members []uint64
		for m := 0; m < 4; m++ {
			words := wordRange(fmt.Sprintf("g%d-w", g), 0, 200)
			for _, i := range rng.Perm(200)[:2] {
				words[i] = fmt.Sprintf("g%d-m%d-x%d", g, m, i)
			}
			id += uint64(1 + rng.Intn(1000))
			docs[id] = minhashOf(t, 128, 1, words...)
			members = append(members, id)
		}
		groups = append(groups, members)
	}
	for n := 0; n < 60; n++ {
		id += uint64(1 + rng.Intn(1000))
		docs[id] = minhashOf(t, 128, 1, wordRange(fmt.Sprintf("n%d-", n), 0, 200)...)
	}
	return docs, groups
}

func TestIndexPairsClustersSaveLoad(t *testing.T) {
	docs, groups := planted(t, rand.New(rand.NewSource(7)))
	p, _ := Plan(PlanOptions{Threshold: 0.7, K: 128})
	x, _ := NewIndex(IndexConfig{K: 128, Seed: 1, Bands: p.Bands, Rows: p.Rows, ConfigID: 0xabc})
	ids := make([]uint64, 0, len(docs))
	for id := range docs {
		ids = append(ids, id)
	}
	rand.New(rand.NewSource(1)).Shuffle(len(ids), func(i, j int) { ids[i], ids[j] = ids[j], ids[i] })
	for _, id := range ids {
		if err := x.Insert(id, docs[id]); err != nil {
			t.Fatal(err)
		}
	}
	clusters, err := x.Clusters(0.7)
	if err != nil {
		t.Fatal(err)
	}
	sort.Slice(groups, func(i, j int) bool { return groups[i][0] < groups[j][0] })
	if !reflect.DeepEqual(clusters, groups) {
		t.Fatalf("clusters %v, want %v", clusters, groups)
	}
	pairs, err := x.Pairs(0.7)
	if err != nil || len(pairs) != 20*6 {
		t.Fatalf("%d pairs (%v)", len(pairs), err)
	}
	for i, p := range pairs {
		if p.A >= p.B || p.Similarity < 0.7 || (i > 0 && (pairs[i-1].A > p.A ||
			(pairs[i-1].A == p.A && pairs[i-1].B >= p.B))) {
			t.Fatalf("pair %d: %+v", i, p)
		}
	}
	all, _ := x.Pairs(0)
	if len(all) < len(pairs) {
		t.Fatal("fewer candidates than verified pairs")
	}
	if _, err := x.Pairs(1.5); !errors.Is(err, ErrParam) {
		t.Fatal(err)
	}

	if err := x.SetMetadata([]byte("crawl of 2024-06-01")); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "index.mlsh")
	if err := x.Save(path); err != nil {
		t.Fatal(err)
	}
	y, err := LoadIndex(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer y.Close()
	// The file has no threshold: a loaded index takes its banding's.
	want := x.Config()
	want.Threshold, _ = Threshold(want.Bands, want.Rows)
	if y.Config() != want || y.Len() != x.Len() {
		t.Fatalf("%+v", y.Config())
	}
	if md, _ := y.Metadata(); string(md) != "crawl of 2024-06-01" {
		t.Fatalf("metadata %q", md)
	}
	if c2, _ := y.Clusters(0.7); !reflect.DeepEqual(c2, clusters) {
		t.Fatal("clusters after load")
	}
	if _, err := LoadIndex(path, &IndexConfig{K: 128, Seed: 1, ConfigID: 0xabc}); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadIndex(path, &IndexConfig{K: 128, Seed: 1, ConfigID: 1}); !errors.Is(err, ErrMismatch) {
		t.Fatalf("config id mismatch: %v", err)
	}
	if _, err := LoadIndex(filepath.Join(dir, "missing"), nil); !errors.Is(err, ErrIO) {
		t.Fatalf("missing file: %v", err)
	}
	os.WriteFile(filepath.Join(dir, "bad"), []byte("not an index"), 0o644)
	_, err = LoadIndex(filepath.Join(dir, "bad"), nil)
	var e *Error
	if !errors.As(err, &e) || e.Code != CodeFormat || e.Detail != filepath.Join(dir, "bad") {
		t.Fatalf("not an index: %v", err)
	}
	data, _ := os.ReadFile(path)
	os.WriteFile(filepath.Join(dir, "cut"), data[:len(data)-1], 0o644)
	if _, err := LoadIndex(filepath.Join(dir, "cut"), nil); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("truncated: %v", err)
	}
	if md, _ := x.Metadata(); string(md) != "crawl of 2024-06-01" {
		t.Fatal("metadata")
	}
	x.SetMetadata(nil)
	if md, err := x.Metadata(); err != nil || len(md) != 0 {
		t.Fatal("empty metadata")
	}
}

func TestIndexReadersAndWriters(t *testing.T) {
	docs := corpus(160, 5)
	s, _ := NewShingler(ShinglerOptions{K: 2})
	f, _ := NewFamily(64, 1)
	sigs, _ := f.SignBatch(s, docs, 0)
	x, _ := NewIndex(IndexConfig{K: 64, Seed: 1, Bands: 16, Rows: 4})
	defer x.Close()
	want := map[int][]uint64{}
	for i := 0; i < 80; i++ {
		x.Insert(uint64(i), sigs[i])
	}
	stable := func(c []Candidate) []uint64 {
		out := []uint64{}
		for _, x := range c {
			if x.ID < 80 {
				out = append(out, x.ID)
			}
		}
		return out
	}
	for i := 0; i < 80; i++ {
		c, _ := x.Query(sigs[i])
		want[i] = stable(c)
	}
	var wg sync.WaitGroup
	errs := make(chan error, 100)
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			if g%2 == 0 {
				for i := 80 + g; i < 160; i += 8 {
					if err := x.Insert(uint64(i), sigs[i]); err != nil {
						errs <- err
					}
				}
				for i := 80 + g; i < 160; i += 16 {
					if err := x.Remove(uint64(i)); err != nil {
						errs <- err
					}
				}
				return
			}
			for r := 0; r < 3; r++ {
				for i := 0; i < 80; i++ {
					c, err := x.Query(sigs[i])
					if err != nil || !reflect.DeepEqual(stable(c), want[i]) {
						errs <- fmt.Errorf("query %d: %v", i, err)
					}
				}
				x.Pairs(0)
				x.Clusters(0.5)
			}
		}(g)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	n := 80
	for g := 0; g < 8; g += 2 {
		for i := 80 + g; i < 160; i += 8 {
			if (i-80-g)%16 != 0 {
				n++
			}
		}
	}
	if x.Len() != n {
		t.Fatalf("%d documents, want %d", x.Len(), n)
	}
}
