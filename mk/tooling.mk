# Analysis tooling (docs/robustness.md). Each target builds in its own tree
# under $(BUILD)/ and never touches the others.
#
#   make check-tsan        ThreadSanitizer (clang): tests/test_tsan.c, and
#                          `minlsh dedup --threads 4` on a generated corpus
#   make check-valgrind    the C tests and the corpus replays under valgrind
#                          (memcheck, leaks included); VALGRIND_SKIP may name
#                          tests to leave out (all run by default, ~2.5 min)
#   make cppcheck          static analysis of lib/ and programs/, no findings
#   make coverage          gcc --coverage build, `make check`, line coverage
#                          of lib/ (lcov; HTML in $(BUILD)/coverage/html);
#                          fails under COVERAGE_MIN percent
#   make abi-check         the shared library against the committed baseline
#                          abi/libminlsh.abi.xml (abidiff: incompatible
#                          changes fail, additions pass) and the export checks
#                          of tests/symbols.sh (every header function in the
#                          version script, nothing else exported)
#   make abi-baseline      regenerate abi/libminlsh.abi.xml (at a release)

.PHONY: check-tsan check-valgrind cppcheck coverage abi-check abi-baseline

# Tests that start threads or fork need the thread library.
TEST_LIBS_test_alloc_fail := -pthread
TEST_LIBS_test_tsan := -pthread

# ---- ThreadSanitizer ------------------------------------------------------------

TSAN_BUILD := $(BUILD)/tsan

check-tsan:
	$(MAKE) --no-print-directory BUILD=$(TSAN_BUILD) CC=clang OPT="-O1 -g" \
	  CFLAGS="-fsanitize=thread" \
	  $(TSAN_BUILD)/tests/test_tsan $(TSAN_BUILD)/minlsh
	sh scripts/check-tsan.sh $(TSAN_BUILD)

# ---- valgrind ---------------------------------------------------------------------

VALGRIND_BUILD := $(BUILD)/valgrind
VALGRIND_SKIP ?=

check-valgrind:
	$(MAKE) --no-print-directory BUILD=$(VALGRIND_BUILD) OPT="-O1 -g" \
	  $(patsubst $(BUILD)/%,$(VALGRIND_BUILD)/%,$(TEST_BIN) $(FUZZ_REPLAY))
	VALGRIND_SKIP="$(VALGRIND_SKIP)" sh scripts/check-valgrind.sh $(VALGRIND_BUILD)

# ---- cppcheck ---------------------------------------------------------------------

CPPCHECK ?= cppcheck
CPPCHECK_FLAGS := --quiet --enable=warning,performance,portability --error-exitcode=1 \
  --inline-suppr --std=c11 --language=c -Iinclude -Ilib

cppcheck:
	$(CPPCHECK) $(CPPCHECK_FLAGS) lib programs
	@echo "cppcheck: no findings in lib/ and programs/"

# ---- coverage ---------------------------------------------------------------------

COVERAGE_BUILD := $(BUILD)/coverage
COVERAGE_MIN ?= 90

coverage:
	@# A fresh tree: counters of objects compiled at different times never mix.
	rm -rf $(COVERAGE_BUILD)
	@# The report is made even if a test fails; the target fails then too.
	@# (--coverage reaches the links too, and marks the build instrumented:
	@# tests/install.sh skips its fully static links.)
	@# libgcov's own complaints (counters of a process killed while it wrote
	@# them) go to a file, not into the stderr the tests compare; printed after.
	mkdir -p $(COVERAGE_BUILD)
	GCOV_ERROR_FILE=$(abspath $(COVERAGE_BUILD))/gcov-errors.txt \
	$(MAKE) --no-print-directory check BUILD=$(COVERAGE_BUILD) CC=gcc OPT="-O0 -g" \
	  CFLAGS="--coverage"; rc=$$?; \
	if [ -s $(COVERAGE_BUILD)/gcov-errors.txt ]; then \
	  echo "coverage: libgcov reported (counters not merged):"; sort $(COVERAGE_BUILD)/gcov-errors.txt | uniq -c; fi; \
	COVERAGE_MIN=$(COVERAGE_MIN) sh scripts/coverage.sh $(COVERAGE_BUILD) && exit $$rc

# ---- ABI ----------------------------------------------------------------------------

ABI_BUILD := $(BUILD)/abi
ABI_BASELINE := abi/libminlsh.abi.xml
ABIDW_FLAGS := --headers-dir include --no-corpus-path --no-comp-dir-path --drop-undefined-syms

abi-baseline:
	$(MAKE) --no-print-directory lib BUILD=$(ABI_BUILD) CC=gcc OPT="-O2 -g"
	@mkdir -p abi
	abidw $(ABIDW_FLAGS) --out-file $(ABI_BASELINE) $(ABI_BUILD)/$(SHARED)
	@echo "abi: wrote $(ABI_BASELINE) from $(SHARED)"

abi-check:
	$(MAKE) --no-print-directory lib BUILD=$(ABI_BUILD) CC=gcc OPT="-O2 -g"
	sh scripts/abi-check.sh $(ABI_BUILD) $(ABI_BUILD)/$(SHARED) $(ABI_BASELINE) "$(ABIDW_FLAGS)"
