# Fuzzing (docs/robustness.md). One target per fuzz/fuzz_*.c, each defining
# LLVMFuzzerTestOneInput; seed corpora in fuzz/corpus/<target>/.
#
#   make check                  also replays every committed corpus through
#                               each target (fuzz/replay.c, no libFuzzer needed)
#   make fuzz FUZZ_SECONDS=N    libFuzzer (clang, ASan + UBSan), N seconds per
#                               target; new inputs go to a scratch corpus under
#                               $(BUILD)/libfuzzer/, or into fuzz/corpus/ with
#                               FUZZ_MERGE=1 (minimised merge); crashes are
#                               written to $(BUILD)/libfuzzer/artifacts/
#   make fuzz-build             only build the libFuzzer binaries
#   make fuzz-corpus            regenerate the seed corpora (fuzz/mkcorpus.c)
#   FUZZ_TARGETS="fuzz_shingle" restrict either to some targets
#
# A target that tests part of the command rather than the library lists the
# command's sources it links in FUZZ_SRC_<target>.

FUZZ_TARGETS ?= $(patsubst fuzz/%.c,%,$(sort $(wildcard fuzz/fuzz_*.c)))
FUZZ_SECONDS ?= 60
FUZZ_MERGE ?= 0
FUZZ_CC ?= clang
FUZZ_BUILD := $(BUILD)/libfuzzer
FUZZ_SAN := -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
FUZZ_REPLAY := $(patsubst %,$(BUILD)/fuzz/replay_%,$(FUZZ_TARGETS))

# The JSON Lines reader, with what it calls (buffers, messages).
FUZZ_SRC_fuzz_json := programs/json.c programs/utf8.c programs/util.c programs/progress.c
$(BUILD)/fuzz/replay_fuzz_json $(FUZZ_BUILD)/fuzz_json: $(FUZZ_SRC_fuzz_json) programs/cli.h

.PHONY: fuzz fuzz-build fuzz-corpus

# ---- replay in make check (built like the tests: same CC, flags, sanitizers)

$(BUILD)/fuzz/replay_%: fuzz/replay.c fuzz/%.c fuzz/fuzz.h tests/testalloc.h $(STATIC_LIB)
	@mkdir -p $(dir $@)
	$(CC) $(TEST_CFLAGS) fuzz/replay.c fuzz/$*.c $(FUZZ_SRC_$*) -o $@ $(STATIC_LIB) \
	  $(LDFLAGS) -lm

check: $(FUZZ_REPLAY)

# ---- libFuzzer ---------------------------------------------------------------

# The library instrumented for coverage (fuzzer-no-link) and sanitizers.
$(FUZZ_BUILD)/libminlsh.a: $(LIB_SRC) $(LIB_HDR)
	$(MAKE) --no-print-directory $@ BUILD=$(FUZZ_BUILD) CC=$(FUZZ_CC) OPT="-O1 -g" \
	  CFLAGS="-fsanitize=fuzzer-no-link $(FUZZ_SAN)"

$(FUZZ_BUILD)/fuzz_%: fuzz/fuzz_%.c fuzz/fuzz.h tests/testalloc.h $(FUZZ_BUILD)/libminlsh.a
	$(FUZZ_CC) -std=c11 -O1 -g $(WARN) -Iinclude -Ilib -fsanitize=fuzzer $(FUZZ_SAN) \
	  $< $(FUZZ_SRC_fuzz_$*) -o $@ $(FUZZ_BUILD)/libminlsh.a -lm

fuzz-build: $(patsubst %,$(FUZZ_BUILD)/%,$(FUZZ_TARGETS))

fuzz: fuzz-build
	FUZZ_MERGE=$(FUZZ_MERGE) sh scripts/fuzz.sh $(FUZZ_BUILD) $(FUZZ_SECONDS) $(FUZZ_TARGETS)

# ---- seed corpora --------------------------------------------------------------

$(BUILD)/fuzz/mkcorpus: fuzz/mkcorpus.c $(STATIC_LIB)
	@mkdir -p $(dir $@)
	$(CC) $(TEST_CFLAGS) $< -o $@ $(STATIC_LIB) $(LDFLAGS) -lm

fuzz-corpus: $(BUILD)/fuzz/mkcorpus
	$(BUILD)/fuzz/mkcorpus fuzz/corpus
