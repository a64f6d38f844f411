# Benchmarks (not part of make check):
#   make bench        one program, one run: shingling, MinHash per kernel,
#                     end to end at 1 and all threads, memory bandwidth, the
#                     band index, all-pairs scaling; ends with a summary of
#                     "key: value" lines (`build/bench/bench kernels`: the
#                     MinHash kernels and shingle + sign per SIMD level alone)
#   make bench-scale  1 million generated documents of ~3 KB, deduplicated end
#                     to end: wall time and peak memory against 2 min / 8 GiB
#   make bench-hot    100,000 identical, empty and repeated-paragraph
#                     documents against 100,000 distinct ones
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

.PHONY: bench bench-scale bench-hot bench-huge
# BENCH_FLAGS: extra options for the bench program, e.g. --quick.
BENCH_FLAGS ?=
BENCH_RUNS := --minlsh $(PROGRAM) --gen-docs $(GEN_DOCS)
bench: $(BENCH_BIN) $(PROGRAM) $(GEN_DOCS)
	$(BENCH_BIN) all $(BENCH_RUNS) $(BENCH_FLAGS)

# Not in CI, not in make bench: hours at 100M documents, and memory to match.
BENCH_HUGE_SIZES ?= 1000000 10000000 100000000
bench-huge: $(BENCH_BIN) $(PROGRAM) $(GEN_DOCS)
	$(BENCH_BIN) huge $(BENCH_RUNS) --sizes "$(BENCH_HUGE_SIZES)" $(BENCH_FLAGS)

bench-scale: $(BENCH_BIN)
	$(BENCH_BIN) scale

bench-hot: $(BENCH_BIN)
	$(BENCH_BIN) hot
