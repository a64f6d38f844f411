"""One corpus through every dedup front end: the command, Python
minlsh.dedup, Go Dedup (bindings/go/examples/dedupjsonl) and minlsh.dask on
two local worker processes must give byte-identical decisions, once each is
written in one canonical form (the command's --output decisions --format
jsonl, ids in their canonical form, similarities as Python's repr).

Usage: conformance.py COMMAND WORKDIR [GO_PROGRAM]. Prints "ok NAME" or
"FAIL NAME" per check, "skip ..." for a front end whose toolchain is
missing, and "conformance: N passed, M failed" last.
"""

import json
import random
import subprocess
import sys
import warnings

import minlsh
from minlsh import _ffi

# Dask's worker processes import this file again: everything runs under the
# main guard only.
if __name__ == "__main__":
    program, work = sys.argv[1], sys.argv[2]
    go_program = sys.argv[3] if len(sys.argv) > 3 and sys.argv[3] else None
    passed = failed = 0


    def ok(name):
        global passed
        passed += 1
        print("ok   " + name)


    def ko(name, *text):
        global failed
        failed += 1
        print("FAIL " + name)
        for t in text:
            for line in str(t).splitlines()[:8]:
                print("  " + line)


    # ---- the corpus: exact copies, near-duplicates, an empty document, a
    # repeated id, ids 1 and 1.0 (one id), a true id (refused)
    rng = random.Random(25)
    words = ["w%d" % i for i in range(400)]
    records = []
    for base in range(12):
        text = [rng.choice(words) for _ in range(rng.randint(30, 60))]
        records.append({"id": "doc%d" % base, "text": " ".join(text)})
        for v in range(base % 4):
            near = list(text)
            for _ in range(1 + v):
                near[rng.randrange(len(near))] = rng.choice(words)
            if v == 2:
                near += ["tail"] * 5  # longer, for --keep longest
            records.append({"id": "doc%d-near%d" % (base, v), "text": " ".join(near)})
        if base % 5 == 0:
            records.append({"id": "doc%d-copy" % base, "text": " ".join(text)})
    records.insert(3, {"id": 1, "text": records[0]["text"]})
    records.insert(7, {"id": "empty", "text": ""})
    records.append({"id": 1.0, "text": "a number id repeated by value"})
    records.append({"id": True, "text": "a boolean id"})
    records.append({"id": "doc1", "text": "a repeated id"})
    records.append({"id": 2.5, "text": records[5]["text"]})
    corpus = work + "/corpus.jsonl"
    with open(corpus, "w") as f:
        for r in records:
            f.write(json.dumps(r) + "\n")
    # 1.0 must reach the others as written, not as Python's float repr
    with open(corpus) as f:
        lines = f.read()
    assert '"id": 1.0,' in lines

    REFUSED = "refused: no banding reaches recall 0.999\n"


    def canon_id(v):
        key = _ffi.canonical_id(v)
        assert key is not None, v
        return key.decode("utf-8")


    def line(ident, cluster, kept, rep, sim, exact):
        return ('{"id": %s, "cluster": %d, "decision": "%s", "representative": %s, '
                '"similarity": %r, "exact": %s}\n'
                % (ident, cluster, "kept" if kept else "dropped", rep, float(sim),
                   "true" if exact else "false"))


    def from_jsonl(text, raw_ids):
        """Decision records in the canonical form; raw_ids: the ids are JSON
        text already in canonical form (command, Go)."""
        out = []
        for s in text.splitlines():
            d = json.loads(s)
            ident = json.dumps(d["id"])
            rep = json.dumps(d["representative"])
            if raw_ids:  # keep the id text as printed: json.loads would turn 1 into 1
                ident = s.split('"id": ', 1)[1].split(', "cluster"', 1)[0]
                rep = s.split('"representative": ', 1)[1].split(', "similarity"', 1)[0]
            out.append(line(ident, d["cluster"], d["decision"] == "kept", rep, d["similarity"],
                            d["exact"]))
        return "".join(out)


    # (name, command options, Python/Dask keyword arguments, Go flags)
    CASES = [
        ("defaults_with_repeated_ids", [], {}, []),
        ("threshold_0.5", ["--threshold", "0.5"], {"threshold": 0.5}, ["-threshold", "0.5"]),
        ("num_perm_8_at_0.5", ["--threshold", "0.5", "--num-perm", "8"],
         {"threshold": 0.5, "num_perm": 8}, ["-threshold", "0.5", "-num-perm", "8"]),
        ("threshold_1.0", ["--threshold", "1"], {"threshold": 1.0}, ["-threshold", "1"]),
        ("threshold_0.999", ["--threshold", "0.999"], {"threshold": 0.999},
         ["-threshold", "0.999"]),
        ("spilling_budget", ["--memory", "1"], {"memory": 1}, ["-memory", "1"]),
        ("group_strict", ["--group", "strict", "--threshold", "0.5"],
         {"group": "strict", "threshold": 0.5}, ["-group", "strict", "-threshold", "0.5"]),
        ("scheme_oph", ["--scheme", "oph"], {"scheme": "oph"}, ["-scheme", "oph"]),
        ("max_bucket_2", ["--max-bucket", "2", "--threshold", "0.5"],
         {"max_bucket": 2, "threshold": 0.5}, ["-max-bucket", "2", "-threshold", "0.5"]),
        ("keep_longest", ["--keep", "longest", "--threshold", "0.5"],
         {"keep": "longest", "threshold": 0.5}, ["-keep", "longest", "-threshold", "0.5"]),
    ]


    def run_command(opts):
        p = subprocess.run([program, "dedup", "-q", "--jsonl", "--output", "decisions",
                            "--format", "jsonl", "--threads", "2"] + opts + [corpus],
                           capture_output=True, text=True)
        if p.returncode == 2 and "no banding" in p.stderr:
            return REFUSED
        if p.returncode not in (0, 1):  # 1: the skipped records were reported
            raise RuntimeError("minlsh dedup exited %d: %s" % (p.returncode, p.stderr))
        return from_jsonl(p.stdout, True)


    def run_python(kwargs):
        refused = []  # the true id: refused by the reader, as by the command's
        docs = list(minlsh.read_jsonl(corpus, errors=refused))
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                res = minlsh.dedup(docs, threads=2, **kwargs)
        except minlsh.ParameterError as exc:
            if "no banding" in str(exc):
                return REFUSED
            raise
        return "".join(line(canon_id(d.id), d.cluster, d.kept, canon_id(d.representative),
                            d.similarity, d.exact) for d in res.decisions)


    def run_go(flags):
        p = subprocess.run([go_program] + flags + [corpus], capture_output=True, text=True)
        if p.returncode != 0 and "no banding" in p.stderr:
            return REFUSED
        if p.returncode != 0:
            raise RuntimeError("dedupjsonl exited %d: %s" % (p.returncode, p.stderr))
        return from_jsonl(p.stdout, True)


    def run_dask(kwargs, bag):
        from minlsh import dask as mdask
        kwargs = {k: v for k, v in kwargs.items() if k != "memory"}  # the answer never depends on it
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                frame = mdask.dedup(bag, output="decisions", **kwargs)
                pdf = frame.compute() if hasattr(frame, "compute") else frame
        except ValueError as exc:
            if "no banding" in str(exc):
                return REFUSED
            raise
        return "".join(line(canon_id(r.id), int(r.cluster), r.decision == "kept",
                            canon_id(r.representative), r.similarity, bool(r.exact))
                       for r in pdf.itertuples())


    client = cluster = bag = None
    try:
        from distributed import Client, LocalCluster
    except ImportError as exc:
        print("skip dask: %s (sh scripts/deps.sh dask installs it)" % exc)
    else:
        cluster = LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                               dashboard_address=None, silence_logs=40, local_directory=work)
        client = Client(cluster)
        from minlsh import dask as mdask
        # read_jsonl, as users read JSON Lines: dedup reads its blocks with
        # the library's reader, the command's
        bag = mdask.read_jsonl(corpus, blocksize=len(lines) // 3 + 1)
    if go_program is None:
        print("skip go: no Go toolchain (sh scripts/deps.sh go installs it)")

    try:
        for name, cli, kw, go in CASES:
            want = run_command(cli)
            if name == "num_perm_8_at_0.5":
                if want == REFUSED:
                    ok(name + ": command refuses")
                else:
                    ko(name + ": command refuses", want)
            elif want.count("\n") == len(records) - 3 and '"id": 1,' in want:
                ok(name + ": command decides every document but the 3 skipped")
            else:
                ko(name + ": command decides every document but the 3 skipped", want)
            fronts = [("python", lambda: run_python(kw))]
            if go_program is not None:
                fronts.append(("go", lambda: run_go(go)))
            if bag is not None:
                fronts.append(("dask", lambda: run_dask(kw, bag)))
            for front, fn in fronts:
                try:
                    got = fn()
                except Exception as exc:  # one front end's failure is one check
                    ko("%s: %s" % (name, front), repr(exc))
                    continue
                if got == want:
                    ok("%s: %s byte-identical to the command" % (name, front))
                else:
                    diff = [("command " + a, front + " " + b)
                            for a, b in zip(want.splitlines(), got.splitlines()) if a != b]
                    ko("%s: %s byte-identical to the command" % (name, front),
                       "%d and %d lines" % (want.count("\n"), got.count("\n")),
                       *["\n".join(d) for d in diff[:3]])
    finally:
        if client is not None:
            client.close()
            cluster.close()

    print("conformance: %d passed, %d failed" % (passed, failed))
    sys.exit(1 if failed else 0)
