package minlsh

/*
#define MINLSH_EXPERIMENTAL_API 1
#include <minlsh.h>
#include <stdlib.h>
*/
import "C"

import (
	"math"
	"sync"
	"time"
	"unsafe"
)

// FileLock is the lock processes sharing one saved index take
// (minlsh_filelock): a flock(2) lock on the companion file path+".lock",
// never on the index itself, whose saves rename a new file over it. The
// minlsh command's index subcommands take the same lock. A writer holds it
// exclusively from loading the index to saving it; a reader holds it shared
// while it loads.
type FileLock struct {
	mu sync.Mutex
	p  *C.minlsh_filelock
}

// LockFile takes the lock of path (on path+".lock"), exclusive or shared,
// waiting at most timeout (negative: no limit; 0: do not wait). ErrBusy
// when the wait times out.
func LockFile(path string, exclusive bool, timeout time.Duration) (*FileLock, error) {
	mode := C.uint32_t(C.MINLSH_LOCK_SHARED)
	if exclusive {
		mode = C.MINLSH_LOCK_EXCLUSIVE
	}
	ms := C.uint32_t(C.MINLSH_LOCK_WAIT_FOREVER)
	if timeout >= 0 {
		m := timeout.Milliseconds()
		if m >= math.MaxUint32 {
			m = math.MaxUint32 - 1
		}
		ms = C.uint32_t(m)
	}
	cpath := C.CString(path)
	defer C.free(unsafe.Pointer(cpath))
	l := &FileLock{}
	if rc := C.minlsh_filelock_new(&l.p, cpath, mode, ms, nil); rc != 0 {
		return nil, newError(rc, "minlsh_filelock_new", path+".lock")
	}
	return l, nil
}

// Unlock releases the lock; later calls do nothing.
func (l *FileLock) Unlock() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.p != nil {
		C.minlsh_filelock_free(l.p)
		l.p = nil
	}
}
