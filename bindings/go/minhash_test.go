package minlsh

import (
	"errors"
	"fmt"
	"math"
	"math/rand"
	"reflect"
	"runtime"
	"strings"
	"sync"
	"testing"
)

func TestEstimateAccuracy(t *testing.T) {
	rng := rand.New(rand.NewSource(20240601))
	const k, pairs = 128, 600
	var sumErr, sumSq, sumVar float64
	for i := 0; i < pairs; i++ {
		union := 200 + rng.Intn(201)
		shared := int(math.Round(float64(union) * float64(i) / (pairs - 1)))
		elems := make([]uint64, union)
		for j := range elems {
			elems[j] = rng.Uint64()
		}
		rest := elems[shared:]
		half := len(rest) / 2
		a := append(append([]uint64{}, elems[:shared]...), rest[:half]...)
		b := append(append([]uint64{}, elems[:shared]...), rest[half:]...)
		j := float64(shared) / float64(union)
		f, err := NewFamily(k, rng.Uint64()) // a different family per pair
		if err != nil {
			t.Fatal(err)
		}
		ma, _ := f.Sign(a)
		mb, _ := f.Sign(b)
		est, err := ma.Jaccard(mb)
		if err != nil {
			t.Fatal(err)
		}
		f.Close()
		sumErr += est - j
		sumSq += (est - j) * (est - j)
		sumVar += j * (1 - j) / k
	}
	mean := sumErr / pairs
	rmse := math.Sqrt(sumSq / pairs)
	theory := math.Sqrt(sumVar / pairs)
	if math.Abs(mean) > 0.006 || math.Abs(rmse/theory-1) > 0.2 {
		t.Fatalf("mean error %.5f, RMSE %.5f, theory %.5f", mean, rmse, theory)
	}
	t.Logf("mean error %.5f, RMSE %.5f, theory %.5f", mean, rmse, theory)
}

func TestMinHashBasics(t *testing.T) {
	a, err := NewMinHash(64, 7)
	if err != nil {
		t.Fatal(err)
	}
	if !a.IsEmpty() || a.K() != 64 {
		t.Fatal("new MinHash is not empty")
	}
	if j, _ := a.Jaccard(a); j != 0 {
		t.Fatalf("empty jaccard %v", j)
	}
	a.Update([]byte("x"), []byte("y"))
	b := a.Copy()
	b.Update([]byte("z"))
	if a.Equal(b) || a.IsEmpty() {
		t.Fatal("copy is not independent")
	}
	u, _ := NewMinHash(64, 7)
	u.Update([]byte("z"), []byte("y"), []byte("x"))
	if !b.Equal(u) {
		t.Fatal("update is not a set union")
	}
	if j, _ := a.Jaccard(b); j <= 0.3 || j >= 1 {
		t.Fatalf("jaccard %v", j)
	}
	c, _ := NewMinHash(64, 8)
	if _, err := a.Jaccard(c); !errors.Is(err, ErrParam) {
		t.Fatalf("different seeds: %v", err)
	}
	if err := a.Merge(MinHash{Seed: 7, Values: make([]uint32, 32)}); !errors.Is(err, ErrParam) {
		t.Fatalf("different k: %v", err)
	}
	if _, err := NewMinHash(0, 1); !errors.Is(err, ErrParam) {
		t.Fatalf("k = 0: %v", err)
	}
	if _, err := NewFamily(FamilyKMax+1, 1); !errors.Is(err, ErrParam) {
		t.Fatalf("k too big: %v", err)
	}
}

func TestErrorValues(t *testing.T) {
	_, err := NewShingler(ShinglerOptions{K: ShingleKMax + 1})
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("not an *Error: %v", err)
	}
	if e.Code != CodeParam || e.Name != "MINLSH_E_PARAM" || e.Message != "a parameter is out of range" ||
		e.Op != "minlsh_shingler_new" {
		t.Fatalf("%+v", e)
	}
	if err.Error() != "minlsh: minlsh_shingler_new: a parameter is out of range (MINLSH_E_PARAM)" {
		t.Fatalf("%q", err.Error())
	}
	if !errors.Is(err, ErrParam) || errors.Is(err, ErrIO) {
		t.Fatal("errors.Is")
	}
	if _, err := NewShingler(ShinglerOptions{Key: []byte("short")}); !errors.Is(err, ErrParam) ||
		!strings.Contains(err.Error(), "16 bytes") {
		t.Fatalf("short key: %v", err)
	}
	if _, err := ParseShingle("sentence:3"); !errors.Is(err, ErrParam) {
		t.Fatalf("bad unit: %v", err)
	}
	if _, err := ParseShingle("word:five"); err == nil {
		t.Fatal("bad size accepted")
	}
	if _, err := NewShingler(ShinglerOptions{Unit: UnitStopword, Stopwords: []string{"...", "!!"}}); !errors.Is(err, ErrParam) {
		t.Fatalf("no usable stop word: %v", err)
	}
	if err := checkVersion(10000, "1.0.0"); err == nil || !strings.Contains(err.Error(), "1.0.0") {
		t.Fatalf("version 1.0.0 accepted: %v", err)
	}
	if err := checkVersion(VersionNumber(), Version()); err != nil || CheckVersion() != nil {
		t.Fatal(err)
	}
}

func TestShinglerOptions(t *testing.T) {
	sw, err := NewShingler(ShinglerOptions{Unit: UnitStopword, Stopwords: []string{"the", "a"}})
	if err != nil {
		t.Fatal(err)
	}
	if sw.K() != 3 || sw.String() != "stopword:3" {
		t.Fatalf("%v", sw)
	}
	sh, _ := sw.Shingles([]byte("the cat sat on a mat by the door"))
	if len(sh) != 2 {
		t.Fatalf("%d stop-word shingles", len(sh))
	}
	norm, _ := NewShingler(ShinglerOptions{K: 2, Lowercase: true, StripPunct: true})
	x, _ := norm.Shingles([]byte("Hello, World!  Again"))
	y, _ := norm.Shingles([]byte("hello world again"))
	if !reflect.DeepEqual(x, y) {
		t.Fatal("normalisation")
	}
	uni, err := NewShingler(ShinglerOptions{K: 2, NFKC: true, Casefold: true, UnicodePunct: true,
		UnicodeSpace: true, FoldDigits: true, CJKWords: true})
	if err != nil {
		t.Fatal(err)
	}
	x, _ = uni.Shingles([]byte("ÉCOLE ÜBER STRAßE — ﬁne ٣"))
	y, _ = uni.Shingles([]byte("école über strasse fine 3"))
	if !reflect.DeepEqual(x, y) || uni.Flags() != 0x3f7 || UnicodeVersion() != 150000 {
		t.Fatalf("Unicode options: flags %#x, version %d", uni.Flags(), UnicodeVersion())
	}
	zh, _ := uni.Shingles([]byte("我们今天")) // four characters, four words
	if len(zh) != 3 {
		t.Fatalf("%d word 2-shingles of four Han characters", len(zh))
	}
	limited, _ := NewShingler(ShinglerOptions{MaxDocumentBytes: 4})
	if _, err := limited.Shingles([]byte("too long")); !errors.Is(err, ErrTooBig) {
		t.Fatalf("max document bytes: %v", err)
	}
	secret, _ := NewShingler(ShinglerOptions{Key: []byte("0123456789abcdef")})
	def, _ := NewShingler(ShinglerOptions{})
	if secret.ConfigID() == def.ConfigID() {
		t.Fatal("the key does not change the config id")
	}
	if def.String() != "word:5" {
		t.Fatal(def.String())
	}
}

func TestClosedHandles(t *testing.T) {
	s, _ := NewShingler(ShinglerOptions{})
	f, _ := NewFamily(16, 1)
	st, _ := s.NewStream()
	s.Close()
	s.Close()
	if _, err := s.Shingles([]byte("x")); !errors.Is(err, ErrState) {
		t.Fatalf("closed shingler: %v", err)
	}
	if _, err := f.SignText(s, []byte("x")); !errors.Is(err, ErrState) {
		t.Fatalf("closed shingler: %v", err)
	}
	// the stream holds its own copy of the configuration
	if _, err := st.Write([]byte("still works")); err != nil {
		t.Fatal(err)
	}
	st.Close()
	if _, err := st.Write([]byte("x")); !errors.Is(err, ErrState) {
		t.Fatalf("closed stream: %v", err)
	}
	f.Close()
	if _, err := f.Sign(nil); !errors.Is(err, ErrState) {
		t.Fatalf("closed family: %v", err)
	}
}

func TestFinalizersRelease(t *testing.T) {
	// Handles dropped without Close are released by their finalizers; this
	// only checks that doing so does not crash.
	for i := 0; i < 200; i++ {
		s, _ := NewShingler(ShinglerOptions{})
		f, _ := NewFamily(8, uint64(i))
		x, _ := NewIndex(IndexConfig{K: 8, Seed: 1, Bands: 2, Rows: 4})
		_, _, _ = s, f, x
	}
	runtime.GC()
	runtime.GC()
}

func corpus(n int, seed int64) [][]byte {
	rng := rand.New(rand.NewSource(seed))
	out := make([][]byte, n)
	for i := range out {
		words := make([]string, rng.Intn(120))
		for j := range words {
			words[j] = fmt.Sprintf("w%d", rng.Intn(500))
		}
		out[i] = []byte(strings.Join(words, " "))
	}
	return out
}

func TestSharedShinglerManyGoroutines(t *testing.T) {
	docs := corpus(200, 3)
	s, _ := NewShingler(ShinglerOptions{K: 3, Lowercase: true})
	f, _ := NewFamily(64, 9)
	type result struct {
		sh  []uint64
		fp  [16]byte
		sig MinHash
	}
	serial := make([]result, len(docs))
	for i, d := range docs {
		serial[i].sh, _ = s.Shingles(d)
		serial[i].fp, _ = s.Fingerprint(d)
		serial[i].sig, _ = f.SignText(s, d)
	}
	var wg sync.WaitGroup
	errs := make(chan string, 8*len(docs))
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for _, i := range rand.New(rand.NewSource(int64(g))).Perm(len(docs)) {
				sh, _ := s.Shingles(docs[i])
				fp, _ := s.Fingerprint(docs[i])
				sig, _ := f.SignText(s, docs[i])
				m, _ := NewMinHash(64, 9)
				m.UpdateHashes(sh...)
				if !reflect.DeepEqual(sh, serial[i].sh) || fp != serial[i].fp ||
					!sig.Equal(serial[i].sig) || !m.Equal(sig) {
					errs <- fmt.Sprintf("goroutine %d document %d differs", g, i)
				}
			}
		}(g)
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
}

func TestSignBatchThreadsAndErrors(t *testing.T) {
	docs := corpus(300, 11)
	s, _ := NewShingler(ShinglerOptions{})
	f, _ := NewFamily(32, 1)
	base, err := f.SignBatch(s, docs, 1)
	if err != nil {
		t.Fatal(err)
	}
	for _, threads := range []int{0, 2, 5, 64} {
		got, err := f.SignBatch(s, docs, threads)
		if err != nil || !reflect.DeepEqual(got, base) {
			t.Fatalf("threads %d differ (%v)", threads, err)
		}
	}
	if got, err := f.SignBatch(s, nil, 0); err != nil || len(got) != 0 {
		t.Fatalf("no documents: %v %v", got, err)
	}
	limited, _ := NewShingler(ShinglerOptions{MaxDocumentBytes: 50})
	got, err := f.SignBatch(limited, [][]byte{[]byte("short one"), make([]byte, 100),
		[]byte("another short"), make([]byte, 60)}, 2)
	var be *BatchError
	if !errors.As(err, &be) || !reflect.DeepEqual(be.Index, []int{1, 3}) ||
		!errors.Is(err, ErrTooBig) || !strings.Contains(err.Error(), "document 1") {
		t.Fatalf("batch error: %v", err)
	}
	if !got[1].IsEmpty() || !got[3].IsEmpty() || got[0].IsEmpty() || got[2].IsEmpty() {
		t.Fatal("failed documents must have the empty signature, the others theirs")
	}
	if _, err := f.SignBatch(s, docs, -1); !errors.Is(err, ErrParam) {
		t.Fatalf("threads -1: %v", err)
	}
}

func TestPlanAndBandKeys(t *testing.T) {
	p, err := Plan(PlanOptions{Threshold: 0.8})
	if err != nil || p.Bands != 9 || p.Rows != 13 {
		t.Fatalf("%+v %v", p, err)
	}
	if p, _ := Plan(PlanOptions{Threshold: 0.8, Mode: PlanRecall}); p.Bands != 16 || p.Rows != 6 {
		t.Fatalf("recall %+v", p)
	}
	if p, _ := Plan(PlanOptions{Threshold: 0.8, Mode: PlanRule}); p.Bands != 11 || p.Rows != 11 {
		t.Fatalf("rule %+v", p)
	}
	if _, err := Plan(PlanOptions{Threshold: 1.5}); !errors.Is(err, ErrParam) ||
		!strings.Contains(err.Error(), "threshold 1.5") {
		t.Fatalf("bad threshold: %v", err)
	}
	if pr, _ := Probability(0.5, 20, 5); math.Abs(pr-(1-math.Pow(1-math.Pow(0.5, 5), 20))) > 1e-15 {
		t.Fatal(pr)
	}
	if th, _ := Threshold(20, 5); math.Abs(th-math.Pow(1.0/20, 1.0/5)) > 1e-12 {
		t.Fatal(th)
	}
	// docs/lsh.md's worked example
	sig := make([]uint32, 12)
	for i := range sig {
		sig[i] = uint32(uint64(i) * 0x9E3779B1)
	}
	keys, err := BandKeys(sig, 3, 4)
	if err != nil || !reflect.DeepEqual(keys, []uint64{0x5b73425f3f71e5b8, 0x4f8f65ca250376a6,
		0x187d6646080fa303}) {
		t.Fatalf("%x %v", keys, err)
	}
	if _, err := BandKeys(sig, 4, 4); !errors.Is(err, ErrParam) {
		t.Fatal(err)
	}
}
