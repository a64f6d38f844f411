package minlsh

/*
#define MINLSH_EXPERIMENTAL_API
#include <minlsh.h>
#include <stdlib.h>
*/
import "C"

import (
	"bytes"
	"fmt"
	"strings"
	"unsafe"
)

// JSONLRecord is one record of a block of JSON Lines, as minlsh dedup
// --jsonl reads it (the library's reader, minlsh_jsonl_parse_block).
type JSONLRecord struct {
	// ID is the id field's token as written: a JSON string (quotes
	// included) or number, ready for Dedup.AddJSON. Nil when Err is set.
	ID []byte
	// Text is the text field, decoded to UTF-8.
	Text []byte
	// Offset is where the record's line starts in the block.
	Offset int
	// Err is set when the line is not a record (not a JSON object, invalid
	// JSON, a missing field or one of the wrong kind): an *Error with code
	// CodeFormat whose Detail is the reason, worded as the command words it.
	Err error
}

// ParseJSONL reads the records of a block of whole JSON Lines (the last
// line's newline optional) with the reader of minlsh dedup --jsonl, so a Go
// program gets the same records from the same file: every line that is not
// blank is one record (an invalid one with Err set), a carriage return
// before the newline is left out, and with inputStart a UTF-8 byte-order
// mark before the first line too. The ids and texts are copies, the block
// is not kept. Errors: ErrParam for a field name with a NUL byte, ErrNoMem.
func ParseJSONL(block []byte, idField, textField string, inputStart bool) ([]JSONLRecord, error) {
	const op = "minlsh_jsonl_parse_block"
	if versionErr != nil {
		return nil, versionErr
	}
	for _, f := range []string{idField, textField} {
		if strings.IndexByte(f, 0) >= 0 {
			return nil, paramError(op, fmt.Sprintf("field name %q has a NUL byte", f))
		}
	}
	capRecords := bytes.Count(block, []byte{'\n'}) + 1
	// One C block (cgo forbids C from keeping Go pointers, and the texts
	// are written by C): the lines, then room for the texts, then the
	// arrays of 8-byte offsets and 4-byte statuses.
	n := len(block)
	words := 3*capRecords + 1 + capRecords
	base := (2*n + 16 + 7) &^ 7 // the arrays 8-byte aligned
	size := C.size_t(base) + C.size_t(words)*8 + C.size_t(capRecords)*4
	mem := C.malloc(size)
	if mem == nil {
		return nil, newError(CodeNoMem, op, fmt.Sprintf("a block of %d bytes", n))
	}
	defer C.free(mem)
	in := unsafe.Slice((*byte)(mem), n+1)
	copy(in, block)
	texts := unsafe.Add(mem, n+8)
	arrays := unsafe.Add(mem, base)
	u64 := unsafe.Slice((*C.uint64_t)(arrays), words)
	textOffsets := u64[:capRecords+1]
	idOffsets := u64[capRecords+1 : 2*capRecords+1]
	idLengths := u64[2*capRecords+1 : 3*capRecords+1]
	lineOffsets := u64[3*capRecords+1 : 4*capRecords+1]
	status := unsafe.Slice((*C.int32_t)(unsafe.Add(arrays, words*8)), capRecords)
	cid, ctext := C.CString(idField), C.CString(textField)
	defer C.free(unsafe.Pointer(cid))
	defer C.free(unsafe.Pointer(ctext))
	var flags C.uint32_t
	if inputStart {
		flags = C.MINLSH_JSONL_INPUT_START
	}
	var got C.size_t
	rc := C.minlsh_jsonl_parse_block(mem, C.size_t(n), flags, cid, ctext, texts, C.size_t(n),
		&textOffsets[0], &idOffsets[0], &idLengths[0], &lineOffsets[0], &status[0],
		C.size_t(capRecords), &got)
	if rc != 0 {
		return nil, newError(rc, op, fmt.Sprintf("a block of %d bytes", n))
	}
	text := unsafe.Slice((*byte)(texts), n+1)
	out := make([]JSONLRecord, int(got))
	for i := range out {
		r := &out[i]
		r.Offset = int(lineOffsets[i])
		if status[i] != 0 {
			r.Err = lineError(block[r.Offset:], cid, ctext)
			continue
		}
		r.Text = append([]byte{}, text[textOffsets[i]:textOffsets[i+1]]...)
		r.ID = append([]byte(nil), block[idOffsets[i]:idOffsets[i]+idLengths[i]]...)
	}
	return out, nil
}

// lineError is the reader's message for the first line of rest, which it
// refused: minlsh_jsonl_parse_line on that line alone.
func lineError(rest []byte, cid, ctext *C.char) error {
	const op = "minlsh_jsonl_parse_line"
	line := rest
	if i := bytes.IndexByte(rest, '\n'); i >= 0 {
		line = rest[:i]
	}
	if len(line) > 0 && line[len(line)-1] == '\r' {
		line = line[:len(line)-1]
	}
	mem := C.malloc(C.size_t(2*len(line) + 2 + 256))
	if mem == nil {
		return newError(CodeNoMem, op, "a refused line")
	}
	defer C.free(mem)
	copy(unsafe.Slice((*byte)(mem), len(line)), line)
	text := unsafe.Add(mem, len(line)+1)
	msg := (*C.char)(unsafe.Add(mem, 2*len(line)+2))
	var tl, io, il C.size_t
	rc := C.minlsh_jsonl_parse_line(mem, C.size_t(len(line)), cid, ctext, text,
		C.size_t(len(line)), &tl, &io, &il, msg, 256)
	return newError(rc, op, C.GoString(msg))
}
