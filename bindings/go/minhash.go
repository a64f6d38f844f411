package minlsh

/*
#define MINLSH_EXPERIMENTAL_API 1
#include <minlsh.h>
#include <stdlib.h>
#include <string.h>

*/
import "C"

import (
	"container/list"
	"fmt"
	"runtime"
	"sync"
	"unsafe"
)

// Scheme is how a family signs (MINLSH_SCHEME_*): SchemeClassic, k hash
// functions per item (the default), or SchemeOPH, one-permutation hashing
// with densification: one per item, several times faster to sign, but its
// signatures cannot be extended (MinHash.Update, UpdateHashes and Merge
// return an error) and are a little noisier on sets with fewer items than
// k (docs/minhash.md section 7). Signatures of different schemes
// never compare.
type Scheme uint32

const (
	SchemeClassic Scheme = C.MINLSH_SCHEME_CLASSIC
	SchemeOPH     Scheme = C.MINLSH_SCHEME_OPH
)

// String is the scheme's name in the minlsh command's --scheme.
func (s Scheme) String() string {
	if s == SchemeOPH {
		return "oph"
	}
	return "classic"
}

// Family is k MinHash functions derived from a seed (minlsh_family). It is
// immutable and safe for concurrent use.
type Family struct {
	mu     sync.RWMutex
	p      *C.minlsh_family
	k      int
	seed   uint64
	scheme Scheme
}

// NewFamily creates the classic family (k, seed); k is 1..1024. Signatures
// are comparable only between families with equal k and seed.
func NewFamily(k int, seed uint64) (*Family, error) {
	return NewFamilyScheme(k, seed, SchemeClassic)
}

// NewFamilyScheme creates the family (k, seed) signing with scheme.
func NewFamilyScheme(k int, seed uint64, scheme Scheme) (*Family, error) {
	if versionErr != nil {
		return nil, versionErr
	}
	if k < 1 || k > FamilyKMax {
		return nil, paramError("minlsh_family_new", fmt.Sprintf("k = %d (1..%d)", k, FamilyKMax))
	}
	f := &Family{k: k, seed: seed, scheme: scheme}
	if err := check(C.minlsh_family_new_scheme(&f.p, C.uint32_t(k), C.uint64_t(seed),
		C.uint32_t(scheme), nil), "minlsh_family_new_scheme"); err != nil {
		return nil, err
	}
	runtime.SetFinalizer(f, (*Family).Close)
	return f, nil
}

// Close releases the family. Further calls return an error.
func (f *Family) Close() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.p != nil {
		C.minlsh_family_free(f.p)
		f.p = nil
		runtime.SetFinalizer(f, nil)
	}
	return nil
}

// K is the number of functions (values per signature); Seed the seed.
func (f *Family) K() int       { return f.k }
func (f *Family) Seed() uint64 { return f.seed }

// Scheme is how the family signs.
func (f *Family) Scheme() Scheme { return f.scheme }

// Coefficients returns a_i and b_i of h_i(x) = (a_i x + b_i) mod 2^61-1.
func (f *Family) Coefficients() (a, b []uint64, err error) {
	f.mu.RLock()
	defer f.mu.RUnlock()
	if f.p == nil {
		return nil, nil, closedError("Family.Coefficients")
	}
	a, b = make([]uint64, f.k), make([]uint64, f.k)
	err = check(C.minlsh_family_copy_coefficients(f.p, u64Ptr(a), u64Ptr(b), C.size_t(f.k), nil),
		"minlsh_family_copy_coefficients")
	return a, b, err
}

// NewMinHash is the empty signature of this family.
func (f *Family) NewMinHash() MinHash {
	m := emptyMinHash(f.k, f.seed)
	m.Scheme = f.scheme
	return m
}

// Sign is the signature of a set of 64-bit shingle hashes (duplicates and
// order do not matter).
func (f *Family) Sign(hashes []uint64) (MinHash, error) {
	m := f.NewMinHash()
	f.mu.RLock()
	defer f.mu.RUnlock()
	if f.p == nil {
		return MinHash{}, closedError("Family.Sign")
	}
	err := check(C.minlsh_family_sign(f.p, u64Ptr(hashes), C.size_t(len(hashes)), u32Ptr(m.Values),
		C.size_t(f.k), nil), "minlsh_family_sign")
	return m, err
}

// SignText shingles a document with s and signs it in one pass.
func (f *Family) SignText(s *Shingler, text []byte) (MinHash, error) {
	m := f.NewMinHash()
	f.mu.RLock()
	defer f.mu.RUnlock()
	s.mu.RLock()
	defer s.mu.RUnlock()
	if f.p == nil || s.p == nil {
		return MinHash{}, closedError("Family.SignText")
	}
	err := check(C.minlsh_family_sign_text(f.p, s.p, bytesPtr(text), C.size_t(len(text)),
		u32Ptr(m.Values), C.size_t(f.k), nil), "minlsh_family_sign_text")
	return m, err
}

// BatchError reports the documents SignBatch could not sign; they have the
// empty signature, the others are signed. Unwrap gives the first error, so
// errors.Is(err, ErrTooBig) works.
type BatchError struct {
	Index  []int    // the documents that failed, ascending
	Errors []*Error // their errors
}

func (e *BatchError) Error() string {
	return fmt.Sprintf("minlsh: %d of the documents not signed; first: document %d: %v",
		len(e.Index), e.Index[0], e.Errors[0])
}

func (e *BatchError) Unwrap() error { return e.Errors[0] }

// SignBatch signs many documents with s: signature i is exactly
// SignText(s, texts[i]). threads = 0 means one per processor, 1 the
// calling goroutine only; the result never depends on it. The work happens
// in one call of minlsh_family_sign_batch with the library's own threads
// (the texts are copied to C memory first, as cgo forbids C memory holding
// Go pointers). Documents that fail get the empty signature and are listed
// in a *BatchError.
func (f *Family) SignBatch(s *Shingler, texts [][]byte, threads int) ([]MinHash, error) {
	if threads < 0 {
		return nil, paramError("Family.SignBatch", "threads < 0")
	}
	n, k := len(texts), f.k
	values := make([]uint32, n*k)
	status := make([]int32, n)
	f.mu.RLock()
	defer f.mu.RUnlock()
	s.mu.RLock()
	defer s.mu.RUnlock()
	if f.p == nil || s.p == nil {
		return nil, closedError("Family.SignBatch")
	}
	if n > 0 {
		if err := f.signBatchC(s, texts, values, status, threads); err != nil {
			return nil, err
		}
	}
	out := make([]MinHash, n)
	var berr *BatchError
	for i := range out {
		out[i] = MinHash{Seed: f.seed, Scheme: f.scheme, Values: values[i*k : (i+1)*k : (i+1)*k]}
		if status[i] < 0 {
			if berr == nil {
				berr = &BatchError{}
			}
			e := newError(C.int(status[i]), "SignBatch", fmt.Sprintf("document %d", i)).(*Error)
			berr.Index = append(berr.Index, i)
			berr.Errors = append(berr.Errors, e)
			for j := range out[i].Values {
				out[i].Values[j] = EmptyValue
			}
		}
	}
	if berr != nil {
		return out, berr
	}
	return out, nil
}

func (f *Family) signBatchC(s *Shingler, texts [][]byte, values []uint32, status []int32,
	threads int) error {
	n := len(texts)
	total := 0
	for _, t := range texts {
		total += len(t)
	}
	// One C block: n pointers, n lengths, then the bytes of every text.
	ptrSize := C.size_t(unsafe.Sizeof(uintptr(0)))
	head := C.size_t(n) * (ptrSize + C.size_t(unsafe.Sizeof(C.size_t(0))))
	block := C.malloc(head + C.size_t(total) + 1)
	if block == nil {
		return newError(CodeNoMem, "Family.SignBatch", "copying the texts")
	}
	defer C.free(block)
	ptrs := unsafe.Slice((*unsafe.Pointer)(block), n)
	lens := unsafe.Slice((*C.size_t)(unsafe.Add(block, C.size_t(n)*ptrSize)), n)
	data := unsafe.Add(block, head)
	off := 0
	for i, t := range texts {
		dst := unsafe.Add(data, off)
		if len(t) > 0 {
			C.memcpy(dst, unsafe.Pointer(&t[0]), C.size_t(len(t)))
		}
		ptrs[i] = dst
		lens[i] = C.size_t(len(t))
		off += len(t)
	}
	var statusPtr *C.int32_t
	if n > 0 {
		statusPtr = (*C.int32_t)(unsafe.Pointer(&status[0]))
	}
	rc := C.minlsh_family_sign_batch(f.p, s.p, (*unsafe.Pointer)(block), &lens[0],
		C.size_t(n), C.uint32_t(threads), u32Ptr(values), C.size_t(len(values)), nil,
		statusPtr)
	if rc == CodeUnsupported && threads != 1 { // a library built without threads
		rc = C.minlsh_family_sign_batch(f.p, s.p, (*unsafe.Pointer)(block), &lens[0],
			C.size_t(n), 1, u32Ptr(values), C.size_t(len(values)), nil, statusPtr)
	}
	if rc < 0 {
		for _, st := range status {
			if st < 0 {
				return nil // per-document errors: reported by the caller
			}
		}
		return check(rc, "minlsh_family_sign_batch")
	}
	return nil
}

// ---- families by (k, seed), for MinHash methods ------------------------------

const familyCacheSize = 32

var families = struct {
	sync.Mutex
	byKey map[[3]uint64]*list.Element
	lru   *list.List // of *Family, most recent first
}{byKey: map[[3]uint64]*list.Element{}, lru: list.New()}

// familyFor returns a cached family; an evicted one is released by its
// finalizer once no call uses it.
func familyFor(k int, seed uint64, scheme Scheme) (*Family, error) {
	key := [3]uint64{uint64(k), seed, uint64(scheme)}
	families.Lock()
	if e, ok := families.byKey[key]; ok {
		families.lru.MoveToFront(e)
		f := e.Value.(*Family)
		families.Unlock()
		return f, nil
	}
	families.Unlock()
	f, err := NewFamilyScheme(k, seed, scheme)
	if err != nil {
		return nil, err
	}
	families.Lock()
	defer families.Unlock()
	if e, ok := families.byKey[key]; ok { // another goroutine was faster
		families.lru.MoveToFront(e)
		return e.Value.(*Family), nil
	}
	families.byKey[key] = families.lru.PushFront(f)
	for families.lru.Len() > familyCacheSize {
		old := families.lru.Back()
		families.lru.Remove(old)
		of := old.Value.(*Family)
		delete(families.byKey, [3]uint64{uint64(of.k), of.seed, uint64(of.scheme)})
	}
	return f, nil
}

// ---- MinHash ----------------------------------------------------------------------

// MinHash is a signature: K() 32-bit values from the family (K(), Seed).
// It is a plain Go value; methods that need the family's coefficients get it
// from a small cache. The empty signature (every value EmptyValue) is that of
// the empty set; its Jaccard estimate with anything is 0.
type MinHash struct {
	Seed   uint64
	Values []uint32
	Scheme Scheme // the zero value is SchemeClassic
}

func emptyMinHash(k int, seed uint64) MinHash {
	v := make([]uint32, k)
	for i := range v {
		v[i] = EmptyValue
	}
	return MinHash{Seed: seed, Values: v}
}

// NewMinHash is the empty signature of the family (k, seed), to Update.
func NewMinHash(k int, seed uint64) (MinHash, error) {
	if _, err := familyFor(k, seed, SchemeClassic); err != nil {
		return MinHash{}, err
	}
	return emptyMinHash(k, seed), nil
}

// K is the number of values.
func (m MinHash) K() int { return len(m.Values) }

// Update adds items, one each: its bytes are hashed to 64 bits with
// SipHash-2-4 under the default key and folded in, as datasketch's
// MinHash.update does with its own hash. However many items, it is two cgo
// calls (minlsh_family_sign_tokens, then minlsh_signature_merge); the bits
// are those of SipHash24 and UpdateHashes item by item.
func (m *MinHash) Update(items ...[]byte) error {
	if err := m.extendable("MinHash.Update"); err != nil {
		return err
	}
	f, err := familyFor(len(m.Values), m.Seed, m.Scheme)
	if err != nil {
		return err
	}
	if len(items) == 0 {
		return nil
	}
	return f.updateTokens(m.Values, items)
}

// UpdateHashes adds 64-bit hashes as they are (e.g. Shingler.Shingles).
func (m *MinHash) UpdateHashes(hashes ...uint64) error {
	if err := m.extendable("MinHash.UpdateHashes"); err != nil {
		return err
	}
	f, err := familyFor(len(m.Values), m.Seed, m.Scheme)
	if err != nil {
		return err
	}
	f.mu.RLock()
	defer f.mu.RUnlock()
	if f.p == nil {
		return closedError("MinHash.UpdateHashes")
	}
	return check(C.minlsh_family_update(f.p, u64Ptr(hashes), C.size_t(len(hashes)),
		u32Ptr(m.Values), C.size_t(len(m.Values))), "minlsh_family_update")
}

func (m MinHash) compatible(o MinHash, op string) error {
	if len(m.Values) != len(o.Values) || m.Seed != o.Seed || len(m.Values) == 0 ||
		m.Scheme != o.Scheme {
		return paramError(op, fmt.Sprintf("signatures of different families (k %d, seed %d, %v) "+
			"and (k %d, seed %d, %v)", len(m.Values), m.Seed, m.Scheme, len(o.Values), o.Seed,
			o.Scheme))
	}
	return nil
}

// extendable refuses OPH signatures, whose densified values cannot take
// more items (the C library says MINLSH_E_UNSUPPORTED).
func (m MinHash) extendable(op string) error {
	if m.Scheme != SchemeClassic {
		return newError(CodeUnsupported, op, "an OPH signature cannot be extended; sign the "+
			"whole set at once")
	}
	return nil
}

// Jaccard is the estimated Jaccard similarity: the fraction of equal
// values, 0 when either signature is empty.
func (m MinHash) Jaccard(o MinHash) (float64, error) {
	if err := m.compatible(o, "MinHash.Jaccard"); err != nil {
		return 0, err
	}
	var out C.double
	err := check(C.minlsh_signature_estimate(&out, u32Ptr(m.Values), u32Ptr(o.Values),
		C.size_t(len(m.Values))), "minlsh_signature_estimate")
	return float64(out), err
}

// Merge makes m the signature of the union (element-wise minimum).
func (m *MinHash) Merge(o MinHash) error {
	if err := m.compatible(o, "MinHash.Merge"); err != nil {
		return err
	}
	if err := m.extendable("MinHash.Merge"); err != nil {
		return err
	}
	return check(C.minlsh_signature_merge(u32Ptr(m.Values), u32Ptr(o.Values),
		C.size_t(len(m.Values))), "minlsh_signature_merge")
}

// Copy is an independent copy.
func (m MinHash) Copy() MinHash {
	return MinHash{Seed: m.Seed, Scheme: m.Scheme, Values: append([]uint32(nil), m.Values...)}
}

// IsEmpty reports whether m is the empty set's signature.
func (m MinHash) IsEmpty() bool {
	if len(m.Values) == 0 {
		return true
	}
	return C.minlsh_signature_is_empty(u32Ptr(m.Values), C.size_t(len(m.Values))) == 1
}

// Equal reports whether two signatures have the same family and values.
func (m MinHash) Equal(o MinHash) bool {
	if m.Seed != o.Seed || m.Scheme != o.Scheme || len(m.Values) != len(o.Values) {
		return false
	}
	for i := range m.Values {
		if m.Values[i] != o.Values[i] {
			return false
		}
	}
	return true
}

// BandKeys are the band keys of m for bands x rows (docs/lsh.md).
func (m MinHash) BandKeys(bands, rows int) ([]uint64, error) {
	return BandKeys(m.Values, bands, rows)
}
