// Command crawler is the dedup step of a web crawler, with a persistent
// index: every page is streamed through the shingler in 4 KiB chunks (as it
// arrives from the network; no page is held whole), signed, and looked up in
// a band index loaded from disk. A page whose fingerprint is already indexed
// is an exact duplicate; one whose estimated similarity to an indexed page
// reaches the threshold is a near-duplicate; anything else is new and is
// inserted (Index.InsertNovel decides and inserts in one call). The index
// (with the page names in its metadata) is saved atomically at the end, so
// the next run dedups against everything seen so far, and a crash never
// leaves a half-written index. Several crawlers may share one index: each
// holds its lock (FILE.lock) from the load to the save.
//
//	crawler [-index FILE] [-threshold 0.8] [-num-perm 128] [-shingle word:5]
//	        [-html] [-max-bytes N] PAGE...
//
// A PAGE is a file, a directory (its files, in name order) or an http(s) URL.
// Output: one line per page, "new", "near" (~ the most similar page and the
// estimate), "exact" (= the page with the same content), "empty" or "skip"
// (unreadable), then a summary.
package main

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"minlsh.example/minlsh"
)

const chunkSize = 4096

type crawler struct {
	threshold float64
	shingler  *minlsh.Shingler
	stream    *minlsh.Stream
	family    *minlsh.Family
	index     *minlsh.Index
	names     map[uint64]string // id -> the first page seen with that content
	client    *http.Client
	out       io.Writer
	counts    map[string]int
}

// metadata is what the crawler keeps in the index file besides signatures.
type metadata struct {
	Shingle string            `json:"shingle"`
	Names   map[string]string `json:"names"` // decimal id -> page
}

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	fl := flag.NewFlagSet("crawler", flag.ContinueOnError)
	fl.SetOutput(stderr)
	indexPath := fl.String("index", "crawl.mlsh", "the persistent index file")
	threshold := fl.Float64("threshold", 0.8, "near-duplicate threshold (estimated Jaccard)")
	numPerm := fl.Int("num-perm", 128, "MinHash values per signature")
	spec := fl.String("shingle", "word:5", "shingles: word:N, char:N, codepoint:N, stopword:N")
	html := fl.Bool("html", false, "strip HTML markup before shingling")
	maxBytes := fl.Uint64("max-bytes", 16<<20, "skip pages larger than this (0: no limit)")
	fl.Usage = func() {
		fmt.Fprintln(stderr, "usage: crawler [flags] PAGE... (files, directories or http(s) URLs)")
		fl.PrintDefaults()
	}
	if err := fl.Parse(args); err != nil {
		return 2
	}
	if fl.NArg() == 0 {
		fl.Usage()
		return 2
	}
	// Other crawlers may share the index: hold its lock (FILE.lock) from
	// the load to the save, so that no page another one saved is lost.
	lock, err := minlsh.LockFile(*indexPath, true, -1)
	if err != nil {
		fmt.Fprintln(stderr, "crawler:", err)
		return 1
	}
	defer lock.Unlock()
	c, err := open(*indexPath, *threshold, *numPerm, *spec, *html, *maxBytes, stdout)
	if err != nil {
		fmt.Fprintln(stderr, "crawler:", err)
		return 1
	}
	defer c.close()
	for _, page := range fl.Args() {
		if err := c.visit(page); err != nil {
			fmt.Fprintln(stderr, "crawler:", err)
			return 1
		}
	}
	if err := c.save(*indexPath, *spec); err != nil {
		fmt.Fprintln(stderr, "crawler:", err)
		return 1
	}
	fmt.Fprintf(stdout, "%d pages: %d new, %d near-duplicates, %d exact duplicates, %d empty, "+
		"%d skipped; the index has %d pages\n",
		c.counts["new"]+c.counts["near"]+c.counts["exact"]+c.counts["empty"]+c.counts["skip"],
		c.counts["new"], c.counts["near"], c.counts["exact"], c.counts["empty"], c.counts["skip"],
		c.index.Len())
	return 0
}

func open(path string, threshold float64, numPerm int, spec string, html bool, maxBytes uint64,
	out io.Writer) (*crawler, error) {
	opts, err := minlsh.ParseShingle(spec)
	if err != nil {
		return nil, err
	}
	opts.HTML = html
	opts.MaxDocumentBytes = maxBytes
	c := &crawler{threshold: threshold, names: map[uint64]string{}, out: out,
		counts: map[string]int{}, client: &http.Client{Timeout: 30 * time.Second}}
	if c.shingler, err = minlsh.NewShingler(opts); err != nil {
		return nil, err
	}
	if c.stream, err = c.shingler.NewStream(); err != nil {
		return nil, err
	}
	if c.family, err = minlsh.NewFamily(numPerm, 1); err != nil {
		return nil, err
	}
	// The family and the shingler's config id make the load refuse an index
	// built with other settings; a damaged file is an error, not a reason to
	// start over.
	want := minlsh.IndexConfig{K: numPerm, Seed: 1, ConfigID: c.shingler.ConfigID()}
	c.index, err = minlsh.LoadIndex(path, &want)
	if errors.Is(err, minlsh.ErrIO) {
		if _, statErr := os.Stat(path); errors.Is(statErr, fs.ErrNotExist) {
			plan, perr := minlsh.Plan(minlsh.PlanOptions{Threshold: threshold, K: numPerm})
			if perr != nil {
				return nil, perr
			}
			want.Bands, want.Rows = plan.Bands, plan.Rows
			c.index, err = minlsh.NewIndex(want)
		}
	} else if err == nil {
		err = c.loadNames()
	}
	if err != nil {
		return nil, err
	}
	return c, nil
}

func (c *crawler) loadNames() error {
	raw, err := c.index.Metadata()
	if err != nil || len(raw) == 0 {
		return err
	}
	var md metadata
	if err := json.Unmarshal(raw, &md); err != nil {
		return fmt.Errorf("the index's metadata is not the crawler's: %w", err)
	}
	for k, v := range md.Names {
		id, err := strconv.ParseUint(k, 10, 64)
		if err != nil {
			return fmt.Errorf("bad id %q in the index's metadata", k)
		}
		c.names[id] = v
	}
	return nil
}

func (c *crawler) close() {
	c.index.Close()
	c.family.Close()
	c.stream.Close()
	c.shingler.Close()
}

// visit handles a file, every file of a directory, or a URL.
func (c *crawler) visit(page string) error {
	if strings.HasPrefix(page, "http://") || strings.HasPrefix(page, "https://") {
		resp, err := c.client.Get(page)
		if err != nil {
			return c.report("skip", page, err.Error())
		}
		defer resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return c.report("skip", page, resp.Status)
		}
		return c.dedup(page, resp.Body)
	}
	info, err := os.Stat(page)
	if err != nil {
		return c.report("skip", page, err.Error())
	}
	if !info.IsDir() {
		return c.file(page)
	}
	var files []string
	err = filepath.WalkDir(page, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			files = append(files, p)
		}
		return err
	})
	if err != nil {
		return c.report("skip", page, err.Error())
	}
	sort.Strings(files)
	for _, f := range files {
		if err := c.file(f); err != nil {
			return err
		}
	}
	return nil
}

func (c *crawler) file(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return c.report("skip", path, err.Error())
	}
	defer f.Close()
	return c.dedup(path, f)
}

// dedup streams one page, then inserts it if it is novel.
func (c *crawler) dedup(name string, body io.Reader) error {
	buf := make([]byte, chunkSize)
	if _, err := io.CopyBuffer(struct{ io.Writer }{c.stream}, struct{ io.Reader }{body}, buf); err != nil {
		c.stream.Reset()
		if errors.Is(err, minlsh.ErrTooBig) {
			return c.report("skip", name, "larger than -max-bytes")
		}
		var me *minlsh.Error
		if errors.As(err, &me) {
			return err // the library failed (e.g. out of memory): stop
		}
		return c.report("skip", name, err.Error()) // a read error: skip the page
	}
	shingles, fp, err := c.stream.Finish()
	if err != nil {
		return err
	}
	if len(shingles) == 0 {
		return c.report("empty", name, "")
	}
	// Same content, same id: the first 8 bytes of the fingerprint.
	id := binary.LittleEndian.Uint64(fp[:8])
	if c.index.Contains(id) {
		return c.report("exact", name, "= "+c.names[id])
	}
	sig, err := c.family.Sign(shingles)
	if err != nil {
		return err
	}
	// Query, verify at the threshold and insert when novel, in one call.
	nv, err := c.index.InsertNovel(id, sig, minlsh.NovelOptions{Threshold: c.threshold})
	if err != nil {
		return err
	}
	if !nv.Novel {
		return c.report("near", name, fmt.Sprintf("~ %s (%.2f)", c.names[nv.Match], nv.Similarity))
	}
	c.names[id] = name
	return c.report("new", name, "")
}

func (c *crawler) report(what, name, detail string) error {
	c.counts[what]++
	if detail != "" {
		_, err := fmt.Fprintf(c.out, "%-6s %s  %s\n", what, name, detail)
		return err
	}
	_, err := fmt.Fprintf(c.out, "%-6s %s\n", what, name)
	return err
}

func (c *crawler) save(path, spec string) error {
	md := metadata{Shingle: spec, Names: map[string]string{}}
	for id, name := range c.names {
		md.Names[strconv.FormatUint(id, 10)] = name
	}
	raw, err := json.Marshal(md) // map keys are sorted: the same index, the same bytes
	if err != nil {
		return err
	}
	if err := c.index.SetMetadata(raw); err != nil {
		return err
	}
	return c.index.Save(path)
}
