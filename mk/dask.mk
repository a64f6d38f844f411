# Scale-out with Dask (bindings/python/minlsh/dask/, docs/scale-out.md).
#
#   make check-dask   the library and the minlsh command in $(BUILD), then
#                     pytest on bindings/python/tests/test_dask.py: on a planted
#                     corpus, minlsh.dask.dedup on a LocalCluster of two worker
#                     processes against `minlsh dedup` (pairs and clusters,
#                     exact and signature verification), band keys, hot
#                     buckets, connected components, the SQL recipe of
#                     docs/scale-out.md in SQLite (about 40 s on 2 CPUs)
#   make bench-dask   examples/dask_dedup.py --bench on BENCH_DASK_DOCS short
#                     documents from bench/gen_docs (the corpus of make
#                     bench): in alternation, `minlsh dedup --threads 2
#                     --output decisions` and minlsh.dask.dedup on a
#                     LocalCluster of 2 worker processes of 1 thread each
#                     (best of 3 each), their ratio (goal: <= 1.5), the
#                     CPU seconds of every process, peak memory per worker
#                     and whether the decisions are identical (key: value
#                     lines; about 3 minutes on 2 CPUs for 1M documents).
#                     The workers keep freed memory (docs/scale-out.md,
#                     "Worker processes"); BENCH_DASK_FLAGS="--malloc dask"
#                     keeps Dask's settings, "--memory 64M" runs both under
#                     that budget.
#
# The binding is used from the source tree, the library from the build tree
# (MINLSH_LIBRARY, inherited by the worker processes), so nothing is
# installed. Debian packages come from scripts/deps.sh dask.

DASK_PYTHON ?= /usr/bin/python3
BENCH_DASK_DOCS ?= 1000000
BENCH_DASK_FLAGS ?= --repeat 3
DASK_BUILD := $(abspath $(BUILD))
DASK_ENV = MINLSH_LIBRARY="$(DASK_BUILD)/libminlsh.so.$(VERSION_MAJOR)" \
  MINLSH_PROGRAM="$(DASK_BUILD)/minlsh" PYTHONPATH="$(CURDIR)/bindings/python" \
  PYTHONDONTWRITEBYTECODE=1 MINLSH_DASK_REQUIRED=1

.PHONY: check-dask bench-dask

check-dask: lib program
	@sh scripts/deps.sh dask
	@echo "dask: pytest bindings/python/tests/test_dask.py (library $(DASK_BUILD))"
	@$(DASK_ENV) $(DASK_PYTHON) -m pytest -p no:cacheprovider -q \
	  --rootdir=bindings/python bindings/python/tests/test_dask.py

bench-dask: lib program $(BUILD)/bench/gen_docs
	@sh scripts/deps.sh dask
	@mkdir -p "$(DASK_BUILD)/bench-dask"
	@$(DASK_ENV) $(DASK_PYTHON) examples/dask_dedup.py --bench --docs $(BENCH_DASK_DOCS) \
	  --gen "$(DASK_BUILD)/bench/gen_docs" --program "$(DASK_BUILD)/minlsh" \
	  --workdir "$(DASK_BUILD)/bench-dask" $(BENCH_DASK_FLAGS)
