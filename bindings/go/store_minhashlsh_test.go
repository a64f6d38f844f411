package minlsh_test

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"minlsh.example/minlsh"
)

// copyFixture copies tests/golden/bindings/minhashlsh/name into a
// temporary folder (opening a store writes its lock beside it).
func copyFixture(t *testing.T, name string) string {
	t.Helper()
	in, err := os.Open(filepath.Join("..", "..", "tests", "golden", "bindings", "minhashlsh", name))
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	p := filepath.Join(t.TempDir(), name)
	out, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	if _, err := io.Copy(out, in); err != nil {
		t.Fatal(err)
	}
	return p
}

// The file Python's MinHashLSH.save wrote (test_lsh_files.py): a store,
// whose keys are its names and whose signatures, made under the default
// shingling, answer a text query.
func TestStoreWrittenByMinHashLSH(t *testing.T) {
	p := copyFixture(t, "saved-0.2.mlsh")
	s := openStore(t, p, minlsh.StoreOptions{ReadOnly: true})
	got, err := s.Entries()
	// Python's key ("pair", 2) is the JSON token of its tuple form.
	want := []minlsh.StoreEntry{{0, "https://example.org/a"}, {2, "7"},
		{3, `{"tuple":["pair",2]}`}, {4, "https://example.org/d"}}
	if err != nil || fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("%s: entries %v, %v; want %v", p, got, err, want)
	}
	if s.Threshold() != 0.7 {
		t.Errorf("%s: threshold %g", p, s.Threshold())
	}
	words := make([]string, 80)
	for j := range words {
		words[j] = fmt.Sprintf("w2_%d", j)
	}
	r, err := s.Query([]byte(strings.Join(words, " ")))
	if err != nil || r.Novel || r.MatchName != "7" || r.Similarity != 1 {
		t.Errorf("%s: the text of key 7: %+v %v", p, r, err)
	}
}

// AnyKey opens a store the key does not match: names read, texts refused.
func TestStoreAnyKey(t *testing.T) {
	p := filepath.Join(t.TempDir(), "k.st")
	key := []byte("0123456789abcdef")
	s := openStore(t, p, minlsh.StoreOptions{Key: key})
	if _, err := s.Add([]byte("a page of some words about nothing much at all"), "a"); err != nil {
		t.Fatal(err)
	}
	s.Close()
	if _, err := minlsh.OpenStore(p, minlsh.StoreOptions{ReadOnly: true}); !errors.Is(err, minlsh.ErrMismatch) {
		t.Fatalf("%s: opened with the default key: %v", p, err)
	}
	if _, err := minlsh.OpenStore(p, minlsh.StoreOptions{AnyKey: true}); err == nil {
		t.Errorf("%s: AnyKey with creation accepted", p)
	}
	r := openStore(t, p, minlsh.StoreOptions{ReadOnly: true, AnyKey: true})
	defer r.Close()
	if r.Count() != 1 {
		t.Errorf("%s: %d documents", p, r.Count())
	}
	if _, err := r.Query([]byte("a page")); !errors.Is(err, minlsh.ErrMismatch) {
		t.Errorf("%s: a text queried under another key: %v", p, err)
	}
}
