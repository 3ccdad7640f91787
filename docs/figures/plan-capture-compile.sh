#!/bin/sh
# A compile-like workload for `nowa capture` (docs/plan.md, the paper's GCC loop in small):
# ITERATIONS times, copy a source tree (the first 80 crates of the cargo registry and zstd, about
# 78 MiB, standing for a kernel tree), compile zstd's C sources from it (lib/common with gcc -O0)
# into objects and an archive, then delete everything (ext4 discards it). `sync` after the copy
# and after the build sends them to the device as a build larger than the page cache would.
# Usage: plan-capture-compile.sh ITERATIONS
set -eu
n=${1:-5}
reg=$(ls -d "$HOME"/.cargo/registry/src/*/ | head -1)
zstd=$(ls -d "$reg"zstd-sys-*/zstd | head -1)
i=0
while [ "$i" -lt "$n" ]; do
    mkdir -p tree/extra tree/obj
    cp -r "$zstd" tree/zstd
    for c in $(ls "$reg" | head -80); do
        cp -r "$reg$c" tree/extra/
    done
    sync
    for f in tree/zstd/lib/common/*.c; do
        gcc -O0 -c "$f" -I tree/zstd/lib -I tree/zstd/lib/common -o "tree/obj/$(basename "$f" .c).o"
    done
    ar rcs tree/libzstd.a tree/obj/*.o
    sync
    rm -rf tree
    sync
    i=$((i + 1))
done
