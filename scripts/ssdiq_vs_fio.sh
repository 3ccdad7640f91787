#!/usr/bin/env bash
# Compare the random-write IOPS that `nowa ssdiq` measures with fio (io_uring, direct=1, same
# block size and queue depth) on the same file, on the same machine.
#
# Usage: scripts/ssdiq_vs_fio.sh [FILE] [SIZE] [BS] [QD] [SECONDS] [ROUNDS]
#   defaults: /var/tmp/ssdiq-vs-fio.img 1GiB 4k 32 10 4
#   NOWA=/path/to/nowa to use an existing binary (default: cargo build --release -p nowa-cli).
#
# Each round: `nowa ssdiq` resets the file (punch hole), initializes it sequentially and runs
# uniform random writes for SECONDS; and fio runs randwrite for SECONDS on the file right after
# the same reset + sequential initialization (done by nowa). The order alternates between
# rounds so drift of the machine affects both tools alike. The verdict uses the sums over all
# rounds (single rounds are noisy on shared virtual machines). nowa gets `--force FILE`: fio's
# random writes overwrite the scratch label nowa leaves in the file's first block.
# Acceptance (issue 5): the two agree within 15%.
set -euo pipefail

FILE=${1:-/var/tmp/ssdiq-vs-fio.img}
SIZE=${2:-1GiB}
BS=${3:-4k}
QD=${4:-32}
SECS=${5:-10}
ROUNDS=${6:-4}

cd "$(dirname "$0")/.."

if ! command -v fio >/dev/null; then
    echo "fio not found: installing it with apt-get" >&2
    if [ "$(id -u)" = 0 ]; then apt-get install -y fio >/dev/null; else sudo apt-get install -y fio >/dev/null; fi
fi
if ! command -v jq >/dev/null && ! command -v python3 >/dev/null; then
    echo "need python3 (or jq) to read JSON" >&2
    exit 1
fi
if [ -z "${NOWA:-}" ]; then
    cargo build --release -q -p nowa-cli
    NOWA=${CARGO_TARGET_DIR:-target}/release/nowa
fi

json_get() { # json_get FILE PYTHON_EXPR_ON_d
    python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print($2)" "$1"
}

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
rm -f "$FILE"

echo "machine: $(uname -r), $(nproc) CPUs; file $FILE on $(df --output=source,fstype "$(dirname "$FILE")" | tail -1)"
echo "fio: $(fio --version); nowa: $NOWA"
echo "random writes: bs $BS, QD $QD, 1 thread, io_uring, O_DIRECT, $SECS s per run, $ROUNDS rounds"
printf '%-6s %14s %14s %8s\n' round "nowa kIOPS" "fio kIOPS" "ratio"

run_nowa() {
    "$NOWA" ssdiq "$FILE" --force "$FILE" --size "$SIZE" --bs "$BS" --qd "$QD" --threads 1 --engine uring \
        --steps rand-write --workloads uniform --warmup 0 --volume 1000 --max-time "$SECS" \
        --json -q 2>/dev/null >"$tmp/nowa.json"
    json_get "$tmp/nowa.json" 'd["summary"]["rand_write"][0]["kiops"]'
}
run_fio() {
    # Same starting state as nowa's measured phase: reset + sequential init by nowa (a tiny
    # random-write phase), then fio right away.
    "$NOWA" ssdiq "$FILE" --force "$FILE" --size "$SIZE" --steps rand-write --workloads uniform --warmup 0 \
        --volume 0.0001 -q >/dev/null 2>&1
    fio --name=randwrite --filename="$FILE" --rw=randwrite --bs="$BS" --iodepth="$QD" \
        --ioengine=io_uring --direct=1 --numjobs=1 --size="$(stat -c %s "$FILE")" \
        --runtime="$SECS" --time_based --randrepeat=0 --output-format=json >"$tmp/fio.json"
    json_get "$tmp/fio.json" 'd["jobs"][0]["write"]["iops"]/1000'
}

sum_n=0; sum_f=0
for r in $(seq 1 "$ROUNDS"); do
    # Alternate the order so a trend of the machine does not favour one tool.
    if [ $((r % 2)) = 1 ]; then n=$(run_nowa); f=$(run_fio); else f=$(run_fio); n=$(run_nowa); fi
    ratio=$(python3 -c "print(f'{$n/$f:.3f}')")
    printf '%-6s %14.1f %14.1f %8s\n' "$r" "$n" "$f" "$ratio"
    sum_n=$(python3 -c "print($sum_n+$n)"); sum_f=$(python3 -c "print($sum_f+$f)")
done
python3 - "$sum_n" "$sum_f" <<'EOF'
import sys
n, f = float(sys.argv[1]), float(sys.argv[2])
ratio = n / f
ok = abs(ratio - 1) <= 0.15
print(f"mean   {n:14.1f} {f:14.1f} {ratio:8.3f}   (sums over rounds)")
print("AGREE within 15%" if ok else "DISAGREE by more than 15%")
sys.exit(0 if ok else 1)
EOF
rm -f "$FILE"
