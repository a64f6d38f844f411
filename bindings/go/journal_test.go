package minlsh

import (
	"errors"
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"sort"
	"syscall"
	"testing"
)

func plantedIndex(t *testing.T) (*Index, map[uint64]MinHash) {
	t.Helper()
	docs, _ := planted(t, rand.New(rand.NewSource(3)))
	x, err := NewIndex(IndexConfig{K: 128, Seed: 1, Bands: 16, Rows: 8, ConfigID: 9})
	if err != nil {
		t.Fatal(err)
	}
	for id, m := range docs {
		if err := x.Insert(id, m); err != nil {
			t.Fatal(err)
		}
	}
	return x, docs
}

// answers: every probe's Query and QueryLimited under a few limits.
func answers(t *testing.T, x *Index, probes []MinHash) []interface{} {
	t.Helper()
	var out []interface{}
	for _, m := range probes {
		c, err := x.Query(m)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, c)
		for _, lim := range []uint64{0, 1, 2, 4, 7, 12} {
			c, searched, err := x.QueryLimited(m, lim)
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, c, searched)
		}
	}
	return out
}

func sortedProbes(docs map[uint64]MinHash) []MinHash {
	ids := make([]uint64, 0, len(docs))
	for id := range docs {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	out := make([]MinHash, len(ids))
	for i, id := range ids {
		out[i] = docs[id]
	}
	return out
}

func TestMapIndexAnswersAsLoaded(t *testing.T) {
	x, docs := plantedIndex(t)
	defer x.Close()
	path := filepath.Join(t.TempDir(), "ix.mlsh")
	if err := x.SaveMapped(path); err != nil {
		t.Fatal(err)
	}
	expect := &IndexConfig{K: 128, Seed: 1, ConfigID: 9}
	mapped, err := MapIndex(path, expect)
	if err != nil {
		t.Fatal(err)
	}
	defer mapped.Close()
	loaded, err := LoadIndex(path, expect)
	if err != nil {
		t.Fatal(err)
	}
	defer loaded.Close()
	if _, err := MapIndex(path, &IndexConfig{K: 128, Seed: 1, ConfigID: 8}); !errors.Is(err, ErrMismatch) {
		t.Fatalf("another config id: %v", err)
	}
	probes := sortedProbes(docs)
	if !reflect.DeepEqual(answers(t, mapped, probes), answers(t, loaded, probes)) {
		t.Fatal("mapped and loaded answers differ")
	}
	// Inserts into the delta: still the loaded index's answers.
	rng := rand.New(rand.NewSource(5))
	for i, m := range probes[:40] {
		v := append([]uint32(nil), m.Values...)
		for j := 0; j < 12; j++ {
			v[rng.Intn(len(v))] = rng.Uint32()
		}
		n := MinHash{Seed: 1, Values: v}
		for _, y := range []*Index{mapped, loaded} {
			if err := y.Insert(uint64(2*i+1), n); err != nil {
				t.Fatal(err)
			}
		}
		probes = append(probes, n)
	}
	if !reflect.DeepEqual(answers(t, mapped, probes), answers(t, loaded, probes)) {
		t.Fatal("mapped and loaded answers differ after inserts")
	}
	if err := mapped.Remove(probesID(docs, 0)); !errors.Is(err, ErrState) {
		t.Fatalf("removing a document of the file: %v", err)
	}
	if err := mapped.Remove(1); err != nil {
		t.Fatal(err)
	}
}

func probesID(docs map[uint64]MinHash, i int) uint64 {
	ids := make([]uint64, 0, len(docs))
	for id := range docs {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(a, b int) bool { return ids[a] < ids[b] })
	return ids[i]
}

// journaled inserts m under id into x and records it with name.
func journaled(t *testing.T, x *Index, j *Journal, id uint64, m MinHash, name string) {
	t.Helper()
	if err := x.Insert(id, m); err != nil {
		t.Fatal(err)
	}
	if err := j.Append(JournalInsert, id, m, []byte(name)); err != nil {
		t.Fatal(err)
	}
}

func TestJournalRoundTripAndCompact(t *testing.T) {
	x, _ := plantedIndex(t)
	dir := t.TempDir()
	path := filepath.Join(dir, "crawl.mlsh")
	jpath := path + ".journal"
	if err := x.SaveMapped(path); err != nil {
		t.Fatal(err)
	}
	x.Close()
	lock, err := LockFile(path, true, -1)
	if err != nil {
		t.Fatal(err)
	}
	ix, err := MapIndex(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	j, err := OpenJournal(ix, jpath, true, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 10; i++ {
		journaled(t, ix, j, uint64(i+1), minhashOf(t, 128, 1, wordRange(fmt.Sprintf("j%d-", i), 0, 50)...),
			fmt.Sprintf("doc-%d", i))
	}
	if err := ix.Remove(3); err != nil {
		t.Fatal(err)
	}
	if err := j.Append(JournalRemove, 3, MinHash{}, []byte("doc-2")); err != nil {
		t.Fatal(err)
	}
	if err := j.Sync(); err != nil {
		t.Fatal(err)
	}
	if due, err := j.CompactDue(); err != nil || due {
		t.Fatalf("compact due %v, %v", due, err)
	}
	j.Close()
	want, _ := ix.IDs()
	ix.Close()
	lock.Unlock()

	// A reader replays the records, with their bytes.
	r, err := MapIndex(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	var seen []string
	rj, err := OpenJournal(r, jpath, false, func(op JournalOp, id uint64, data []byte) error {
		seen = append(seen, fmt.Sprintf("%d:%d:%s", op, id, data))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := rj.Sync(); !errors.Is(err, ErrState) {
		t.Fatalf("Sync of a reader: %v", err)
	}
	if len(seen) != 11 || seen[0] != "1:1:doc-0" || seen[10] != "2:3:doc-2" {
		t.Fatalf("replayed %v", seen)
	}
	if got, _ := r.IDs(); !reflect.DeepEqual(got, want) {
		t.Fatal("replayed ids differ")
	}
	rj.Close()
	r.Close()
	// An error from the callback stops the open.
	r, err = MapIndex(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	stop := errors.New("stop")
	if _, err := OpenJournal(r, jpath, false, func(JournalOp, uint64, []byte) error { return stop }); err != stop {
		t.Fatalf("callback error: %v", err)
	}
	r.Close()

	// Compaction: the file holds the records, the journal starts empty.
	w, err := MapIndex(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	wj, err := OpenJournal(w, jpath, true, nil)
	if err != nil {
		t.Fatal(err)
	}
	if wj.Records() != 11 {
		t.Fatalf("records %d", wj.Records())
	}
	if err := wj.Compact(path); err != nil {
		t.Fatal(err)
	}
	if wj.Records() != 0 {
		t.Fatalf("records after compaction %d", wj.Records())
	}
	journaled(t, w, wj, 100, minhashOf(t, 128, 1, "after"), "after")
	if err := wj.Sync(); err != nil {
		t.Fatal(err)
	}
	wj.Close()
	w.Close()
	again, err := MapIndex(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer again.Close()
	if !again.Contains(10) || again.Contains(3) || again.Contains(100) {
		t.Fatal("the compacted file has the wrong documents")
	}
	n := 0
	aj, err := OpenJournal(again, jpath, false, func(JournalOp, uint64, []byte) error { n++; return nil })
	if err != nil {
		t.Fatal(err)
	}
	aj.Close()
	if n != 1 || !again.Contains(100) {
		t.Fatalf("the fresh journal replayed %d records", n)
	}
}

// A child process appends one synced and one unsynced record, then kills
// itself: only the synced one survives.
func TestJournalKill(t *testing.T) {
	if path := os.Getenv("MINLSH_JOURNAL_CHILD"); path != "" {
		ix, err := MapIndex(path, nil)
		if err != nil {
			os.Exit(2)
		}
		j, err := OpenJournal(ix, path+".journal", true, nil)
		if err != nil {
			os.Exit(3)
		}
		journaled(t, ix, j, 1, minhashOf(t, 128, 1, "synced"), "synced")
		if err := j.Sync(); err != nil {
			os.Exit(4)
		}
		journaled(t, ix, j, 2, minhashOf(t, 128, 1, "unsynced"), "unsynced")
		syscall.Kill(os.Getpid(), syscall.SIGKILL)
		select {}
	}
	x, _ := plantedIndex(t)
	path := filepath.Join(t.TempDir(), "kill.mlsh")
	if err := x.SaveMapped(path); err != nil {
		t.Fatal(err)
	}
	x.Close()
	cmd := exec.Command(os.Args[0], "-test.run=^TestJournalKill$")
	cmd.Env = append(os.Environ(), "MINLSH_JOURNAL_CHILD="+path)
	err := cmd.Run()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
		t.Fatalf("the child did not die by SIGKILL: %v", err)
	}
	ix, err := MapIndex(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	j, err := OpenJournal(ix, path+".journal", true, nil)
	if err != nil {
		t.Fatal(err)
	}
	j.Close()
	if !ix.Contains(1) || ix.Contains(2) {
		t.Fatalf("synced %v, unsynced %v", ix.Contains(1), ix.Contains(2))
	}
}
