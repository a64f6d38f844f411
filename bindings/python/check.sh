#!/bin/sh
# The Python binding's test runs (make check-python; mk/bindings.mk).
#   BIND_PREFIX  where the library is installed (lib/libminlsh.so.0)
#   BIND_WORK    a scratch directory of the build (a venv and a copy of the sources)
#   PYTHON       the interpreter that sees Debian's packages (/usr/bin/python3)
# Runs the suite three times and stops at the first failure:
#   1. the source tree, library named by MINLSH_LIBRARY
#   2. the source tree, library found by the system loader (LD_LIBRARY_PATH)
#   3. pip install --no-build-isolation --no-index into a virtual environment
#      (offline, with Debian's setuptools), tests run against the installed copy
set -eu
cd "$(dirname "$0")/../.."
root=$(pwd)
: "${PYTHON:=/usr/bin/python3}"
: "${BIND_PREFIX:?}" "${BIND_WORK:?}"
lib="$BIND_PREFIX/lib/libminlsh.so.0"
tests="$root/bindings/python/tests"
export PYTHONDONTWRITEBYTECODE=1
unset MINLSH_LIBRARY PYTHONPATH || true

echo "bindings: pytest 1/3: source tree, MINLSH_LIBRARY=$lib"
env PYTHONPATH="$root/bindings/python" MINLSH_LIBRARY="$lib" MINLSH_EXPECT_PACKAGE=source \
    "$PYTHON" -m pytest -p no:cacheprovider "$tests"

echo "bindings: pytest 2/3: source tree, system loader (LD_LIBRARY_PATH=$BIND_PREFIX/lib)"
env PYTHONPATH="$root/bindings/python" LD_LIBRARY_PATH="$BIND_PREFIX/lib" \
    MINLSH_EXPECT_PACKAGE=source "$PYTHON" -m pytest -p no:cacheprovider -q "$tests"

echo "bindings: pytest 3/3: pip install --no-build-isolation --no-index into a venv"
venv="$BIND_WORK/bind-venv"
src="$BIND_WORK/bind-pysrc"
rm -rf "$venv" "$src"
mkdir -p "$src"
# Build from a copy: setuptools writes build/ and *.egg-info next to the sources.
cp -R bindings/python/pyproject.toml bindings/python/README.md bindings/python/minlsh "$src/"
find "$src" -name __pycache__ -prune -exec rm -rf {} +
rm -f "$src"/minlsh/libminlsh.so*
"$PYTHON" -m venv --system-site-packages "$venv"
"$venv/bin/python" -m pip install --quiet --no-index --no-build-isolation \
    --disable-pip-version-check "$src"
cd "$BIND_WORK"
env MINLSH_LIBRARY="$lib" MINLSH_EXPECT_PACKAGE="$venv" \
    "$venv/bin/python" -m pytest -p no:cacheprovider -q "$tests"
