# lib/lsh SIMD files: per-file instruction-set flags (the same scheme as
# mk/simd.mk: only these files get them; lib/common/cpu.c picks the code at
# run time after CPUID and XGETBV). Off x86-64 the files compile to nothing.

LSH_SIMD_MACHINE := $(shell $(CC) -dumpmachine 2>/dev/null)

ifneq ($(filter x86_64-% amd64-%,$(LSH_SIMD_MACHINE)),)
$(BUILD)/lib/lsh/bandkey_avx2.o: LIB_CFLAGS += -mavx2
$(BUILD)/lib/lsh/bandkey_avx512.o: LIB_CFLAGS += -mavx512f -mavx512dq -mavx512bw -mavx512vl
endif
