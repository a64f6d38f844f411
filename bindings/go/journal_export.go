package minlsh

// The C side of OpenJournal's replay callback. A file with //export may
// declare C functions but not define them, hence a file of its own.

/*
#include <stddef.h>
#include <stdint.h>
*/
import "C"

import (
	"runtime/cgo"
	"unsafe"
)

//export minlshGoJournalRecord
func minlshGoJournalRecord(opaque unsafe.Pointer, op C.uint32_t, id C.uint64_t, data unsafe.Pointer,
	n C.size_t) C.int {
	st := cgo.Handle(uintptr(opaque)).Value().(*journalState)
	if err := st.fn(JournalOp(op), uint64(id), C.GoBytes(data, C.int(n))); err != nil {
		st.err = err
		return -1
	}
	return 0
}
