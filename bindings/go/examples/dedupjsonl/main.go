// Command dedupjsonl is minlsh dedup --jsonl --output decisions --format
// jsonl through the Go binding: it reads JSON Lines records ({"id": ...,
// "text": ...}) from a file with ParseJSONL (the command's reader: the same
// records, an invalid line reported and skipped), deduplicates them with
// Dedup (ids through AddJSON, so they are compared as the command compares
// them) and prints one decision record per document, in input order. tests/conformance.sh
// compares its output with the command's, Python's and Dask's.
package main

import (
	"bufio"
	"bytes"
	"flag"
	"fmt"
	"os"
	"strconv"

	minlsh "minlsh.example/minlsh"
)

func main() {
	var o minlsh.DedupOptions
	var keep, group, scheme string
	var memory string
	flag.Float64Var(&o.Threshold, "threshold", 0, "Jaccard threshold (0: 0.8)")
	flag.IntVar(&o.NumPerm, "num-perm", 0, "values per signature (0: 128)")
	flag.IntVar(&o.Bands, "bands", 0, "bands (with -rows)")
	flag.IntVar(&o.Rows, "rows", 0, "rows per band")
	flag.Uint64Var(&o.MaxBucket, "max-bucket", 0, "bucket cap (0: none)")
	flag.StringVar(&memory, "memory", "0", "bytes, 0 (half the RAM) or none")
	flag.StringVar(&keep, "keep", "first", "first or longest")
	flag.StringVar(&group, "group", "components", "components or strict")
	flag.StringVar(&scheme, "scheme", "classic", "classic or oph")
	flag.Parse()
	if keep == "longest" {
		o.Keep = minlsh.KeepLongest
	}
	if group == "strict" {
		o.Group = minlsh.GroupStrict
	}
	if scheme == "oph" {
		o.Scheme = minlsh.SchemeOPH
	}
	if memory == "none" {
		o.Memory = minlsh.DedupMemoryUnlimited
	} else if m, err := strconv.ParseUint(memory, 10, 64); err == nil {
		o.Memory = m
	} else {
		fail(err)
	}
	if flag.NArg() != 1 {
		fail(fmt.Errorf("usage: dedupjsonl [options] FILE.jsonl"))
	}
	d, err := minlsh.NewDedup(o)
	if err != nil {
		fail(err)
	}
	defer d.Close()
	data, err := os.ReadFile(flag.Arg(0))
	if err != nil {
		fail(err)
	}
	// The command's reader: the same records, the same refusals.
	recs, err := minlsh.ParseJSONL(data, "id", "text", true)
	if err != nil {
		fail(err)
	}
	var ids, texts [][]byte
	for _, r := range recs {
		if r.Err != nil {
			line := 1 + bytes.Count(data[:r.Offset], []byte("\n"))
			fmt.Fprintf(os.Stderr, "dedupjsonl: %s:%d: %v\n", flag.Arg(0), line, r.Err)
			continue
		}
		ids = append(ids, r.ID)
		texts = append(texts, r.Text)
	}
	if err := d.AddJSON(ids, texts); err != nil {
		fail(err)
	}
	if err := d.Run(); err != nil {
		fail(err)
	}
	dec, err := d.Decisions()
	if err != nil {
		fail(err)
	}
	w := bufio.NewWriter(os.Stdout)
	for _, x := range dec {
		what := "dropped"
		if x.Kept {
			what = "kept"
		}
		fmt.Fprintf(w, "{\"id\": %s, \"cluster\": %d, \"decision\": \"%s\", "+
			"\"representative\": %s, \"similarity\": %s, \"exact\": %t}\n", x.ID, x.Cluster,
			what, x.RepresentativeID, strconv.FormatFloat(x.Similarity, 'g', -1, 64), x.Exact)
	}
	w.Flush()
	st, _ := d.Stats()
	if st.RepeatedIDs+st.RefusedIDs > 0 {
		fmt.Fprintf(os.Stderr, "dedupjsonl: %d repeated and %d refused ids skipped\n",
			st.RepeatedIDs, st.RefusedIDs)
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "dedupjsonl:", err)
	os.Exit(1)
}
