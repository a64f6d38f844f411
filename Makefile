# minlsh: GNU Make build.
#   make                 libminlsh.a and libminlsh.so.X.Y.Z (+ symlinks)
#   make check           every test (ends with "N passed, M failed")
#   make check-sanitize  the tests under ASan+UBSan (gcc and clang)
#   make examples        the example programs, against the build tree
#   make bench           benchmarks, ending with a summary (mk/bench.mk; also
#                        bench-scale: 1M documents end to end, bench-hot: hot buckets,
#                        bench-huge: 1M/10M/100M documents through minlsh dedup, not in CI)
#   make install / uninstall   PREFIX=/usr/local DESTDIR=
#   make release-check   the version agrees everywhere it is written
#   make clean

# The version lives in one place, the header; everything else reads it.
VERSION_MAJOR := $(shell sed -n 's/^\#define MINLSH_VERSION_MAJOR \([0-9]*\).*/\1/p' include/minlsh.h)
VERSION_MINOR := $(shell sed -n 's/^\#define MINLSH_VERSION_MINOR \([0-9]*\).*/\1/p' include/minlsh.h)
VERSION_PATCH := $(shell sed -n 's/^\#define MINLSH_VERSION_PATCH \([0-9]*\).*/\1/p' include/minlsh.h)
VERSION := $(VERSION_MAJOR).$(VERSION_MINOR).$(VERSION_PATCH)

PREFIX ?= /usr/local
DESTDIR ?=
LIBDIR ?= $(PREFIX)/lib
INCLUDEDIR ?= $(PREFIX)/include
BINDIR ?= $(PREFIX)/bin
MANDIR ?= $(PREFIX)/share/man
# The Go binding's sources, a module to use with a replace directive
# (bindings/go/README.md): Go fetches nothing.
GODIR ?= $(PREFIX)/share/minlsh/go
PKGCONFIGDIR ?= $(LIBDIR)/pkgconfig
CMAKEDIR ?= $(LIBDIR)/cmake/minlsh

CC ?= cc
AR ?= ar
BUILD ?= build
OPT ?= -O2 -g
CFLAGS ?=
LDFLAGS ?=
WARN := -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes -Wmissing-prototypes -Wvla
# OPT (the default optimisation) and CFLAGS (the caller's additions) are
# treated alike: both come after the project's own flags in every compile
# (so -O0 or -Wno-error from either wins) and both go to every link (so
# -fsanitize=... or --coverage given through either also links its runtime).
USER_CFLAGS = $(OPT) $(CFLAGS)
LINK_FLAGS = $(USER_CFLAGS) $(LDFLAGS)
LIB_CFLAGS := -std=c11 $(WARN) -fPIC -fvisibility=hidden -Iinclude -Ilib $(USER_CFLAGS)

# An instrumented build is recognised from its flags, wherever they were given.
SANITIZED := $(if $(filter -fsanitize=%,$(OPT) $(CFLAGS) $(LDFLAGS)),1)
INSTRUMENTED := $(if $(filter -fsanitize=% --coverage,$(OPT) $(CFLAGS) $(LDFLAGS)),1)
# The shared library must not have undefined symbols; sanitizer builds are the
# exception (clang leaves the sanitizer runtimes to the executable).
NO_UNDEFINED ?= $(if $(SANITIZED),,-Wl,--no-undefined)
# Tells tests/install.sh to skip its fully static links.
MINLSH_SANITIZE ?= $(INSTRUMENTED)

SONAME := libminlsh.so.$(VERSION_MAJOR)
SHARED := libminlsh.so.$(VERSION)
LIB_SRC := $(sort $(wildcard lib/*/*.c))
LIB_OBJ := $(patsubst lib/%.c,$(BUILD)/lib/%.o,$(LIB_SRC))
LIB_HDR := include/minlsh.h $(wildcard lib/*/*.h)

STATIC_LIB := $(BUILD)/libminlsh.a
SHARED_LIB := $(BUILD)/$(SHARED)
# The same library with the test-only hooks (-DMINLSH_TESTING, see
# lib/common/common.h), for the tests and benches that call them; never
# installed.
TESTING_LIB := $(BUILD)/testing/libminlsh.a
TESTING_OBJ := $(patsubst lib/%.c,$(BUILD)/testing/lib/%.o,$(LIB_SRC))

PROG_SRC := $(sort $(wildcard programs/*.c))
PROG_OBJ := $(patsubst programs/%.c,$(BUILD)/programs/%.o,$(PROG_SRC))
PROGRAM := $(BUILD)/minlsh

.PHONY: all lib program check check-sanitize examples install uninstall clean

all: lib program

lib: $(STATIC_LIB) $(SHARED_LIB)

$(BUILD)/lib/%.o: lib/%.c $(LIB_HDR)
	@mkdir -p $(dir $@)
	$(CC) $(LIB_CFLAGS) -c $< -o $@

$(STATIC_LIB): $(LIB_OBJ)
	@mkdir -p $(dir $@)
	rm -f $@
	$(AR) rcs $@ $(LIB_OBJ)

$(BUILD)/testing/lib/%.o: lib/%.c $(LIB_HDR)
	@mkdir -p $(dir $@)
	$(CC) $(LIB_CFLAGS) -DMINLSH_TESTING -c $< -o $@

$(TESTING_LIB): $(TESTING_OBJ)
	@mkdir -p $(dir $@)
	rm -f $@
	$(AR) rcs $@ $(TESTING_OBJ)

$(SHARED_LIB): $(LIB_OBJ) lib/minlsh.map
	$(CC) -shared -o $@ $(LIB_OBJ) -Wl,-soname,$(SONAME) \
	  -Wl,--version-script=lib/minlsh.map $(NO_UNDEFINED) \
	  -Wl,-z,noexecstack -Wl,-z,relro -Wl,-z,now $(LINK_FLAGS) -lpthread -lm
	ln -sf $(SHARED) $(BUILD)/$(SONAME)
	ln -sf $(SHARED) $(BUILD)/libminlsh.so

# The .pc file depends on PREFIX and friends, so it is generated at install
# time (never stale); $(BUILD)/minlsh.pc is a preview for the default prefix.
PC_SED = sed -e 's|@PREFIX@|$(PREFIX)|g' -e 's|@LIBDIR@|$(LIBDIR)|g' \
	    -e 's|@INCLUDEDIR@|$(INCLUDEDIR)|g' -e 's|@VERSION@|$(VERSION)|g'

$(BUILD)/minlsh.pc: minlsh.pc.in include/minlsh.h
	@mkdir -p $(dir $@)
	$(PC_SED) $< > $@

# The CMake package (find_package(minlsh): minlsh::minlsh and
# minlsh::minlsh_static), generated at install time like the .pc file.
POINTER_BYTES = $(shell $(CC) -dM -E - </dev/null 2>/dev/null | sed -n 's/^\#define __SIZEOF_POINTER__ //p')
CMAKE_SED = $(PC_SED) -e 's|@MAJOR@|$(VERSION_MAJOR)|g' -e 's|@SIZEOF_VOID_P@|$(POINTER_BYTES)|g'

# ---- the minlsh command ------------------------------------------------------

program: $(PROGRAM)

$(BUILD)/programs/%.o: programs/%.c $(wildcard programs/*.h) include/minlsh.h
	@mkdir -p $(dir $@)
	$(CC) -std=c11 $(WARN) -Iinclude $(USER_CFLAGS) -c $< -o $@

# The command (not the library) reads gzip and zstd input: zlib and libzstd
# (Debian: zlib1g-dev, libzstd-dev; sh scripts/deps.sh build installs them).
PROG_LIBS := -lz -lzstd

$(PROGRAM): $(PROG_OBJ) $(STATIC_LIB)
	$(CC) -o $@ $(PROG_OBJ) $(STATIC_LIB) $(LINK_FLAGS) $(PROG_LIBS) -lpthread -lm

# ---- tests ------------------------------------------------------------------

TEST_SRC := $(sort $(wildcard tests/test_*.c))
TEST_BIN := $(patsubst tests/%.c,$(BUILD)/tests/%,$(TEST_SRC))
TEST_CFLAGS := -std=c11 $(WARN) -Iinclude -Ilib -Itests $(USER_CFLAGS)
# Tests that need an extra library say so here.
TEST_LIBS_test_siphash := -lsodium
# Tests that call the test-only hooks: compiled with -DMINLSH_TESTING and
# linked against the testing archive; every other test links the release one.
TESTS_WITH_HOOKS := test_index test_kernels test_minhash test_shingle test_unicode
$(patsubst %,$(BUILD)/tests/%,$(TESTS_WITH_HOOKS)): TEST_ARCHIVE = -DMINLSH_TESTING $(TESTING_LIB)
TEST_ARCHIVE = $(STATIC_LIB)

$(BUILD)/tests/%: tests/%.c $(wildcard tests/*.h) $(STATIC_LIB) $(TESTING_LIB)
	@mkdir -p $(dir $@)
	$(CC) $(TEST_CFLAGS) $< -o $@ $(TEST_ARCHIVE) $(TEST_LIBS_$*) $(LDFLAGS) -lm

check: lib program $(TEST_BIN) $(BUILD)/minlsh.pc
	@BUILD=$(BUILD) CC=$(CC) TEST_LDFLAGS="$(LINK_FLAGS)" MINLSH_SANITIZE=$(MINLSH_SANITIZE) \
	  sh tests/run.sh $(TEST_BIN)

# Sanitizers: a separate build tree per compiler, the whole suite in each
# (the flags reach the links too, and the build knows it is instrumented).
SAN_FLAGS := -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all
check-sanitize:
	$(MAKE) check BUILD=$(BUILD)/asan-gcc CC=gcc OPT="-O1 -g" CFLAGS="$(SAN_FLAGS)"
	$(MAKE) check BUILD=$(BUILD)/asan-clang CC=clang OPT="-O1 -g" CFLAGS="$(SAN_FLAGS)"

# ---- examples (built against the build tree; tests/install.sh builds them
# again against an installed copy through pkg-config) -------------------------

EXAMPLE_SRC := $(sort $(wildcard examples/*.c))
EXAMPLE_BIN := $(patsubst examples/%.c,$(BUILD)/examples/%,$(EXAMPLE_SRC))

$(BUILD)/examples/%: examples/%.c $(STATIC_LIB)
	@mkdir -p $(dir $@)
	$(CC) -std=c11 $(WARN) -Iinclude $(USER_CFLAGS) $< -o $@ $(STATIC_LIB) $(LDFLAGS) -lm

examples: $(EXAMPLE_BIN)

# ---- install ----------------------------------------------------------------

# The package without its tests (they need the source tree's data).
GO_SOURCES := bindings/go/go.mod bindings/go/README.md \
  $(filter-out %_test.go,$(sort $(wildcard bindings/go/*.go)))

install: lib program
	install -d $(DESTDIR)$(LIBDIR) $(DESTDIR)$(INCLUDEDIR) $(DESTDIR)$(PKGCONFIGDIR) \
	  $(DESTDIR)$(BINDIR) $(DESTDIR)$(MANDIR)/man1
	install -m 755 $(PROGRAM) $(DESTDIR)$(BINDIR)/minlsh
	install -m 644 programs/minlsh.1 $(DESTDIR)$(MANDIR)/man1/minlsh.1
	install -m 644 include/minlsh.h $(DESTDIR)$(INCLUDEDIR)/minlsh.h
	install -m 644 $(STATIC_LIB) $(DESTDIR)$(LIBDIR)/libminlsh.a
	install -m 755 $(SHARED_LIB) $(DESTDIR)$(LIBDIR)/$(SHARED)
	ln -sf $(SHARED) $(DESTDIR)$(LIBDIR)/$(SONAME)
	ln -sf $(SHARED) $(DESTDIR)$(LIBDIR)/libminlsh.so
	$(PC_SED) minlsh.pc.in > $(DESTDIR)$(PKGCONFIGDIR)/minlsh.pc
	chmod 644 $(DESTDIR)$(PKGCONFIGDIR)/minlsh.pc
	install -d $(DESTDIR)$(CMAKEDIR)
	$(CMAKE_SED) cmake/minlshConfig-make.cmake.in > $(DESTDIR)$(CMAKEDIR)/minlshConfig.cmake
	$(CMAKE_SED) cmake/minlshConfigVersion.cmake.in > $(DESTDIR)$(CMAKEDIR)/minlshConfigVersion.cmake
	chmod 644 $(DESTDIR)$(CMAKEDIR)/minlshConfig.cmake $(DESTDIR)$(CMAKEDIR)/minlshConfigVersion.cmake
	install -d $(DESTDIR)$(GODIR)
	install -m 644 $(GO_SOURCES) $(DESTDIR)$(GODIR)

uninstall:
	rm -f $(DESTDIR)$(BINDIR)/minlsh $(DESTDIR)$(MANDIR)/man1/minlsh.1
	rm -f $(DESTDIR)$(INCLUDEDIR)/minlsh.h $(DESTDIR)$(LIBDIR)/libminlsh.a \
	  $(DESTDIR)$(LIBDIR)/$(SHARED) $(DESTDIR)$(LIBDIR)/$(SONAME) \
	  $(DESTDIR)$(LIBDIR)/libminlsh.so $(DESTDIR)$(PKGCONFIGDIR)/minlsh.pc \
	  $(DESTDIR)$(CMAKEDIR)/minlshConfig.cmake $(DESTDIR)$(CMAKEDIR)/minlshConfigVersion.cmake
	rm -f $(addprefix $(DESTDIR)$(GODIR)/,$(notdir $(GO_SOURCES)))

clean:
	rm -rf $(BUILD)

# Before tagging a release: the header's version agrees with the map's newest
# node, the newest dated CHANGELOG section, the ABI baseline and the .pc file.
.PHONY: release-check
release-check: $(BUILD)/minlsh.pc
	sh scripts/release-check.sh $(BUILD)/minlsh.pc

# Feature fragments (SIMD flags, bench, fuzz, tooling, bindings): each adds
# its own targets and variables (mk/README.md).
-include mk/*.mk
