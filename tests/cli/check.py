#!/usr/bin/python3
"""Checks for tests/cli.sh, against the ground truth of gen_corpus.py.

    check.py pairs CORPUS MODE OUTPUT [--threshold T] [--min-recall R]
    check.py clusters CORPUS MODE CLUSTERS PAIRS [--threshold T]
    check.py query CORPUS QUERY_OUTPUT [--threshold T]
    check.py decisions CORPUS MODE DECISIONS GROUP [--threshold T]
    check.py corpus CORPUS KEPT DROPPED
    check.py params OUTPUT S=P...
    check.py svg FILE

CORPUS is the directory gen_corpus.py wrote; MODE is "files" (names are
paths) or "jsonl" (names are the JSON ids). Outputs are minlsh's JSON Lines.
Each check prints what it measured and exits 1 if it does not hold.
"""
import json
import os
import re
import sys
import xml.etree.ElementTree as ET

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gen_corpus import jaccard, shingles  # noqa: E402


class Corpus:
    def __init__(self, root):
        with open(os.path.join(root, "truth.json")) as fh:
            t = json.load(fh)
        self.docs = t["docs"]
        self.by_name = {d["name"]: d for d in self.docs}
        self.by_id = {json.dumps(d["id"]): d["name"] for d in self.docs}
        self.truth = {}
        for a, b, j in t["pairs"]:
            self.truth[(min(a, b), max(a, b))] = j
        self.texts = {}
        with open(os.path.join(root, "corpus.jsonl")) as fh:
            for d, line in zip(self.docs, fh):
                self.texts[d["name"]] = json.loads(line)["text"]
        self.sets = {}

    def name(self, mode, value):
        if mode == "files":
            return os.path.splitext(os.path.basename(value))[0]
        return self.by_id[json.dumps(value)]

    def similarity(self, a, b):
        key = (min(a, b), max(a, b))
        if key in self.truth:
            return self.truth[key]
        for n in key:
            if n not in self.sets:
                self.sets[n] = shingles(self.texts[n])
        return jaccard(self.sets[key[0]], self.sets[key[1]])

    def true_pairs(self, threshold):
        return {p for p, j in self.truth.items() if j >= threshold}


def read_jsonl(path):
    with open(path) as fh:
        return [json.loads(line) for line in fh if line.strip()]


def components(nodes_pairs):
    parent = {}

    def find(x):
        parent.setdefault(x, x)
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    for a, b in nodes_pairs:
        ra, rb = find(a), find(b)
        if ra != rb:
            parent[max(ra, rb)] = min(ra, rb)
    groups = {}
    for x in list(parent):
        groups.setdefault(find(x), set()).add(x)
    return sorted(sorted(g) for g in groups.values() if len(g) > 1)


def opt(args, name, default):
    if name in args:
        i = args.index(name)
        value = args[i + 1]
        del args[i:i + 2]
        return float(value)
    return default


def check_pairs(args):
    t = opt(args, "--threshold", 0.8)
    min_recall = opt(args, "--min-recall", 0.98)
    corpus, mode, output = Corpus(args[0]), args[1], args[2]
    reported = {}
    for rec in read_jsonl(output):
        a, b = corpus.name(mode, rec["a"]), corpus.name(mode, rec["b"])
        reported[(min(a, b), max(a, b))] = rec["similarity"]
    want = corpus.true_pairs(t)
    found = want & set(reported)
    recall = len(found) / len(want) if want else 1.0
    bad = [(p, corpus.similarity(*p)) for p in reported if corpus.similarity(*p) < t]
    precision = 1 - len(bad) / len(reported) if reported else 1.0
    # The similarity printed must be the exact Jaccard.
    wrong = [p for p, s in reported.items() if abs(s - corpus.similarity(*p)) > 1e-9]
    print("recall: %.4f (%d of %d pairs with J >= %g)" % (recall, len(found), len(want), t))
    print("precision: %.4f (%d reported, %d below %g)" % (precision, len(reported), len(bad), t))
    ok = True
    if recall < min_recall:
        print("missed:", sorted((p, corpus.truth[p]) for p in want - found)[:10])
        ok = False
    if bad:
        print("below the threshold:", bad[:10])
        ok = False
    if wrong:
        print("similarity is not the exact Jaccard:", wrong[:10])
        ok = False
    return ok


def check_clusters(args):
    t = opt(args, "--threshold", 0.8)
    corpus, mode, cl_path, pairs_path = Corpus(args[0]), args[1], args[2], args[3]
    clusters = []
    for n, rec in enumerate(read_jsonl(cl_path), 1):
        members = [corpus.name(mode, m) for m in rec["members"]]
        if rec["cluster"] != n or rec["size"] != len(members):
            print("bad numbering or size:", rec)
            return False
        clusters.append(sorted(members))
    clusters.sort()
    pairs = [(corpus.name(mode, r["a"]), corpus.name(mode, r["b"]))
             for r in read_jsonl(pairs_path)]
    from_pairs = components(pairs)
    from_truth = components(corpus.true_pairs(t))
    print("clusters: %d; from the reported pairs: %d; from the true pairs: %d"
          % (len(clusters), len(from_pairs), len(from_truth)))
    ok = True
    if clusters != from_pairs:
        print("clusters disagree with the pairs")
        ok = False
    if clusters != from_truth:
        print("clusters differ from the true components:",
              [c for c in clusters if c not in from_truth][:3],
              [c for c in from_truth if c not in clusters][:3])
        ok = False
    return ok


def check_params(args):
    text = open(args[0]).read()
    table = {}
    for line in text.splitlines():
        m = re.match(r"^\s*(\d\.\d+)\s+(\d\.\d+)(\s|$)", line)
        if m:
            table[float(m.group(1))] = m.group(2)
    ok = True
    for spec in args[1:]:
        s, expected = spec.split("=")
        got = table.get(float(s))
        # Both numbers are rounded: allow half a unit of the last digit of each.
        tol = 0.5 * 10 ** -len(expected.split(".")[1])
        if got is not None:
            tol += 0.5 * 10 ** -len(got.split(".")[1])
        if got is None or abs(float(got) - float(expected)) > tol + 1e-12:
            print("s=%s: expected %s, got %s" % (s, expected, got))
            ok = False
    print("params: %d values checked" % (len(args) - 1))
    return ok


def check_svg(args):
    root = ET.parse(args[0]).getroot()
    ns = "{http://www.w3.org/2000/svg}"
    kinds = {el.tag.replace(ns, "") for el in root.iter()}
    need = {"svg", "polyline", "line", "text", "title"}
    print("svg elements:", " ".join(sorted(kinds)))
    return root.tag == ns + "svg" and need <= kinds


def check_query(args):
    t = opt(args, "--threshold", 0.8)
    corpus, output = Corpus(args[0]), args[1]
    recs = read_jsonl(output)
    self_hits = sum(1 for r in recs if r["a"] == r["b"])
    low = [r for r in recs if r["similarity"] < t]
    print("query: %d matches, %d of them a document itself" % (len(recs), self_hits))
    return len(recs) > 0 and not low and corpus is not None


def check_decisions(args):
    """One decision per document that was read; a dropped document names a
    kept representative; in strict mode it is within the threshold of it
    (true Jaccard, or an exact copy); in every mode no true pair at 0.9 or
    more has both documents kept."""
    t = opt(args, "--threshold", 0.8)
    corpus, mode, output, group = Corpus(args[0]), args[1], args[2], args[3]
    recs = read_jsonl(output)
    dec = {}
    for r in recs:
        dec[corpus.name(mode, r["id"])] = r
    kept = {n for n, r in dec.items() if r["decision"] == "kept"}
    bad = []
    for n, r in dec.items():
        rep = corpus.name(mode, r["representative"])
        if r["decision"] == "kept":
            if rep != n:
                bad.append("%s kept but represented by %s" % (n, rep))
            continue
        if rep not in kept:
            bad.append("%s dropped for %s, which is not kept" % (n, rep))
        sim = 1.0 if r["exact"] else corpus.similarity(n, rep)
        if abs(sim - r["similarity"]) > 1e-4 and not r["exact"]:
            bad.append("%s: similarity %.4f reported, %.4f true" % (n, r["similarity"], sim))
        if group == "strict" and sim < t:
            bad.append("%s dropped for %s at %.4f < %g" % (n, rep, sim, t))
    both = [p for p, j in corpus.truth.items() if j >= 0.9 and p[0] in kept and p[1] in kept]
    print("decisions: %d documents, %d kept, %d dropped; true pairs >= 0.9 with both kept: %d"
          % (len(dec), len(kept), len(dec) - len(kept), len(both)))
    for b in bad[:5]:
        print("  " + b)
    return len(dec) == len(recs) and len(kept) < len(dec) and not bad and not both


def check_corpus(args):
    """--output kept and dropped on corpus.jsonl: together exactly its
    records (line ends and a byte-order mark aside), each in input order, and
    no true pair at 0.9 or more with both documents kept."""
    corpus = Corpus(args[0])

    def lines(path):
        with open(path, "rb") as fh:
            out = []
            for i, line in enumerate(fh.read().split(b"\n")):
                line = line[3:] if i == 0 and line.startswith(b"\xef\xbb\xbf") else line
                line = line[:-1] if line.endswith(b"\r") else line
                if line.strip():
                    out.append(line)
            return out

    src = lines(os.path.join(args[0], "corpus.jsonl"))
    kept, dropped = lines(args[1]), lines(args[2])
    where = {line: i for i, line in enumerate(src)}
    ok = sorted(kept + dropped) == sorted(src)
    for part in (kept, dropped):
        pos = [where.get(line, -1) for line in part]
        ok = ok and pos == sorted(pos) and -1 not in pos
    kept_names = {corpus.by_id[json.dumps(json.loads(line)["id"])] for line in kept}
    both = [p for p, j in corpus.truth.items()
            if j >= 0.9 and p[0] in kept_names and p[1] in kept_names]
    print("corpus: %d records, %d kept, %d dropped; in order: %s; true pairs >= 0.9 both kept: %d"
          % (len(src), len(kept), len(dropped), ok, len(both)))
    return ok and not both and len(dropped) > 0


def main():
    cmd, args = sys.argv[1], sys.argv[2:]
    ok = {"pairs": check_pairs, "clusters": check_clusters, "params": check_params,
          "svg": check_svg, "query": check_query, "decisions": check_decisions,
          "corpus": check_corpus}[cmd](args)
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
