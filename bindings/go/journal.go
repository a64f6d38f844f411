package minlsh

/*
#define MINLSH_EXPERIMENTAL_API 1
#include <minlsh.h>
#include <stdint.h>
#include <stdlib.h>

extern int minlshGoJournalRecord(void *opaque, uint32_t op, uint64_t id, void *data, size_t n);

static int minlsh_go_journal_record(void *opaque, uint32_t op, uint64_t id, const void *data,
                                    size_t n) {
	return minlshGoJournalRecord(opaque, op, id, (void *)data, n);
}

// The callback's handle travels as the opaque pointer: an integer, never a
// Go pointer, so C keeps nothing the Go collector must know about.
static int minlsh_go_journal_open(minlsh_journal **out, minlsh_index *index, const char *path,
                                  uint32_t mode, uintptr_t handle) {
	return minlsh_journal_open(out, index, path, mode,
	                           handle != 0 ? minlsh_go_journal_record : NULL, (void *)handle);
}
*/
import "C"

import (
	"fmt"
	"runtime"
	"runtime/cgo"
	"sync"
	"unsafe"
)

// JournalOp is what a journal record did: JournalInsert or JournalRemove.
type JournalOp uint32

const (
	JournalInsert JournalOp = C.MINLSH_JOURNAL_INSERT
	JournalRemove JournalOp = C.MINLSH_JOURNAL_REMOVE
)

// Journal is an index journal (minlsh_journal; docs/format.md, "Index
// journal"): an append-only file beside a saved index whose checksummed
// records (inserts and removals, each with the caller's bytes, such as a
// document's name) extend that file, so a crawler makes each change durable
// in time proportional to the change instead of rewriting the index.
//
// The protocol for a writer, holding LockFile(indexPath, true, ...): open
// the index (MapIndex is the cheap way), OpenJournal(index, path, true, fn)
// replays the records into it, then for each change: change the index and
// Append a record of it; Sync makes the appended records durable (a kill
// after Sync returns loses none; records not synced are dropped whole).
// When CompactDue says so, Compact saves the index over its file and starts
// an empty journal. A reader opens the index and its journal with write
// false under a shared lock.
//
// A Journal is safe for concurrent use (its methods take its own lock);
// Append does not change the index, whose own lock covers its changes.
type Journal struct {
	mu sync.Mutex
	p  *C.minlsh_journal
	x  *Index
}

type journalState struct {
	fn  func(op JournalOp, id uint64, data []byte) error
	err error
}

// OpenJournal opens the journal at path for index x (as it came from its
// file: the journal names the file it extends, and one left beside another
// file is stale: skipped, or replaced when writing) and replays its records
// into x in order, calling onRecord (may be nil) after each with its
// operation, id and bytes; an error from onRecord stops the open and is
// returned. No file at path: nothing to replay (write creates it). With
// write false the journal is only read (Append, Sync and Compact then
// return ErrState); with write true a damaged tail is cut and the file kept
// open for appending. On error x may hold part of the journal: close it.
func OpenJournal(x *Index, path string, write bool, onRecord func(op JournalOp, id uint64,
	data []byte) error) (*Journal, error) {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.p == nil {
		return nil, closedError("OpenJournal")
	}
	cpath := C.CString(path)
	defer C.free(unsafe.Pointer(cpath))
	mode := C.uint32_t(C.MINLSH_JOURNAL_READ)
	if write {
		mode = C.MINLSH_JOURNAL_WRITE
	}
	var st *journalState
	var h cgo.Handle
	if onRecord != nil {
		st = &journalState{fn: onRecord}
		h = cgo.NewHandle(st)
		defer h.Delete()
	}
	j := &Journal{x: x}
	rc := C.minlsh_go_journal_open(&j.p, x.p, cpath, mode, C.uintptr_t(h))
	if st != nil && st.err != nil {
		return nil, st.err
	}
	if rc != 0 {
		return nil, newError(rc, "minlsh_journal_open", path)
	}
	runtime.SetFinalizer(j, (*Journal).Close)
	return j, nil
}

// Append buffers a record of a change made to the index: JournalInsert of
// id with its signature m, or JournalRemove of id (m ignored), with data
// (at most 1 MiB; copied). Sync writes it. ErrState if the journal was
// opened for reading, ErrTooBig for data over 1 MiB.
func (j *Journal) Append(op JournalOp, id uint64, m MinHash, data []byte) error {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.p == nil {
		return closedError("Journal.Append")
	}
	var sig *C.uint32_t
	var k C.size_t
	if op == JournalInsert {
		sig, k = u32Ptr(m.Values), C.size_t(len(m.Values))
	}
	return newError(C.minlsh_journal_append(j.p, C.uint32_t(op), C.uint64_t(id), sig, k,
		bytesPtr(data), C.size_t(len(data))), "minlsh_journal_append", fmt.Sprintf("id %d", id))
}

// Sync writes the records appended since the last Sync and a commit record,
// and fdatasyncs: once it returns nil they survive a crash or kill -9. On
// error none of them counts and they stay buffered for another try.
func (j *Journal) Sync() error {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.p == nil {
		return closedError("Journal.Sync")
	}
	return check(C.minlsh_journal_sync(j.p), "minlsh_journal_sync")
}

// Bytes is the journal's size (header, records on disk and buffered);
// Records the records replayed and appended since the last compaction.
func (j *Journal) Bytes() uint64 {
	j.mu.Lock()
	defer j.mu.Unlock()
	return uint64(C.minlsh_journal_bytes(j.p))
}

// Records is the number of records replayed and appended since the last
// compaction.
func (j *Journal) Records() uint64 {
	j.mu.Lock()
	defer j.mu.Unlock()
	return uint64(C.minlsh_journal_records(j.p))
}

// CompactDue reports whether the journal has passed max(1 MiB, 1/32 of the
// index file): time to Compact.
func (j *Journal) CompactDue() (bool, error) {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.p == nil {
		return false, closedError("Journal.CompactDue")
	}
	j.x.mu.RLock()
	defer j.x.mu.RUnlock()
	if j.x.p == nil {
		return false, closedError("Journal.CompactDue")
	}
	rc := C.minlsh_journal_compact_due(j.p, j.x.p)
	return rc == 1, check(rc, "minlsh_journal_compact_due")
}

// Compact saves the index over indexPath (the file it came from; format
// version 2, atomically, with the index's metadata) and starts an empty
// journal naming the new file. Killed at any point, the file and journal on
// disk hold every synced record exactly once. A mapped index keeps its
// delta; MapIndex the file again to drop it.
func (j *Journal) Compact(indexPath string) error {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.p == nil {
		return closedError("Journal.Compact")
	}
	j.x.mu.Lock()
	defer j.x.mu.Unlock()
	if j.x.p == nil {
		return closedError("Journal.Compact")
	}
	cpath := C.CString(indexPath)
	defer C.free(unsafe.Pointer(cpath))
	return newError(C.minlsh_journal_compact(j.p, j.x.p, cpath), "minlsh_journal_compact",
		indexPath)
}

// Close closes the journal; records appended since the last Sync are
// dropped. Later calls do nothing.
func (j *Journal) Close() error {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.p != nil {
		C.minlsh_journal_free(j.p)
		j.p = nil
		runtime.SetFinalizer(j, nil)
	}
	return nil
}
