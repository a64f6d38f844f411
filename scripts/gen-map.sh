#!/bin/sh
# Prints the public function names declared in include/minlsh.h, one a line,
# sorted: "stable" (the default) lists those of the stable part, which
# belong in the release nodes of lib/minlsh.map; "experimental" those declared
# under MINLSH_EXPERIMENTAL_API, which belong in its MINLSH_EXPERIMENTAL node;
# "all" both. tests/symbols.sh compares them with the map and with what the
# shared library exports; when you add a function, add it to the map node of
# the release that introduces it (or to MINLSH_EXPERIMENTAL).
part=${1:-stable}
header=${2:-include/minlsh.h}
case $part in
stable)       range='1,/^#endif \/\* MINLSH_H \*\//' ;;
experimental) range='/^#endif \/\* MINLSH_H \*\//,$' ;;
all)          range='1,$' ;;
*) echo "usage: gen-map.sh [stable|experimental|all] [header]" >&2; exit 2 ;;
esac
sed -n "${range}s/^MINLSH_API[^(]*[ *]\(minlsh_[a-z0-9_]*\)(.*/\1/p" "$header" | sort
