package minlsh

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// The golden OPH signatures of the C library's specification
// (tests/golden/oph_signatures.txt, written by the Python reference),
// through Family.Sign of a SchemeOPH family.
func TestOPHGolden(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "..", "tests", "golden", "oph_signatures.txt"))
	if err != nil {
		t.Fatal(err)
	}
	var words []string
	for _, line := range strings.Split(string(data), "\n") {
		if !strings.HasPrefix(line, "#") {
			words = append(words, strings.Fields(line)...)
		}
	}
	cases := 0
	for i := 0; i < len(words); {
		// case NAME seed S k K n N hashes H... sig V... end
		name := words[i+1]
		seed, _ := strconv.ParseUint(words[i+3], 16, 64)
		k, _ := strconv.Atoi(words[i+5])
		n, _ := strconv.Atoi(words[i+7])
		i += 9
		hashes := make([]uint64, n)
		for j := range hashes {
			hashes[j], _ = strconv.ParseUint(words[i+j], 16, 64)
		}
		i += n + 1
		want := make([]uint32, k)
		for j := range want {
			v, _ := strconv.ParseUint(words[i+j], 16, 32)
			want[j] = uint32(v)
		}
		i += k + 1
		f, err := NewFamilyScheme(k, seed, SchemeOPH)
		if err != nil {
			t.Fatal(err)
		}
		m, err := f.Sign(hashes)
		if err != nil {
			t.Fatal(name, err)
		}
		for j := range want {
			if m.Values[j] != want[j] {
				t.Fatalf("%s: value %d is %08x, want %08x", name, j, m.Values[j], want[j])
			}
		}
		if m.Scheme != SchemeOPH || f.Scheme() != SchemeOPH {
			t.Fatalf("%s: scheme %v", name, m.Scheme)
		}
		cases++
	}
	if cases != 12 {
		t.Fatalf("%d golden cases, want 12", cases)
	}
}

func TestOPHRefusals(t *testing.T) {
	f, err := NewFamilyScheme(64, 3, SchemeOPH)
	if err != nil {
		t.Fatal(err)
	}
	a, _ := f.Sign([]uint64{1, 2, 3})
	if err := a.Update([]byte("x")); !errors.Is(err, ErrUnsupported) {
		t.Fatalf("Update: %v", err)
	}
	if err := a.UpdateHashes(4); !errors.Is(err, ErrUnsupported) {
		t.Fatalf("UpdateHashes: %v", err)
	}
	if err := a.Merge(a.Copy()); !errors.Is(err, ErrUnsupported) {
		t.Fatalf("Merge: %v", err)
	}
	c, _ := NewFamily(64, 3)
	b, _ := c.Sign([]uint64{1, 2, 3})
	if _, err := a.Jaccard(b); err == nil {
		t.Fatal("Jaccard across schemes")
	}
	if j, err := a.Jaccard(a.Copy()); err != nil || j != 1 {
		t.Fatalf("Jaccard %v %v", j, err)
	}
	x, err := NewIndex(IndexConfig{K: 64, Seed: 3, Scheme: SchemeOPH, Bands: 8, Rows: 8})
	if err != nil {
		t.Fatal(err)
	}
	defer x.Close()
	if err := x.Insert(1, a); err != nil {
		t.Fatal(err)
	}
	if err := x.Insert(2, b); err == nil {
		t.Fatal("a classic signature in an OPH index")
	}
	if x.Config().Scheme != SchemeOPH {
		t.Fatal("Config().Scheme")
	}
	got, err := x.Get(1)
	if err != nil || !got.Equal(a) {
		t.Fatalf("Get: %v %v", got, err)
	}
	m, err := NewSigMatrixScheme(64, 3, SchemeOPH, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	if _, err := m.Append(a); err != nil {
		t.Fatal(err)
	}
	if _, err := m.Append(b); err == nil {
		t.Fatal("a classic signature in an OPH matrix")
	}
	path := filepath.Join(t.TempDir(), "oph.mx")
	if err := m.Save(path); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadSigMatrix(path, &IndexConfig{K: 64, Seed: 3}); !errors.Is(err, ErrMismatch) {
		t.Fatalf("load as classic: %v", err)
	}
	back, err := LoadSigMatrix(path, &IndexConfig{K: 64, Seed: 3, Scheme: SchemeOPH})
	if err != nil {
		t.Fatal(err)
	}
	defer back.Close()
	col, err := back.Column(0)
	if err != nil || !col.Equal(a) {
		t.Fatalf("Column: %v %v", col, err)
	}
}

func TestOPHDedup(t *testing.T) {
	base := strings.Repeat("alpha beta gamma delta epsilon zeta eta theta iota kappa ", 20)
	texts := [][]byte{[]byte(base), []byte(base + "lambda"), []byte("something else entirely here")}
	opts := DefaultDedupOptions()
	opts.Scheme = SchemeOPH
	d, err := NewDedup(opts)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if err := d.AddTexts(texts); err != nil {
		t.Fatal(err)
	}
	if err := d.Run(); err != nil {
		t.Fatal(err)
	}
	st, err := d.Stats()
	if err != nil || st.Dropped != 1 {
		t.Fatalf("dropped %d (%v), want 1", st.Dropped, err)
	}
}
