package minlsh

/*
#define MINLSH_EXPERIMENTAL_API 1
#include <minlsh.h>
#include <stdlib.h>
#include <string.h>
*/
import "C"

import (
	"encoding/json"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"time"
	"unicode/utf8"
	"unsafe"
)

// StoreOptions says how to open a store. As everywhere in this package, a
// zero field means its default. The creation fields (Shingle, K, Scheme,
// Seed, Threshold, Bands, Rows, Sets) configure a new store, where zero
// means the library's default (word 5-shingles with CJK words, k 128,
// classic, seed 1, threshold 0.8, banding planned for recall 0.999 at the
// threshold); on an existing store zero (nil) means "whatever the file
// says", and a value that disagrees with the file is ErrMismatch.
type StoreOptions struct {
	NoCreate bool // refuse a missing store (ErrNotFound) instead of creating it
	ReadOnly bool // queries only (implies NoCreate)
	Sets     bool // creation: keep each document's shingle set, for exact verdicts
	// AnyKey opens a store whose config id the key does not give (made
	// with another key, or a file of Python's MinHashLSH, whose signatures
	// came from elsewhere): names, counts and the index read, texts refused
	// (ErrMismatch). Not with creation.
	AnyKey bool

	Shingle   *ShinglerOptions // creation: how to shingle; its Key must be nil (see Key)
	K         int              // creation: MinHash values per signature
	Scheme    Scheme           // creation: SchemeClassic or SchemeOPH
	Seed      uint64           // creation: the family's seed
	Threshold float64          // creation: near-duplicate threshold in (0, 1]
	Bands     int              // creation: Bands and Rows, both or neither
	Rows      int

	// Key is the 16-byte SipHash key; nil is the public default key. It is
	// never stored: the file keeps the shingler's config id, which a wrong
	// key does not match (ErrMismatch).
	Key []byte
	// LockTimeout bounds the wait for the store's lock (ErrBusy past it);
	// 0 waits without limit.
	LockTimeout time.Duration
	// MaxDocumentBytes makes this handle refuse longer texts (ErrTooBig);
	// 0: no limit.
	MaxDocumentBytes uint64
}

// StoreResult is what Store.Add or Store.Query decided.
type StoreResult struct {
	Novel    bool   // no stored document reaches the threshold
	Inserted bool   // the document was added, under ID
	ID       uint64 // its id, if Inserted
	// HasMatch: Match (and MatchName) is the near-duplicate found, or the
	// most similar candidate checked.
	HasMatch   bool
	Match      uint64
	MatchName  string
	Similarity float64 // exact Jaccard if Exact, else the signature estimate
	Exact      bool
	Candidates int // LSH candidates looked at
}

// Store is a near-duplicate index kept at a path and shared by any number
// of processes (minlsh_store_*): Add checks a text against the stored
// documents and stores it if none reaches the threshold, durably once
// committed. The configuration lives in the file, so another worker opens
// the store with its path alone.
//
// Names are strings, stored as their JSON string tokens ("a" is stored as
// the 3 bytes "a" in quotes), as Python's minlsh.Store and the command
// store theirs, so one file reads alike in all three. A name that is not a
// JSON string (Python stores an int key 7 as the token 7) comes back as
// its token's text. "" adds a document without a name; other names are
// unique in a store (ErrExists).
//
// Outside Begin/Commit each Add and Remove takes the lock, commits and
// releases it. Begin ... Commit groups them under one lock and one
// fdatasync; Rollback drops them. Other processes' commits are seen at the
// next Begin, Add or Remove, or after Refresh. A Store is safe for
// concurrent use (calls are serialised; queries and name lookups share a
// read lock); give each process its own.
type Store struct {
	mu   sync.RWMutex
	p    *C.minlsh_store
	path string
}

// OpenStore opens the store at path, creating it unless opts.NoCreate or
// opts.ReadOnly (minlsh_store_open).
func OpenStore(path string, opts StoreOptions) (*Store, error) {
	if versionErr != nil {
		return nil, versionErr
	}
	var o C.minlsh_store_options
	if err := check(C.minlsh_store_options_init(&o, C.MINLSH_STORE_OPTIONS_VERSION),
		"minlsh_store_options_init"); err != nil {
		return nil, err
	}
	switch {
	case opts.ReadOnly:
		o.flags = C.MINLSH_STORE_READONLY
	case !opts.NoCreate:
		o.flags = C.MINLSH_STORE_CREATE
	}
	if opts.Sets {
		o.flags |= C.MINLSH_STORE_SETS
	}
	if opts.AnyKey {
		if o.flags&C.MINLSH_STORE_CREATE != 0 {
			return nil, paramError("OpenStore", "AnyKey needs NoCreate or ReadOnly")
		}
		o.flags |= C.MINLSH_STORE_ANY_KEY
	}
	// The options struct is Go memory: what it points to must be C memory.
	if opts.Shingle != nil {
		if opts.Shingle.Key != nil {
			return nil, paramError("OpenStore", "give the key as StoreOptions.Key")
		}
		unit, k, flags, err := opts.Shingle.fields()
		if err != nil {
			return nil, err
		}
		so := (*C.minlsh_shingler_options)(C.calloc(1, C.sizeof_minlsh_shingler_options))
		if so == nil {
			return nil, sentinel(CodeNoMem)
		}
		defer C.free(unsafe.Pointer(so))
		if err := check(C.minlsh_shingler_options_init(so, C.MINLSH_SHINGLER_OPTIONS_VERSION),
			"minlsh_shingler_options_init"); err != nil {
			return nil, err
		}
		so.unit, so.k, so.flags = C.uint32_t(unit), C.uint32_t(k), flags
		if opts.Shingle.Stopwords != nil {
			words := strings.Join(opts.Shingle.Stopwords, " ")
			cw := C.CString(words)
			defer C.free(unsafe.Pointer(cw))
			so.stopwords, so.stopwords_len = cw, C.size_t(len(words))
		}
		o.shingler = so
	}
	if opts.K < 0 || opts.K > 1<<31 || opts.Bands < 0 || opts.Bands > 1<<31 ||
		opts.Rows < 0 || opts.Rows > 1<<31 {
		return nil, paramError("OpenStore", fmt.Sprintf("k %d, bands %d, rows %d",
			opts.K, opts.Bands, opts.Rows))
	}
	if (opts.Bands == 0) != (opts.Rows == 0) {
		return nil, paramError("OpenStore", "give both Bands and Rows, or neither")
	}
	o.num_perm = C.uint32_t(opts.K)
	o.scheme = C.uint32_t(opts.Scheme)
	o.seed = C.uint64_t(opts.Seed)
	o.threshold = C.double(opts.Threshold)
	o.bands, o.rows = C.uint32_t(opts.Bands), C.uint32_t(opts.Rows)
	if opts.Key != nil {
		if len(opts.Key) != KeyBytes {
			return nil, paramError("OpenStore", fmt.Sprintf("key must be %d bytes, got %d",
				KeyBytes, len(opts.Key)))
		}
		key := C.CBytes(opts.Key)
		defer func() {
			C.memset(key, 0, KeyBytes) // do not leave a secret key in freed memory
			C.free(key)
		}()
		o.key = (*C.uint8_t)(key)
	}
	if opts.LockTimeout < 0 {
		return nil, paramError("OpenStore", "negative LockTimeout")
	}
	if opts.LockTimeout > 0 {
		ms := (opts.LockTimeout + time.Millisecond - 1) / time.Millisecond
		if ms >= 1<<32-1 {
			return nil, paramError("OpenStore", "LockTimeout over 49 days")
		}
		o.lock_timeout_ms = C.uint32_t(ms)
	}
	o.max_document_bytes = C.uint64_t(opts.MaxDocumentBytes)
	cpath := C.CString(path)
	defer C.free(unsafe.Pointer(cpath))
	s := &Store{path: path}
	if rc := C.minlsh_store_open(&s.p, cpath, &o); rc != 0 {
		return nil, newError(rc, "minlsh_store_open", path)
	}
	runtime.SetFinalizer(s, (*Store).Close)
	return s, nil
}

// Close releases the store; changes not committed are dropped. Further
// calls return ErrState.
func (s *Store) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.p != nil {
		C.minlsh_store_free(s.p)
		s.p = nil
		runtime.SetFinalizer(s, nil)
	}
	return nil
}

// Path is the path the store was opened at.
func (s *Store) Path() string { return s.path }

// Count is the number of documents in the store, as this handle sees it.
func (s *Store) Count() int {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return int(C.minlsh_store_count(s.p))
}

// Threshold is the threshold the store decides at (kept in the file).
func (s *Store) Threshold() float64 {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return float64(C.minlsh_store_threshold(s.p))
}

// nameToken is the JSON string token of name, byte for byte what Python's
// json.dumps(name, ensure_ascii=True) gives, so a name written by either
// binding is found by the other.
func nameToken(op, name string) ([]byte, error) {
	if name == "" {
		return nil, nil
	}
	if !utf8.ValidString(name) {
		return nil, paramError(op, fmt.Sprintf("name %q is not UTF-8", name))
	}
	const hex = "0123456789abcdef"
	b := make([]byte, 0, len(name)+2)
	b = append(b, '"')
	u16 := func(r rune) {
		b = append(b, '\\', 'u', hex[r>>12&15], hex[r>>8&15], hex[r>>4&15], hex[r&15])
	}
	for _, r := range name {
		switch {
		case r == '"' || r == '\\':
			b = append(b, '\\', byte(r))
		case r == '\n':
			b = append(b, '\\', 'n')
		case r == '\r':
			b = append(b, '\\', 'r')
		case r == '\t':
			b = append(b, '\\', 't')
		case r == '\b':
			b = append(b, '\\', 'b')
		case r == '\f':
			b = append(b, '\\', 'f')
		case r < 0x20 || (r >= 0x7f && r <= 0xffff):
			u16(r)
		case r > 0xffff:
			r -= 0x10000
			u16(0xd800 + r>>10)
			u16(0xdc00 + r&0x3ff)
		default:
			b = append(b, byte(r))
		}
	}
	return append(b, '"'), nil
}

// nameOfToken reads a stored name back: a JSON string token as its string,
// anything else as its bytes.
func nameOfToken(raw []byte) string {
	var out string
	if len(raw) > 0 && raw[0] == '"' && json.Unmarshal(raw, &out) == nil {
		return out
	}
	return string(raw)
}

// copyName is the raw name of id; ok false if there is no such document.
// The caller holds s.mu.
func (s *Store) copyName(id uint64) (raw []byte, ok bool, err error) {
	var n C.size_t
	rc := C.minlsh_store_copy_name(s.p, C.uint64_t(id), nil, 0, &n)
	switch rc {
	case 0:
		return nil, true, nil
	case C.MINLSH_E_NOTFOUND:
		return nil, false, nil
	case C.MINLSH_E_BUFSIZE:
	default:
		return nil, false, newError(rc, "minlsh_store_copy_name", s.path)
	}
	buf := make([]byte, int(n))
	if rc := C.minlsh_store_copy_name(s.p, C.uint64_t(id), bytesPtr(buf), n, &n); rc != 0 {
		return nil, false, newError(rc, "minlsh_store_copy_name", s.path)
	}
	return buf[:int(n)], true, nil
}

// NameOf is the name of document id; ErrNotFound if there is none.
func (s *Store) NameOf(id uint64) (string, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.p == nil {
		return "", closedError("Store.NameOf")
	}
	raw, ok, err := s.copyName(id)
	if err == nil && !ok {
		err = newError(C.MINLSH_E_NOTFOUND, "Store.NameOf", fmt.Sprint(id))
	}
	return nameOfToken(raw), err
}

// IDOf is the id of the document named name; ErrNotFound if none is.
func (s *Store) IDOf(name string) (uint64, error) {
	tok, err := nameToken("Store.IDOf", name)
	if err != nil {
		return 0, err
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.p == nil {
		return 0, closedError("Store.IDOf")
	}
	var id C.uint64_t
	rc := C.minlsh_store_find_name(&id, s.p, bytesPtr(tok), C.size_t(len(tok)))
	return uint64(id), newError(rc, "minlsh_store_find_name", name)
}

// StoreEntry is a document of a store: its id and name.
type StoreEntry struct {
	ID   uint64
	Name string
}

// Entries lists every document, by id.
func (s *Store) Entries() ([]StoreEntry, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.p == nil {
		return nil, closedError("Store.Entries")
	}
	left := uint64(C.minlsh_store_count(s.p))
	out := make([]StoreEntry, 0, left)
	// Ids are dense from 0; removed ones are not found and skipped.
	for id := uint64(0); left > 0; id++ {
		raw, ok, err := s.copyName(id)
		if err != nil {
			return nil, err
		}
		if ok {
			out = append(out, StoreEntry{id, nameOfToken(raw)})
			left--
		}
	}
	return out, nil
}

func (s *Store) result(r *C.minlsh_store_result) StoreResult {
	out := StoreResult{Novel: r.novel != 0, Inserted: r.inserted != 0,
		HasMatch: r.has_match != 0, Exact: r.exact != 0, Candidates: int(r.candidates)}
	if out.Inserted {
		out.ID = uint64(r.id)
	}
	if out.HasMatch {
		out.Match, out.Similarity = uint64(r.match), float64(r.similarity)
		if raw, ok, err := s.copyName(out.Match); err == nil && ok {
			out.MatchName = nameOfToken(raw)
		}
	}
	return out
}

func (s *Store) add(op string, text []byte, name string, flags C.uint32_t) (StoreResult, error) {
	tok, err := nameToken(op, name)
	if err != nil {
		return StoreResult{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.p == nil {
		return StoreResult{}, closedError(op)
	}
	var r C.minlsh_store_result
	if rc := C.minlsh_store_add(&r, s.p, bytesPtr(text), C.size_t(len(text)), bytesPtr(tok),
		C.size_t(len(tok)), flags); rc != 0 {
		return StoreResult{}, newError(rc, "minlsh_store_add", s.path)
	}
	return s.result(&r), nil
}

// Add is check-and-insert (minlsh_store_add): text is stored under name
// unless a stored document reaches the threshold. Outside Begin/Commit the
// change is durable when Add returns. ErrExists if the name is taken.
func (s *Store) Add(text []byte, name string) (StoreResult, error) {
	return s.add("Store.Add", text, name, 0)
}

// AddAlways stores text under name even if it is a near-duplicate (the
// result still names the match found).
func (s *Store) AddAlways(text []byte, name string) (StoreResult, error) {
	return s.add("Store.AddAlways", text, name, C.MINLSH_STORE_ADD_ALWAYS)
}

// Query is the decision Add would make, without storing anything, from
// this handle's view (Refresh first to see other processes' commits).
func (s *Store) Query(text []byte) (StoreResult, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.p == nil {
		return StoreResult{}, closedError("Store.Query")
	}
	var r C.minlsh_store_result
	if rc := C.minlsh_store_query(&r, s.p, bytesPtr(text), C.size_t(len(text))); rc != 0 {
		return StoreResult{}, newError(rc, "minlsh_store_query", s.path)
	}
	return s.result(&r), nil
}

// Remove removes the document named name (ErrNotFound if none is).
func (s *Store) Remove(name string) error {
	tok, err := nameToken("Store.Remove", name)
	if err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.p == nil {
		return closedError("Store.Remove")
	}
	return newError(C.minlsh_store_remove_name(s.p, bytesPtr(tok), C.size_t(len(tok))),
		"minlsh_store_remove_name", name)
}

// RemoveID removes document id (ErrNotFound if there is none).
func (s *Store) RemoveID(id uint64) error {
	return s.call("minlsh_store_remove", func() C.int {
		return C.minlsh_store_remove(s.p, C.uint64_t(id))
	})
}

func (s *Store) call(op string, fn func() C.int) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.p == nil {
		return closedError(op)
	}
	return newError(fn(), op, s.path)
}

// Begin takes the store's lock and catches up with other processes'
// commits; the changes until Commit are made durable together.
func (s *Store) Begin() error {
	return s.call("minlsh_store_begin", func() C.int { return C.minlsh_store_begin(s.p) })
}

// Commit makes every change since Begin durable (one fdatasync) and
// releases the lock. If it fails, nothing since Begin was committed.
func (s *Store) Commit() error {
	return s.call("minlsh_store_commit", func() C.int { return C.minlsh_store_commit(s.p) })
}

// Rollback drops every change since Begin and releases the lock.
func (s *Store) Rollback() error {
	return s.call("minlsh_store_rollback", func() C.int { return C.minlsh_store_rollback(s.p) })
}

// Sync makes the changes since Begin durable and keeps the lock.
func (s *Store) Sync() error {
	return s.call("minlsh_store_sync", func() C.int { return C.minlsh_store_sync(s.p) })
}

// Refresh catches up with what other processes committed.
func (s *Store) Refresh() error {
	return s.call("minlsh_store_refresh", func() C.int { return C.minlsh_store_refresh(s.p) })
}

// CompactDue says whether the journal has grown past max(1 MiB, 1/32 of
// the file): time to Compact.
func (s *Store) CompactDue() (bool, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.p == nil {
		return false, closedError("Store.CompactDue")
	}
	rc := C.minlsh_store_compact_due(s.p)
	return rc == 1, newError(rc, "minlsh_store_compact_due", s.path)
}

// Compact folds the journal into a new file without stalling other
// writers; removed documents leave the index here. ErrBusy if another
// compaction is running, ErrState inside Begin/Commit.
func (s *Store) Compact() error {
	return s.call("minlsh_store_compact", func() C.int { return C.minlsh_store_compact(s.p) })
}
