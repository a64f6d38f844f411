#!/usr/bin/python3
"""Near-duplicate detection on a Dask cluster: minlsh.dask on a generated corpus.

    examples/dask_dedup.py [--workers N] [--docs N] [--verify exact|signature]
                           [--output pairs|clusters|decisions]
                           [--program PATH/TO/minlsh]
    examples/dask_dedup.py --bench --program PATH/TO/minlsh [--docs N]
                           [--gen PATH/TO/gen_docs] [--repeat N] [--memory BYTES]
                           [--malloc dask|keep]

Generates a JSON Lines corpus with planted near-duplicates (families of edited
copies, exact copies), starts a distributed.LocalCluster of N worker processes
(one thread each) on this machine, runs minlsh.dask.dedup on it and prints a
summary with the time of each stage. With --program it also runs
`minlsh dedup` on the same file and checks that both give the same answer.
--bench (make bench-dask) times, in alternation on the same file, `minlsh
dedup --threads 2` and minlsh.dask.dedup on a LocalCluster of 2 worker
processes of one thread each (started once; its start-up is not timed), and
prints as "key: value" lines the best time of each, the ratio of the Dask
time to the command's (the goal: at most 1.5), the ratio of every round
(wall and CPU seconds), the peak memory of each worker and whether the
decisions are identical. Its workers keep freed memory (KEEP_MALLOC;
--malloc dask: Dask's own allocator settings).
With --gen the corpus is bench/gen_docs's short documents (the corpus of
make bench) instead of the built-in generator's.

Needs python3-dask and python3-distributed, the minlsh Python package and
libminlsh, e.g. from a build tree:
    PYTHONPATH=bindings/python MINLSH_LIBRARY=build/libminlsh.so.0 \
        python3 examples/dask_dedup.py --workers 2 --program build/minlsh
On a real cluster only the client changes: Client("tcp://scheduler:8786")
instead of LocalCluster, and the corpus on storage every worker can read
(docs/scale-out.md).
"""
import argparse
import json
import os
import random
import resource
import subprocess
import sys
import tempfile
import time

import dask
import dask.bag as db
from distributed import Client, LocalCluster

import minlsh
import minlsh.dask


def make_corpus(path, docs, seed=1):
    """docs records {"id": "dNNNNNNN", "text": ...}: 80% unrelated documents,
    the rest in families of 2-6 edited copies of a base text (similarity
    about 0.5-0.97), a few of them exact copies. Returns the file size."""
    rng = random.Random(seed)
    letters = "abcdefghijklmnopqrstuvwxyz"
    vocab = sorted({"".join(rng.choice(letters) for _ in range(rng.randint(3, 9)))
                    for _ in range(8000)})
    texts = []
    while len(texts) < docs:
        words = [rng.choice(vocab) for _ in range(rng.randint(200, 500))]
        if rng.random() < 0.8:
            texts.append(words)
            continue
        family = [words]
        for _ in range(rng.randint(1, 5)):
            w = list(words)
            for _ in range(rng.randint(0, len(w) // 12)):
                w[rng.randrange(len(w))] = rng.choice(vocab)
            family.append(w if rng.random() < 0.9 else list(rng.choice(family)))
        texts.extend(family)
    texts = texts[:docs]
    rng.shuffle(texts)
    with open(path, "w", encoding="ascii") as f:
        for i, words in enumerate(texts):
            f.write(json.dumps({"id": "d%07d" % i, "text": " ".join(words)}) + "\n")
    return os.path.getsize(path)


def cpu_seconds(who=resource.RUSAGE_SELF):
    """User and system CPU seconds of this process (or of its waited-for
    children)."""
    r = resource.getrusage(who)
    return r.ru_utime + r.ru_stime


def peak_rss_mb():
    """This process's peak resident memory (run on each worker)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def _sign_work(path, docs):
    """Sign the first docs documents of the corpus on this thread (the
    calibration workload)."""
    with open(path, encoding="ascii") as f:
        texts = [json.loads(line)["text"] for _, line in zip(range(docs), f)]
    start = time.monotonic()
    for _ in range(3):
        minlsh.signatures(texts, threads=1)
    return time.monotonic() - start


def machine_parallelism(path, docs=3000):
    """How much faster two processes get through twice the work than one
    process through it once (2.0 on two idle cores; less on a machine whose
    CPUs are shared)."""
    import multiprocessing
    ctx = multiprocessing.get_context("spawn")
    with ctx.Pool(2) as pool:
        pool.starmap(_sign_work, [(path, 10)] * 2)  # start-up and imports
        one = pool.apply(_sign_work, (path, docs))
        start = time.monotonic()
        pool.starmap(_sign_work, [(path, docs)] * 2)
        two = time.monotonic() - start
    return 2.0 * one / two


def _records_of(result):
    return [dict(zip(result.columns, (list(v) if isinstance(v, list) else v for v in row)))
            for row in result.itertuples(index=False)]


def _blocksize(path, partitions):
    """The block size that makes dask's read_bytes cut the file into exactly
    partitions blocks (it rounds the count down: size // blocksize), so
    that the partitions divide evenly among the workers."""
    return max(1, os.path.getsize(path) // partitions)


#: The worker processes' allocator settings of --malloc keep (docs/scale-out.md,
#: "Worker processes"): Dask's nanny starts workers with
#: MALLOC_TRIM_THRESHOLD_=65536, which also fixes glibc's mmap threshold at
#: 128 KiB, so every large array a task makes and frees is new pages again;
#: these keep freed memory in the process for the next task instead.
KEEP_MALLOC = {"MALLOC_TRIM_THRESHOLD_": 1 << 31, "MALLOC_MMAP_THRESHOLD_": 1 << 26}


def _worker_environ(malloc):
    """dask.config settings for the workers of a LocalCluster: Dask's own
    (malloc "dask") or with KEEP_MALLOC."""
    env = dict(dask.config.get("distributed.nanny.pre-spawn-environ", {}))
    if malloc == "keep":
        env.update(KEEP_MALLOC)
    return {"distributed.nanny.pre-spawn-environ": env}


def run(path, workers, partitions, verify, output, workdir, repeat=1, memory=None,
        malloc="dask"):
    """dedup on a fresh LocalCluster, repeat times: (records, stats of the
    fastest run, its seconds, peak memory of each worker)."""
    with dask.config.set(_worker_environ(malloc)), LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                      dashboard_address=None, silence_logs=40,
                      local_directory=workdir) as cluster, Client(cluster) as client:
        client.run(lambda: __import__("minlsh.dask"))  # imports are not the job
        bag = minlsh.dask.read_jsonl(path, blocksize=_blocksize(path, partitions))
        seconds = None
        for _ in range(repeat):
            st = {}
            start = time.monotonic()
            frame = minlsh.dask.dedup(bag, verify=verify, output=output, stats=st,
                                      memory=memory, tmpdir=workdir)
            result = frame.compute()
            took = time.monotonic() - start
            if seconds is None or took < seconds:
                seconds, stats = took, st
        peaks = client.run(peak_rss_mb)
    return _records_of(result), stats, seconds, sorted(peaks.values())


def bench(args, path, workdir):
    """The command on 2 threads and minlsh.dask on 2 worker processes, in
    alternation (the machine's load drifts): best times, their ratio, and
    whether the decisions agree. Returns the exit status."""
    rounds, want, result, st = [], None, None, None
    with dask.config.set(_worker_environ(args.malloc)), \
            LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                         dashboard_address=None, silence_logs=40,
                         local_directory=workdir) as cluster, Client(cluster) as client:
        client.run(lambda: __import__("minlsh.dask"))  # imports are not the job
        bag = minlsh.dask.read_jsonl(path, blocksize=_blocksize(path, args.partitions))
        for _ in range(args.repeat):
            before = cpu_seconds(resource.RUSAGE_CHILDREN)
            want, csecs = command(args.program, path, args.verify, args.output, 2, args.memory)
            ccpu = cpu_seconds(resource.RUSAGE_CHILDREN) - before
            stats = {}
            before = sum(client.run(cpu_seconds).values()) + cpu_seconds()
            start = time.monotonic()
            result = minlsh.dask.dedup(bag, verify=args.verify, output=args.output,
                                       stats=stats, memory=args.memory,
                                       tmpdir=workdir).compute()
            dsecs = time.monotonic() - start
            # the workers' CPU and this process's (client and scheduler)
            dcpu = sum(client.run(cpu_seconds).values()) + cpu_seconds() - before
            if not rounds or dsecs < min(r[1] for r in rounds):
                st = stats
            rounds.append((csecs, dsecs, ccpu, dcpu))
            print("round_%d_seconds: command %.2f, dask %.2f, ratio %.2f; cpu seconds: "
                  "command %.2f, dask %.2f, ratio %.2f"
                  % (len(rounds), csecs, dsecs, dsecs / csecs, ccpu, dcpu, dcpu / ccpu))
            sys.stdout.flush()
        peaks = sorted(client.run(peak_rss_mb).values())
    csecs, dsecs = min(r[0] for r in rounds), min(r[1] for r in rounds)
    ratios = sorted(r[1] / r[0] for r in rounds)
    cpu_ratios = sorted(r[3] / r[2] for r in rounds)
    same = normalise(_records_of(result)) == normalise(want)
    print("command_threads_2_seconds: %.2f (best of %d)" % (csecs, len(rounds)))
    print("dask_workers_2_seconds: %.2f (best of %d)" % (dsecs, len(rounds)))
    print("dask_stage_seconds: %s" % " ".join(
        "%s=%.2f" % kv for kv in st["seconds"].items() if kv[0] != "total"))
    print("dask_temp_mb: %.1f" % (st.get("temp_bytes", 0) / 1e6))
    print("dask_peak_rss_mb: %s" % " ".join("%.0f" % p for p in peaks))
    print("candidates: %d" % st["candidates"])
    print("verified: %d" % st["verified"])
    print("ratio_dask_to_command: %.2f (best to best; goal: <= 1.5)" % (dsecs / csecs))
    print("ratio_dask_to_command_median_round: %.2f" % ratios[len(ratios) // 2])
    print("cpu_ratio_dask_to_command_median_round: %.2f (all processes' CPU seconds; "
          "less sensitive to other load)" % cpu_ratios[len(cpu_ratios) // 2])
    print("same_%s_as_command: %s" % (args.output, "yes" if same else "NO"))
    return 0 if same else 1


def gen_corpus(gen, path, docs):
    """bench/gen_docs N > path (ids are numbers). Returns the file size."""
    with open(path, "wb") as f:
        subprocess.run([gen, str(docs)], stdout=f, check=True)
    return os.path.getsize(path)


def command(program, path, verify, output, threads, memory=None):
    start = time.monotonic()
    extra = [] if memory is None else ["--memory", str(memory)]
    proc = subprocess.run([program, "dedup", "-q", "--jsonl", "--format", "jsonl", "--verify",
                           verify, "--output", output, "--threads", str(threads)] + extra + [path],
                          capture_output=True, text=True, check=False)
    seconds = time.monotonic() - start
    if proc.returncode != 0:
        sys.exit("%s failed: %s" % (program, proc.stderr))
    return [json.loads(line) for line in proc.stdout.splitlines()], seconds


def normalise(records):
    out = []
    for r in records:
        r = dict(r)
        for c in ("cluster", "size"):
            if c in r:
                r[c] = int(r[c])
        if "exact" in r:
            r["exact"] = bool(r["exact"])
        if "similarity" in r:
            r["similarity"] = float(r["similarity"])
        out.append(r)
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--docs", type=int, default=20000)
    ap.add_argument("--partitions", type=int, default=8)
    ap.add_argument("--verify", choices=("exact", "signature"), default="exact")
    ap.add_argument("--output", choices=("pairs", "clusters", "decisions"), default=None,
                    help="default: clusters, decisions with --bench")
    ap.add_argument("--program", help="the minlsh command, to compare with")
    ap.add_argument("--bench", action="store_true",
                    help="2 workers against the command on 2 threads, in alternation")
    ap.add_argument("--malloc", choices=("dask", "keep"), default=None,
                    help="the worker processes' allocator: Dask's settings, or KEEP_MALLOC "
                         "(default: keep with --bench, else dask)")
    ap.add_argument("--memory", help="memory= of dedup and --memory of the command (bytes, or "
                    "a size such as 64M)")
    ap.add_argument("--repeat", type=int, default=None,
                    help="run each job this many times, keep the fastest (default: 1, 3 with "
                         "--bench)")
    ap.add_argument("--workdir", help="where to write the corpus (default: a temporary dir)")
    ap.add_argument("--gen", help="bench/gen_docs: its short documents as the corpus")
    args = ap.parse_args()
    if args.output is None:
        args.output = "decisions" if args.bench else "clusters"
    if args.repeat is None:
        args.repeat = 3 if args.bench else 1
    if args.malloc is None:
        args.malloc = "keep" if args.bench else "dask"
    if args.bench and not args.program:
        ap.error("--bench needs --program")

    with tempfile.TemporaryDirectory(dir=args.workdir) as tmp:
        path = os.path.join(tmp, "corpus.jsonl")
        t = time.monotonic()
        size = gen_corpus(args.gen, path, args.docs) if args.gen else make_corpus(path, args.docs)
        gen = time.monotonic() - t
        if not args.bench:
            records, st, secs, peaks = run(path, args.workers, args.partitions, args.verify,
                                           args.output, tmp, args.repeat, args.memory,
                                           args.malloc)
            print("corpus: %d documents, %.1f MB (generated in %.1f s)"
                  % (args.docs, size / 1e6, gen))
            print("cluster: LocalCluster, %d worker processes, 1 thread each" % args.workers)
            print("banding: k=%d, b=%d, r=%d (%s), threshold %g, verify %s"
                  % (st["num_perm"], st["bands"], st["rows"], st["plan"], st["threshold"],
                     st["verify"]))
            print("found: %d exact-duplicate groups; %d candidate pairs, %d verified; %d %s"
                  % (st["exact_duplicate_groups"], st["candidates"], st["verified"],
                     len(records), args.output))
            for r in records[:3]:
                print("  ", json.dumps(r)[:150])
            print("time: %.2f s (%s); peak memory per worker: %s MB"
                  % (secs, ", ".join("%s %.2f" % kv for kv in st["seconds"].items()),
                     ", ".join("%.0f" % p for p in peaks)))
            if args.program:
                want, csecs = command(args.program, path, args.verify, args.output, 0,
                                      args.memory)
                same = normalise(records) == normalise(want)
                print("minlsh dedup on one machine: %.2f s; same answer: %s"
                      % (csecs, "yes" if same else "NO"))
                return 0 if same else 1
            return 0

        print("docs: %d" % args.docs)
        print("corpus: %s" % ("bench/gen_docs (short documents)" if args.gen else "built-in"))
        print("corpus_mb: %.1f" % (size / 1e6))
        print("verify: %s" % args.verify)
        print("output: %s" % args.output)
        print("memory: %s" % ("default" if args.memory is None else args.memory))
        print("worker_malloc: %s" % (args.malloc if args.malloc == "dask" else " ".join(
            "%s=%d" % kv for kv in KEEP_MALLOC.items())))
        print("partitions: %d" % args.partitions)
        print("cpus: %d" % (os.cpu_count() or 1))
        print("kernel: %s" % minlsh.simd_kernel())
        print("machine_parallelism_2_processes: %.2f" % machine_parallelism(path))
        sys.stdout.flush()
        return bench(args, path, tmp)


if __name__ == "__main__":
    sys.exit(main())
