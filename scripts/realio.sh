#!/usr/bin/env bash
# Issue 16 "Must show": nowa ycsb on real I/O. Runs YCSB-A in place and out of place on a
# regular file and on a raw loop device (losetup --direct-io=on over a file in the same
# directory), and reports per configuration, for the run phase only:
#   device B/update  bytes the block device wrote (/sys/dev/block/MAJ:MIN/stat, sectors x 512)
#                    per update: for the file, the device under its file system (journal and
#                    metadata included, and any other process's I/O on it); for the loop
#                    device, the loop device itself
#   flushes/op       flush requests the block device completed per operation (kernel >= 5.5)
#   ops/s, peak RSS  from nowa's JSON and /usr/bin/time
# The run phase is isolated by running each configuration twice with the same seed: load only
# (--ops 1) and load + run; the figures are the differences.
#
# Measured (issue 16 closing note): RECORDS=100000 OPS=100000 POOL=2MiB CAPACITY=256MiB on ext4
# over a virtio disk and on loop0, in place: flushes per op 0.521 (main at 5f18400) -> 0.021,
# 48 page writes per store flush, ops/s 287 -> 823 on the loop device (shared, noisy machine).
#
# Usage: scripts/realio.sh [NOWA_BINARY]    (default target/release/nowa)
# Environment: RECORDS (default 200000), OPS (300000), POOL (4MiB), CAPACITY (512MiB),
#   VALUE (124, bytes per value), DIR (a scratch directory, default /tmp/nowa-realio; it must
#   not be on tmpfs for the file runs to reach a block device), PATHS ("inplace oop"),
#   FS ("loop": the file runs go to ext4 made on a second loop device of FS_SIZE, default
#   CAPACITY + 256MiB, so the device counters hold only nowa's I/O and the ext4 journal; "dir":
#   a file in DIR on whatever file system holds it), MEM (memory limit of each nowa process
#   through a memory cgroup, e.g. 128MiB; default none; skipped with a message where no
#   memory cgroup can be made), DURABLE_EVERY (a durability point every N updates,
#   `--durable-every`; default 1000 as in issue 16; empty: the engine's async WAL flushes
#   only), EXTRA (more `nowa ycsb` flags),
#   EXTRA_OOP (flags for the out-of-place runs only, e.g. "--space-limit 384MiB").
# Issue 16's setup: RECORDS=2000000 OPS=300000 POOL=32MiB MEM=128MiB VALUE=124 DURABLE_EVERY=1000
# (docs/realio.md).
# Loop devices need root and /dev/loop-control; without them the loop runs (and FS=loop)
# are skipped with a message. Loop devices are always detached and the file system unmounted
# (trap); the scratch files are removed.
set -euo pipefail

NOWA=${1:-target/release/nowa}
RECORDS=${RECORDS:-200000}
OPS=${OPS:-300000}
POOL=${POOL:-4MiB}
CAPACITY=${CAPACITY:-512MiB}
VALUE=${VALUE:-124}
DIR=${DIR:-/tmp/nowa-realio}
PATHS=${PATHS:-inplace oop}
FS=${FS:-loop}
FS_SIZE=${FS_SIZE:-}
MEM=${MEM:-}
DURABLE_EVERY=${DURABLE_EVERY-1000}
EXTRA=${EXTRA:-}
[ -n "$DURABLE_EVERY" ] && EXTRA="--durable-every $DURABLE_EVERY $EXTRA"
EXTRA_OOP=${EXTRA_OOP:-}
[ -x "$NOWA" ] || { echo "realio.sh: no nowa binary at $NOWA (cargo build --release -p nowa-cli)" >&2; exit 2; }
mkdir -p "$DIR"
LOOP=""
FSLOOP=""
CG=""
cleanup() {
    if [ -n "$LOOP" ]; then losetup -d "$LOOP" 2>/dev/null || true; fi
    if mountpoint -q "$DIR/mnt" 2>/dev/null; then umount "$DIR/mnt" || true; fi
    rmdir "$DIR/mnt" 2>/dev/null || true
    if [ -n "$FSLOOP" ]; then losetup -d "$FSLOOP" 2>/dev/null || true; fi
    if [ -n "$CG" ]; then rmdir "$CG" 2>/dev/null || true; fi
    rm -f "$DIR"/db-*.img "$DIR"/loop-backing.img "$DIR"/fs-backing.img "$DIR"/*.json.tmp
}
trap cleanup EXIT INT TERM

# stat file of the block device holding $1 (a block device node: itself)
stat_file() {
    local majmin
    if [ -b "$1" ]; then
        majmin=$(printf '%d:%d' "0x$(stat -c %t "$1")" "0x$(stat -c %T "$1")")
    else
        # the file may not exist yet: its directory's file system
        majmin=$(findmnt -n -o MAJ:MIN --target "$(dirname "$1")" | head -1 | tr -d ' ')
    fi
    local f="/sys/dev/block/$majmin/stat"
    [ -r "$f" ] && echo "$f"
}

# sectors written and flushes completed: "SECTORS FLUSHES" (0 0 when unreadable)
counters() {
    if [ -z "$1" ]; then echo "0 0"; return; fi
    awk '{ print $7, ($16 == "" ? 0 : $16) }' "$1"
}

# a memory cgroup limited to $MEM (v2 unified or v1 memory hierarchy): sets CG
make_cgroup() {
    local bytes root
    [ -n "$MEM" ] || return 0
    bytes=$(python3 -c "import re,sys; m=re.fullmatch(r'(\d+)([KMG]i?B)?', sys.argv[1]); u={'KiB':1<<10,'MiB':1<<20,'GiB':1<<30,'KB':10**3,'MB':10**6,'GB':10**9}; print(int(m[1])*u.get(m[2] or '',1))" "$MEM") \
        || { echo "realio.sh: MEM=$MEM is not a size (e.g. 128MiB)" >&2; exit 2; }
    for root in /sys/fs/cgroup /sys/fs/cgroup/unified; do
        if [ -w "$root/cgroup.subtree_control" ] && grep -qw memory "$root/cgroup.controllers" 2>/dev/null; then
            echo +memory >"$root/cgroup.subtree_control" 2>/dev/null || true
            CG="$root/nowa-realio-$$"
            mkdir -p "$CG" && echo "$bytes" >"$CG/memory.max" && echo 0 >"$CG/memory.swap.max" 2>/dev/null
            return 0
        fi
    done
    if [ -d /sys/fs/cgroup/memory ] && [ -w /sys/fs/cgroup/memory ]; then
        CG=/sys/fs/cgroup/memory/nowa-realio-$$
        mkdir -p "$CG" && echo "$bytes" >"$CG/memory.limit_in_bytes"
        return 0
    fi
    echo "  (MEM=$MEM: no writable memory cgroup here; nowa runs without a memory limit)" >&2
}

# in_cgroup CMD...: CMD inside $CG (if any)
in_cgroup() {
    if [ -n "$CG" ]; then
        sh -c 'echo $$ >"$0/cgroup.procs" && exec "$@"' "$CG" "$@"
    else
        "$@"
    fi
}

# run_one LABEL TARGET STATFILE PATH OPS -> writes "$DIR/LABEL-OPS.json", prints
# "SECTORS FLUSHES RSS_KIB"
run_one() {
    local label=$1 target=$2 sf=$3 wp=$4 ops=$5 before after rss
    before=$(counters "$sf")
    local force=()
    [ -b "$target" ] && force=(--force "$target")
    local extra=$EXTRA
    [ "$wp" = oop ] && extra="$EXTRA $EXTRA_OOP"
    # shellcheck disable=SC2086 # EXTRA is a list of flags
    in_cgroup /usr/bin/time -f "%M" -o "$DIR/time.tmp" "$NOWA" ycsb -q --json --device "$target" \
        "${force[@]}" --capacity "$CAPACITY" --records "$RECORDS" --value-size "$VALUE" \
        --ops "$ops" --pool "$POOL" --threads 1 --durability async --theta 0.8 --seed 7 \
        --write-path "$wp" $extra >"$DIR/$label-$ops.json" 2>>"$DIR/nowa.log"
    sync
    after=$(counters "$sf")
    rss=$(tail -1 "$DIR/time.tmp")
    echo "$before $after" | awk -v r="$rss" '{ print $3 - $1, $4 - $2, r }'
}

# wipe TARGET: remove the file, or zero the start of the device (superblocks, doublewrite)
wipe() {
    if [ -b "$1" ]; then
        dd if=/dev/zero of="$1" bs=1M count=4 oflag=direct status=none
    else
        rm -f "$1"
    fi
}

# measure LABEL TARGET PATH: one row of the table
measure() {
    local label=$1 target=$2 wp=$3 sf
    sf=$(stat_file "$target" || true)
    [ -z "$sf" ] && echo "  ($label: no /sys counters for $target: device bytes are not readable)" >&2
    read -r s0 f0 _ < <(run_one "$label" "$target" "$sf" "$wp" 1)
    wipe "$target"
    read -r s1 f1 rss < <(run_one "$label" "$target" "$sf" "$wp" "$OPS")
    wipe "$target"
    python3 - "$DIR/$label-$OPS.json" "$((s1 - s0))" "$((f1 - f0))" "$rss" "$label" <<'EOF'
import json, sys
r = json.load(open(sys.argv[1]))
sectors, flushes, rss, label = int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
ops = r["ops"]
updates = r["update"]["count"] or 1
eng = r.get("flushes_per_op")
ppf = r.get("page_writes_per_store_flush")
na = lambda x, f: "n/a" if x is None else format(x, f)
d = r.get("drilldown", {})
mp = d.get("mapping_pages") or 0
ram = d.get("mapping_ram_bytes", 0) / mp if mp else None
print(f"{label:<16} {sectors * 512 / updates:>12.0f} {flushes / ops:>10.3f} "
      f"{na(eng, '.3f'):>10} {na(ppf, '.1f'):>8} {r['ops_per_sec']:>9.0f} "
      f"{rss / 1024:>8.1f} {r['physical_bytes_per_op']:>10.0f} {r['load_secs']:>7.1f} "
      f"{na(ram, '.1f'):>9}")
EOF
}

loop_ok() { [ "$(id -u)" -eq 0 ] && [ -e /dev/loop-control ]; }

# FS=loop: ext4 on its own loop device, mounted at $DIR/mnt; sets FILEDIR
FILEDIR=$DIR
if [ "$FS" = loop ]; then
    if loop_ok; then
        truncate -s "${FS_SIZE:-$(python3 -c "import re,sys; m=re.fullmatch(r'(\d+)([KMG]i?B)?', sys.argv[1]); u={'KiB':1<<10,'MiB':1<<20,'GiB':1<<30}; print(int(m[1])*u.get(m[2] or '',1) + (256<<20))" "$CAPACITY")}" "$DIR/fs-backing.img"
        if FSLOOP=$(losetup --direct-io=on -f --show "$DIR/fs-backing.img" 2>/dev/null); then
            # Inode tables and journal zeroed by mkfs, not lazily after the mount: ext4lazyinit
            # zeroes the inode tables (REQ_OP_WRITE_ZEROES, counted as sectors written) in
            # the background during the first runs, which moved the file runs' bytes by
            # +-170 B per update (block trace, docs/engine-writes.md session 7b).
            mkfs.ext4 -q -F -E lazy_itable_init=0,lazy_journal_init=0 "$FSLOOP" \
                && mkdir -p "$DIR/mnt" && mount "$FSLOOP" "$DIR/mnt" && FILEDIR=$DIR/mnt
            # Every group's inode table is marked zeroed: nothing is left for ext4lazyinit.
            if dumpe2fs "$FSLOOP" 2>/dev/null | grep -E '^Group [0-9]+:' | grep -qv ITABLE_ZEROED; then
                echo "realio.sh: ext4 on $FSLOOP has inode tables left to zero lazily" >&2
                exit 1
            fi
        else
            FSLOOP=""
            echo "  (FS=loop: losetup failed; the file runs use $DIR)" >&2
        fi
    else
        echo "  (FS=loop needs root and /dev/loop-control; the file runs use $DIR)" >&2
    fi
fi
make_cgroup

echo "nowa realio: $NOWA, $RECORDS records x $VALUE B, $OPS ops YCSB-A zipf 0.8, pool $POOL, device $CAPACITY, async durability${DURABLE_EVERY:+ with a durability point every $DURABLE_EVERY updates}, seed 7${MEM:+, memory limit $MEM}${EXTRA:+, $EXTRA}${EXTRA_OOP:+, out of place $EXTRA_OOP}"
echo "file runs on $(findmnt -n -o SOURCE,FSTYPE --target "$FILEDIR" | head -1)"
printf '%-16s %12s %10s %10s %8s %9s %8s %10s %7s %9s\n' target "dev B/upd" "dev fl/op" "nowa fl/op" "pg/flush" "ops/s" "RSS MiB" "phys B/op" "load s" "map B/pg"
for wp in $PATHS; do
    measure "file-$wp" "$FILEDIR/db-$wp.img" "$wp"
done
if ! loop_ok; then
    echo "loop device runs skipped: they need root and /dev/loop-control" >&2
    exit 0
fi
truncate -s "$CAPACITY" "$DIR/loop-backing.img"
if ! LOOP=$(losetup --direct-io=on -f --show "$DIR/loop-backing.img" 2>/dev/null); then
    LOOP=""
    echo "loop device runs skipped: losetup failed (loop devices not allowed here)" >&2
    exit 0
fi
for wp in $PATHS; do
    wipe "$LOOP"
    measure "loop-$wp" "$LOOP" "$wp"
done
echo "dev B/upd: block-device bytes written per update; dev fl/op: block-device flushes per op;"
echo "nowa fl/op: flushes nowa counts; pg/flush: page writes (user + doublewrite) per store flush"
echo "(n/a: the binary does not report them); phys B/op: nowa's own bytes per op; load s: the"
echo "load phase of the load + run process; map B/pg: out of place, mapping RAM per mapped page"
