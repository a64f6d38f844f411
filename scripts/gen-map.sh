#!/bin/sh
# Prints the public function names declared in include/minlsh.h, one a line,
# sorted. tests/symbols.sh compares them with lib/minlsh.map and with what the
# shared library exports; when you add a function, add it to the map node of
# the release that introduces it.
sed -n 's/^MINLSH_API[^(]*[ *]\(minlsh_[a-z0-9_]*\)(.*/\1/p' "${1:-include/minlsh.h}" | sort
