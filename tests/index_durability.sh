#!/bin/sh
# The durability rules of an index on disk, through the command:
# - a damaged journal record with committed records after it is reported
#   (MINLSH_E_CORRUPT, exit 1) by readers and writers alike, and the journal
#   is never cut; a torn tail after the last commit is dropped;
# - an index reached through a symbolic link is one index: one lock, one
#   journal, and compaction replaces the file, not the link;
# - every replacement keeps the file's mode and group, and a journal takes
#   its index's;
# - a file written by the command (--svg) through a link, to a device or to
#   a FIFO is written there, never replaced by a regular file;
# - a directory or a FIFO given as the index is refused at once;
# - an index truncated by another program while mapped gives a message and
#   exit 1, not death by SIGBUS;
# - `minlsh index` names every subcommand, and `index add --help` tells
#   how documents become durable.
set -u
cd "$(dirname "$0")/.." || exit 1
. tests/lib.sh
tl_begin index_durability
mkdir -p "$tmp/docs"
i=0
while [ $i -lt 40 ]; do
    seq $((i * 50)) $((i * 50 + 40)) | sed "s/^/w$i-/" | tr '\n' ' ' > "$tmp/docs/d$i.txt"
    i=$((i + 1))
done
names() { # the documents an index holds, by name
    "$M" index query -q --all --format tsv "$1" "$tmp"/docs/d*.txt 2> /dev/null | sed 1d | cut -f2 | sort -u
}

# ---- a damaged journal -------------------------------------------------------
"$M" index create -q "$tmp/a.mlsh" && "$M" index add -q "$tmp/a.mlsh" "$tmp"/docs/d1*.txt &&
    "$M" index add -q "$tmp/a.mlsh" "$tmp"/docs/d2*.txt
cp "$tmp/a.mlsh.journal" "$tmp/good.journal"
# A bit flipped in the first sync's records: the second sync's commit follows.
"$PY" -c "import sys; p=sys.argv[1]; b=bytearray(open(p,'rb').read()); b[100]^=4; open(p,'wb').write(b)" \
    "$tmp/a.mlsh.journal"
cp "$tmp/a.mlsh.journal" "$tmp/flipped.journal"
if run stats_reports_damage 1 "$M" index stats "$tmp/a.mlsh"; then
    has stats_names_the_journal "$tmp/err" 'a\.mlsh\.journal: .*MINLSH_E_CORRUPT.*left as it is'
fi
if run add_refuses_damage 1 "$M" index add -q "$tmp/a.mlsh" "$tmp"/docs/d3*.txt; then
    has add_names_the_journal "$tmp/err" 'MINLSH_E_CORRUPT'
fi
run query_refuses_damage 1 "$M" index query -q "$tmp/a.mlsh" "$tmp/docs/d1.txt"
run compact_refuses_damage 1 "$M" index compact -q "$tmp/a.mlsh"
if cmp -s "$tmp/a.mlsh.journal" "$tmp/flipped.journal"; then ok damaged_journal_never_cut
else ko damaged_journal_never_cut "the journal changed"; fi
# Mended (the good copy back), every document of both syncs is there.
cp "$tmp/good.journal" "$tmp/a.mlsh.journal"
if [ "$(names "$tmp/a.mlsh" | wc -l)" -eq 22 ]; then ok mended_journal_keeps_all
else ko mended_journal_keeps_all "$(names "$tmp/a.mlsh" | wc -l) documents"; fi
# A torn tail (a sync cut short: part of a record, no commit after it) is
# dropped, the documents synced before it kept, and the next add goes on.
size=$(wc -c < "$tmp/a.mlsh.journal")
head -c 300 "$tmp/a.mlsh.journal" | tail -c 200 >> "$tmp/a.mlsh.journal"
if run torn_tail_dropped 0 "$M" index add -q "$tmp/a.mlsh" "$tmp"/docs/d3*.txt &&
   [ "$(names "$tmp/a.mlsh" | wc -l)" -eq 33 ]; then ok torn_tail_keeps_synced
else ko torn_tail_keeps_synced "$(names "$tmp/a.mlsh" | wc -l) documents, journal was $size bytes"; fi

# ---- one index through a symbolic link -----------------------------------------
mkdir -p "$tmp/real" "$tmp/links"
# The journal is made with the index (mode 640 from the umask); given a
# group, both keep it through adds and compactions.
(umask 027; "$M" index create -q "$tmp/real/s.mlsh")
group=$(id -gn)
if [ "$(id -u)" -eq 0 ]; then group=daemon; chgrp daemon "$tmp/real/s.mlsh" "$tmp/real/s.mlsh.journal"; fi
ln -s ../real/s.mlsh "$tmp/links/s.mlsh"
"$M" index add -q "$tmp/links/s.mlsh" "$tmp"/docs/d1*.txt
"$M" index add -q "$tmp/real/s.mlsh" "$tmp"/docs/d2*.txt
if [ ! -e "$tmp/links/s.mlsh.journal" ] && [ ! -e "$tmp/links/s.mlsh.lock" ] &&
   [ -f "$tmp/real/s.mlsh.journal" ] && [ -f "$tmp/real/s.mlsh.lock" ]; then
    ok link_one_journal_one_lock
else ko link_one_journal_one_lock "$(ls -la "$tmp/links" "$tmp/real")"; fi
if [ "$(names "$tmp/links/s.mlsh" | wc -l)" -eq 22 ]; then ok link_sees_both_adds
else ko link_sees_both_adds "$(names "$tmp/links/s.mlsh" | wc -l) documents"; fi
mode_of() { stat -c '%a %G' "$1"; }
if [ "$(mode_of "$tmp/real/s.mlsh.journal")" = "640 $group" ]; then ok new_journal_takes_index_mode
else ko new_journal_takes_index_mode "$(mode_of "$tmp/real/s.mlsh.journal")"; fi
"$M" index compact -q "$tmp/links/s.mlsh"
if [ -L "$tmp/links/s.mlsh" ] && [ "$(names "$tmp/real/s.mlsh" | wc -l)" -eq 22 ]; then
    ok compact_through_link_keeps_link
else ko compact_through_link_keeps_link "$(ls -la "$tmp/links" "$tmp/real")"; fi
if [ "$(mode_of "$tmp/real/s.mlsh")" = "640 $group" ] &&
   [ "$(mode_of "$tmp/real/s.mlsh.journal")" = "640 $group" ]; then ok compact_keeps_mode_and_group
else ko compact_keeps_mode_and_group "$(ls -la "$tmp/real")"; fi
chmod 600 "$tmp/real/s.mlsh"
"$M" index remove -q "$tmp/links/s.mlsh" "$tmp/docs/d1.txt"
if [ "$(stat -c %a "$tmp/real/s.mlsh")" = 600 ]; then ok remove_keeps_mode_600
else ko remove_keeps_mode_600 "$(stat -c %a "$tmp/real/s.mlsh")"; fi

# ---- files the command writes: links, devices, FIFOs -------------------------
ln -s curve.svg "$tmp/link.svg"
if run svg_through_link 0 "$M" params --threshold 0.8 --svg "$tmp/link.svg" &&
   [ -L "$tmp/link.svg" ] && grep -q '</svg>' "$tmp/curve.svg"; then ok svg_link_stays_link
else ko svg_link_stays_link "$(ls -la "$tmp")"; fi
if mknod "$tmp/null" c 1 3 2> /dev/null && mknod "$tmp/full" c 1 7 2> /dev/null; then
    run svg_to_null_device 0 "$M" params --threshold 0.8 --svg "$tmp/null"
    if run svg_to_full_device 1 "$M" params --threshold 0.8 --svg "$tmp/full"; then
        has svg_full_says_why "$tmp/err" 'full: cannot write: No space left on device'
    fi
    if [ -c "$tmp/null" ] && [ -c "$tmp/full" ]; then ok devices_stay_devices
    else ko devices_stay_devices "$(ls -la "$tmp/null" "$tmp/full")"; fi
else
    echo "skip devices (mknod needs root)"
fi
mkfifo "$tmp/pipe.svg"
cat "$tmp/pipe.svg" > "$tmp/from_pipe" &
reader=$!
run svg_to_fifo 0 "$M" params --threshold 0.8 --svg "$tmp/pipe.svg"
wait $reader
if [ -p "$tmp/pipe.svg" ] && grep -q '</svg>' "$tmp/from_pipe"; then ok fifo_written_through
else ko fifo_written_through "$(ls -la "$tmp/pipe.svg")"; fi

# ---- what is not an index file -----------------------------------------------
mkdir "$tmp/dir.mlsh"
if run directory_refused 1 "$M" index stats "$tmp/dir.mlsh"; then
    has directory_named "$tmp/err" 'dir\.mlsh: cannot open the index: a directory'
fi
mkfifo "$tmp/fifo.mlsh"
if run fifo_refused_without_blocking 1 timeout 20 "$M" index stats "$tmp/fifo.mlsh"; then
    has fifo_named "$tmp/err" 'fifo\.mlsh: cannot open the index: a FIFO'
fi

# ---- truncated while mapped ---------------------------------------------------
"$M" index create -q "$tmp/m.mlsh" && "$M" index add -q "$tmp/m.mlsh" "$tmp"/docs/*.txt &&
    "$M" index compact -q "$tmp/m.mlsh"
mkfifo "$tmp/qin"
("$M" index query "$tmp/m.mlsh" - < "$tmp/qin" > "$tmp/qout" 2> "$tmp/qerr"; echo $? > "$tmp/qrc") &
exec 3> "$tmp/qin"
# The query maps the index, then reads its documents: wait for the mapping.
n=0
mapped=0
while [ $n -lt 200 ] && [ $mapped -eq 0 ]; do
    for p in $(pgrep -f "index query $tmp/m.mlsh" 2> /dev/null); do
        grep -q "$tmp/m.mlsh\$" "/proc/$p/maps" 2> /dev/null && mapped=1
    done
    [ $mapped -eq 1 ] || sleep 0.05
    n=$((n + 1))
done
: > "$tmp/m.mlsh" # truncated in place, as a careless backup restore would
cat "$tmp"/docs/d1*.txt >&3
exec 3>&-
wait
if [ $mapped -eq 1 ] && [ "$(cat "$tmp/qrc")" = 1 ] &&
   grep -q 'm\.mlsh: damaged index: the file changed while this process had it mapped' "$tmp/qerr"
then ok truncated_while_mapped_reported
else ko truncated_while_mapped_reported "mapped $mapped, status $(cat "$tmp/qrc")" "$(cat "$tmp/qerr")"; fi

# ---- what the command says about its index subcommands -------------------------
if run index_alone_is_usage 2 "$M" index; then
    has index_alone_lists_all "$tmp/err" 'create, add, query, stats, merge, remove, compact'
fi
if run add_help 0 "$M" index add --help; then
    has add_help_tells_journal "$tmp/out" 'INDEX\.journal, which is synced at the end'
    nothing add_help_no_single_save "$tmp/out" 'saved once'
fi

finish
