package minlsh

// The C side of NovelOptions.Verify. A file with //export may declare C
// functions but not define them, hence a file of its own.

/*
#include <stdint.h>
*/
import "C"

import (
	"runtime/cgo"
	"unsafe"
)

//export minlshGoVerify
func minlshGoVerify(opaque unsafe.Pointer, id C.uint64_t, estimate C.double, similarity *C.double) C.int {
	st := cgo.Handle(uintptr(opaque)).Value().(*verifyState)
	s, err := st.fn(uint64(id), float64(estimate))
	if err != nil {
		st.err = err
		return -1
	}
	*similarity = C.double(s)
	return 0
}
