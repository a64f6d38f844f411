package minlsh

/*
#define MINLSH_EXPERIMENTAL_API 1
#include <minlsh.h>
#include <stdlib.h>
#include <string.h>
*/
import "C"

import (
	"fmt"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"unsafe"
)

// Unit is what a shingle is made of (MINLSH_UNIT_*; the values are ABI).
type Unit int

const (
	UnitByte      Unit = 1 // k consecutive bytes ("char" or "byte" in a spec)
	UnitCodepoint Unit = 2 // k consecutive UTF-8 code points
	UnitWord      Unit = 3 // k consecutive words
	UnitStopword  Unit = 4 // a stop word and the k-1 words after it
)

var unitNames = map[string]Unit{"byte": UnitByte, "char": UnitByte,
	"codepoint": UnitCodepoint, "word": UnitWord, "stopword": UnitStopword}

func (u Unit) String() string {
	switch u {
	case UnitByte:
		return "byte"
	case UnitCodepoint:
		return "codepoint"
	case UnitWord:
		return "word"
	case UnitStopword:
		return "stopword"
	}
	return "Unit(" + strconv.Itoa(int(u)) + ")"
}

// Normalisation flags (MINLSH_NORM_*).
const (
	normCasefold   = 0x1
	normWhitespace = 0x2
	normPunct      = 0x4
	normHTML       = 0x8
	normNFKC       = 0x10
	normUCasefold  = 0x20
	normUPunct     = 0x40
	normUSpace     = 0x80
	normDigits     = 0x100
	normCJKWords   = 0x200
)

// UnicodeVersion is the Unicode version of the library's tables behind the
// Unicode options, as major*10000 + minor*100 + patch (150000: Unicode
// 15.0.0). It is part of the config id of a shingler that uses them.
func UnicodeVersion() int { return int(C.minlsh_unicode_version()) }

// ShinglerOptions configure a Shingler. The zero value means the library's
// defaults: word 5-shingles, each CJK or Thai character a word of its own
// (NoCJKWords turns that off), no other normalisation, the default key.
type ShinglerOptions struct {
	Unit          Unit // 0 means UnitWord
	K             int  // units per shingle, 1..64; 0 means 5 (3 for UnitStopword)
	Lowercase     bool // ASCII case folding
	StripPunct    bool // delete ASCII punctuation
	CollapseSpace bool // runs of ASCII whitespace to one space, trimmed
	HTML          bool // skip markup, decode entities
	// The Unicode options (docs/shingling.md 3.5), on the tables of
	// UnicodeVersion. Casefold, UnicodePunct and UnicodeSpace bring
	// Lowercase, StripPunct and CollapseSpace with them.
	NFKC         bool // Unicode NFKC
	Casefold     bool // full Unicode case folding: ß to ss, final sigma to sigma
	UnicodePunct bool // delete General_Category P* and S* (U+FFFD kept)
	UnicodeSpace bool // White_Space is whitespace
	FoldDigits   bool // Nd digits to ASCII 0-9
	// CJKWords makes each Han, Hiragana, Katakana, Thai, Lao, Khmer and
	// Myanmar character a word of its own (word units). It is on unless
	// NoCJKWords is set; setting it says so explicitly.
	CJKWords bool
	// NoCJKWords turns the default CJKWords off: the configuration (and
	// config id) of minlsh 0.1's default, as the command's --no-cjk-words.
	// Setting both is an error.
	NoCJKWords bool
	// Key is the 16-byte SipHash key; nil means the public default key. Use
	// a secret key for hostile input.
	Key []byte
	// Stopwords for UnitStopword; nil means the built-in English list.
	Stopwords []string
	// MaxDocumentBytes refuses longer documents with ErrTooBig; 0: no limit.
	MaxDocumentBytes uint64
}

// ParseShingle reads a spec such as "word:5", "char:4" (bytes, as in the
// minlsh command), "byte:4", "codepoint:3" or "stopword" into options.
func ParseShingle(spec string) (ShinglerOptions, error) {
	name, k, hasK := strings.Cut(spec, ":")
	u, ok := unitNames[strings.ToLower(strings.TrimSpace(name))]
	if !ok {
		return ShinglerOptions{}, paramError("ParseShingle",
			fmt.Sprintf("unknown unit %q in %q (byte, char, codepoint, word, stopword)", name, spec))
	}
	o := ShinglerOptions{Unit: u}
	if hasK {
		n, err := strconv.Atoi(strings.TrimSpace(k))
		if err != nil || n <= 0 {
			return ShinglerOptions{}, paramError("ParseShingle", fmt.Sprintf("bad size in %q", spec))
		}
		o.K = n
	}
	return o, nil
}

// Shingler turns documents into sets of 64-bit shingle hashes. It is
// immutable and safe for concurrent use.
type Shingler struct {
	mu       sync.RWMutex // read: any call; write: Close
	p        *C.minlsh_shingler
	configID uint64
	unit     Unit
	k        int
	flags    uint32
}

// fields gives the unit, k and normalisation flags of opts, its zero
// fields taken as their defaults.
func (opts ShinglerOptions) fields() (Unit, int, C.uint32_t, error) {
	unit := opts.Unit
	if unit == 0 {
		unit = UnitWord
	}
	k := opts.K
	if k == 0 {
		k = 5
		if unit == UnitStopword {
			k = 3
		}
	}
	if k < 0 || k > 1<<31 || unit < 0 || unit > 1<<31 {
		return 0, 0, 0, paramError("minlsh_shingler_new", fmt.Sprintf("unit %d, k %d", unit, k))
	}
	if opts.CJKWords && opts.NoCJKWords {
		return 0, 0, 0, paramError("NewShingler", "CJKWords and NoCJKWords both set")
	}
	var flags C.uint32_t
	if opts.Lowercase {
		flags |= normCasefold
	}
	if opts.CollapseSpace {
		flags |= normWhitespace
	}
	if opts.StripPunct {
		flags |= normPunct
	}
	if opts.HTML {
		flags |= normHTML
	}
	for _, o := range []struct {
		on   bool
		bits C.uint32_t
	}{{opts.NFKC, normNFKC}, {opts.Casefold, normUCasefold | normCasefold},
		{opts.UnicodePunct, normUPunct | normPunct}, {opts.UnicodeSpace, normUSpace | normWhitespace},
		{opts.FoldDigits, normDigits}, {!opts.NoCJKWords, normCJKWords}} {
		if o.on {
			flags |= o.bits
		}
	}
	return unit, k, flags, nil
}

// NewShingler creates a shingler (minlsh_shingler_new). The options, key
// and stop words are copied.
func NewShingler(opts ShinglerOptions) (*Shingler, error) {
	if versionErr != nil {
		return nil, versionErr
	}
	var so C.minlsh_shingler_options
	if err := check(C.minlsh_shingler_options_init(&so, C.MINLSH_SHINGLER_OPTIONS_VERSION),
		"minlsh_shingler_options_init"); err != nil {
		return nil, err
	}
	unit, k, flags, err := opts.fields()
	if err != nil {
		return nil, err
	}
	so.unit = C.uint32_t(unit)
	so.k = C.uint32_t(k)
	so.flags = flags
	so.max_document_bytes = C.uint64_t(opts.MaxDocumentBytes)
	// The struct lives in Go memory, so what it points to must be C memory
	// (cgo forbids Go pointers inside memory passed to C).
	if opts.Key != nil {
		if len(opts.Key) != KeyBytes {
			return nil, paramError("NewShingler", fmt.Sprintf("key must be %d bytes, got %d",
				KeyBytes, len(opts.Key)))
		}
		key := C.CBytes(opts.Key)
		defer func() {
			C.memset(key, 0, KeyBytes) // do not leave a secret key in freed memory
			C.free(key)
		}()
		so.key = (*C.uint8_t)(key)
	}
	if opts.Stopwords != nil {
		words := strings.Join(opts.Stopwords, " ")
		cw := C.CString(words)
		defer C.free(unsafe.Pointer(cw))
		so.stopwords = cw
		so.stopwords_len = C.size_t(len(words))
	}
	s := &Shingler{unit: unit, k: k}
	if err := check(C.minlsh_shingler_new(&s.p, &so, nil), "minlsh_shingler_new"); err != nil {
		return nil, err
	}
	var cid C.uint64_t
	C.minlsh_shingler_config_id(&cid, s.p)
	s.configID = uint64(cid)
	s.flags = uint32(C.minlsh_shingler_flags(s.p))
	runtime.SetFinalizer(s, (*Shingler).Close)
	return s, nil
}

// NewShinglerSpec is NewShingler(ParseShingle(spec)).
func NewShinglerSpec(spec string) (*Shingler, error) {
	o, err := ParseShingle(spec)
	if err != nil {
		return nil, err
	}
	return NewShingler(o)
}

// Close releases the shingler (its key is wiped). Further calls return an
// error; Close itself may be called more than once.
func (s *Shingler) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.p != nil {
		C.minlsh_shingler_free(s.p)
		s.p = nil
		runtime.SetFinalizer(s, nil)
	}
	return nil
}

// ConfigID identifies the key and the configuration without revealing the
// key: store it with signatures (NewIndex) so that data shingled
// differently is refused.
func (s *Shingler) ConfigID() uint64 { return s.configID }

// Unit and K report the configuration.
func (s *Shingler) Unit() Unit { return s.unit }
func (s *Shingler) K() int     { return s.k }

// Flags are the library's MINLSH_NORM_* bits of the shingler: the options,
// with the ASCII bit each Unicode option brings.
func (s *Shingler) Flags() uint32 { return s.flags }

// String is the spec, e.g. "word:5".
func (s *Shingler) String() string { return fmt.Sprintf("%s:%d", s.unit, s.k) }

// Shingles returns the sorted, distinct shingle hashes of text.
func (s *Shingler) Shingles(text []byte) ([]uint64, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.p == nil {
		return nil, closedError("Shingler.Shingles")
	}
	var set *C.minlsh_shingleset
	if err := check(C.minlsh_shingleset_new(&set, nil), "minlsh_shingleset_new"); err != nil {
		return nil, err
	}
	defer C.minlsh_shingleset_free(set)
	if err := check(C.minlsh_shingler_hash(s.p, bytesPtr(text), C.size_t(len(text)), set, nil),
		"minlsh_shingler_hash"); err != nil {
		return nil, err
	}
	return copySet(set)
}

func copySet(set *C.minlsh_shingleset) ([]uint64, error) {
	n := C.minlsh_shingleset_count(set)
	out := make([]uint64, int(n))
	if n > 0 {
		if err := check(C.minlsh_shingleset_copy_hashes(set, u64Ptr(out), n, nil),
			"minlsh_shingleset_copy_hashes"); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// Fingerprint is the 16-byte fingerprint of the normalised text: equal
// fingerprints mean identical shingle sets (the cheap exact-duplicate test).
func (s *Shingler) Fingerprint(text []byte) ([FingerprintBytes]byte, error) {
	var fp [FingerprintBytes]byte
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.p == nil {
		return fp, closedError("Shingler.Fingerprint")
	}
	err := check(C.minlsh_shingler_hash(s.p, bytesPtr(text), C.size_t(len(text)), nil,
		(*C.uint8_t)(unsafe.Pointer(&fp[0]))), "minlsh_shingler_hash")
	return fp, err
}

// Stream shingles one document at a time from chunks: Write them (it is an
// io.Writer), then Finish. A Stream is for one goroutine at a time; it is
// locked, so misuse cannot corrupt memory.
type Stream struct {
	mu sync.Mutex
	p  *C.minlsh_shinglestream
}

// NewStream creates a stream with a copy of the shingler's configuration.
func (s *Shingler) NewStream() (*Stream, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.p == nil {
		return nil, closedError("Shingler.NewStream")
	}
	st := &Stream{}
	if err := check(C.minlsh_shinglestream_new(&st.p, s.p, nil), "minlsh_shinglestream_new"); err != nil {
		return nil, err
	}
	runtime.SetFinalizer(st, (*Stream).Close)
	return st, nil
}

// Write feeds a chunk of the current document.
func (st *Stream) Write(p []byte) (int, error) {
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.p == nil {
		return 0, closedError("Stream.Write")
	}
	if err := check(C.minlsh_shinglestream_feed(st.p, bytesPtr(p), C.size_t(len(p))),
		"minlsh_shinglestream_feed"); err != nil {
		return 0, err
	}
	return len(p), nil
}

// Finish ends the document: its shingle hashes (sorted) and fingerprint,
// exactly Shingler.Shingles and Fingerprint of everything written. The
// stream is then ready for the next document.
func (st *Stream) Finish() ([]uint64, [FingerprintBytes]byte, error) {
	var fp [FingerprintBytes]byte
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.p == nil {
		return nil, fp, closedError("Stream.Finish")
	}
	var set *C.minlsh_shingleset
	if err := check(C.minlsh_shingleset_new(&set, nil), "minlsh_shingleset_new"); err != nil {
		return nil, fp, err
	}
	defer C.minlsh_shingleset_free(set)
	if err := check(C.minlsh_shinglestream_finish(st.p, set, (*C.uint8_t)(unsafe.Pointer(&fp[0]))),
		"minlsh_shinglestream_finish"); err != nil {
		return nil, fp, err
	}
	out, err := copySet(set)
	return out, fp, err
}

// Reset drops the current document.
func (st *Stream) Reset() error {
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.p == nil {
		return closedError("Stream.Reset")
	}
	return check(C.minlsh_shinglestream_reset(st.p), "minlsh_shinglestream_reset")
}

// Bytes is the number of bytes written since the last Finish or Reset.
func (st *Stream) Bytes() uint64 {
	st.mu.Lock()
	defer st.mu.Unlock()
	return uint64(C.minlsh_shinglestream_bytes(st.p))
}

// Close releases the stream.
func (st *Stream) Close() error {
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.p != nil {
		C.minlsh_shinglestream_free(st.p)
		st.p = nil
		runtime.SetFinalizer(st, nil)
	}
	return nil
}
