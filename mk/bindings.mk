# Python and Go bindings (bindings/, docs/ffi.md).
#
#   make check-python   installs the library into $(BIND_PREFIX), checks the
#                       shared golden data, then runs the pytest suite three
#                       times: from the source tree with MINLSH_LIBRARY and the
#                       C accelerator (MINLSH_SPEEDUPS), from the source tree
#                       through the system loader (LD_LIBRARY_PATH) without it,
#                       and pip-installed (offline) into a virtual environment
#                       with the accelerator pip built
#   make python-speedups  the optional C accelerator minlsh._speedups for
#                       BIND_PYTHON, as $(PY_SPEEDUPS) (the package loads it
#                       from the source tree when MINLSH_SPEEDUPS names it)
#   make check-go       same install and golden check, then go vet, gofmt,
#                       go test ./... (package, crawler example) and the
#                       package's tests again under the race detector
#   make check-bindings both
#   make bindings-golden  regenerate tests/golden/bindings/golden.json from
#                       the C API (tests/test_bindings_golden.c; make check
#                       compares the library against the committed file)
#
# Each installs its Debian packages when missing (scripts/deps.sh python|go).
# Everything they write goes under $(BUILD): the prefix, a virtual
# environment, a copy of the Python sources (no build/ or egg-info in the
# tree), and the Go build cache and module path.

BIND_DIR := $(abspath $(BUILD))
BIND_PREFIX ?= $(BIND_DIR)/bind-prefix
BIND_PYTHON ?= /usr/bin/python3
BIND_GOLDEN := $(BUILD)/tests/test_bindings_golden
BIND_GOENV = PKG_CONFIG_PATH="$(BIND_PREFIX)/lib/pkgconfig" \
  LD_LIBRARY_PATH="$(BIND_PREFIX)/lib" CGO_ENABLED=1 GO111MODULE=on GOPROXY=off \
  GOSUMDB=off GOFLAGS=-buildvcs=false GOTOOLCHAIN=local \
  GOCACHE="$(BIND_DIR)/go-cache" GOPATH="$(BIND_DIR)/gopath" GOTMPDIR= \
  CGO_CFLAGS="-O2 -g -DMINLSH_HEADER_ID=$$(cksum < $(BIND_PREFIX)/include/minlsh.h | cut -d' ' -f1)"

.PHONY: bindings-install bindings-golden check-bindings-golden check-python check-go \
  check-bindings python-speedups

# One interpreter start at parse time (-S: no site, a few milliseconds) for
# the accelerator's file name suffix (its ABI) and the headers' directory.
PY_SYSCONFIG := $(shell $(BIND_PYTHON) -S -c 'import sysconfig as s; print(s.get_config_var("EXT_SUFFIX") or ".so", s.get_paths()["include"])' 2>/dev/null)
PY_SPEEDUPS := $(BIND_DIR)/python/_speedups$(or $(word 1,$(PY_SYSCONFIG)),.so)
PY_INCLUDE := $(word 2,$(PY_SYSCONFIG))

# The project's warnings and flags (Python's headers as system headers),
# without sanitizers or coverage: the interpreter that loads it has neither
# runtime. -DNDEBUG as Python's own builds: its inline accessors assert.
$(PY_SPEEDUPS): bindings/python/minlsh/_speedups.c
	@mkdir -p $(dir $@)
	@test -f "$(PY_INCLUDE)/Python.h" || { echo "python-speedups: no Python.h for $(BIND_PYTHON) (sh scripts/deps.sh python installs python3-dev)"; exit 1; }
	$(CC) -std=c11 $(WARN) -DNDEBUG -fPIC -shared -isystem "$(PY_INCLUDE)" \
	  $(filter-out -fsanitize=% --coverage,$(USER_CFLAGS) $(LDFLAGS)) $< -o $@

python-speedups: $(PY_SPEEDUPS)

# A fresh install of this tree into BIND_PREFIX (what users of the bindings
# have: the header, the shared library and minlsh.pc). The library and the
# command are prerequisites, so this make builds them once (also with -j and
# both check targets); the sub-make only copies.
bindings-install: lib program
	@rm -rf "$(BIND_PREFIX)"
	@$(MAKE) --no-print-directory install PREFIX="$(BIND_PREFIX)" >/dev/null
	@echo "bindings: installed minlsh $(VERSION) into $(BIND_PREFIX)"

check-bindings-golden: $(BIND_GOLDEN)
	@MINLSH_TEST_DIR=tests $(BIND_GOLDEN)

bindings-golden: $(BIND_GOLDEN)
	$(BIND_GOLDEN) --print > tests/golden/bindings/golden.json.tmp
	mv tests/golden/bindings/golden.json.tmp tests/golden/bindings/golden.json

# The accelerator is built after deps.sh (which installs Python's headers).
check-python: bindings-install check-bindings-golden
	@sh scripts/deps.sh python
	@$(MAKE) --no-print-directory python-speedups
	@BIND_PREFIX="$(BIND_PREFIX)" BIND_WORK="$(BIND_DIR)" PYTHON="$(BIND_PYTHON)" \
	  BIND_SPEEDUPS="$(PY_SPEEDUPS)" sh bindings/python/check.sh

check-go: bindings-install check-bindings-golden
	@sh scripts/deps.sh go
	@echo "bindings: go vet, gofmt"
	@cd bindings/go && $(BIND_GOENV) go vet ./...
	@cd bindings/go && test -z "$$(gofmt -l .)" || { gofmt -l .; echo "gofmt: files above"; exit 1; }
	@echo "bindings: go test ./... against $(BIND_PREFIX)"
	@cd bindings/go && $(BIND_GOENV) go test -count=1 ./...
	@echo "bindings: go test -race"
	@cd bindings/go && $(BIND_GOENV) go test -count=1 -race .

check-bindings: check-python check-go
