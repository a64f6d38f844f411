package minlsh_test

import (
	"fmt"
	"log"
	"os"
	"path/filepath"
	"strings"

	"minlsh.example/minlsh"
)

// Find the near-duplicates among a few documents: shingle and sign them in
// one batch, index the signatures, and ask for clusters.
func Example() {
	docs := [][]byte{
		[]byte("the quick brown fox jumps over the lazy dog near the river bank"),
		[]byte("the quick brown fox jumps over the lazy dog near the river shore"),
		[]byte("an entirely different sentence about something else"),
		[]byte("The Quick Brown Fox jumps over the lazy dog near the river bank!"),
	}
	sh, err := minlsh.NewShingler(minlsh.ShinglerOptions{K: 3, Lowercase: true, StripPunct: true})
	if err != nil {
		log.Fatal(err)
	}
	defer sh.Close()
	fam, err := minlsh.NewFamily(128, 1)
	if err != nil {
		log.Fatal(err)
	}
	defer fam.Close()
	sigs, err := fam.SignBatch(sh, docs, 0)
	if err != nil {
		log.Fatal(err)
	}
	plan, _ := minlsh.Plan(minlsh.PlanOptions{Threshold: 0.5, K: 128})
	idx, err := minlsh.NewIndex(minlsh.IndexConfig{K: 128, Seed: 1, Bands: plan.Bands,
		Rows: plan.Rows, ConfigID: sh.ConfigID()})
	if err != nil {
		log.Fatal(err)
	}
	defer idx.Close()
	for i, sig := range sigs {
		if err := idx.Insert(uint64(i), sig); err != nil {
			log.Fatal(err)
		}
	}
	clusters, _ := idx.Clusters(0.5)
	fmt.Println("clusters:", clusters)
	pairs, _ := idx.Pairs(0.5)
	for _, p := range pairs {
		fmt.Printf("%d ~ %d: %.2f\n", p.A, p.B, p.Similarity)
	}
	// Output:
	// clusters: [[0 1 3]]
	// 0 ~ 1: 0.85
	// 0 ~ 3: 1.00
	// 1 ~ 3: 0.85
}

// MinHash works like datasketch's: one Update per item.
func ExampleMinHash_Update() {
	a, _ := minlsh.NewMinHash(128, 1)
	b, _ := minlsh.NewMinHash(128, 1)
	for _, w := range []string{"minhash", "is", "a", "probabilistic", "data", "structure"} {
		a.Update([]byte(w))
	}
	for _, w := range []string{"minhash", "is", "a", "probability", "data", "structure"} {
		b.Update([]byte(w))
	}
	j, _ := a.Jaccard(b)
	fmt.Printf("estimated Jaccard %.2f (exact 5/7 = %.2f)\n", j, 5.0/7)
	// Output:
	// estimated Jaccard 0.67 (exact 5/7 = 0.71)
}

func ExamplePlan() {
	p, _ := minlsh.Plan(minlsh.PlanOptions{Threshold: 0.8, K: 128})
	fmt.Printf("b=%d r=%d\n", p.Bands, p.Rows)
	// Output:
	// b=9 r=13
}

// Deduplicate a few documents with the library's dedup engine: one kept
// document per group of near-duplicates, the others dropped and attributed
// to it.
func ExampleDedup() {
	docs := []string{
		"the quick brown fox jumps over the lazy dog near the river bank",
		"the quick brown fox jumps over the lazy dog near the river shore",
		"an entirely different sentence about something else",
		"the quick brown fox jumps over the lazy dog near the river bank",
	}
	sh, err := minlsh.NewShingler(minlsh.ShinglerOptions{K: 3})
	if err != nil {
		log.Fatal(err)
	}
	defer sh.Close()
	opts := minlsh.DefaultDedupOptions()
	opts.Threshold = 0.5
	opts.Shingler = sh
	d, err := minlsh.NewDedup(opts)
	if err != nil {
		log.Fatal(err)
	}
	defer d.Close()
	if err := d.AddStrings(docs); err != nil {
		log.Fatal(err)
	}
	if err := d.Run(); err != nil {
		log.Fatal(err)
	}
	decisions, _ := d.Decisions()
	for i, dc := range decisions {
		switch {
		case dc.Kept:
			fmt.Printf("%d kept\n", i)
		case dc.Exact:
			fmt.Printf("%d dropped: exact copy of %d\n", i, dc.Representative)
		default:
			fmt.Printf("%d dropped: %.2f similar to %d\n", i, dc.Similarity, dc.Representative)
		}
	}
	clusters, _ := d.Clusters()
	fmt.Println("clusters:", clusters)
	// Output:
	// 0 kept
	// 1 dropped: 0.83 similar to 0
	// 2 kept
	// 3 dropped: exact copy of 0
	// clusters: [[0 1 3]]
}

// A crawler's loop over a mapped index and its journal: lock, map, replay,
// insert what is novel and record it, sync, compact when due.
func ExampleJournal() {
	dir, err := os.MkdirTemp("", "minlsh-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "crawl.mlsh")
	cfg := minlsh.IndexConfig{K: 128, Seed: 1, Bands: 16, Rows: 8}
	first, err := minlsh.NewIndex(cfg)
	if err != nil {
		log.Fatal(err)
	}
	if err := first.SaveMapped(path); err != nil { // an empty index to start from
		log.Fatal(err)
	}
	first.Close()

	lock, err := minlsh.LockFile(path, true, -1)
	if err != nil {
		log.Fatal(err)
	}
	defer lock.Unlock()
	idx, err := minlsh.MapIndex(path, &cfg)
	if err != nil {
		log.Fatal(err)
	}
	defer idx.Close()
	names := map[uint64]string{}
	j, err := minlsh.OpenJournal(idx, path+".journal", true,
		func(op minlsh.JournalOp, id uint64, data []byte) error {
			names[id] = string(data) // a restart learns the names back
			return nil
		})
	if err != nil {
		log.Fatal(err)
	}
	defer j.Close()
	pages := []string{
		"the quick brown fox jumps over the lazy dog near the river bank",
		"the quick brown fox jumps over the lazy dog near the river bank",
		"an entirely different page about something else",
	}
	for i, text := range pages {
		m, _ := minlsh.NewMinHash(128, 1)
		for _, w := range strings.Fields(text) {
			m.Update([]byte(w))
		}
		id := uint64(i + 1)
		nov, err := idx.InsertNovel(id, m, minlsh.NovelOptions{Threshold: 0.8})
		if err != nil {
			log.Fatal(err)
		}
		if nov.Novel {
			if err := j.Append(minlsh.JournalInsert, id, m, []byte(fmt.Sprintf("page-%d", i))); err != nil {
				log.Fatal(err)
			}
		}
		fmt.Println(id, nov.Novel)
	}
	if err := j.Sync(); err != nil { // durable from here
		log.Fatal(err)
	}
	if due, _ := j.CompactDue(); due {
		if err := j.Compact(path); err != nil {
			log.Fatal(err)
		}
	}
	fmt.Println(idx.Len(), j.Records())
	// Output:
	// 1 true
	// 2 false
	// 3 true
	// 2 2
}

// Keep only the novel documents: the index holds the family (k 128, seed 1)
// and the threshold, and plans its bands and rows from the threshold
// (bindings/go/README.md shows this example).
func ExampleIndex_InsertNovel() {
	sh, err := minlsh.NewShingler(minlsh.ShinglerOptions{K: 3})
	if err != nil {
		log.Fatal(err)
	}
	defer sh.Close()
	idx, err := minlsh.NewIndex(minlsh.IndexConfig{Threshold: 0.7})
	if err != nil {
		log.Fatal(err)
	}
	defer idx.Close()
	for i, text := range []string{
		"the quick brown fox jumps over the lazy dog near the river bank",
		"the quick brown fox jumps over the lazy dog near the river bank today",
		"an entirely different sentence about something else",
	} {
		m, err := idx.SignText(sh, []byte(text))
		if err != nil {
			log.Fatal(err)
		}
		r, err := idx.InsertNovel(uint64(i), m, minlsh.NovelOptions{})
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println(i, r.Novel)
	}
	// Output:
	// 0 true
	// 1 false
	// 2 true
}

// Deduplicate a batch of named documents: decisions carry the names.
func ExampleDedup_AddNamedStrings() {
	d, err := minlsh.NewDedup(minlsh.DedupOptions{Threshold: 0.5})
	if err != nil {
		log.Fatal(err)
	}
	defer d.Close()
	err = d.AddNamedStrings([]string{"a.txt", "b.txt", "c.txt"}, []string{
		"the quick brown fox jumps over the lazy dog near the river bank",
		"the quick brown fox jumps over the lazy dog near the river bank today",
		"an entirely different sentence about something else",
	})
	if err != nil {
		log.Fatal(err)
	}
	if err := d.Run(); err != nil {
		log.Fatal(err)
	}
	decisions, _ := d.Decisions()
	for _, dec := range decisions {
		fmt.Println(dec.ID, dec.Kept, dec.RepresentativeID)
	}
	// Output:
	// a.txt true a.txt
	// b.txt false a.txt
	// c.txt true c.txt
}
