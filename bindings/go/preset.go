package minlsh

/*
#define MINLSH_EXPERIMENTAL_API
#include <minlsh.h>
#include <stdlib.h>
*/
import "C"

import (
	"strings"
	"unsafe"
)

// Preset is a published pipeline's dedup settings as minlsh's nearest
// equivalents, read from the C library's table so that Go, Python and the
// command offer the same ones (docs/presets.md gives their sources).
type Preset struct {
	Name     string // what DedupOptions.Preset takes, e.g. "fineweb"
	Pipeline string // who used it, in words
	Source   string // where the figures come from
	// Shingle is the shingling and normalisation: NewShingler(p.Shingle)
	// shingles as the pipeline did (with the default key).
	Shingle   ShinglerOptions
	Flags     uint32 // the same normalisation as MINLSH_NORM_* bits
	NumPerm   int    // MinHash values per signature
	Bands     int    // the banding; Bands*Rows <= NumPerm
	Rows      int
	Threshold float64 // the Jaccard threshold, stated or implied
}

func presetFromC(p *C.minlsh_preset) Preset {
	f := uint32(p.flags)
	has := func(bit C.uint32_t) bool { return f&uint32(bit) != 0 }
	return Preset{
		Name:     C.GoString(p.name),
		Pipeline: C.GoString(p.pipeline),
		Source:   C.GoString(p.source),
		Shingle: ShinglerOptions{
			Unit:          Unit(p.unit),
			K:             int(p.shingle_k),
			Lowercase:     has(C.MINLSH_NORM_CASEFOLD),
			StripPunct:    has(C.MINLSH_NORM_PUNCT),
			CollapseSpace: has(C.MINLSH_NORM_WHITESPACE),
			HTML:          has(C.MINLSH_NORM_HTML),
			NFKC:          has(C.MINLSH_NORM_NFKC),
			Casefold:      has(C.MINLSH_NORM_UCASEFOLD),
			UnicodePunct:  has(C.MINLSH_NORM_UPUNCT),
			UnicodeSpace:  has(C.MINLSH_NORM_UWHITESPACE),
			FoldDigits:    has(C.MINLSH_NORM_DIGITS),
			CJKWords:      has(C.MINLSH_NORM_CJK_WORDS),
			NoCJKWords:    !has(C.MINLSH_NORM_CJK_WORDS),
		},
		Flags:     f,
		NumPerm:   int(p.num_perm),
		Bands:     int(p.bands),
		Rows:      int(p.rows),
		Threshold: float64(p.threshold),
	}
}

// Presets lists every preset, in the library's order.
func Presets() []Preset {
	if versionErr != nil {
		return nil
	}
	n := uint32(C.minlsh_preset_count())
	out := make([]Preset, 0, n)
	for i := uint32(0); i < n; i++ {
		p := C.minlsh_preset{version: C.MINLSH_PRESET_VERSION}
		if C.minlsh_preset_get(&p, C.uint32_t(i)) == 0 {
			out = append(out, presetFromC(&p))
		}
	}
	return out
}

// LookupPreset returns the preset called name (ASCII case ignored). An
// unknown name gives an error matching ErrNotFound that lists the known
// ones.
func LookupPreset(name string) (Preset, error) {
	if versionErr != nil {
		return Preset{}, versionErr
	}
	cname := C.CString(name)
	defer C.free(unsafe.Pointer(cname))
	p := C.minlsh_preset{version: C.MINLSH_PRESET_VERSION}
	rc := C.minlsh_preset_find(&p, cname)
	if rc == C.MINLSH_E_NOTFOUND {
		names := make([]string, 0, 8)
		for _, q := range Presets() {
			names = append(names, q.Name)
		}
		return Preset{}, newError(rc, "LookupPreset",
			"unknown preset \""+name+"\": expected one of "+strings.Join(names, ", "))
	}
	if err := check(rc, "minlsh_preset_find"); err != nil {
		return Preset{}, err
	}
	return presetFromC(&p), nil
}
