#!/bin/sh
# docs/api.md documents every public function with the prototype the header
# declares: each declaration of include/minlsh.h (stable and experimental
# parts), whitespace normalised and without MINLSH_API, must appear verbatim
# in one of api.md's C code blocks, and api.md must not show a prototype of a
# minlsh_ function the header does not declare (a renamed function's old name).
set -u
cd "$(dirname "$0")/.." || exit 1
. tests/lib.sh
tl_begin api_doc

# One declaration per line: join continuation lines up to ';', squeeze blanks.
decls() {
    awk '/^MINLSH_API /{d=$0; while (d !~ /;/) {getline l; d = d " " l} print d}' "$1" |
        sed 's/^MINLSH_API //; s/[[:space:]][[:space:]]*/ /g; s/( /(/g; s/ )/)/g'
}
# The prototypes in api.md's ```c blocks: lines starting with a type and
# containing "minlsh_name(", joined up to ';'.
doc_protos() {
    awk '/^```c/{c=1; next} /^```/{c=0} c' docs/api.md |
        awk '/^(const |void|int|uint|size_t|double)[^=]* \**minlsh_[a-z0-9_]*\(/ {d=$0; while (d !~ /;/ && d !~ /\{/) {if ((getline l) <= 0) break; d = d " " l} print d}' |
        grep -v '{' | sed 's/[[:space:]][[:space:]]*/ /g; s/( /(/g; s/ )/)/g'
}
decls include/minlsh.h | sort -u > "$tmp/header"
doc_protos | sort -u > "$tmp/doc"

missing=$(comm -23 "$tmp/header" "$tmp/doc")
if [ -z "$missing" ]; then ok every_function_documented_with_its_prototype
else ko every_function_documented_with_its_prototype "$(echo "$missing" | head -n 40)"; fi

extra=$(comm -13 "$tmp/header" "$tmp/doc")
if [ -z "$extra" ]; then ok no_stale_prototypes
else ko no_stale_prototypes "$(echo "$extra" | head -n 40)"; fi

finish
