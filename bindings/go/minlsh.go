// Package minlsh is the Go binding of libminlsh, a C library for
// near-duplicate detection: shingling, MinHash signatures and LSH banding.
//
// The pipeline, one type per stage:
//
//	text --Shingler--> set of 64-bit shingle hashes (keyed SipHash-2-4)
//	     --Family----> MinHash: k 32-bit values
//	     --Index-----> b x r band index: candidates, verified pairs, clusters
//
// Dedup runs the library's whole deduplication policy on a batch of texts
// (exact copies, near-duplicates, a keep or drop decision per document).
//
// The library is found with pkg-config (package minlsh): install it with
// `make install PREFIX=...` and point PKG_CONFIG_PATH (and, to run,
// LD_LIBRARY_PATH) at the prefix. See docs/ffi.md in the minlsh sources.
//
// Rules, in short:
//   - Every C call gets Go memory only for the duration of the call, or a copy
//     in C memory; the library never keeps a pointer it was given.
//   - Handles (Shingler, Stream, Family, Index, Dedup) are released by Close; a
//     finalizer releases a forgotten one. Calls after Close return an *Error
//     with Code CodeState.
//   - Shingler, Family and Index are safe for concurrent use: shinglers and
//     families are immutable, and an Index takes a read lock for queries and
//     a write lock for changes. A Stream is for one goroutine at a time.
//   - Errors are *Error values carrying the library's code, name and message;
//     compare with errors.Is(err, minlsh.ErrParam) and friends.
package minlsh

/*
#cgo pkg-config: minlsh
#include <minlsh.h>
#include <stdlib.h>
*/
import "C"

import (
	"fmt"
	"unsafe"
)

// ABIMajor is the major version of the C library this package was written
// for; a library with another major version has another ABI and is refused.
const ABIMajor = 0

// minVersion is the oldest library (major*10000 + minor*100 + patch) it needs.
const minVersion = 100

// Size constants (their C twins are minlsh_key_bytes() and friends).
const (
	KeyBytes         = 16         // SipHash key
	FingerprintBytes = 16         // document fingerprint
	ShingleKMax      = 64         // units per shingle
	FamilyKMax       = 16384      // hash functions per family
	EmptyValue       = 0xFFFFFFFF // every value of the empty set's signature
)

// Version is the version string of the linked C library, e.g. "0.2.0".
func Version() string { return C.GoString(C.minlsh_version_string()) }

// VersionNumber is the linked library's major*10000 + minor*100 + patch.
func VersionNumber() int { return int(C.minlsh_version_number()) }

// SIMDKernel names the MinHash kernel the library chose ("portable",
// "avx2", "avx512").
func SIMDKernel() string { return C.GoString(C.minlsh_simd_kernel_name()) }

var versionErr = checkVersion(VersionNumber(), Version())

func checkVersion(n int, s string) error {
	if n/10000 != ABIMajor || n < minVersion {
		return fmt.Errorf("minlsh: the linked library is version %s; this package needs %d.x "+
			"with x >= %d (another major version has another ABI)", s, ABIMajor, minVersion/100%100)
	}
	return nil
}

// CheckVersion reports whether the linked library is one this package can
// use. Every constructor returns this error too.
func CheckVersion() error { return versionErr }

// DefaultKey is the library's public default shingle key, the ASCII bytes of
// "minlsh:shingles!". MinHash.Update hashes items under it.
func DefaultKey() [KeyBytes]byte {
	var k [KeyBytes]byte
	copy(k[:], C.GoBytes(unsafe.Pointer(C.minlsh_default_key()), KeyBytes))
	return k
}

var defaultKey = DefaultKey()

// SipHash24 is SipHash-2-4 of msg under a 16-byte key, as a 64-bit integer
// (minlsh_siphash24).
func SipHash24(key [KeyBytes]byte, msg []byte) uint64 {
	var out C.uint64_t
	// Both arrays hold no Go pointers and are only read during the call.
	C.minlsh_siphash24(&out, (*C.uint8_t)(unsafe.Pointer(&key[0])), bytesPtr(msg),
		C.size_t(len(msg)))
	return uint64(out)
}

// bytesPtr is a pointer to b's first byte for the duration of a call, or nil.
func bytesPtr(b []byte) unsafe.Pointer {
	if len(b) == 0 {
		return nil
	}
	return unsafe.Pointer(&b[0])
}

func u32Ptr(v []uint32) *C.uint32_t {
	if len(v) == 0 {
		return nil
	}
	return (*C.uint32_t)(unsafe.Pointer(&v[0]))
}

func u64Ptr(v []uint64) *C.uint64_t {
	if len(v) == 0 {
		return nil
	}
	return (*C.uint64_t)(unsafe.Pointer(&v[0]))
}
