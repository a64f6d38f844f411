package minlsh

import (
	"bytes"
	"errors"
	"testing"
)

// ParseJSONL reads a block as minlsh dedup --jsonl reads a file: blank
// lines skipped, CRLF, a byte-order mark only at the input's start,
// escapes decoded, id tokens as written, invalid lines with the command's
// reason, a last line without newline.
func TestParseJSONL(t *testing.T) {
	block := []byte("\xEF\xBB\xBF{\"id\": 1, \"text\": \"one\"}\r\n" +
		"\n  \t\n" +
		"{\"id\": \"b\\u00e9\", \"text\": \"caf\\u00e9 \\ud83d\\ude00\"}\n" +
		"{\"id\": true, \"text\": \"x\"}\n" +
		"not json\n" +
		"{\"text\": \"no id\", \"id\": -2.5e1}")
	recs, err := ParseJSONL(block, "id", "text", true)
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 5 {
		t.Fatalf("%d records, want 5", len(recs))
	}
	want := []struct{ id, text string }{{"1", "one"}, {"\"b\\u00e9\"", "caf\u00e9 \U0001F600"},
		{"", ""}, {"", ""}, {"-2.5e1", "no id"}}
	for i, w := range want {
		r := recs[i]
		if w.id == "" {
			if r.Err == nil || !errors.Is(r.Err, ErrFormat) || r.ID != nil {
				t.Errorf("record %d: %+v, want a format error", i, r)
			}
			continue
		}
		if r.Err != nil || string(r.ID) != w.id || string(r.Text) != w.text {
			t.Errorf("record %d: %q %q %v, want %q %q", i, r.ID, r.Text, r.Err, w.id, w.text)
		}
	}
	if e, ok := recs[2].Err.(*Error); !ok || e.Detail != "field \"id\" is not a string or a number" {
		t.Errorf("record 2: %v", recs[2].Err)
	}
	if e, ok := recs[3].Err.(*Error); !ok || e.Detail != "not a JSON object" {
		t.Errorf("record 3: %v", recs[3].Err)
	}
	if recs[0].Offset != 3 || !bytes.HasPrefix(block[recs[4].Offset:], []byte("{\"text\"")) {
		t.Errorf("offsets %d %d", recs[0].Offset, recs[4].Offset)
	}
	// Not at the input's start, the mark is not white space: no record.
	recs, err = ParseJSONL(block, "id", "text", false)
	if err != nil || len(recs) != 5 || recs[0].Err == nil {
		t.Fatalf("without inputStart: %v %+v", err, recs)
	}
	// Other field names, an empty block, a NUL in a name.
	recs, err = ParseJSONL([]byte("{\"k\": \"a\", \"body\": \"t\"}"), "k", "body", false)
	if err != nil || len(recs) != 1 || string(recs[0].ID) != "\"a\"" || string(recs[0].Text) != "t" {
		t.Fatalf("fields k, body: %v %+v", err, recs)
	}
	if recs, err = ParseJSONL(nil, "id", "text", true); err != nil || len(recs) != 0 {
		t.Fatalf("empty block: %v %+v", err, recs)
	}
	if _, err = ParseJSONL(block, "i\x00d", "text", false); !errors.Is(err, ErrParam) {
		t.Fatalf("NUL in a field name: %v", err)
	}
}
