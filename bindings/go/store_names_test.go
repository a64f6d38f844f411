package minlsh

import "testing"

// The tokens Python's json.dumps(name, ensure_ascii=True) writes for these
// names: both bindings must store the same bytes to find each other's names.
func TestNameTokenMatchesPython(t *testing.T) {
	for _, c := range []struct{ name, token string }{
		{"u1", `"u1"`},
		{`quote " and \ slash`, `"quote \" and \\ slash"`},
		{"é €", `"\u00e9 \u20ac"`},
		{"𝄞 tab\t", `"\ud834\udd1e tab\t"`},
		{"del\x7f <&> /", `"del\u007f <&> /"`},
		{"\x01\b\f\n\r", `"\u0001\b\f\n\r"`},
		{"", ``},
	} {
		got, err := nameToken("test", c.name)
		if err != nil || string(got) != c.token {
			t.Errorf("store_names_test.go: nameToken(%q) = %s, %v; want %s", c.name, got, err, c.token)
		}
		if c.name != "" && nameOfToken(got) != c.name {
			t.Errorf("store_names_test.go: nameOfToken(%s) = %q", got, nameOfToken(got))
		}
	}
	if _, err := nameToken("test", "\xff"); err == nil {
		t.Errorf("store_names_test.go: a name that is not UTF-8 was accepted")
	}
}
