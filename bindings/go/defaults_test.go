package minlsh

import (
	"errors"
	"testing"
)

// The C limit and its Go twin agree, and 9,000 values (Lee et al.'s 20
// bands of 450 rows) index and query.
func TestFamilyKMaxAndLargeK(t *testing.T) {
	if f, err := NewFamily(FamilyKMax, 1); err != nil || FamilyKMax < 9000 {
		t.Fatalf("FamilyKMax %d: %v", FamilyKMax, err)
	} else {
		f.Close()
	}
	if _, err := NewFamily(FamilyKMax+1, 1); !errors.Is(err, ErrParam) {
		t.Fatalf("FamilyKMax+1: %v", err)
	}
	x, err := NewIndex(IndexConfig{K: 9000, Bands: 20, Rows: 450})
	if err != nil {
		t.Fatal(err)
	}
	defer x.Close()
	a, err := x.Sign(hashRange(0, 1000))
	if err != nil {
		t.Fatal(err)
	}
	if err := x.Insert(1, a); err != nil {
		t.Fatal(err)
	}
	near, _ := x.Sign(hashRange(0, 1001)) // J = 1000/1001
	if c, err := x.Query(near); err != nil || len(c) != 1 || c[0].ID != 1 {
		t.Fatalf("%+v %v", c, err)
	}
}

func hashRange(from, to uint64) []uint64 {
	out := make([]uint64, 0, to-from)
	for i := from; i < to; i++ {
		out = append(out, i*0x9E3779B97F4A7C15+7)
	}
	return out
}

// Zero means the default in every options struct: IndexConfig{} is k 128,
// seed 1, threshold 0.8 and the plan of that threshold; DedupOptions{} is
// DefaultDedupOptions(); PlanOptions{} is the library's defaults.
func TestZeroValuesMeanDefaults(t *testing.T) {
	plan, err := Plan(PlanOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want, _ := Plan(PlanOptions{Threshold: 0.8, K: 128, Mode: PlanBalanced, WeightFP: 0.5,
		WeightFN: 0.5, TargetRecall: 0.99})
	if plan != want {
		t.Fatalf("PlanOptions{}: %+v, want %+v", plan, want)
	}
	x, err := NewIndex(IndexConfig{})
	if err != nil {
		t.Fatal(err)
	}
	defer x.Close()
	cfg := x.Config()
	if cfg != (IndexConfig{K: 128, Seed: 1, Threshold: 0.8, Bands: plan.Bands, Rows: plan.Rows}) {
		t.Fatalf("IndexConfig{}: %+v", cfg)
	}
	// Only one of Bands and Rows: not a plan, an error.
	if _, err := NewIndex(IndexConfig{Bands: 4}); !errors.Is(err, ErrParam) {
		t.Fatalf("bands alone: %v", err)
	}
	// Planned from the threshold given.
	p9, _ := Plan(PlanOptions{Threshold: 0.9, K: 256})
	y, err := NewIndex(IndexConfig{K: 256, Threshold: 0.9})
	if err != nil {
		t.Fatal(err)
	}
	defer y.Close()
	if c := y.Config(); c.Bands != p9.Bands || c.Rows != p9.Rows || c.Seed != 1 {
		t.Fatalf("planned: %+v, plan %+v", c, p9)
	}
	// A MinHash of seed 1 fits the default index; seed 0 means 1 on load too.
	m := minhashOf(t, 128, 1, "a", "b")
	if err := x.Insert(1, m); err != nil {
		t.Fatal(err)
	}
	path := t.TempDir() + "/zero.mlsh"
	if err := x.Save(path); err != nil {
		t.Fatal(err)
	}
	back, err := LoadIndex(path, &IndexConfig{})
	if err != nil {
		t.Fatal(err)
	}
	back.Close()
	texts := []string{"one two three four five six", "one two three four five six seven",
		"something else entirely here now"}
	decide := func(o DedupOptions) []Decision {
		d, err := NewDedup(o)
		if err != nil {
			t.Fatal(err)
		}
		defer d.Close()
		if err := d.AddStrings(texts); err != nil {
			t.Fatal(err)
		}
		if err := d.Run(); err != nil {
			t.Fatal(err)
		}
		out, err := d.Decisions()
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	zero, def := decide(DedupOptions{}), decide(DefaultDedupOptions())
	for i := range zero {
		if zero[i] != def[i] {
			t.Fatalf("document %d: DedupOptions{} %+v, defaults %+v", i, zero[i], def[i])
		}
	}
}

// Insert-if-novel with nothing repeated: the index signs and holds the
// threshold it was planned for.
func TestInsertNovelTakesTheIndexThreshold(t *testing.T) {
	sh, _ := NewShingler(ShinglerOptions{K: 2})
	defer sh.Close()
	x, err := NewIndex(IndexConfig{Threshold: 0.5})
	if err != nil {
		t.Fatal(err)
	}
	defer x.Close()
	a, _ := x.SignText(sh, []byte("a b c d e f g h i j k l m n o p"))
	b, _ := x.SignText(sh, []byte("a b c d e f g h i j k l m n o p q r s")) // J = 15/18
	if r, err := x.InsertNovel(1, a, NovelOptions{}); err != nil || !r.Novel {
		t.Fatalf("%+v %v", r, err)
	}
	if r, err := x.InsertNovel(2, b, NovelOptions{}); err != nil || r.Novel || r.Match != 1 {
		t.Fatalf("near-duplicate at the index's 0.5: %+v %v", r, err)
	}
	// The options' threshold wins over the index's.
	if r, err := x.InsertNovel(2, b, NovelOptions{Threshold: 0.99}); err != nil || !r.Novel {
		t.Fatalf("threshold 0.99: %+v %v", r, err)
	}
}

// String ids in, string ids out, as Python's minlsh.dedup takes (id, text).
func TestDedupNamed(t *testing.T) {
	d, err := NewDedup(DedupOptions{Threshold: 0.5})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if err := d.AddStrings([]string{"an unnamed first document of words"}); err != nil {
		t.Fatal(err)
	}
	err = d.AddNamedStrings([]string{"a.txt", "b.txt"}, []string{
		"the quick brown fox jumps over the lazy dog again and again",
		"the quick brown fox jumps over the lazy dog again and again!"})
	if err != nil {
		t.Fatal(err)
	}
	if err := d.AddNamed([]string{"x"}, nil); !errors.Is(err, ErrParam) {
		t.Fatalf("lengths differ: %v", err)
	}
	if err := d.Run(); err != nil {
		t.Fatal(err)
	}
	dec, _ := d.Decisions()
	if len(dec) != 3 || dec[0].ID != "0" || dec[1].ID != "a.txt" || dec[2].ID != "b.txt" ||
		!dec[1].Kept || dec[2].Kept || dec[2].RepresentativeID != "a.txt" {
		t.Fatalf("%+v", dec)
	}
}
