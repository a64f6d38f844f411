#!/bin/sh
# The Python binding's test runs (make check-python; mk/bindings.mk).
#   BIND_PREFIX  where the library is installed (lib/libminlsh.so.0)
#   BIND_WORK    a scratch directory of the build (a venv and a copy of the sources)
#   BIND_SPEEDUPS  the C accelerator built from the tree (make python-speedups)
#   PYTHON       the interpreter that sees Debian's packages (/usr/bin/python3)
# Runs the suite three times and stops at the first failure, so that both the
# accelerator's paths and the ctypes paths are always tested
# (MINLSH_EXPECT_SPEEDUPS makes the tests check which one is in use):
#   1. the source tree, library named by MINLSH_LIBRARY, the accelerator
#      named by MINLSH_SPEEDUPS
#   2. the source tree, library found by the system loader (LD_LIBRARY_PATH),
#      without the accelerator (MINLSH_SPEEDUPS=0)
#   3. pip install --no-build-isolation --no-index into a virtual environment
#      (offline, with Debian's setuptools), tests run against the installed copy
#      with the accelerator pip built (required here: a build that failed
#      silently would otherwise leave it untested)
#   4. the same install with the library bundled (MINLSH_BUNDLE_LIBRARY, as a
#      build from the source tree does): the package loads its own copy with
#      no MINLSH_LIBRARY nor LD_LIBRARY_PATH, and is typed (py.typed)
#   5. reinstalled from the same folder (its build/ kept) with
#      MINLSH_BUNDLE_LIBRARY=0, then bundled again: the switch holds both ways
set -eu
cd "$(dirname "$0")/../.."
root=$(pwd)
: "${PYTHON:=/usr/bin/python3}"
: "${BIND_PREFIX:?}" "${BIND_WORK:?}" "${BIND_SPEEDUPS:?}"
lib="$BIND_PREFIX/lib/libminlsh.so.0"
tests="$root/bindings/python/tests"
export PYTHONDONTWRITEBYTECODE=1
unset MINLSH_LIBRARY MINLSH_SPEEDUPS PYTHONPATH || true

echo "bindings: pytest 1/3: source tree, MINLSH_LIBRARY=$lib, MINLSH_SPEEDUPS=$BIND_SPEEDUPS"
env PYTHONPATH="$root/bindings/python" MINLSH_LIBRARY="$lib" MINLSH_EXPECT_PACKAGE=source \
    MINLSH_SPEEDUPS="$BIND_SPEEDUPS" MINLSH_EXPECT_SPEEDUPS="$BIND_SPEEDUPS" \
    "$PYTHON" -m pytest -p no:cacheprovider "$tests"

echo "bindings: pytest 2/3: source tree, system loader (LD_LIBRARY_PATH=$BIND_PREFIX/lib), MINLSH_SPEEDUPS=0"
env PYTHONPATH="$root/bindings/python" LD_LIBRARY_PATH="$BIND_PREFIX/lib" \
    MINLSH_SPEEDUPS=0 MINLSH_EXPECT_SPEEDUPS=0 \
    MINLSH_EXPECT_PACKAGE=source "$PYTHON" -m pytest -p no:cacheprovider -q "$tests"

echo "bindings: pytest 3/3: pip install --no-build-isolation --no-index into a venv"
venv="$BIND_WORK/bind-venv"
src="$BIND_WORK/bind-pysrc"
rm -rf "$venv" "$src"
mkdir -p "$src"
# Build from a copy: setuptools writes build/ and *.egg-info next to the sources.
cp -R bindings/python/pyproject.toml bindings/python/setup.py bindings/python/README.md \
    bindings/python/minlsh "$src/"
find "$src" -name __pycache__ -prune -exec rm -rf {} +
rm -f "$src"/minlsh/libminlsh.so*
"$PYTHON" -m venv --system-site-packages "$venv"
MINLSH_BUNDLE_LIBRARY=0 "$venv/bin/python" -m pip install --quiet --no-index \
    --no-build-isolation --disable-pip-version-check "$src"
cd "$BIND_WORK"
# The accelerator must have been built there (setuptools only warns when it
# cannot build it).
built=$(find "$venv" -path '*/minlsh/_speedups*.so' | head -n 1)
[ -n "$built" ] || { echo "bindings: pip did not build minlsh._speedups (pip without --quiet says why)"; exit 1; }
env MINLSH_LIBRARY="$lib" MINLSH_EXPECT_PACKAGE="$venv" MINLSH_EXPECT_SPEEDUPS="$built" \
    "$venv/bin/python" -m pytest -p no:cacheprovider -q "$tests"

echo "bindings: python 4/4: pip install with the library bundled, no MINLSH_LIBRARY"
venv2="$BIND_WORK/bind-venv-bundled"
rm -rf "$venv2" "$src"/build "$src"/*.egg-info
"$PYTHON" -m venv --system-site-packages "$venv2"
MINLSH_BUNDLE_LIBRARY="$lib" "$venv2/bin/python" -m pip install --quiet --no-index \
    --no-build-isolation --disable-pip-version-check "$src"
env -u LD_LIBRARY_PATH "$venv2/bin/python" -c '
import os, sys, minlsh
pkg = os.path.dirname(minlsh.__file__)
assert os.path.samefile(minlsh.LIBRARY, os.path.join(pkg, "libminlsh.so.0")), minlsh.LIBRARY
assert os.path.exists(os.path.join(pkg, "py.typed"))
m = minlsh.MinHash.bulk([["a", "b"], ["a", "b"]])
assert m[0] == m[1] and not m[0].is_empty()
print("bundled:", minlsh.LIBRARY)
'

echo "bindings: python 5/5: reinstalled over the bundled build with MINLSH_BUNDLE_LIBRARY=0, then bundled again"
# The same source folder, whose build/ holds the bundled copy from 4/4: the
# switch must hold anyway, in both directions.
MINLSH_BUNDLE_LIBRARY=0 "$venv2/bin/python" -m pip install --quiet --no-index --force-reinstall \
    --no-deps --no-build-isolation --disable-pip-version-check "$src"
env -u LD_LIBRARY_PATH MINLSH_LIBRARY="$lib" "$venv2/bin/python" -c '
import os, minlsh
pkg = os.path.dirname(minlsh.__file__)
assert not os.path.exists(os.path.join(pkg, "libminlsh.so.0")), "bundled despite MINLSH_BUNDLE_LIBRARY=0"
assert os.path.samefile(minlsh.LIBRARY, os.environ["MINLSH_LIBRARY"]), minlsh.LIBRARY
print("not bundled:", minlsh.LIBRARY)
'
MINLSH_BUNDLE_LIBRARY="$lib" "$venv2/bin/python" -m pip install --quiet --no-index --force-reinstall \
    --no-deps --no-build-isolation --disable-pip-version-check "$src"
env -u LD_LIBRARY_PATH "$venv2/bin/python" -c '
import os, minlsh
pkg = os.path.dirname(minlsh.__file__)
assert os.path.samefile(minlsh.LIBRARY, os.path.join(pkg, "libminlsh.so.0")), minlsh.LIBRARY
print("bundled again:", minlsh.LIBRARY)
'
