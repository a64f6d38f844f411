#!/bin/sh
# minlsh dedup past its memory budget: --memory as the summary gives it
# (never a tiny budget read as "0 MiB"), --tmpdir checked before the run,
# and every way a temporary file can fail named in one message with status
# 1 (no such directory, not a directory, not writable, disk full, file size
# limit), the command never killed by SIGXFSZ, nothing left behind. The
# disk-full and (as root) not-writable checks mount a small tmpfs; where
# that is not allowed they say "skipped" and why.
set -u
cd "$(dirname "$0")/.." || exit 1
. tests/lib.sh
tl_begin spill
cd "$tmp" || exit 1

# 2,000 documents of 100 words: about 1.2 MB of JSON Lines, and more than
# that in temporary files with a 1-byte budget.
$PY - <<'EOF'
import json, random
rnd = random.Random(3)
with open("corpus.jsonl", "w") as f:
    for i in range(2000):
        words = " ".join("w%d" % rnd.randrange(3000) for _ in range(100))
        f.write(json.dumps({"id": "d%d" % i, "text": words}) + "\n")
EOF
mkdir spill
: > a-file
HINT="--tmpdir chooses another directory, --memory none keeps everything in memory"

# ---- --memory, as the summary says it -----------------------------------------
for m in "1:1 byte" "1000:1000 bytes" "100K:100 KiB" "1536K:1.5 MiB" "512M:512 MiB" \
         "4G:4 GiB" "none:no limit" "0:[0-9.]+ [GM]iB"; do
    v=${m%%:*} want=${m#*:}
    run "budget_$v" 0 "$M" dedup --jsonl --memory "$v" --tmpdir spill corpus.jsonl &&
        has "budget_$v" err "peak RSS [0-9.]+ MiB; engine [0-9.]+ MiB at the end \\(budget $want\\); temporary files"
done

# ---- --tmpdir, checked before the run -------------------------------------------
run tmpdir_empty 2 "$M" dedup --jsonl --tmpdir '' corpus.jsonl &&
    line tmpdir_empty err "minlsh: dedup: invalid value '' for --tmpdir: expected a directory"
run tmpdir_missing 2 "$M" dedup --jsonl --tmpdir no-such-dir corpus.jsonl &&
    line tmpdir_missing err "minlsh: dedup: --tmpdir no-such-dir: no such directory"
run tmpdir_file 2 "$M" dedup --jsonl --tmpdir a-file corpus.jsonl &&
    line tmpdir_file err "minlsh: dedup: --tmpdir a-file: not a directory"

# ---- $TMPDIR, which only a run that needs a file uses ------------------------------
run tmpdir_env_unused 0 env TMPDIR=no-such-dir "$M" dedup -q --jsonl --memory none corpus.jsonl &&
    ok tmpdir_env_unused
run tmpdir_env_missing 1 env TMPDIR=no-such-dir "$M" dedup -q --jsonl --memory 1 corpus.jsonl &&
    line tmpdir_env_missing err "minlsh: no-such-dir: cannot write temporary files: no such directory; $HINT"
run tmpdir_env_file 1 env TMPDIR=a-file "$M" dedup -q --jsonl --memory 1 corpus.jsonl &&
    line tmpdir_env_file err "minlsh: a-file: cannot write temporary files: not a directory; $HINT"
# The records kept for --output kept go to a file whatever the budget.
run tmpdir_env_spool 1 env TMPDIR=no-such-dir "$M" dedup -q --jsonl --memory none --output kept corpus.jsonl &&
    line tmpdir_env_spool err "minlsh: no-such-dir: cannot write temporary files: no such directory; $HINT"

# ---- not writable, disk full: a small file system --------------------------------
# mount_tmpfs DIR OPTIONS: 0 if a tmpfs is mounted on DIR.
mount_tmpfs() {
    mkdir -p "$1"
    [ "$(id -u)" -eq 0 ] && mount -t tmpfs -o "$2" tmpfs "$1" 2> /dev/null
}
mkdir ro
if [ "$(id -u)" -ne 0 ]; then
    chmod 555 ro
    RO_WHY="not writable (permission denied)"
    ro_ready=1
elif mount_tmpfs ro ro,size=64k; then
    RO_WHY="not writable (a read-only file system)"
    ro_ready=1
else
    echo "skipped not_writable: root writes anywhere and no read-only tmpfs can be mounted here"
    ro_ready=0
fi
if [ "$ro_ready" -eq 1 ]; then
    run not_writable_option 2 "$M" dedup --jsonl --tmpdir ro corpus.jsonl &&
        line not_writable_option err "minlsh: dedup: --tmpdir ro: $RO_WHY"
    run not_writable_env 1 env TMPDIR=ro "$M" dedup -q --jsonl --memory 1 corpus.jsonl &&
        line not_writable_env err "minlsh: ro: cannot write temporary files: $RO_WHY; $HINT"
    if [ "$(id -u)" -eq 0 ]; then umount ro; else chmod 755 ro; fi
fi
if mount_tmpfs small size=64k; then
    run disk_full 1 "$M" dedup -q --jsonl --memory 1 --tmpdir small corpus.jsonl &&
        line disk_full err "minlsh: small: cannot write temporary files: the disk is full; $HINT"
    run disk_full_spool 1 "$M" dedup -q --jsonl --memory none --output kept --tmpdir small corpus.jsonl &&
        line disk_full_spool err "minlsh: small: cannot write temporary files: the disk is full; $HINT"
    if [ -z "$(ls -A small)" ]; then ok disk_full_nothing_left; else ko disk_full_nothing_left "$(ls small)"; fi
    umount small
else
    echo "skipped disk_full: a small tmpfs cannot be mounted here (needs root)"
fi

# ---- the file size limit -------------------------------------------------------
# Past ulimit -f the default action of SIGXFSZ kills the process (status
# 153); the command ignores it, so the write fails with EFBIG and is
# reported. No trap here: the command must do it itself. (A coverage build
# would tear its counters file at the limit too: a scratch GCOV_PREFIX.)
limited() {
    (ulimit -f 64; GCOV_PREFIX=$tmp/gcov; export GCOV_PREFIX; exec "$M" "$@") > out 2> err
}
for args in "--memory 1" "--memory none --output kept"; do
    name=file_size_limit_$(echo "$args" | tr -c 'a-z0-9\n' _)
    # shellcheck disable=SC2086
    limited dedup -q --jsonl $args --tmpdir spill corpus.jsonl
    st=$?
    if [ "$st" -eq 1 ]; then ok "$name"; else ko "$name" "exit status $st, expected 1" "$(cat err)"; fi
    line "${name}_named" err "minlsh: spill: cannot write temporary files: past the file size limit (ulimit -f); $HINT"
done
if [ -z "$(ls -A spill)" ]; then ok file_size_limit_nothing_left; else ko file_size_limit_nothing_left "$(ls spill)"; fi

finish
