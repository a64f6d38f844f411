package minlsh

/*
#include <minlsh.h>
*/
import "C"

import (
	"fmt"
	"strings"
)

// Error codes of the C library (MINLSH_E_*). The values are ABI.
const (
	CodeNull        = -1  // a required pointer argument is NULL
	CodeParam       = -2  // a parameter is out of range
	CodeNoMem       = -3  // an allocation failed
	CodeBufSize     = -4  // output buffer too small
	CodeIO          = -5  // a system call on a file failed
	CodeFormat      = -6  // not a minlsh file, or an unsupported format version
	CodeCorrupt     = -7  // truncated file, bad checksum or inconsistent content
	CodeMismatch    = -8  // data made with another family, seed, k, key or shape
	CodeTooBig      = -9  // input over a configured or representable limit
	CodeExists      = -10 // the id is already in the index
	CodeNotFound    = -11 // no such id or position
	CodeVersion     = -12 // options struct version not supported
	CodeState       = -13 // call not valid in the handle's current state (e.g. closed)
	CodeUnsupported = -14 // feature not available in this build or on this CPU
	CodeBusy        = -15 // a lock is held elsewhere and the wait timed out
)

// Error is an error reported by the C library: Code is the negative
// MINLSH_E_* value, Name its symbolic name and Message the library's
// description of it. Op names the failing C function (or Go method), and
// Detail, when set, says what the call was about.
type Error struct {
	Code    int
	Name    string
	Message string
	Op      string
	Detail  string
}

func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString("minlsh: ")
	if e.Op != "" {
		b.WriteString(e.Op)
		b.WriteString(": ")
	}
	fmt.Fprintf(&b, "%s (%s)", e.Message, e.Name)
	if e.Detail != "" {
		b.WriteString(": ")
		b.WriteString(e.Detail)
	}
	return b.String()
}

// Is makes errors.Is(err, minlsh.ErrParam) true for every *Error with the
// same code.
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	return ok && t.Code == e.Code
}

func sentinel(code int) *Error {
	return &Error{Code: code, Name: C.GoString(C.minlsh_error_name(C.int(code))),
		Message: C.GoString(C.minlsh_strerror(C.int(code)))}
}

// Sentinels for errors.Is: each matches every *Error with its code.
var (
	ErrNull        = sentinel(CodeNull)
	ErrParam       = sentinel(CodeParam)
	ErrNoMem       = sentinel(CodeNoMem)
	ErrBufSize     = sentinel(CodeBufSize)
	ErrIO          = sentinel(CodeIO)
	ErrFormat      = sentinel(CodeFormat)
	ErrCorrupt     = sentinel(CodeCorrupt)
	ErrMismatch    = sentinel(CodeMismatch)
	ErrTooBig      = sentinel(CodeTooBig)
	ErrExists      = sentinel(CodeExists)
	ErrNotFound    = sentinel(CodeNotFound)
	ErrVersion     = sentinel(CodeVersion)
	ErrState       = sentinel(CodeState)
	ErrUnsupported = sentinel(CodeUnsupported)
	ErrBusy        = sentinel(CodeBusy)
)

// newError builds the *Error for a return code (nil for rc >= 0).
func newError(rc C.int, op string, detail string) error {
	if rc >= 0 {
		return nil
	}
	e := sentinel(int(rc))
	e.Op = op
	e.Detail = detail
	return e
}

func check(rc C.int, op string) error { return newError(rc, op, "") }

func closedError(op string) error {
	e := sentinel(CodeState)
	e.Op = op
	e.Detail = "the handle is closed"
	return e
}

func paramError(op, detail string) error {
	e := sentinel(CodeParam)
	e.Op = op
	e.Detail = detail
	return e
}
