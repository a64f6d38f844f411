package main

import (
	"bytes"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"minlsh.example/minlsh"
)

func page(topic string, variant int) string {
	var b strings.Builder
	for i := 0; i < 300; i++ {
		if i == 150 && variant > 0 {
			fmt.Fprintf(&b, "variant %d changes this sentence here. ", variant)
			continue
		}
		fmt.Fprintf(&b, "%s sentence %d talks about %s number %d. ", topic, i, topic, i*7)
	}
	return b.String()
}

func crawl(t *testing.T, args ...string) []string {
	t.Helper()
	var out, errs bytes.Buffer
	if rc := run(args, &out, &errs); rc != 0 {
		t.Fatalf("crawler %v: exit %d: %s", args, rc, errs.String())
	}
	return strings.Split(strings.TrimSpace(out.String()), "\n")
}

func TestCrawlerDedupsAcrossRuns(t *testing.T) {
	dir := t.TempDir()
	pages := filepath.Join(dir, "pages")
	os.Mkdir(pages, 0o755)
	write := func(name, text string) string {
		p := filepath.Join(pages, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	a := write("a.html", "<html><body><p>"+page("rivers", 0)+"</p></body></html>")
	write("b.html", "<html><body><div>"+page("rivers", 1)+"</div></body></html>") // near a
	write("c.html", "<html><body><p>"+page("rivers", 0)+"</p></body></html>")     // exact a
	write("d.html", page("mountains", 0))
	write("e.html", "<script>only markup</script>")
	index := filepath.Join(dir, "crawl.mlsh")

	got := crawl(t, "-index", index, "-html", pages)
	want := []string{
		"new    " + a,
		"near   " + filepath.Join(pages, "b.html") + "  ~ " + a + " (",
		"exact  " + filepath.Join(pages, "c.html") + "  = " + a,
		"new    " + filepath.Join(pages, "d.html"),
		"empty  " + filepath.Join(pages, "e.html"),
		"5 pages: 2 new, 1 near-duplicates, 1 exact duplicates, 1 empty, 0 skipped; the index has 2 pages",
	}
	if len(got) != len(want) {
		t.Fatalf("got\n%s", strings.Join(got, "\n"))
	}
	for i := range want {
		if !strings.HasPrefix(got[i], want[i]) {
			t.Errorf("line %d: %q, want %q...", i, got[i], want[i])
		}
	}

	// The second run starts from the saved index: old pages are known, and a
	// page served over HTTP is checked against them too.
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/mountains":
			fmt.Fprint(w, "<p>"+page("mountains", 2)+"</p>")
		case "/lakes":
			fmt.Fprint(w, page("lakes", 0))
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	got = crawl(t, "-index", index, "-html", a, srv.URL+"/mountains", srv.URL+"/lakes",
		srv.URL+"/missing", filepath.Join(dir, "no-such-file"))
	want = []string{
		"exact  " + a + "  = " + a,
		"near   " + srv.URL + "/mountains  ~ " + filepath.Join(pages, "d.html"),
		"new    " + srv.URL + "/lakes",
		"skip   " + srv.URL + "/missing  404",
		"skip   " + filepath.Join(dir, "no-such-file"),
		"5 pages: 1 new, 1 near-duplicates, 1 exact duplicates, 0 empty, 2 skipped; the index has 3 pages",
	}
	if len(got) != len(want) {
		t.Fatalf("got\n%s", strings.Join(got, "\n"))
	}
	for i := range want {
		if !strings.HasPrefix(got[i], want[i]) {
			t.Errorf("line %d: %q, want %q...", i, got[i], want[i])
		}
	}

	// The index is an ordinary minlsh index file.
	x, err := minlsh.LoadIndex(index, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer x.Close()
	if x.Len() != 3 {
		t.Fatalf("%d pages in the index", x.Len())
	}

	// Other settings are refused rather than silently mixed.
	var out, errs bytes.Buffer
	if rc := run([]string{"-index", index, "-shingle", "word:3", a}, &out, &errs); rc != 1 ||
		!strings.Contains(errs.String(), "MINLSH_E_MISMATCH") {
		t.Fatalf("exit %d: %s", rc, errs.String())
	}
	// A damaged index is an error, not a fresh start.
	os.WriteFile(index, []byte("garbage"), 0o644)
	errs.Reset()
	if rc := run([]string{"-index", index, "-html", a}, &out, &errs); rc != 1 ||
		!strings.Contains(errs.String(), "MINLSH_E_FORMAT") {
		t.Fatalf("exit %d: %s", rc, errs.String())
	}
}

func TestCrawlerLimits(t *testing.T) {
	dir := t.TempDir()
	big := filepath.Join(dir, "big.txt")
	os.WriteFile(big, []byte(page("big", 0)), 0o644)
	got := crawl(t, "-index", filepath.Join(dir, "i.mlsh"), "-max-bytes", "1000", big)
	if !strings.HasPrefix(got[0], "skip   "+big+"  larger than -max-bytes") {
		t.Fatal(got)
	}
	var out, errs bytes.Buffer
	if rc := run(nil, &out, &errs); rc != 2 || !strings.Contains(errs.String(), "usage") {
		t.Fatalf("no arguments: exit %d", rc)
	}
}
