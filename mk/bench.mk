# Benchmarks (not part of make check):
#   make bench        one program, one run: shingling, MinHash per kernel,
#                     end to end at 1 and all threads, memory bandwidth, the
#                     band index, all-pairs scaling, and `minlsh dedup --jsonl
#                     -q --output decisions` as fresh processes at --threads 1
#                     and 2 on 1M short generated documents (wall time, peak
#                     RSS, recall of the planted pairs; key
#                     dedup_threads2_over_1); ends with a summary of
#                     "key: value" lines (`build/bench/bench kernels`: the
#                     MinHash kernels and shingle + sign per SIMD level alone;
#                     `bench dedup`: the dedup section alone).
#                     BENCH_FLAGS=--quick: smaller sizes (100,000 documents
#                     for dedup), to try it out
#   make bench-store  NOT in CI nor in make bench: 4 writer processes on one
#                     store of BENCH_STORE_DOCS documents (default 200000;
#                     1000000 for the 1M figure): pages/s committing every
#                     page and every 16, and the cost per page with fsync
#                     free (tmpfs) against the map-and-replay-per-lock
#                     protocol, side by side in one run (bench/store.c)
#   make bench-mapped  queries (plain and limited) of a mapped index with a
#                     delta against the loaded index, per call (bench/mapped.c)
#   make bench-unicode  the cost per byte of the Unicode flags (bench/unicode.c):
#                     English, French, Russian and Chinese text under every
#                     Unicode flag, and under the ASCII flags, against
#                     today's ASCII path (English, ASCII flags), interleaved
#                     in one run; then the default options (CJK words) over
#                     flags 0 on English and Chinese, and flags 0 over
#                     itself (the noise); make bench runs it too, after the rest
#   make bench-huge   NOT in CI nor in make bench: gen_docs N | minlsh dedup
#                     --jsonl -q --output decisions - for each N of
#                     BENCH_HUGE_SIZES (default "1000000 10000000 100000000"):
#                     wall time, minlsh's peak RSS, docs/s, temp disk (when
#                     dedup has --memory; else n/a), recall of the planted
#                     pairs, time growth exponent between successive sizes.
#                     Try it with BENCH_HUGE_SIZES="20000 40000"
#   make bench-threads  NOT in CI: BENCH_THREADS_DOCS (default 5M) generated
#                     documents through minlsh dedup at each thread count of
#                     BENCH_THREADS_LIST (default "1 2 4 8 16"): wall, user
#                     and system seconds, peak RSS, speed-up over the first
#                     count; the decisions must be identical at every count
#   make bench-index  NOT in CI: `bench crawler`: for each N of
#                     BENCH_INDEX_SIZES (default 1000000), minlsh index
#                     create + add of N generated documents (the build), add
#                     of 1,000 more, query of one, as fresh processes: wall
#                     times side by side, the two ratios to the build (goal
#                     1/20 each), open and compaction times, file size, peak
#                     RSS, growth exponents between successive sizes
#   make bench-components  NOT in CI: `bench components`: minlsh dedup on
#                     5,000 near-identical 300-word files (one cluster, every
#                     pair a candidate) against 5,000 unrelated ones
#                     (bench/gen_near.py), fresh processes interleaved: the
#                     time ratio and each one's peak RSS, also under
#                     --memory 8M and 1M
#   make bench-oph    the accuracy of classic and OPH signatures side by
#                     side: estimator bias and RMSE against exact Jaccard
#                     at k = 64, 128, 256 for sets smaller than k and large
#                     ones, and the band index's S-curve (bench/oph_accuracy)
#   make bench-scale  1 million generated documents of ~3 KB, deduplicated end
#                     to end: wall time and peak memory against 2 min / 8 GiB
#   make bench-hot    100,000 identical, empty and repeated-paragraph
#                     documents against 100,000 distinct ones
#   make bench-python  rensa's benchmark shape (pre-tokenized word 3-gram
#                     lists -> signatures, num_perm 128 -> LSH params=(8, 16)
#                     -> a query per document; one thread) in one run:
#                     minlsh through datasketch's idioms (MinHash.bulk,
#                     insertion_session, query), minlsh's numpy matrix path
#                     (signatures_from_tokens, insert_many, query_csr), and
#                     datasketch itself when DATASKETCH_PATH names a
#                     directory holding its `datasketch` package (it is no
#                     dependency: e.g. a checkout of ekzhu/datasketch; it
#                     needs numpy and scipy); "ratio_*" lines are
#                     datasketch's time over minlsh's. BENCH_PY_DOCS
#                     documents (default 20000) of BENCH_PY_WORDS words
#                     (default 50:400), best of BENCH_PY_REPEAT (5)
#                     interleaved runs. minlsh runs with its C accelerator
#                     (make python-speedups, for BIND_PYTHON);
#                     BENCH_PY_SPEEDUPS=0 runs the ctypes paths alone;
#                     BENCH_PY_SCHEME=oph signs minlsh's side with
#                     one-permutation hashing; BENCH_PY_CLOCK=cpu times
#                     stages by the thread's CPU time (a shared machine)
# bench/gen_docs (short JSON Lines documents with planted near-duplicates,
# --truth FILE lists them) and bench/recall (recall of those pairs from
# dedup's decisions) need libc only.
# The programs may include internal headers and call the test-only hooks
# (memory accounting, every kernel): they link the testing archive, built
# with the same flags as the release one. They are never installed.

BENCH_BIN := $(BUILD)/bench/bench
BENCH_CFLAGS := -std=c11 $(WARN) -Iinclude -Ilib -Ibench $(USER_CFLAGS)

# test_batch uses the library's threads.
TEST_LIBS_test_batch := -lpthread

$(BUILD)/bench/%: bench/%.c $(wildcard bench/*.h) $(TESTING_LIB)
	@mkdir -p $(dir $@)
	$(CC) $(BENCH_CFLAGS) -DMINLSH_TESTING $< -o $@ $(TESTING_LIB) $(LDFLAGS) -lpthread -lm

# The document generator and the recall checker need libc only (an explicit
# rule: it wins over the pattern above, so no library is built for them).
GEN_DOCS := $(BUILD)/bench/gen_docs
RECALL := $(BUILD)/bench/recall
$(GEN_DOCS) $(RECALL): $(BUILD)/bench/%: bench/%.c $(wildcard bench/*.h)
	@mkdir -p $(dir $@)
	$(CC) $(BENCH_CFLAGS) $< -o $@ $(LINK_FLAGS)

.PHONY: bench bench-scale bench-hot bench-huge bench-threads bench-python bench-oph bench-unicode \
  bench-index bench-mapped bench-components bench-store
# BENCH_FLAGS: extra options for the bench program, e.g. --quick.
BENCH_FLAGS ?=
BENCH_RUNS := --minlsh $(PROGRAM) --gen-docs $(GEN_DOCS)
bench: $(BENCH_BIN) $(PROGRAM) $(GEN_DOCS) $(BUILD)/bench/unicode
	$(BENCH_BIN) all $(BENCH_RUNS) $(BENCH_FLAGS)
	$(BUILD)/bench/unicode $(filter --quick,$(BENCH_FLAGS))

bench-unicode: $(BUILD)/bench/unicode
	$(BUILD)/bench/unicode $(filter --quick,$(BENCH_FLAGS))

# Not in CI, not in make bench: hours at 100M documents, and memory to match.
BENCH_HUGE_SIZES ?= 1000000 10000000 100000000
bench-huge: $(BENCH_BIN) $(PROGRAM) $(GEN_DOCS)
	$(BENCH_BIN) huge $(BENCH_RUNS) --sizes "$(BENCH_HUGE_SIZES)" $(BENCH_FLAGS)

# Not in CI: one corpus (BENCH_THREADS_DOCS generated documents) through
# minlsh dedup at each of BENCH_THREADS_LIST, fresh processes: wall, user
# and system time, peak RSS, speed-up over the first count, and a check that
# every count writes the same decisions. For a many-core machine.
BENCH_THREADS_DOCS ?= 5000000
BENCH_THREADS_LIST ?= 1 2 4 8 16
BENCH_THREADS_REPS ?= 1
bench-threads: $(BENCH_BIN) $(PROGRAM) $(GEN_DOCS)
	$(BENCH_BIN) threads $(BENCH_RUNS) --dedup-docs $(BENCH_THREADS_DOCS) \
	  --threads-list "$(BENCH_THREADS_LIST)" --reps $(BENCH_THREADS_REPS) $(BENCH_FLAGS)

# Not in CI: a 1M-document index built, added to and queried through the
# command (about a minute and 1.5 GB of disk).
BENCH_INDEX_SIZES ?= 1000000
bench-index: $(BENCH_BIN) $(PROGRAM) $(GEN_DOCS)
	$(BENCH_BIN) crawler $(BENCH_RUNS) --sizes "$(BENCH_INDEX_SIZES)" $(BENCH_FLAGS)

# Not in CI: one big cluster against none (about a minute).
bench-components: $(BENCH_BIN) $(PROGRAM)
	$(BENCH_BIN) components --minlsh $(PROGRAM) --gen-near bench/gen_near.py $(BENCH_FLAGS)

# Not in CI: the store under 4 writer processes (bench/store.c); the store
# is built in $(BUILD)/bench (a disk, for the fsync figures) and copied to
# BENCH_STORE_SHM (tmpfs) for the figures without fsync.
BENCH_STORE_DOCS ?= 200000
BENCH_STORE_PAGES ?= 500
BENCH_STORE_SHM ?= /dev/shm
bench-store: $(BUILD)/bench/store
	$(BUILD)/bench/store --docs $(BENCH_STORE_DOCS) --pages $(BENCH_STORE_PAGES) \
	  --dir $(BUILD)/bench --shm $(BENCH_STORE_SHM)

# Queries of a mapped index with a delta against the loaded index (bench/mapped.c).
bench-mapped: $(BUILD)/bench/mapped
	$(BUILD)/bench/mapped

bench-scale: $(BENCH_BIN)
	$(BENCH_BIN) scale

# The accuracy of the two signing schemes (tests/oph_accuracy.h): bias and
# RMSE at k = 64, 128, 256 for small and large sets, and the S-curve.
# BENCH_OPH_PAIRS pairs per row (default 3000).
BENCH_OPH_PAIRS ?= 3000
bench-oph: $(BUILD)/bench/oph_accuracy
	$(BUILD)/bench/oph_accuracy --pairs $(BENCH_OPH_PAIRS)

bench-hot: $(BENCH_BIN)
	$(BENCH_BIN) hot

BENCH_PY_DOCS ?= 20000
BENCH_PY_REPEAT ?= 5
BENCH_PY_WORDS ?= 50:400
BENCH_PY_SCHEME ?= classic
BENCH_PY_CLOCK ?= wall
BENCH_PYTHON ?= /usr/bin/python3
BENCH_PY_SPEEDUPS ?= $(PY_SPEEDUPS)
bench-python: lib python-speedups
	PYTHONPATH=bindings/python MINLSH_LIBRARY=$(abspath $(SHARED_LIB)) \
	  MINLSH_SPEEDUPS=$(BENCH_PY_SPEEDUPS) \
	  $(BENCH_PYTHON) bench/python/datasketch_shape.py --docs $(BENCH_PY_DOCS) \
	  --repeat $(BENCH_PY_REPEAT) --words $(BENCH_PY_WORDS) \
	  --scheme $(BENCH_PY_SCHEME) --clock $(BENCH_PY_CLOCK) \
	  $(if $(DATASKETCH_PATH),--datasketch $(DATASKETCH_PATH))
