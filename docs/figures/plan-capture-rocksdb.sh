#!/bin/sh
# YCSB-A on RocksDB for `nowa capture` (docs/plan.md; the paper's YCSB: load 100 M pairs, then
# 50 M ops of workload A, 50% reads / 50% updates, on RocksDB), in small with Debian's
# rocksdb-tools db_bench: fillrandom loads KEYS pairs of 400-byte values (about 400 MiB of
# data per million keys), then readrandomwriterandom runs 50% reads / 50% overwrites of
# uniformly random keys for SECONDS. No compression; small memtables and level sizes so
# flushes and compactions reach the device as on a large database.
# Usage: plan-capture-rocksdb.sh KEYS SECONDS
set -eu
keys=${1:-1000000}
secs=${2:-20}
common="--db=db --num=$keys --value_size=400 --key_size=16 --compression_type=none \
 --write_buffer_size=16777216 --target_file_size_base=16777216 \
 --max_bytes_for_level_base=67108864 --max_background_jobs=2 --threads=1 --seed=42"
db_bench $common --benchmarks=fillrandom
sync
db_bench $common --use_existing_db=1 --benchmarks=readrandomwriterandom \
    --readwritepercent=50 --duration="$secs"
sync
