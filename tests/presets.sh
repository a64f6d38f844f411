#!/bin/sh
# minlsh dedup --preset and minlsh params --preset / --list-presets:
# every preset gives the same output as its options written out by hand; the
# preset's normalisation is applied (documents that differ only in case,
# punctuation or spacing); options given override the preset's fields
# wherever they stand; an unknown name is refused with the known ones.
set -u
cd "$(dirname "$0")/.." || exit 1
. tests/lib.sh
tl_begin presets

if [ ! -x "$M" ]; then ko binary "no $M"; finish; fi
if [ ! -x "$PY" ]; then ko python "no $PY (the corpus generator needs it)"; finish; fi

C=$tmp/corpus
if ! $PY tests/cli/gen_corpus.py --seed 20260203 --out "$C" --singletons 60 \
    --families 12 2> "$tmp/gen.err"; then
    ko gen_corpus "$(tail -n 5 "$tmp/gen.err")"
    finish
fi
# Pairs that differ only in case (case_*), in an apostrophe inside words
# (punct_*: deleted, it joins the word's halves; kept, it splits them) or in
# the spacing between words (space_*).
$PY - "$C/corpus.jsonl" <<'EOF'
import json, random, sys
rng = random.Random(11)
words = ["w%03dq" % i for i in range(400)]
def text():
    return " ".join(rng.choice(words) for _ in range(80))
docs = []
t = text()
docs += [("case_a", t), ("case_b", t.upper())]
t = text().split(" ")
docs += [("punct_a", " ".join(w[:2] + "'" + w[2:] if i % 3 == 0 else w for i, w in enumerate(t))),
         ("punct_b", " ".join(t))]
t = text().split(" ")
docs += [("space_a", " ".join(t)), ("space_b", "  \n ".join(t))]
with open(sys.argv[1], "a") as f:
    for i, d in docs:
        f.write(json.dumps({"id": i, "text": d}) + "\n")
EOF

dd() { # OUT ARGS...: dedup of the corpus, every decision
    out=$1
    shift
    "$M" dedup --jsonl --output decisions --format tsv --threads 2 "$@" \
        "$C/corpus.jsonl" > "$tmp/$out" 2> "$tmp/$out.err"
}
fate() { # FILE ID: kept or dropped
    awk -F '\t' -v id="\"$2\"" '$1 == id || $1 == substr(id, 2, length(id) - 2) {print $3}' "$1"
}

# ---- each preset = its options by hand ----------------------------------------
same_as_hand() { # PRESET OPTIONS...
    p=$1
    shift
    if dd "p.$p" --preset "$p" && dd "h.$p" "$@"; then
        if cmp -s "$tmp/p.$p" "$tmp/h.$p" && [ -s "$tmp/p.$p" ]; then ok "hand_$p"
        else ko "hand_$p" "$(diff "$tmp/p.$p" "$tmp/h.$p" | head -n 6)"; fi
    else
        ko "hand_$p" "$(cat "$tmp/p.$p.err" "$tmp/h.$p.err")"
    fi
}
same_as_hand fineweb --shingle word:5 --casefold --unicode-punct --unicode-space \
    --num-perm 112 --bands 14 --rows 8 --threshold 0.75
same_as_hand refinedweb --shingle word:5 --num-perm 9000 --bands 450 --rows 20 --threshold 0.8
same_as_hand lee2022 --shingle word:5 --no-cjk-words --num-perm 9000 --bands 450 --rows 20 \
    --threshold 0.8
same_as_hand lee2022-0.9 --shingle word:5 --no-cjk-words --num-perm 800 --bands 40 --rows 20 \
    --threshold 0.9
same_as_hand nemo-curator --shingle codepoint:24 --no-cjk-words --num-perm 260 --bands 20 \
    --rows 13 --threshold 0.8
same_as_hand slimpajama --shingle codepoint:13 --no-cjk-words --casefold --strip-punct \
    --unicode-space --num-perm 128 --bands 9 --rows 13 --threshold 0.8

# The summary line names the preset's banding, and no warning is printed
# for it (FineWeb's P(candidate | 0.75) is 0.77 by design).
has summary_fineweb "$tmp/p.fineweb.err" "; k=112, b=14, r=8 \\(preset\\), threshold 0.75, verify exact$"
nothing no_warning_for_preset_banding "$tmp/p.fineweb.err" "warning"
has hand_banding_warns "$tmp/h.fineweb.err" "warning: with 14 bands of 8 rows"

# ---- the normalisation is the preset's ------------------------------------------
# fineweb folds case and drops punctuation; lee2022 does neither; the
# codepoint presets see spacing, which slimpajama collapses and nemo-curator
# does not.
check_fate() { # NAME FILE ID WANT
    got=$(fate "$2" "$3")
    if [ "$got" = "$4" ]; then ok "$1"; else ko "$1" "$3 is '$got', expected $4"; fi
}
check_fate fineweb_folds_case "$tmp/p.fineweb" case_b dropped
check_fate fineweb_drops_punct "$tmp/p.fineweb" punct_b dropped
check_fate lee2022_keeps_case "$tmp/p.lee2022" case_b kept
check_fate lee2022_keeps_punct "$tmp/p.lee2022" punct_b kept
check_fate slimpajama_folds_case "$tmp/p.slimpajama" case_b dropped
check_fate slimpajama_collapses_space "$tmp/p.slimpajama" space_b dropped
check_fate nemo_keeps_case "$tmp/p.nemo-curator" case_b kept
check_fate nemo_keeps_space "$tmp/p.nemo-curator" space_b kept

# ---- overrides: options given win, wherever they stand -------------------------
summary() { # FILE: the k=... part of the summary line
    sed -n 's/.*; \(k=[0-9]*, b=[0-9]*, r=[0-9]* ([a-z]*), threshold [0-9.]*\),.*/\1/p' "$1"
}
expect_summary() { # NAME WANT ARGS...
    n=$1 want=$2
    shift 2
    if dd "o.$n" "$@"; then
        got=$(summary "$tmp/o.$n.err")
        if [ "$got" = "$want" ]; then ok "$n"; else ko "$n" "got '$got', expected '$want'"; fi
    else
        ko "$n" "$(cat "$tmp/o.$n.err")"
    fi
}
expect_summary override_threshold_after "k=112, b=14, r=8 (preset), threshold 0.8" \
    --preset fineweb --threshold 0.8
expect_summary override_threshold_before "k=112, b=14, r=8 (preset), threshold 0.8" \
    --threshold 0.8 --preset fineweb
expect_summary override_bands "k=112, b=7, r=8 (manual), threshold 0.75" \
    --preset fineweb --bands 7
expect_summary override_rows "k=112, b=14, r=4 (manual), threshold 0.75" \
    --rows 4 --preset fineweb
# --num-perm alone: the preset's banding was cut for its own k, so the
# banding is planned for the new one
plan=$("$M" params --num-perm 128 --threshold 0.75 | sed -n 's/^bands (b) *\([0-9]*\)$/\1/p;s/^rows (r) *\([0-9]*\)$/\1/p' | tr '\n' ' ')
set -- $plan
expect_summary override_num_perm "k=128, b=$1, r=$2 (recall), threshold 0.75" \
    --preset fineweb --num-perm 128
expect_summary override_num_perm_bands "k=128, b=16, r=8 (manual), threshold 0.75" \
    --preset fineweb --num-perm 128 --bands 16

# shingling and normalisation options add to the preset's; --shingle and
# --no-cjk-words replace and take away
override_same() { # NAME PRESET_ARGS -- HAND_ARGS
    n=$1
    shift
    pa=""
    while [ "$1" != "--" ]; do pa="$pa $1"; shift; done
    shift
    # shellcheck disable=SC2086
    if dd "op.$n" $pa && dd "oh.$n" "$@" && cmp -s "$tmp/op.$n" "$tmp/oh.$n"; then ok "$n"
    else ko "$n" "$(diff "$tmp/op.$n" "$tmp/oh.$n" | head -n 4)" "$(cat "$tmp/op.$n.err")"; fi
}
override_same override_add_casefold --casefold --preset lee2022-0.9 -- --shingle word:5 \
    --no-cjk-words --casefold --num-perm 800 --bands 40 --rows 20 --threshold 0.9
check_fate override_add_casefold_applies "$tmp/op.override_add_casefold" case_b dropped
override_same override_shingle --preset fineweb --shingle word:3 -- --shingle word:3 --casefold \
    --unicode-punct --unicode-space --num-perm 112 --bands 14 --rows 8 --threshold 0.75
override_same override_no_cjk --preset fineweb --no-cjk-words -- --shingle word:5 --casefold \
    --unicode-punct --unicode-space --no-cjk-words --num-perm 112 --bands 14 --rows 8 \
    --threshold 0.75
override_same preset_name_case --preset FineWeb -- --preset fineweb

# ---- unknown names and where --preset is accepted -------------------------------
if run unknown_preset 2 "$M" dedup --preset finewab "$C/corpus.jsonl"; then
    has unknown_preset_message "$tmp/err" \
        "invalid value 'finewab' for --preset: expected one of fineweb, refinedweb, lee2022, lee2022-0.9, nemo-curator, slimpajama \(minlsh params --list-presets\)"
fi
run unknown_preset_params 2 "$M" params --preset "" && ok unknown_preset_params
if run preset_not_for_sig 2 "$M" sig --preset fineweb "$C/corpus.jsonl"; then
    has preset_not_for_sig_message "$tmp/err" "unknown option '--preset'"
fi

# ---- params --------------------------------------------------------------------
if run params_preset 0 "$M" params --preset fineweb --svg "$tmp/p.svg" &&
   cp "$tmp/out" "$tmp/params.p" &&
   run params_hand 0 "$M" params --bands 14 --rows 8 --threshold 0.75 --svg "$tmp/h.svg"; then
    line params_preset_named "$tmp/params.p" "chosen by            preset fineweb"
    line params_preset_shingles "$tmp/params.p" \
        "shingles             word:5 (casefold,unicode-punct,unicode-space,cjk-words)"
    has params_preset_source "$tmp/params.p" "^source +Penedo et al. 2024.*2406.17557"
    # the same S-curve and areas as the banding written out
    sed -n '/^bands (b)/,$p' "$tmp/params.p" | grep -v '^chosen by' > "$tmp/curve.p"
    grep -v '^chosen by' "$tmp/out" > "$tmp/curve.h"
    if cmp -s "$tmp/curve.p" "$tmp/curve.h"; then ok params_preset_curve
    else ko params_preset_curve "$(diff "$tmp/curve.p" "$tmp/curve.h" | head -n 6)"; fi
    if cmp -s "$tmp/p.svg" "$tmp/h.svg"; then ok params_preset_svg
    else ko params_preset_svg "the SVGs differ"; fi
    # the probabilities FineWeb's appendix E.1 prints: 56%, 77%, 92% (0.7, 0.75, 0.8)
    line params_fineweb_07 "$tmp/params.p" "   0.7  0.5645"
    line params_fineweb_075 "$tmp/params.p" "  0.75  0.7716  <- threshold"
    line params_fineweb_08 "$tmp/params.p" "   0.8  0.9235"
fi
if run list_presets 0 "$M" params --list-presets; then
    n=$(grep -c '^[a-z0-9.-]*: ' "$tmp/out")
    s=$(grep -c '^  source ' "$tmp/out")
    if [ "$n" = 6 ] && [ "$s" = 6 ]; then ok list_presets_all; else ko list_presets_all "$n presets, $s sources"; fi
    line list_presets_lee_curve "$tmp/out" \
        "  P(candidate)  0.5: 0.0004 0.7: 0.3018 0.8: 0.9946 0.9: 1.0000; midpoint 0.7368"
    line list_presets_lee_shingles "$tmp/out" "  shingles      word:5 (no normalisation, no-cjk-words)"
fi

finish
