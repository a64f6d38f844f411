package minlsh

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

var presetNames = []string{"fineweb", "refinedweb", "lee2022", "lee2022-0.9",
	"nemo-curator", "slimpajama"}

func TestPresetsTable(t *testing.T) {
	ps := Presets()
	var names []string
	for _, p := range ps {
		names = append(names, p.Name)
	}
	if !reflect.DeepEqual(names, presetNames) {
		t.Fatalf("presets %v, expected %v", names, presetNames)
	}
	fw, err := LookupPreset("FineWeb")
	if err != nil {
		t.Fatal(err)
	}
	if fw.Name != "fineweb" || fw.NumPerm != 112 || fw.Bands != 14 || fw.Rows != 8 ||
		fw.Threshold != 0.75 || fw.Shingle.Unit != UnitWord || fw.Shingle.K != 5 ||
		!fw.Shingle.Casefold || !fw.Shingle.UnicodePunct || !fw.Shingle.UnicodeSpace ||
		!fw.Shingle.CJKWords || fw.Shingle.NoCJKWords {
		t.Fatalf("fineweb: %+v", fw)
	}
	if !strings.Contains(fw.Source, "2406.17557") {
		t.Fatalf("fineweb source %q", fw.Source)
	}
	// each preset's Shingle builds a shingler with exactly its flags
	for _, p := range ps {
		sh, err := NewShingler(p.Shingle)
		if err != nil {
			t.Fatalf("%s: %v", p.Name, err)
		}
		if got := sh.Flags(); got != p.Flags {
			t.Errorf("%s: shingler flags %#x, preset %#x", p.Name, got, p.Flags)
		}
		sh.Close()
	}
	_, err = LookupPreset("finewab")
	if !errors.Is(err, ErrNotFound) ||
		!strings.Contains(err.Error(), "expected one of "+strings.Join(presetNames, ", ")) {
		t.Fatalf("unknown preset: %v", err)
	}
	if _, err := NewDedup(DedupOptions{Preset: "nope"}); !errors.Is(err, ErrNotFound) {
		t.Fatalf("NewDedup with an unknown preset: %v", err)
	}
}

// presetDocs: the corpus, plus a document and its upper-case copy.
func presetDocs() []string {
	docs := dedupCorpus(9, 15)
	base := docs[0]
	return append(docs, base+" tail words here and there", strings.ToUpper(base)+" TAIL WORDS HERE AND THERE")
}

func TestDedupPresetEqualsSettingsByHand(t *testing.T) {
	docs := presetDocs()
	for _, p := range Presets() {
		byPreset := runDedup(t, DedupOptions{Preset: p.Name, Threads: 1}, docs, 7)
		sh, err := NewShingler(p.Shingle)
		if err != nil {
			t.Fatal(err)
		}
		byHand := runDedup(t, DedupOptions{Threshold: p.Threshold, NumPerm: p.NumPerm,
			Bands: p.Bands, Rows: p.Rows, Shingler: sh, Threads: 1}, docs, 7)
		sh.Close()
		if !reflect.DeepEqual(byPreset, byHand) {
			t.Errorf("%s: the preset's result differs from its settings by hand", p.Name)
		}
		if byPreset.Stats.Bands != p.Bands || byPreset.Stats.Rows != p.Rows {
			t.Errorf("%s: banding %d x %d", p.Name, byPreset.Stats.Bands, byPreset.Stats.Rows)
		}
	}
	// the normalisation is the preset's: fineweb folds case, lee2022 does not
	last := len(docs) - 1
	fw := runDedup(t, DedupOptions{Preset: "fineweb", Threads: 1}, docs, 100)
	lee := runDedup(t, DedupOptions{Preset: "lee2022", Threads: 1}, docs, 100)
	if fw.Decisions[last].Kept || !lee.Decisions[last].Kept {
		t.Fatalf("upper-case copy: fineweb kept %v, lee2022 kept %v",
			fw.Decisions[last].Kept, lee.Decisions[last].Kept)
	}
}

func TestDedupPresetOverrides(t *testing.T) {
	docs := presetDocs()
	banding := func(o DedupOptions) (int, int) {
		o.Preset, o.Threads = "fineweb", 1
		r := runDedup(t, o, docs, 100)
		return r.Stats.Bands, r.Stats.Rows
	}
	if b, r := banding(DedupOptions{Threshold: 0.9}); b != 14 || r != 8 {
		t.Errorf("threshold given: %d x %d", b, r)
	}
	if b, r := banding(DedupOptions{Bands: 7}); b != 7 || r != 8 {
		t.Errorf("bands given: %d x %d", b, r)
	}
	if b, r := banding(DedupOptions{Rows: 4}); b != 14 || r != 4 {
		t.Errorf("rows given: %d x %d", b, r)
	}
	pl, err := Plan(PlanOptions{Threshold: 0.75, K: 128, Mode: PlanRecall, TargetRecall: 0.999})
	if err != nil {
		t.Fatal(err)
	}
	if b, r := banding(DedupOptions{NumPerm: 128}); b != pl.Bands || r != pl.Rows {
		t.Errorf("num_perm given: %d x %d, planned %d x %d", b, r, pl.Bands, pl.Rows)
	}
	// a Shingler given replaces the preset's shingling
	sh, err := NewShingler(ShinglerOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer sh.Close()
	plain := runDedup(t, DedupOptions{Preset: "fineweb", Shingler: sh, Threads: 1}, docs, 100)
	if !plain.Decisions[len(docs)-1].Kept {
		t.Errorf("with a plain shingler the upper-case copy is kept")
	}
}
