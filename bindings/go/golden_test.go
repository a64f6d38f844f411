package minlsh

import (
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"testing"
)

// The golden data shared with the Python binding, written by
// tests/test_bindings_golden.c from the C library.
type golden struct {
	DefaultKey string   `json:"default_key"`
	Texts      []string `json:"texts"`
	SipHash    []struct {
		Key, Msg, Tag string
	} `json:"siphash"`
	Shinglers []struct {
		Spec         string     `json:"spec"`
		Unit         int        `json:"unit"`
		K            int        `json:"k"`
		Flags        int        `json:"flags"`
		Key          *string    `json:"key"`
		ConfigID     string     `json:"config_id"`
		Shingles     [][]string `json:"shingles"`
		Fingerprints []string   `json:"fingerprints"`
	} `json:"shinglers"`
	Signatures []struct {
		Shingler int        `json:"shingler"`
		Seed     uint64     `json:"seed"`
		K        int        `json:"k"`
		Sigs     [][]uint32 `json:"sigs"`
		BandKeys []struct {
			Bands int        `json:"bands"`
			Rows  int        `json:"rows"`
			Keys  [][]string `json:"keys"`
		} `json:"band_keys"`
	} `json:"signatures"`
	Items struct {
		Items      []string `json:"items"`
		Hashes     []string `json:"hashes"`
		Signatures []struct {
			Seed uint64   `json:"seed"`
			K    int      `json:"k"`
			Sig  []uint32 `json:"sig"`
		} `json:"signatures"`
	} `json:"items"`
	Plans []struct {
		Threshold    float64 `json:"threshold"`
		K            int     `json:"k"`
		Mode         int     `json:"mode"`
		WeightFP     float64 `json:"weight_fp"`
		WeightFN     float64 `json:"weight_fn"`
		TargetRecall float64 `json:"target_recall"`
		Bands        int     `json:"bands"`
		Rows         int     `json:"rows"`
		FPArea       float64 `json:"fp_area"`
		FNArea       float64 `json:"fn_area"`
	} `json:"plans"`
	Probability []struct {
		S     float64 `json:"s"`
		Bands int     `json:"bands"`
		Rows  int     `json:"rows"`
		P     float64 `json:"p"`
	} `json:"probability"`
}

func loadGolden(t *testing.T) *golden {
	t.Helper()
	path := os.Getenv("MINLSH_GOLDEN")
	if path == "" {
		path = filepath.Join("..", "..", "tests", "golden", "bindings", "golden.json")
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var g golden
	if err := json.Unmarshal(data, &g); err != nil {
		t.Fatal(err)
	}
	return &g
}

func unhex(t *testing.T, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func u64s(t *testing.T, hexes []string) []uint64 {
	t.Helper()
	out := make([]uint64, len(hexes))
	for i, h := range hexes {
		v, err := strconv.ParseUint(h, 16, 64)
		if err != nil {
			t.Fatal(err)
		}
		out[i] = v
	}
	return out
}

func (g *golden) texts(t *testing.T) [][]byte {
	out := make([][]byte, len(g.Texts))
	for i, h := range g.Texts {
		out[i] = unhex(t, h)
	}
	return out
}

func (g *golden) shingler(t *testing.T, i int) *Shingler {
	t.Helper()
	c := g.Shinglers[i]
	o, err := ParseShingle(c.Spec)
	if err != nil {
		t.Fatal(err)
	}
	o.Lowercase = c.Flags&normCasefold != 0
	o.CollapseSpace = c.Flags&normWhitespace != 0
	o.StripPunct = c.Flags&normPunct != 0
	o.HTML = c.Flags&normHTML != 0
	o.NFKC = c.Flags&normNFKC != 0
	o.Casefold = c.Flags&normUCasefold != 0
	o.UnicodePunct = c.Flags&normUPunct != 0
	o.UnicodeSpace = c.Flags&normUSpace != 0
	o.FoldDigits = c.Flags&normDigits != 0
	o.NoCJKWords = c.Flags&normCJKWords == 0 // on by default
	if c.Key != nil {
		o.Key = unhex(t, *c.Key)
	}
	s, err := NewShingler(o)
	if err != nil {
		t.Fatal(err)
	}
	if int(s.Unit()) != c.Unit || s.K() != c.K {
		t.Fatalf("%s: unit %v k %d", c.Spec, s.Unit(), s.K())
	}
	return s
}

func emptyIfNil(v []uint64) []uint64 {
	if v == nil {
		return []uint64{}
	}
	return v
}

func TestGoldenSipHashAndKey(t *testing.T) {
	g := loadGolden(t)
	k := DefaultKey()
	if hex.EncodeToString(k[:]) != g.DefaultKey {
		t.Fatalf("default key %x", k)
	}
	for _, c := range g.SipHash {
		var key [KeyBytes]byte
		copy(key[:], unhex(t, c.Key))
		if got := SipHash24(key, unhex(t, c.Msg)); got != u64s(t, []string{c.Tag})[0] {
			t.Errorf("siphash(%s, %s) = %016x, want %s", c.Key, c.Msg, got, c.Tag)
		}
	}
}

func TestGoldenShingles(t *testing.T) {
	g := loadGolden(t)
	texts := g.texts(t)
	for i, c := range g.Shinglers {
		s := g.shingler(t, i)
		if got := s.ConfigID(); got != u64s(t, []string{c.ConfigID})[0] {
			t.Errorf("%s: config id %016x, want %s", c.Spec, got, c.ConfigID)
		}
		st, err := s.NewStream()
		if err != nil {
			t.Fatal(err)
		}
		for j, text := range texts {
			want := emptyIfNil(u64s(t, c.Shingles[j]))
			got, err := s.Shingles(text)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("%s text %d: shingles differ", c.Spec, j)
			}
			fp, err := s.Fingerprint(text)
			if err != nil || hex.EncodeToString(fp[:]) != c.Fingerprints[j] {
				t.Errorf("%s text %d: fingerprint %x (%v)", c.Spec, j, fp, err)
			}
			// the stream, in chunks of 5 bytes, gives the same
			for off := 0; off < len(text); off += 5 {
				end := off + 5
				if end > len(text) {
					end = len(text)
				}
				if _, err := st.Write(text[off:end]); err != nil {
					t.Fatal(err)
				}
			}
			if st.Bytes() != uint64(len(text)) {
				t.Errorf("stream bytes %d", st.Bytes())
			}
			sgot, sfp, err := st.Finish()
			if err != nil || !reflect.DeepEqual(sgot, want) || sfp != fp {
				t.Errorf("%s text %d: stream differs (%v)", c.Spec, j, err)
			}
		}
		st.Close()
		s.Close()
	}
}

func TestGoldenSignatures(t *testing.T) {
	g := loadGolden(t)
	texts := g.texts(t)
	for _, c := range g.Signatures {
		s := g.shingler(t, c.Shingler)
		f, err := NewFamily(c.K, c.Seed)
		if err != nil {
			t.Fatal(err)
		}
		for _, threads := range []int{1, 3, 0} {
			sigs, err := f.SignBatch(s, texts, threads)
			if err != nil {
				t.Fatal(err)
			}
			for j := range texts {
				if !reflect.DeepEqual(sigs[j].Values, c.Sigs[j]) || sigs[j].Seed != c.Seed {
					t.Errorf("batch shingler %d seed %d k %d text %d differs",
						c.Shingler, c.Seed, c.K, j)
				}
			}
		}
		for j, text := range texts {
			one, err := f.SignText(s, text)
			if err != nil || !reflect.DeepEqual(one.Values, c.Sigs[j]) {
				t.Errorf("SignText text %d differs (%v)", j, err)
			}
			sh, _ := s.Shingles(text)
			two, err := f.Sign(sh)
			if err != nil || !two.Equal(one) {
				t.Errorf("Sign(Shingles) text %d differs (%v)", j, err)
			}
			three, _ := NewMinHash(c.K, c.Seed)
			if err := three.UpdateHashes(sh...); err != nil || !three.Equal(one) {
				t.Errorf("UpdateHashes text %d differs (%v)", j, err)
			}
			for _, bk := range c.BandKeys {
				keys, err := one.BandKeys(bk.Bands, bk.Rows)
				if err != nil || !reflect.DeepEqual(keys, u64s(t, bk.Keys[j])) {
					t.Errorf("band keys %dx%d text %d differ (%v)", bk.Bands, bk.Rows, j, err)
				}
			}
		}
		f.Close()
		s.Close()
	}
}

func TestGoldenItems(t *testing.T) {
	g := loadGolden(t)
	items := make([][]byte, len(g.Items.Items))
	for i, h := range g.Items.Items {
		items[i] = unhex(t, h)
		if SipHash24(defaultKey, items[i]) != u64s(t, g.Items.Hashes)[i] {
			t.Errorf("item %d hash", i)
		}
	}
	for _, c := range g.Items.Signatures {
		m, err := NewMinHash(c.K, c.Seed)
		if err != nil {
			t.Fatal(err)
		}
		for _, it := range items {
			if err := m.Update(it); err != nil {
				t.Fatal(err)
			}
		}
		if !reflect.DeepEqual(m.Values, c.Sig) {
			t.Errorf("items seed %d k %d differ", c.Seed, c.K)
		}
		a, _ := NewMinHash(c.K, c.Seed)
		b, _ := NewMinHash(c.K, c.Seed)
		a.Update(items[:4]...)
		b.Update(items[4:]...)
		if err := a.Merge(b); err != nil || !a.Equal(m) {
			t.Errorf("merge of halves differs (%v)", err)
		}
	}
}

func TestGoldenPlans(t *testing.T) {
	g := loadGolden(t)
	for _, c := range g.Plans {
		p, err := Plan(PlanOptions{Threshold: c.Threshold, K: c.K, Mode: PlanMode(c.Mode),
			WeightFP: c.WeightFP, WeightFN: c.WeightFN, TargetRecall: c.TargetRecall})
		want := PlanResult{Bands: c.Bands, Rows: c.Rows, FPArea: c.FPArea, FNArea: c.FNArea}
		if err != nil || p != want {
			t.Errorf("plan %+v: %+v (%v), want %+v", c, p, err, want)
		}
	}
	for _, c := range g.Probability {
		if p, err := Probability(c.S, c.Bands, c.Rows); err != nil || p != c.P {
			t.Errorf("probability %+v: %v (%v)", c, p, err)
		}
	}
}
