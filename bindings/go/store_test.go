package minlsh_test

import (
	"errors"
	"fmt"
	"io"
	"log"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"minlsh.example/minlsh"
)

// page is document i: 120 words of its own, the first `changed` replaced
// (bindings/python/tests/test_store.py writes the same pages).
func page(i, changed int) []byte {
	words := make([]string, 120)
	for j := range words {
		words[j] = fmt.Sprintf("w%d_%d", i, j)
		if j < changed {
			words[j] = fmt.Sprintf("x%d", j)
		}
	}
	return []byte(strings.Join(words, " "))
}

// A crawler's dedup step: open (or create) the store, add each page under
// its URL; a near-duplicate of a stored page is not stored again.
func ExampleStore() {
	dir, err := os.MkdirTemp("", "store-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	st, err := minlsh.OpenStore(filepath.Join(dir, "crawl.st"),
		minlsh.StoreOptions{Threshold: 0.7, Sets: true})
	if err != nil {
		log.Fatal(err)
	}
	defer st.Close()
	pages := map[string][]byte{
		"https://example.com/a":       page(1, 0),
		"https://example.com/a?utm=1": page(1, 5),
		"https://example.com/b":       page(2, 0),
	}
	for _, url := range []string{"https://example.com/a", "https://example.com/a?utm=1",
		"https://example.com/b"} {
		r, err := st.Add(pages[url], url)
		if err != nil {
			log.Fatal(err)
		}
		if r.Novel {
			fmt.Printf("%s: new, id %d\n", url, r.ID)
		} else {
			fmt.Printf("%s: copy of %s (Jaccard %.2f)\n", url, r.MatchName, r.Similarity)
		}
	}
	// Output:
	// https://example.com/a: new, id 0
	// https://example.com/a?utm=1: copy of https://example.com/a (Jaccard 0.94)
	// https://example.com/b: new, id 1
}

func openStore(t *testing.T, path string, opts minlsh.StoreOptions) *minlsh.Store {
	t.Helper()
	s, err := minlsh.OpenStore(path, opts)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func TestStoreRoundTrip(t *testing.T) {
	p := filepath.Join(t.TempDir(), "s.st")
	s := openStore(t, p, minlsh.StoreOptions{Threshold: 0.6, K: 64,
		Shingle: &minlsh.ShinglerOptions{K: 3, Lowercase: true}})
	names := []string{"u1", `quote " and \ slash`, "é €", "𝄞 tab\t", ""}
	for i, n := range names {
		r, err := s.Add(page(i, 0), n)
		if err != nil || !r.Novel || !r.Inserted || r.ID != uint64(i) {
			t.Fatalf("%s: add %q: %+v %v", p, n, r, err)
		}
	}
	r, err := s.Add(page(0, 3), "u1-copy")
	if err != nil || r.Novel || r.Inserted || !r.HasMatch || r.Match != 0 || r.MatchName != "u1" ||
		r.Similarity < 0.6 {
		t.Fatalf("%s: near-duplicate: %+v %v", p, r, err)
	}
	if _, err := s.Add(page(9, 0), "u1"); !errors.Is(err, minlsh.ErrExists) {
		t.Fatalf("%s: a taken name: %v", p, err)
	}
	s.Close()
	// the path alone: the configuration comes from the file
	s = openStore(t, p, minlsh.StoreOptions{NoCreate: true})
	if s.Count() != len(names) || s.Threshold() != 0.6 {
		t.Fatalf("%s: reopened: %d documents, threshold %g", p, s.Count(), s.Threshold())
	}
	for i, n := range names {
		got, err := s.NameOf(uint64(i))
		if err != nil || got != n {
			t.Errorf("%s: NameOf(%d) = %q, %v; want %q", p, i, got, err, n)
		}
		if n == "" {
			continue
		}
		if id, err := s.IDOf(n); err != nil || id != uint64(i) {
			t.Errorf("%s: IDOf(%q) = %d, %v", p, n, id, err)
		}
	}
	if r, err := s.Query([]byte(strings.ToUpper(string(page(0, 0))))); err != nil || r.Novel {
		t.Errorf("%s: an upper-case copy to a lowercasing store: %+v %v", p, r, err)
	}
	if _, err := minlsh.OpenStore(p, minlsh.StoreOptions{Threshold: 0.9}); !errors.Is(err, minlsh.ErrMismatch) {
		t.Errorf("%s: another threshold: %v", p, err)
	}
	key := make([]byte, minlsh.KeyBytes)
	if _, err := minlsh.OpenStore(p, minlsh.StoreOptions{Key: key}); !errors.Is(err, minlsh.ErrMismatch) {
		t.Errorf("%s: another key: %v", p, err)
	}
	if _, err := minlsh.OpenStore(p+".absent", minlsh.StoreOptions{NoCreate: true}); !errors.Is(err, minlsh.ErrNotFound) {
		t.Errorf("%s.absent: %v", p, err)
	}
	if _, err := minlsh.OpenStore(p, minlsh.StoreOptions{Bands: 4}); !errors.Is(err, minlsh.ErrParam) {
		t.Errorf("%s: Bands without Rows: %v", p, err)
	}
}

func TestStoreTransactions(t *testing.T) {
	p := filepath.Join(t.TempDir(), "tx.st")
	a := openStore(t, p, minlsh.StoreOptions{})
	b := openStore(t, p, minlsh.StoreOptions{})
	if err := a.Begin(); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 4; i++ {
		if _, err := a.Add(page(i, 0), fmt.Sprint("p", i)); err != nil {
			t.Fatal(err)
		}
	}
	if err := a.Sync(); err != nil {
		t.Fatal(err)
	}
	if err := a.Commit(); err != nil {
		t.Fatal(err)
	}
	if err := a.Begin(); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Add(page(7, 0), "rolled back"); err != nil {
		t.Fatal(err)
	}
	if err := a.Rollback(); err != nil {
		t.Fatal(err)
	}
	if err := a.Commit(); !errors.Is(err, minlsh.ErrState) {
		t.Errorf("%s: commit without begin: %v", p, err)
	}
	if err := b.Refresh(); err != nil || b.Count() != 4 || a.Count() != 4 {
		t.Fatalf("%s: after the rollback: %d and %d documents, %v", p, a.Count(), b.Count(), err)
	}
	if err := b.Remove("p1"); err != nil {
		t.Fatal(err)
	}
	if err := b.RemoveID(2); err != nil {
		t.Fatal(err)
	}
	if err := b.Remove("p1"); !errors.Is(err, minlsh.ErrNotFound) {
		t.Errorf("%s: removed twice: %v", p, err)
	}
	if err := a.Compact(); err != nil {
		t.Fatal(err)
	}
	r, err := b.Add(page(9, 0), "p9")
	if err != nil || r.ID != 4 {
		t.Fatalf("%s: ids are never given twice: %+v %v", p, r, err)
	}
	a.Refresh()
	got, err := a.Entries()
	want := []minlsh.StoreEntry{{0, "p0"}, {3, "p3"}, {4, "p9"}}
	if err != nil || fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("%s: entries %v, %v; want %v", p, got, err, want)
	}
	if due, err := a.CompactDue(); err != nil || due {
		t.Errorf("%s: compact due on a tiny journal: %v %v", p, due, err)
	}
	a.Close()
	if _, err := a.Add(page(1, 0), ""); !errors.Is(err, minlsh.ErrState) {
		t.Errorf("%s: add after close: %v", p, err)
	}
}

// The store Python's test_store.py wrote (tests/golden/bindings/store): its
// names, ids and exact verdicts read the same from Go.
func TestStoreWrittenByPython(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join("..", "..", "tests", "golden", "bindings", "store")
	for _, f := range []string{"python.st", "python.st.journal", "python.st.sets"} {
		in, err := os.Open(filepath.Join(src, f))
		if err != nil {
			t.Fatal(err)
		}
		out, err := os.Create(filepath.Join(dir, f))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := io.Copy(out, in); err != nil {
			t.Fatal(err)
		}
		in.Close()
		out.Close()
	}
	p := filepath.Join(dir, "python.st")
	s := openStore(t, p, minlsh.StoreOptions{NoCreate: true})
	got, err := s.Entries()
	// Python's int key 7 is the JSON token 7, read as its text.
	want := []minlsh.StoreEntry{{0, "https://example.com/a"}, {1, "https://example.com/b"},
		{2, "7"}, {3, "https://example.com/d"}}
	if err != nil || fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("%s: entries %v, %v; want %v", p, got, err, want)
	}
	if s.Threshold() != 0.7 {
		t.Errorf("%s: threshold %g", p, s.Threshold())
	}
	r, err := s.Add(page(2, 4), "https://example.com/b2")
	if err != nil || r.Novel || !r.Exact || r.MatchName != "https://example.com/b" {
		t.Errorf("%s: a near-duplicate of b: %+v %v", p, r, err)
	}
	if id, err := s.IDOf("https://example.com/d"); err != nil || id != 3 {
		t.Errorf("%s: IDOf: %d %v", p, id, err)
	}
}
