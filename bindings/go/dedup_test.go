package minlsh

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// dedupCorpus is n base documents of 40..80 words from a vocabulary of
// 2000, each followed by 0..3 variants (word substitutions) and now and then
// an exact copy: deterministic for a seed.
func dedupCorpus(seed int64, n int) []string {
	rng := rand.New(rand.NewSource(seed))
	vocab := make([]string, 2000)
	for i := range vocab {
		vocab[i] = fmt.Sprintf("w%dx%d", i, rng.Intn(1000))
	}
	var docs []string
	for i := 0; i < n; i++ {
		words := make([]string, 40+rng.Intn(40))
		for j := range words {
			words[j] = vocab[rng.Intn(len(vocab))]
		}
		docs = append(docs, strings.Join(words, " "))
		for v := rng.Intn(4); v > 0; v-- {
			w := append([]string(nil), words...)
			for e := 1 + rng.Intn(3); e > 0; e-- {
				w[rng.Intn(len(w))] = vocab[rng.Intn(len(vocab))]
			}
			docs = append(docs, strings.Join(w, " "))
		}
		if rng.Intn(5) == 0 {
			docs = append(docs, docs[rng.Intn(len(docs))])
		}
	}
	return docs
}

type dedupResult struct {
	Decisions []Decision
	Pairs     []Pair
	Clusters  [][]uint64
	Stats     DedupStats
}

func runDedup(t *testing.T, opts DedupOptions, docs []string, batch int) dedupResult {
	t.Helper()
	d, err := NewDedup(opts)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	for i := 0; i < len(docs); i += batch {
		end := i + batch
		if end > len(docs) {
			end = len(docs)
		}
		if err := d.AddStrings(docs[i:end]); err != nil {
			t.Fatal(err)
		}
	}
	if err := d.Run(); err != nil {
		t.Fatal(err)
	}
	var r dedupResult
	if r.Decisions, err = d.Decisions(); err != nil {
		t.Fatal(err)
	}
	if r.Pairs, err = d.Pairs(); err != nil {
		t.Fatal(err)
	}
	if r.Clusters, err = d.Clusters(); err != nil {
		t.Fatal(err)
	}
	if r.Stats, err = d.Stats(); err != nil {
		t.Fatal(err)
	}
	r.Stats.Bytes = 0
	return r
}

func TestDedupSmall(t *testing.T) {
	fox := "the quick brown fox jumps over the lazy dog near the river bank today"
	d, err := NewDedup(DedupOptions{Threshold: 0.5, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if err := d.AddTexts([][]byte{[]byte(fox), []byte(fox), nil}); err != nil {
		t.Fatal(err)
	}
	if err := d.AddStrings([]string{strings.Replace(fox, "today", "again", 1), "",
		"something else entirely, nothing shared"}); err != nil {
		t.Fatal(err)
	}
	if d.Count() != 6 {
		t.Fatalf("count %d", d.Count())
	}
	if _, err := d.Decisions(); !errors.Is(err, ErrState) {
		t.Fatalf("decisions before Run: %v", err)
	}
	if err := d.Run(); err != nil {
		t.Fatal(err)
	}
	dec, err := d.Decisions()
	if err != nil {
		t.Fatal(err)
	}
	want := []Decision{
		{Cluster: 1, Representative: 0, Similarity: 1, Kept: true},
		{Cluster: 1, Representative: 0, Similarity: 1, Exact: true},
		{Cluster: 0, Representative: 2, Similarity: 1, Kept: true},
		{Cluster: 1, Representative: 0, Similarity: dec[3].Similarity},
		{Cluster: 0, Representative: 4, Similarity: 1, Kept: true}, // empty: kept, alone
		{Cluster: 0, Representative: 5, Similarity: 1, Kept: true},
	}
	for i := range want { // no names given: the document numbers
		want[i].ID = strconv.Itoa(i)
		want[i].RepresentativeID = strconv.FormatUint(want[i].Representative, 10)
	}
	if !reflect.DeepEqual(dec, want) || dec[3].Similarity < 0.5 || dec[3].Similarity >= 1 {
		t.Fatalf("decisions\n got %+v\nwant %+v", dec, want)
	}
	cl, _ := d.Clusters()
	if !reflect.DeepEqual(cl, [][]uint64{{0, 1, 3}}) {
		t.Fatalf("clusters %v", cl)
	}
	st, _ := d.Stats()
	if st.Documents != 6 || st.Empty != 2 || st.ExactGroups != 1 || st.Kept != 4 ||
		st.Dropped != 2 || st.Bands == 0 || st.Rows == 0 || st.Bytes == 0 {
		t.Fatalf("stats %+v", st)
	}
	if e, err := d.Estimate(0, 1); err != nil || e != 1 {
		t.Fatalf("estimate %v %v", e, err)
	}
	if _, err := d.Estimate(0, 6); !errors.Is(err, ErrNotFound) {
		t.Fatalf("estimate out of range: %v", err)
	}
	if err := d.AddStrings([]string{"late"}); !errors.Is(err, ErrState) {
		t.Fatalf("add after Run: %v", err)
	}
	if err := d.Run(); !errors.Is(err, ErrState) {
		t.Fatalf("second Run: %v", err)
	}
	d.Close()
	d.Close()
	if _, err := d.Pairs(); !errors.Is(err, ErrState) {
		t.Fatalf("after Close: %v", err)
	}
}

func TestDedupInvariance(t *testing.T) {
	docs := dedupCorpus(3, 150)
	opts := DefaultDedupOptions()
	opts.Threads = 1
	base := runDedup(t, opts, docs, len(docs))
	if base.Stats.Dropped == 0 || len(base.Clusters) == 0 {
		t.Fatalf("nothing found: %+v", base.Stats)
	}
	for _, c := range []struct{ threads, batch int }{{2, 1}, {4, 17}, {0, 1000}} {
		opts.Threads = c.threads
		if got := runDedup(t, opts, docs, c.batch); !reflect.DeepEqual(got, base) {
			t.Fatalf("threads %d, batch %d: results differ", c.threads, c.batch)
		}
	}
	// AddTexts and AddStrings feed the same bytes.
	d, _ := NewDedup(DefaultDedupOptions())
	defer d.Close()
	raw := make([][]byte, len(docs))
	for i, s := range docs {
		raw[i] = []byte(s)
	}
	if err := d.AddTexts(raw); err != nil {
		t.Fatal(err)
	}
	d.Run()
	dec, _ := d.Decisions()
	if !reflect.DeepEqual(dec, base.Decisions) {
		t.Fatal("AddTexts differs from AddStrings")
	}
}

func TestDedupPolicies(t *testing.T) {
	docs := dedupCorpus(5, 120)
	opts := DefaultDedupOptions()
	opts.Group = GroupStrict
	opts.Keep = KeepLongest
	r := runDedup(t, opts, docs, 64)
	for i, dc := range r.Decisions {
		if dc.Kept {
			if dc.Representative != uint64(i) {
				t.Fatalf("kept %d: %+v", i, dc)
			}
			continue
		}
		rep := r.Decisions[dc.Representative]
		if !rep.Kept || dc.Similarity < 0.8 || len(docs[dc.Representative]) < len(docs[i]) {
			t.Fatalf("dropped %d: %+v (representative %+v)", i, dc, rep)
		}
	}
	for _, p := range r.Pairs {
		if r.Decisions[p.A].Kept && r.Decisions[p.B].Kept {
			t.Fatalf("two kept documents form a verified pair: %+v", p)
		}
	}
	opts.Group = GroupComponents
	c := runDedup(t, opts, docs, 64)
	for n, members := range c.Clusters {
		var kept []uint64
		for _, m := range members {
			if c.Decisions[m].Kept {
				kept = append(kept, m)
			}
			if c.Decisions[m].Cluster != uint64(n+1) {
				t.Fatalf("cluster of %d: %+v", m, c.Decisions[m])
			}
		}
		if len(kept) != 1 {
			t.Fatalf("cluster %v keeps %v", members, kept)
		}
		for _, m := range members {
			if len(docs[m]) > len(docs[kept[0]]) {
				t.Fatalf("cluster %v keeps %d, %d is longer", members, kept[0], m)
			}
		}
	}
	if r.Stats.Kept < c.Stats.Kept {
		t.Fatalf("strict keeps %d, components %d", r.Stats.Kept, c.Stats.Kept)
	}
}

func TestDedupErrors(t *testing.T) {
	for _, o := range []DedupOptions{
		{Keep: 3}, {Group: -1}, {Verify: 9}, {Threshold: 1.5}, {Threshold: -0.1},
		{Bands: 4}, {Rows: 4}, {Bands: 20, Rows: 20}, {NumPerm: FamilyKMax + 1}, {NumPerm: -1},
		{Threads: -1}, {MaxBucket: 1}, {Bands: -1, Rows: 2},
	} {
		if d, err := NewDedup(o); !errors.Is(err, ErrParam) {
			t.Errorf("%+v: %v", o, err)
			if d != nil {
				d.Close()
			}
		}
	}
	sh, err := NewShingler(ShinglerOptions{K: 1, MaxDocumentBytes: 8})
	if err != nil {
		t.Fatal(err)
	}
	d, err := NewDedup(DedupOptions{Shingler: sh, Seed: 1})
	sh.Close() // the engine has its own copy
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	err = d.AddStrings([]string{"a b", "a b c d e f g h", "c d"})
	var berr *BatchError
	if !errors.As(err, &berr) || !reflect.DeepEqual(berr.Index, []int{1}) ||
		!errors.Is(err, ErrTooBig) {
		t.Fatalf("too big: %v", err)
	}
	if d.Count() != 2 {
		t.Fatalf("count %d", d.Count())
	}
}

func TestDedupConcurrentReads(t *testing.T) {
	d, err := NewDedup(DefaultDedupOptions())
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	docs := dedupCorpus(9, 40)
	if err := d.AddStrings(docs); err != nil {
		t.Fatal(err)
	}
	if err := d.Run(); err != nil {
		t.Fatal(err)
	}
	want, _ := d.Pairs()
	var wg sync.WaitGroup
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 20; i++ {
				got, err := d.Pairs()
				if err != nil || !reflect.DeepEqual(got, want) {
					t.Errorf("pairs differ: %v", err)
					return
				}
				if _, err := d.Decisions(); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
}

// commandPath finds the minlsh command installed with the library:
// MINLSH_PROGRAM, else PREFIX/bin/minlsh for the PREFIX/lib/pkgconfig in
// PKG_CONFIG_PATH (how make check-go points at its install).
func commandPath() string {
	if p := os.Getenv("MINLSH_PROGRAM"); p != "" {
		return p
	}
	for _, dir := range filepath.SplitList(os.Getenv("PKG_CONFIG_PATH")) {
		p := filepath.Join(dir, "..", "..", "bin", "minlsh")
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	return ""
}

// The decisions equal those of `minlsh dedup --output decisions` (JSON Lines
// input, ids 0, 1, ...) with the same banding.
func TestDedupSameAsCommand(t *testing.T) {
	prog := commandPath()
	if prog == "" {
		t.Skip("no minlsh command (set MINLSH_PROGRAM)")
	}
	docs := dedupCorpus(11, 100)
	var in bytes.Buffer
	for i, s := range docs {
		line, _ := json.Marshal(map[string]any{"id": i, "text": s})
		in.Write(line)
		in.WriteByte('\n')
	}
	for _, g := range []Group{GroupComponents, GroupStrict} {
		opts := DefaultDedupOptions()
		opts.Group = g
		r := runDedup(t, opts, docs, 50)
		group := map[Group]string{GroupComponents: "components", GroupStrict: "strict"}[g]
		cmd := exec.Command(prog, "dedup", "--quiet", "--jsonl", "--format", "jsonl",
			"--output", "decisions", "--group", group, "--bands", fmt.Sprint(r.Stats.Bands),
			"--rows", fmt.Sprint(r.Stats.Rows), "-")
		cmd.Stdin = bytes.NewReader(in.Bytes())
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("%s: %v", prog, err)
		}
		// The command numbers clusters from 1 in the order of their
		// smallest member, 0 for none: the index in Clusters() + 1.
		number := make([]int, len(docs))
		for c, members := range r.Clusters {
			for _, m := range members {
				number[m] = c + 1
			}
		}
		sc := bufio.NewScanner(bytes.NewReader(out))
		i := 0
		for ; sc.Scan(); i++ {
			var rec struct {
				ID             uint64
				Cluster        int
				Decision       string
				Representative uint64
				Similarity     float64
				Exact          bool
			}
			if err := json.Unmarshal(sc.Bytes(), &rec); err != nil {
				t.Fatal(err)
			}
			dc := r.Decisions[i]
			if rec.ID != uint64(i) || rec.Cluster != number[i] || uint64(rec.Cluster) != dc.Cluster ||
				rec.Decision != map[bool]string{true: "kept", false: "dropped"}[dc.Kept] ||
				rec.Representative != dc.Representative || rec.Similarity != dc.Similarity ||
				rec.Exact != dc.Exact {
				t.Fatalf("%s, document %d: command %+v, Go %+v", group, i, rec, dc)
			}
		}
		if i != len(docs) {
			t.Fatalf("%d records for %d documents", i, len(docs))
		}
	}
}

// Ids as the command takes them: 1 and 1.0 are one id, a repeat or an id of
// another kind is skipped and counted.
func TestDedupJSONIDs(t *testing.T) {
	d, err := NewDedup(DedupOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	ids := [][]byte{[]byte(`1`), []byte(`"a"`), []byte(`1.0`), []byte(`true`), []byte(`"\u0061"`),
		[]byte(`"b"`)}
	texts := [][]byte{[]byte("x y z"), []byte("x y z"), []byte("p"), []byte("q"), []byte("r"),
		[]byte("")}
	if err := d.AddJSON(ids, texts); err != nil {
		t.Fatal(err)
	}
	if err := d.AddNamed([]string{"b", "c"}, [][]byte{[]byte("s"), []byte("t")}); err != nil {
		t.Fatal(err)
	}
	if err := d.Run(); err != nil {
		t.Fatal(err)
	}
	dec, err := d.Decisions()
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, x := range dec {
		got = append(got, x.ID)
	}
	if fmt.Sprint(got) != `[1 "a" "b" c]` {
		t.Fatalf("ids %v", got)
	}
	st, _ := d.Stats()
	if st.RepeatedIDs != 3 || st.RefusedIDs != 1 || !dec[1].Exact || dec[1].Cluster != 1 {
		t.Fatalf("stats %+v, decisions %+v", st, dec)
	}
}

// No banding of 8 values reaches recall 0.999 at 0.5: refused, as the
// command and Python refuse it.
func TestDedupPlanOutOfReach(t *testing.T) {
	if _, err := NewDedup(DedupOptions{NumPerm: 8, Threshold: 0.5}); !errors.Is(err, ErrParam) {
		t.Fatalf("got %v", err)
	}
	d, err := NewDedup(DedupOptions{NumPerm: 8, Threshold: 0.5, Bands: 4, Rows: 2})
	if err != nil {
		t.Fatal(err)
	}
	d.Close()
}
