# SIMD kernels: per-file instruction-set flags, and check-kernels.
#
# Each SIMD file is compiled with its own -m flags and nothing else gets
# them: the library never assumes an instruction set at build time (no
# -march=native); lib/common/cpu.c picks the kernels at run time after CPUID
# and XGETBV. Off x86-64 the files compile to nothing, so no flags are added.
#
#   make check-kernels   the whole suite again with AVX-512 compiled out, then
#                        with AVX-512, AVX2 and SSE2 (the token splitter's
#                        block search) compiled out (separate build
#                        trees under $(BUILD)/), then in the natural build
#                        with MINLSH_KERNEL=avx2 and =portable at run time.

SIMD_MACHINE := $(shell $(CC) -dumpmachine 2>/dev/null)

ifneq ($(filter x86_64-% amd64-%,$(SIMD_MACHINE)),)
SIMD_AVX2_FLAGS := -mavx2
SIMD_AVX512_FLAGS := -mavx512f -mavx512dq -mavx512bw -mavx512vl
endif

# The one rule: a library file's name says its instruction set. Any
# lib/<layer>/<name>_avx2.c gets the AVX2 flags and any <name>_avx512.c the
# AVX-512 ones, in every build tree (release, testing, sanitizers, fuzzing);
# a new kernel file needs no line here.
%_avx2.o: LIB_CFLAGS += $(SIMD_AVX2_FLAGS)
%_avx512.o: LIB_CFLAGS += $(SIMD_AVX512_FLAGS)

.PHONY: check-kernels
# Every run happens even if an earlier one fails; the target fails at the end.
check-kernels:
	@status=0; \
	$(MAKE) check BUILD=$(BUILD)/no-avx512 CFLAGS="$(CFLAGS) -DMINLSH_NO_AVX512" || status=1; \
	$(MAKE) check BUILD=$(BUILD)/no-simd CFLAGS="$(CFLAGS) -DMINLSH_NO_AVX512 -DMINLSH_NO_AVX2 -DMINLSH_NO_SSE2" || status=1; \
	MINLSH_KERNEL=avx2 $(MAKE) check || status=1; \
	MINLSH_KERNEL=portable $(MAKE) check || status=1; \
	if [ $$status -ne 0 ]; then echo "check-kernels: some runs failed"; fi; \
	exit $$status
