package minlsh

import (
	"math/rand"
	"strconv"
	"testing"
)

// Two 300-character Chinese texts that differ in one character (the
// characters of a 16-character sentence in a fixed pseudo-random order).
func chinesePair() ([]byte, []byte) {
	chars := []rune("我们今天去公园看花和树木天气很好")
	rnd := rand.New(rand.NewSource(3))
	a := make([]rune, 300)
	for i := range a {
		a[i] = chars[rnd.Intn(len(chars))]
	}
	b := append([]rune(nil), a...)
	b[150] = '猫'
	return []byte(string(a)), []byte(string(b))
}

func exactJaccard(a, b []uint64) float64 {
	in := map[uint64]bool{}
	for _, h := range a {
		in[h] = true
	}
	common := 0
	for _, h := range b {
		if in[h] {
			common++
		}
	}
	return float64(common) / float64(len(a)+len(b)-common)
}

func TestCJKWordsByDefault(t *testing.T) {
	a, b := chinesePair()
	def, err := NewShingler(ShinglerOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if def.Flags() != normCJKWords {
		t.Fatalf("default flags %#x", def.Flags())
	}
	sa, _ := def.Shingles(a)
	sb, _ := def.Shingles(b)
	// 296 shingles each, at most 5 differ: J >= 291 / 301
	if j := exactJaccard(sa, sb); len(sa) < 250 || j < 291.0/301 {
		t.Fatalf("default: %d shingles, Jaccard %v", len(sa), j)
	}
	fam, _ := NewFamily(128, 1)
	ma, _ := fam.SignText(def, a)
	mb, _ := fam.SignText(def, b)
	if est, _ := ma.Jaccard(mb); est < 0.85 {
		t.Fatalf("estimated similarity on defaults %v", est)
	}
	old, err := NewShingler(ShinglerOptions{NoCJKWords: true})
	if err != nil {
		t.Fatal(err)
	}
	oa, _ := old.Shingles(a)
	ob, _ := old.Shingles(b)
	if old.Flags() != 0 || len(oa) != 1 || exactJaccard(oa, ob) != 0 {
		t.Fatalf("NoCJKWords: flags %#x, %d shingles", old.Flags(), len(oa))
	}
	// ASCII: the same hashes either way, only the config id differs
	text := []byte("The quick brown fox jumps over the lazy dog near the river bank")
	x, _ := def.Shingles(text)
	y, _ := old.Shingles(text)
	if exactJaccard(x, y) != 1 || len(x) != len(y) || def.ConfigID() == old.ConfigID() {
		t.Fatal("ASCII text under the default and the old default")
	}
	if _, err := NewShingler(ShinglerOptions{CJKWords: true, NoCJKWords: true}); err == nil {
		t.Fatal("CJKWords and NoCJKWords both accepted")
	}
}

// NoCJKWords is minlsh 0.1's default configuration, config id for id.
func TestOldDefaultConfigID(t *testing.T) {
	g := loadGolden(t)
	old, _ := NewShingler(ShinglerOptions{NoCJKWords: true})
	def, _ := NewShingler(ShinglerOptions{})
	found := 0
	for _, c := range g.Shinglers {
		if c.Spec != "word:5" || c.Key != nil {
			continue
		}
		want, _ := strconv.ParseUint(c.ConfigID, 16, 64)
		switch c.Flags {
		case 0:
			if old.ConfigID() != want || want != 0x84f6fe21ac593947 {
				t.Fatalf("old default config id %x, golden %x", old.ConfigID(), want)
			}
			found++
		case normCJKWords:
			if def.ConfigID() != want {
				t.Fatalf("default config id %x, golden %x", def.ConfigID(), want)
			}
			found++
		}
	}
	if found != 2 {
		t.Fatalf("%d golden word:5 cases", found)
	}
}
