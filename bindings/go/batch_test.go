package minlsh_test

import (
	"errors"
	"fmt"
	"math/rand"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"minlsh.example/minlsh"
)

// tokenDocs makes n documents of random word tokens, joined three ways:
// as lists, as one buffer with offsets, and with a newline separator.
func tokenDocs(n int, seed int64) (docs [][]string, data []byte, offsets, bounds []int,
	joined []byte) {
	rng := rand.New(rand.NewSource(seed))
	bounds = []int{0}
	offsets = []int{0}
	var sb strings.Builder
	for d := 0; d < n; d++ {
		var doc []string
		nt := rng.Intn(200)
		if d%9 == 4 {
			nt = 0
		}
		for t := 0; t < nt; t++ {
			tok := fmt.Sprintf("w%d", rng.Intn(300))
			if t%40 == 0 {
				tok = ""
			}
			doc = append(doc, tok)
			data = append(data, tok...)
			offsets = append(offsets, len(data))
			if len(offsets) > 2 {
				sb.WriteByte('\n')
			}
			sb.WriteString(tok)
		}
		docs = append(docs, doc)
		bounds = append(bounds, bounds[len(bounds)-1]+nt)
	}
	return docs, data, offsets, bounds, []byte(sb.String())
}

func TestSignTokensMatchesUpdate(t *testing.T) {
	fam, err := minlsh.NewFamily(128, 7)
	if err != nil {
		t.Fatal(err)
	}
	defer fam.Close()
	docs, data, offsets, bounds, joined := tokenDocs(80, 1)
	a, err := fam.SignTokens(data, offsets, bounds)
	if err != nil {
		t.Fatal(err)
	}
	b, err := fam.SignDelimited(joined, '\n', bounds)
	if err != nil {
		t.Fatal(err)
	}
	if len(a) != len(docs) || len(b) != len(docs) {
		t.Fatalf("got %d and %d signatures for %d documents", len(a), len(b), len(docs))
	}
	for d, doc := range docs {
		m, _ := minlsh.NewMinHash(128, 7)
		items := make([][]byte, len(doc))
		for i, tok := range doc {
			items[i] = []byte(tok)
		}
		if err := m.Update(items...); err != nil {
			t.Fatal(err)
		}
		if !m.Equal(a[d]) || !m.Equal(b[d]) {
			t.Fatalf("document %d: batch signatures differ from Update", d)
		}
		if len(doc) == 0 && !a[d].IsEmpty() {
			t.Fatalf("document %d has no token but a non-empty signature", d)
		}
	}
	// A separator too many is refused, not misread.
	if _, err := fam.SignDelimited(append(joined, '\n'), '\n', bounds); !errors.Is(err,
		minlsh.ErrParam) {
		t.Fatalf("extra separator: %v, want ErrParam", err)
	}
	if _, err := fam.SignTokens(data, []int{0, -1}, []int{0, 1}); !errors.Is(err,
		minlsh.ErrParam) {
		t.Fatalf("negative offset: %v, want ErrParam", err)
	}
}

func TestIndexBatchesMergeAndLimits(t *testing.T) {
	fam, _ := minlsh.NewFamily(128, 1)
	defer fam.Close()
	_, data, offsets, bounds, _ := tokenDocs(120, 2)
	sigs, err := fam.SignTokens(data, offsets, bounds)
	if err != nil {
		t.Fatal(err)
	}
	// Planted near-copies: every tenth document repeats the one before.
	for i := 10; i < len(sigs); i += 10 {
		sigs[i] = sigs[i-1].Copy()
	}
	cfg := minlsh.IndexConfig{K: 128, Seed: 1, Bands: 16, Rows: 8}
	one, _ := minlsh.NewIndex(cfg)
	defer one.Close()
	ids := make([]uint64, len(sigs))
	for i := range sigs {
		ids[i] = uint64(i)
		if err := one.Insert(uint64(i), sigs[i]); err != nil {
			t.Fatal(err)
		}
	}
	many, _ := minlsh.NewIndex(cfg)
	defer many.Close()
	if n, err := many.InsertMany(ids, sigs); err != nil || n != len(sigs) {
		t.Fatalf("InsertMany: %d, %v", n, err)
	}
	if n, err := many.InsertMany([]uint64{5}, sigs[:1]); !errors.Is(err, minlsh.ErrExists) || n != 0 {
		t.Fatalf("InsertMany of an existing id: %d, %v", n, err)
	}
	got, err := many.QueryMany(sigs)
	if err != nil {
		t.Fatal(err)
	}
	for i, s := range sigs {
		want, _ := one.Query(s)
		if !reflect.DeepEqual(got[i], want) {
			t.Fatalf("query %d: QueryMany %v, Query %v", i, got[i], want)
		}
		lim, searched, err := one.QueryLimited(s, 0)
		if err != nil || searched != 16 || !reflect.DeepEqual(lim, want) {
			t.Fatalf("QueryLimited(0) %d: %v %d %v", i, lim, searched, err)
		}
	}
	if _, searched, _ := one.QueryLimited(sigs[10], 1); searched != 0 {
		t.Fatalf("QueryLimited(1) on a bucket of two searched %d bands", searched)
	}
	// Two shards merged answer like the whole.
	a, _ := minlsh.NewIndex(cfg)
	b, _ := minlsh.NewIndex(cfg)
	defer a.Close()
	defer b.Close()
	a.InsertMany(ids[:60], sigs[:60])
	b.InsertMany(ids[:60], sigs[60:])
	if err := a.Merge(b, 60); err != nil {
		t.Fatal(err)
	}
	if err := a.Merge(b, 60); !errors.Is(err, minlsh.ErrExists) {
		t.Fatalf("second merge: %v, want ErrExists", err)
	}
	pa, _ := a.Pairs(0)
	po, _ := one.Pairs(0)
	if !reflect.DeepEqual(pa, po) || len(po) < 5 {
		t.Fatalf("merged pairs %v, whole %v", pa, po)
	}
	if _, err := one.PairsMax(0, 1); !errors.Is(err, minlsh.ErrTooBig) {
		t.Fatalf("PairsMax: %v, want ErrTooBig", err)
	}
	// The signature matrix: saved, loaded, mapped; banding it gives the
	// index's pairs and clusters (ids = positions).
	m, err := minlsh.NewSigMatrix(128, 1, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	if first, err := m.Append(sigs...); err != nil || first != 0 || m.Len() != len(sigs) {
		t.Fatalf("Append: %d %v (len %d)", first, err, m.Len())
	}
	path := filepath.Join(t.TempDir(), "m.sig")
	if err := m.Save(path); err != nil {
		t.Fatal(err)
	}
	loaded, err := minlsh.LoadSigMatrix(path, &cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer loaded.Close()
	mapped, err := minlsh.MapSigMatrix(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer mapped.Close()
	if _, err := mapped.Append(sigs[0]); !errors.Is(err, minlsh.ErrState) {
		t.Fatalf("Append to a mapped matrix: %v, want ErrState", err)
	}
	for _, mm := range []*minlsh.SigMatrix{m, loaded, mapped} {
		c, err := mm.Column(37)
		if err != nil || !c.Equal(sigs[37]) {
			t.Fatalf("Column(37): %v", err)
		}
		pm, err := mm.Pairs(16, 8, 0, 0)
		if err != nil || !reflect.DeepEqual(pm, po) {
			t.Fatalf("matrix pairs %v (%v), index pairs %v", pm, err, po)
		}
		cm, _ := mm.Clusters(16, 8, 0)
		ci, _ := one.Clusters(0)
		if !reflect.DeepEqual(cm, ci) {
			t.Fatalf("matrix clusters %v, index clusters %v", cm, ci)
		}
	}
	if _, err := loaded.Pairs(16, 8, 0, 1); !errors.Is(err, minlsh.ErrTooBig) {
		t.Fatalf("matrix Pairs max 1: %v, want ErrTooBig", err)
	}
}

// Sign pre-tokenized documents (word 3-grams here) in one call: the
// tokens of every document joined in one buffer with a separator, plus
// where each document's tokens start. Nothing is copied per token.
func ExampleFamily_SignDelimited() {
	docs := [][]string{
		{"the quick brown", "quick brown fox", "brown fox jumps"},
		{"the quick brown", "quick brown fox", "brown fox leaps"},
		{"something else entirely"},
	}
	var data []byte
	bounds := []int{0}
	for _, doc := range docs {
		for _, tok := range doc {
			if len(data) > 0 {
				data = append(data, '\n')
			}
			data = append(data, tok...)
		}
		bounds = append(bounds, bounds[len(bounds)-1]+len(doc))
	}
	fam, err := minlsh.NewFamily(128, 1)
	if err != nil {
		panic(err)
	}
	defer fam.Close()
	sigs, err := fam.SignDelimited(data, '\n', bounds)
	if err != nil {
		panic(err)
	}
	j01, _ := sigs[0].Jaccard(sigs[1])
	j02, _ := sigs[0].Jaccard(sigs[2])
	fmt.Printf("%d signatures; doc 0 ~ doc 1: %v; doc 0 ~ doc 2: %v\n", len(sigs), j01 > 0.3,
		j02 > 0.3)
	// Output: 3 signatures; doc 0 ~ doc 1: true; doc 0 ~ doc 2: false
}

// Build an index in one call and query every document in another.
func ExampleIndex_QueryMany() {
	fam, _ := minlsh.NewFamily(64, 1)
	defer fam.Close()
	data := []byte("a b c d|a b c e|x y z")
	// Tokens are the letters, separated by ' ' and '|'; use '|' for
	// documents by offsets instead: here every token is one byte.
	var tokens []byte
	bounds := []int{0}
	for _, doc := range strings.Split(string(data), "|") {
		for _, tok := range strings.Fields(doc) {
			if len(tokens) > 0 {
				tokens = append(tokens, ' ')
			}
			tokens = append(tokens, tok...)
		}
		bounds = append(bounds, bounds[len(bounds)-1]+len(strings.Fields(doc)))
	}
	sigs, _ := fam.SignDelimited(tokens, ' ', bounds)
	idx, _ := minlsh.NewIndex(minlsh.IndexConfig{K: 64, Seed: 1, Bands: 32, Rows: 2})
	defer idx.Close()
	idx.InsertMany([]uint64{0, 1, 2}, sigs)
	res, _ := idx.QueryMany(sigs)
	for i, cands := range res {
		ids := []uint64{}
		for _, c := range cands {
			ids = append(ids, c.ID)
		}
		fmt.Println(i, ids)
	}
	// Output:
	// 0 [0 1]
	// 1 [0 1]
	// 2 [2]
}

// The batch path against one Update per document (go test -bench Sign).
func benchDocs(b *testing.B) ([][]string, []byte, []int) {
	docs, _, _, bounds, joined := tokenDocs(2000, 3)
	return docs, joined, bounds
}

func BenchmarkSignDelimited(b *testing.B) {
	fam, _ := minlsh.NewFamily(128, 1)
	defer fam.Close()
	_, joined, bounds := benchDocs(b)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := fam.SignDelimited(joined, '\n', bounds); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkSignUpdatePerDocument(b *testing.B) {
	docs, _, _ := benchDocs(b)
	items := make([][][]byte, len(docs))
	for d, doc := range docs {
		for _, tok := range doc {
			items[d] = append(items[d], []byte(tok))
		}
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for _, it := range items {
			m, _ := minlsh.NewMinHash(128, 1)
			if err := m.Update(it...); err != nil {
				b.Fatal(err)
			}
		}
	}
}
