#!/usr/bin/env bash
# nowa ycsb on real I/O. Runs YCSB-A in place and out of place on a file and on a raw loop
# device, and reports per configuration, for the run phase only:
#   dev B/upd   bytes the block device wrote (/sys/dev/block/MAJ:MIN/stat, sectors x 512) per
#               update: for the file, the device under its file system (journal and metadata
#               included); for the loop device, the loop device itself
#   dev fl/op   flush requests the block device completed per operation (kernel >= 5.5)
#   dev pg/fl   4 KiB pages the block device wrote per flush it completed
#   dev rd/op   read requests the block device completed per operation
#   rd ms       milliseconds the block device spent per read (/sys stat: ms reading / reads)
#   nowa fl/op, pg/flush, rd/op   nowa's own flushes per op, page writes per store flush, and
#               device reads per op ((stats.page_reads + stats.delta_reads) / ops)
#   rd p99, upd p99   read and update latency p99 in microseconds (nowa's JSON)
#   ops/s, RSS MiB, wall s, CPU s   of the load + run process (/usr/bin/time: user + sys)
#   phys B/op   nowa's own bytes per op; map B/pg: out of place, mapping RAM per mapped page
# The run phase is isolated by running each configuration twice with the same seed: load only
# (--ops 1) and load + run; the device figures are the differences (exact counts in
# DIR/device-counters.txt). At the end, the ext4 file's device bytes per update over the raw
# loop device's, per write path.
#
# Usage: scripts/realio.sh [--backing shm|disk] [--force] [--help] [NOWA_BINARY]
#   NOWA_BINARY   default target/release/nowa
#   --backing shm (default): the loop devices' backing files live on tmpfs (/dev/shm, in a
#                 fresh directory of their own; losetup --direct-io=off, as tmpfs has no disk).
#                 The counted I/O is unchanged: the counters are the loop devices' own, i.e.
#                 what nowa (or ext4) sends to the block device, before the loop driver turns
#                 it into reads and writes of the backing file; only the backing file's speed
#                 changes (memory instead of the VM's disk). Needs CAPACITY + FS_SIZE free on
#                 /dev/shm (checked). Default because the block counters are the measurement
#                 and the disk backing makes a full-scale run take hours (each engine read is
#                 a synchronous 4 KiB read of the VM's disk at queue depth 1; measured in
#                 docs/engine-writes.md, session 8). Latencies are then those of the kernel's
#                 block path over memory, not of a disk.
#   --backing disk: the backing files in DIR, losetup --direct-io=on (the loop device's reads
#                 and writes reach the disk under DIR): latencies include that disk.
#   --force       overwrite files the script writes that exist already in DIR (backing
#                 images, db-*.img with FS=dir, result JSONs, nowa.log); without it the script
#                 refuses to start (exit 2) and names the first one. The loop devices are
#                 always fresh ones (losetup -f) of the script's own backing files.
# Environment: RECORDS (default 200000), OPS (300000), POOL (4MiB), CAPACITY (512MiB),
#   VALUE (124, bytes per value), SEED (7), DIR (a scratch directory for the results, default
#   /tmp/nowa-realio; with FS=dir it must not be on tmpfs for the file runs to reach a block
#   device), PATHS ("inplace oop"), FS ("loop": the file runs go to ext4 made on a second
#   loop device of FS_SIZE, default CAPACITY + 256MiB, so the device counters hold only nowa's
#   I/O and the ext4 journal; "dir": a file in DIR on whatever file system holds it), MEM
#   (memory limit of each nowa process through a memory cgroup, e.g. 128MiB; default none;
#   skipped with a message where no memory cgroup can be made), DURABLE_EVERY (a durability
#   point every N updates, `--durable-every`; default 1000; empty: the engine's async WAL
#   flushes only), EXTRA (more `nowa ycsb` flags), EXTRA_OOP (flags for the out-of-place runs
#   only, e.g. "--space-limit 384MiB"). Fixed: --threads 1 --durability async --theta 0.8.
#   Real devices are never paced: `--pacing` (simulated SSD only) must not be in EXTRA.
# Bad input (an unknown option, a malformed value): one line naming the flag or variable,
# exit 2. Loop devices need root and /dev/loop-control; without them the loop runs (and
# FS=loop) are skipped with a message. On any exit (failure, Ctrl-C, TERM) the loop devices
# the script attached are detached, the file system it mounted is unmounted, and the files
# it created are removed (the result JSONs and nowa.log stay in DIR).
set -euo pipefail

die() { echo "realio.sh: $*" >&2; exit 2; }
usage() { sed -n '2,/^set -euo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'; }

NOWA=target/release/nowa
BACKING=shm
FORCE=0
nowa_set=0
while [ $# -gt 0 ]; do
    case $1 in
        -h | --help) usage; exit 0 ;;
        --backing) [ $# -ge 2 ] || die "--backing needs a value: shm or disk"; BACKING=$2; shift 2 ;;
        --backing=*) BACKING=${1#--backing=}; shift ;;
        --force) FORCE=1; shift ;;
        -*) die "$1: unknown option (options: --backing shm|disk, --force, --help)" ;;
        *) [ "$nowa_set" = 0 ] || die "$1: a second NOWA_BINARY (one is allowed)"
           NOWA=$1; nowa_set=1; shift ;;
    esac
done

RECORDS=${RECORDS:-200000}
OPS=${OPS:-300000}
POOL=${POOL:-4MiB}
CAPACITY=${CAPACITY:-512MiB}
VALUE=${VALUE:-124}
SEED=${SEED:-7}
DIR=${DIR:-/tmp/nowa-realio}
PATHS=${PATHS:-inplace oop}
FS=${FS:-loop}
FS_SIZE=${FS_SIZE:-}
MEM=${MEM:-}
DURABLE_EVERY=${DURABLE_EVERY-1000}
EXTRA=${EXTRA:-}
EXTRA_OOP=${EXTRA_OOP:-}

# bytes NAME VALUE: a size (4096, 4KiB, 32MiB, 1GiB, 1GB) in bytes, or exit 2 naming NAME
bytes() {
    local n u
    [[ $2 =~ ^([0-9]+)(B|KiB|MiB|GiB|KB|MB|GB)?$ ]] || die "$1=$2: not a size (e.g. 32MiB)"
    n=${BASH_REMATCH[1]}; u=${BASH_REMATCH[2]}
    case $u in
        KiB) echo $((n << 10)) ;; MiB) echo $((n << 20)) ;; GiB) echo $((n << 30)) ;;
        KB) echo $((n * 1000)) ;; MB) echo $((n * 1000000)) ;; GB) echo $((n * 1000000000)) ;;
        *) echo "$n" ;;
    esac
}
positive() { [[ $2 =~ ^[1-9][0-9]*$ ]] || die "$1=$2: not a positive integer"; }

case $BACKING in shm | disk) ;; *) die "--backing $BACKING: not shm or disk" ;; esac
positive RECORDS "$RECORDS"
positive OPS "$OPS"
positive VALUE "$VALUE"
[[ $SEED =~ ^[0-9]+$ ]] || die "SEED=$SEED: not a non-negative integer"
[ -z "$DURABLE_EVERY" ] || positive DURABLE_EVERY "$DURABLE_EVERY"
bytes POOL "$POOL" >/dev/null
CAP_BYTES=$(bytes CAPACITY "$CAPACITY")
if [ -n "$FS_SIZE" ]; then FS_BYTES=$(bytes FS_SIZE "$FS_SIZE"); else FS_BYTES=$((CAP_BYTES + (256 << 20))); fi
[ -z "$MEM" ] || MEM_BYTES=$(bytes MEM "$MEM")
[ -n "$PATHS" ] || die "PATHS is empty (inplace, oop or both)"
for wp in $PATHS; do
    case $wp in inplace | oop) ;; *) die "PATHS=$PATHS: $wp is not inplace or oop" ;; esac
done
case $FS in loop | dir) ;; *) die "FS=$FS: not loop or dir" ;; esac
case " $EXTRA $EXTRA_OOP " in
    *" --pacing"*) die "EXTRA: --pacing is for the simulated SSD only (real devices are not paced)" ;;
    *" --seed"*) die "EXTRA: use SEED=N, not --seed" ;;
esac
[ -n "$DURABLE_EVERY" ] && EXTRA="--durable-every $DURABLE_EVERY $EXTRA"
[ -x "$NOWA" ] && [ -f "$NOWA" ] || die "$NOWA: no nowa binary there (cargo build --release -p nowa-cli)"
NOWA=$(realpath "$NOWA")
[ ! -e "$DIR" ] || [ -d "$DIR" ] || die "DIR=$DIR: exists and is not a directory"

# Every path the script writes in DIR: refused if it exists, unless --force.
LABELS=()
for wp in $PATHS; do LABELS+=("file-$wp" "loop-$wp"); done
OUTS=("$DIR/nowa.log" "$DIR/time.tmp" "$DIR/device-counters.txt")
for l in "${LABELS[@]}"; do OUTS+=("$DIR/$l-1.json" "$DIR/$l-$OPS.json"); done
[ "$BACKING" = disk ] && OUTS+=("$DIR/loop-backing.img" "$DIR/fs-backing.img")
[ "$FS" = dir ] && for wp in $PATHS; do OUTS+=("$DIR/db-$wp.img"); done
if [ "$FORCE" = 0 ]; then
    for f in "${OUTS[@]}"; do
        [ ! -e "$f" ] || die "--force: $f exists (from an earlier run?); pass --force to overwrite it, or another DIR"
    done
    if [ "$FS" = loop ] && [ -d "$DIR/mnt" ] && [ -n "$(ls -A "$DIR/mnt")" ]; then
        die "--force: $DIR/mnt is not empty; pass --force to mount over it, or another DIR"
    fi
fi
mountpoint -q "$DIR/mnt" 2>/dev/null && die "DIR=$DIR: $DIR/mnt is a mount point already (another realio.sh?)"

mkdir -p "$DIR"
rm -f "$DIR/nowa.log"
LOOP=""
FSLOOP=""
MOUNTED=0
MADE_MNT=0
CG=""
BACKDIR=""
CREATED=()
# descendants PID: every process below PID (from /proc), each listed before its children
descendants() {
    local c
    for c in $(cat /proc/"$1"/task/*/children 2>/dev/null); do
        echo "$c"
        descendants "$c"
    done
}
cleanup() {
    # A TERM to the script alone leaves its nowa process running on the devices: stop it
    # (by process id, this script's own descendants only) before unmounting and detaching.
    local kids i k alive
    kids=$(descendants $$)
    if [ -n "$kids" ]; then
        # shellcheck disable=SC2086 # a list of process ids
        kill -TERM $kids 2>/dev/null || true
        for i in $(seq 100); do # up to 10 s
            alive=0
            for k in $kids; do kill -0 "$k" 2>/dev/null && alive=1; done
            [ "$alive" = 1 ] || break
            sleep 0.1
        done
    fi
    if [ -n "$LOOP" ]; then losetup -d "$LOOP" 2>/dev/null || echo "realio.sh: could not detach $LOOP" >&2; fi
    if [ "$MOUNTED" = 1 ]; then umount "$DIR/mnt" || echo "realio.sh: could not unmount $DIR/mnt" >&2; fi
    if [ "$MADE_MNT" = 1 ]; then rmdir "$DIR/mnt" 2>/dev/null || true; fi
    if [ -n "$FSLOOP" ]; then losetup -d "$FSLOOP" 2>/dev/null || echo "realio.sh: could not detach $FSLOOP" >&2; fi
    if [ -n "$CG" ]; then rmdir "$CG" 2>/dev/null || true; fi
    if [ ${#CREATED[@]} -gt 0 ]; then rm -f "${CREATED[@]}"; fi
    if [ -n "$BACKDIR" ]; then rmdir "$BACKDIR" 2>/dev/null || true; fi
    rm -f "$DIR/time.tmp"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# BACKDIR: where the loop devices' backing files live; LOOP_DIO: losetup's --direct-io
if [ "$BACKING" = shm ]; then
    [ -d /dev/shm ] && [ "$(findmnt -n -o FSTYPE --target /dev/shm | head -1)" = tmpfs ] \
        || die "--backing shm: /dev/shm is not a tmpfs here (use --backing disk)"
    need=$(( (CAP_BYTES + FS_BYTES) >> 20 ))
    free=$(( $(df -P -k /dev/shm | awk 'NR == 2 { print $4 }') >> 10 ))
    [ "$free" -ge $((need + 1024)) ] \
        || die "--backing shm: /dev/shm has $free MiB free, the backing files need $need MiB + 1 GiB spare (use --backing disk)"
    BACKDIR=$(mktemp -d /dev/shm/nowa-realio.XXXXXX)
    LOOP_DIO=off
else
    BACKDIR=$DIR
    LOOP_DIO=on
fi

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

# "SECTORS_WRITTEN FLUSHES READS READ_MS WRITE_MS FLUSH_MS" of a stat file (0s when unreadable)
counters() {
    if [ -z "$1" ]; then echo "0 0 0 0 0 0"; return; fi
    awk '{ print $7, ($16 == "" ? 0 : $16), $1, $4, $8, ($17 == "" ? 0 : $17) }' "$1"
}

# a memory cgroup limited to $MEM (v2 unified or v1 memory hierarchy): sets CG
make_cgroup() {
    local root
    [ -n "$MEM" ] || return 0
    for root in /sys/fs/cgroup /sys/fs/cgroup/unified; do
        if [ -w "$root/cgroup.subtree_control" ] && grep -qw memory "$root/cgroup.controllers" 2>/dev/null; then
            echo +memory >"$root/cgroup.subtree_control" 2>/dev/null || true
            CG="$root/nowa-realio-$$"
            mkdir -p "$CG" && echo "$MEM_BYTES" >"$CG/memory.max" && echo 0 >"$CG/memory.swap.max" 2>/dev/null
            return 0
        fi
    done
    if [ -d /sys/fs/cgroup/memory ] && [ -w /sys/fs/cgroup/memory ]; then
        CG=/sys/fs/cgroup/memory/nowa-realio-$$
        mkdir -p "$CG" && echo "$MEM_BYTES" >"$CG/memory.limit_in_bytes"
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

# run_one LABEL TARGET STATFILE PATH OPS -> writes "$DIR/LABEL-OPS.json", prints the counter
# differences "SECTORS FLUSHES READS READ_MS WRITE_MS FLUSH_MS" and "RSS_KIB WALL_S CPU_S" of
# the process
run_one() {
    local label=$1 target=$2 sf=$3 wp=$4 ops=$5 before after
    before=$(counters "$sf")
    local force=()
    [ -b "$target" ] && force=(--force "$target")
    local extra=$EXTRA
    [ "$wp" = oop ] && extra="$EXTRA $EXTRA_OOP"
    # shellcheck disable=SC2086 # EXTRA is a list of flags
    if ! in_cgroup /usr/bin/time -f "%M %e %U %S" -o "$DIR/time.tmp" "$NOWA" ycsb -q --json \
        --device "$target" "${force[@]}" --capacity "$CAPACITY" --records "$RECORDS" \
        --value-size "$VALUE" --ops "$ops" --pool "$POOL" --threads 1 --durability async \
        --theta 0.8 --seed "$SEED" --write-path "$wp" $extra >"$DIR/$label-$ops.json" 2>>"$DIR/nowa.log"; then
        rm -f "$DIR/$label-$ops.json"
        echo "realio.sh: nowa failed ($label, --ops $ops); the end of $DIR/nowa.log:" >&2
        tail -5 "$DIR/nowa.log" >&2
        exit 1
    fi
    sync
    after=$(counters "$sf")
    echo "$before $after $(tail -1 "$DIR/time.tmp")" \
        | awk '{ print $7 - $1, $8 - $2, $9 - $3, $10 - $4, $11 - $5, $12 - $6, $13, $14, $15 + $16 }'
}

# wipe TARGET: remove the file, or zero the start of the device (superblocks, doublewrite)
wipe() {
    if [ -b "$1" ]; then
        dd if=/dev/zero of="$1" bs=1M count=4 oflag=direct status=none
    else
        rm -f "$1"
    fi
}

# measure LABEL TARGET PATH: one row of the table, and a line of $DIR/device-counters.txt
measure() {
    local label=$1 target=$2 wp=$3 sf
    sf=$(stat_file "$target" || true)
    [ -z "$sf" ] && echo "  ($label: no /sys counters for $target: device bytes are not readable)" >&2
    [ -b "$target" ] || CREATED+=("$target")
    read -r s0 f0 r0 m0 w0 x0 _ < <(run_one "$label" "$target" "$sf" "$wp" 1)
    wipe "$target"
    read -r s1 f1 r1 m1 w1 x1 rss wall cpu < <(run_one "$label" "$target" "$sf" "$wp" "$OPS")
    wipe "$target"
    python3 - "$DIR/$label-$OPS.json" "$((s1 - s0))" "$((f1 - f0))" "$((r1 - r0))" "$((m1 - m0))" \
        "$((w1 - w0)) $((x1 - x0))" "$rss" "$wall" "$cpu" "$label" "$DIR/device-counters.txt" <<'EOF'
import json, sys
r = json.load(open(sys.argv[1]))
sectors, flushes, reads, read_ms = (int(x) for x in sys.argv[2:6])
write_flush_ms, rss = sys.argv[6], int(sys.argv[7])
wall, cpu, label, summary = float(sys.argv[8]), float(sys.argv[9]), sys.argv[10], sys.argv[11]
ops = r["ops"]
updates = r["update"]["count"] or 1
eng = r.get("flushes_per_op")
ppf = r.get("page_writes_per_store_flush")
st = r.get("stats", {})
nrd = (st.get("page_reads", 0) + st.get("delta_reads", 0)) / ops if st else None
p99 = lambda k: r.get(k, {}).get("p99_us")
na = lambda x, f: "n/a" if x is None else format(x, f)
d = r.get("drilldown", {})
mp = d.get("mapping_pages") or 0
ram = d.get("mapping_ram_bytes", 0) / mp if mp else None
bpu = sectors * 512 / updates
print(f"{label:<13} {bpu:>9.0f} {flushes / ops:>9.4f} "
      f"{na(sectors / 8 / flushes if flushes else None, '.1f'):>9} {reads / ops:>9.3f} "
      f"{na(read_ms / reads if reads else None, '.2f'):>6} "
      f"{na(eng, '.4f'):>10} {na(ppf, '.1f'):>8} {na(nrd, '.3f'):>7} "
      f"{na(p99('read'), '.0f'):>7} {na(p99('update'), '.0f'):>7} {r['ops_per_sec']:>7.0f} "
      f"{rss / 1024:>7.1f} {wall:>7.0f} {cpu:>6.0f} {r['physical_bytes_per_op']:>9.0f} "
      f"{na(ram, '.1f'):>8}")
with open(summary, "a") as f:
    f.write(f"{label} {sectors} {flushes} {reads} {read_ms} {write_flush_ms} {updates} {ops}\n")
EOF
}

loop_ok() { [ "$(id -u)" -eq 0 ] && [ -e /dev/loop-control ]; }

# attach BACKING_FILE: a fresh loop device over it (prints its name), or nothing
attach() {
    losetup --direct-io="$LOOP_DIO" -f --show "$1" 2>/dev/null || true
}

# FS=loop: ext4 on its own loop device, mounted at $DIR/mnt; sets FILEDIR
FILEDIR=$DIR
if [ "$FS" = loop ]; then
    if loop_ok; then
        CREATED+=("$BACKDIR/fs-backing.img")
        rm -f "$BACKDIR/fs-backing.img"
        truncate -s "$FS_BYTES" "$BACKDIR/fs-backing.img"
        FSLOOP=$(attach "$BACKDIR/fs-backing.img")
        if [ -n "$FSLOOP" ]; then
            [ -d "$DIR/mnt" ] || { mkdir "$DIR/mnt"; MADE_MNT=1; }
            # Inode tables and journal zeroed by mkfs, not lazily after the mount: ext4lazyinit
            # zeroes the inode tables (REQ_OP_WRITE_ZEROES, counted as sectors written) in
            # the background during the first runs, which moved the file runs' bytes by
            # +-170 B per update (block trace, docs/engine-writes.md session 7b).
            mkfs.ext4 -q -F -E lazy_itable_init=0,lazy_journal_init=0 "$FSLOOP"
            mount "$FSLOOP" "$DIR/mnt"
            MOUNTED=1
            FILEDIR=$DIR/mnt
            # Every group's inode table is marked zeroed: nothing is left for ext4lazyinit.
            if dumpe2fs "$FSLOOP" 2>/dev/null | grep -E '^Group [0-9]+:' | grep -qv ITABLE_ZEROED; then
                echo "realio.sh: ext4 on $FSLOOP has inode tables left to zero lazily" >&2
                exit 1
            fi
        else
            echo "  (FS=loop: losetup failed; the file runs use $DIR)" >&2
        fi
    else
        echo "  (FS=loop needs root and /dev/loop-control; the file runs use $DIR)" >&2
    fi
fi
make_cgroup

# describe LOOPDEV: its backing file, direct I/O, logical block size
describe() {
    local n=${1#/dev/}
    echo "$1 over $(cat "/sys/block/$n/loop/backing_file") (direct I/O $(cat "/sys/block/$n/loop/dio"), logical block $(cat "/sys/block/$n/queue/logical_block_size") B)"
}

echo "nowa realio: $NOWA, $RECORDS records x $VALUE B, $OPS ops YCSB-A zipf 0.8, pool $POOL, device $CAPACITY, async durability${DURABLE_EVERY:+ with a durability point every $DURABLE_EVERY updates}, seed $SEED${MEM:+, memory limit $MEM}${EXTRA:+, $EXTRA}${EXTRA_OOP:+, out of place $EXTRA_OOP}; --backing $BACKING"
echo "file runs on $(findmnt -n -o SOURCE,FSTYPE --target "$FILEDIR" | head -1)${FSLOOP:+: $(describe "$FSLOOP")}"
echo "# run phase: label sectors_written flushes reads read_ms write_ms flush_ms updates ops" \
    >"$DIR/device-counters.txt"
printf '%-13s %9s %9s %9s %9s %6s %10s %8s %7s %7s %7s %7s %7s %7s %6s %9s %8s\n' target "dev B/upd" \
    "dev fl/op" "dev pg/fl" "dev rd/op" "rd ms" "nowa fl/op" pg/flush "rd/op" "rd p99" "upd p99" \
    "ops/s" "RSS MiB" "wall s" "CPU s" "phys B/op" "map B/pg"
for wp in $PATHS; do
    measure "file-$wp" "$FILEDIR/db-$wp.img" "$wp"
done
if ! loop_ok; then
    echo "loop device runs skipped: they need root and /dev/loop-control" >&2
    exit 0
fi
CREATED+=("$BACKDIR/loop-backing.img")
rm -f "$BACKDIR/loop-backing.img"
truncate -s "$CAPACITY" "$BACKDIR/loop-backing.img"
LOOP=$(attach "$BACKDIR/loop-backing.img")
if [ -z "$LOOP" ]; then
    echo "loop device runs skipped: losetup failed (loop devices not allowed here)" >&2
    exit 0
fi
echo "raw runs on $(describe "$LOOP")"
for wp in $PATHS; do
    wipe "$LOOP"
    measure "loop-$wp" "$LOOP" "$wp"
done
awk '!/^#/ { b[$1] = $2 * 512 / $8 } END { for (k in b) if (k ~ /^file-/) { l = "loop-" substr(k, 6)
        if (l in b) printf "ext4 file / raw loop device, %s: %.3f (%.0f / %.0f B per update)\n",
            substr(k, 6), b[k] / b[l], b[k], b[l] } }' "$DIR/device-counters.txt"
echo "dev B/upd: block-device bytes written per update; dev fl/op: block-device flushes per op;"
echo "dev pg/fl: 4 KiB pages written per block-device flush; dev rd/op: block-device reads per op;"
echo "rd ms: block-device milliseconds per read;"
echo "nowa fl/op, pg/flush, rd/op: nowa's own flushes per op, page writes (user + doublewrite) per"
echo "store flush, device reads per op (n/a: the binary does not report them); rd/upd p99 in us;"
echo "wall s, CPU s: the load + run process; phys B/op: nowa's own bytes per op; map B/pg: out of"
echo "place, mapping RAM per mapped page"
