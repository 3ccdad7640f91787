#!/usr/bin/env bash
# nowa's plain greedy path against the SSD-iq simulator's greedy, side by side in one session
# (docs/simulator.md, "The plain path against the SSD-iq simulator"). CPU time of the measured
# writes only, runs alternated, so both see the same machine load; prints the ratio per round.
#
# Fetches nothing. SSDIQ must name a checkout of https://github.com/gabriel-haas/ssdiq (MIT;
# measured at commit 993492e) that you obtained yourself: this script compiles its
# sim/SSD.hpp and sim/Greedy.hpp (with shared/Exceptions.hpp and shared/Units.hpp) as they
# are, with the release flags of its CMake build, under a driver of ours (below) that does
# what its sim.cpp's runBench does for --gc=greedy --pattern=uniform --load=1: the logical
# pages written in order, then physicalPages uniform random writes (std::mt19937_64 and
# uniform_int_distribution), then the measured writes, the process CPU clock read around
# the measured writes only (nowa's figure is also its measured phase).
#
# Usage:  SSDIQ=/path/to/ssdiq [NOWA=target/release/nowa] [ROUNDS=2] [CAP_GIB=64] \
#           [DRIVE_WRITES=1] bash scripts/ssdiq_reference.sh
# The SSD-iq configuration (--capacity=64G --erase=8M --ssdfill=0.9) is, in nowa's flags,
# --capacity 60GiB --op-physical 0.0625 --fill 0.96 (physical 64 GiB, 90% of it in use).
set -euo pipefail

: "${SSDIQ:?set SSDIQ to a checkout of gabriel-haas/ssdiq (this script downloads nothing)}"
NOWA=${NOWA:-target/release/nowa}
ROUNDS=${ROUNDS:-2}
CAP_GIB=${CAP_GIB:-64}
DRIVE_WRITES=${DRIVE_WRITES:-1}

for f in sim/SSD.hpp sim/Greedy.hpp shared/Exceptions.hpp shared/Units.hpp; do
    [[ -f "$SSDIQ/$f" ]] || { echo "ssdiq_reference.sh: $SSDIQ/$f not found (SSDIQ must be an ssdiq checkout)" >&2; exit 2; }
done
[[ -x "$NOWA" ]] || { echo "ssdiq_reference.sh: $NOWA is not an executable (cargo build --release -p nowa-cli)" >&2; exit 2; }

work=$(mktemp -d /tmp/ssdiq-reference.XXXXXX)
trap 'rm -rf "$work"' EXIT
cat > "$work/driver.cpp" <<'CPP'
// nowa's driver for the SSD-iq simulator's greedy (scripts/ssdiq_reference.sh).
#include "Greedy.hpp"
#include "SSD.hpp"

#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <random>

static double cpu_secs() {
   timespec t{};
   clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
   return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_nsec) * 1e-9;
}

int main(int argc, char** argv) {
   if (argc < 5) {
      std::fprintf(stderr, "usage: %s CAPACITY_GiB ERASE_MiB SSDFILL MEASURED_DRIVE_WRITES [SEED]\n", argv[0]);
      return 2;
   }
   const uint64_t capacity = std::strtoull(argv[1], nullptr, 10) << 30;
   const uint64_t erase = std::strtoull(argv[2], nullptr, 10) << 20;
   const double fill = std::atof(argv[3]);
   const double drive_writes = std::atof(argv[4]);
   const uint64_t seed = argc > 5 ? std::strtoull(argv[5], nullptr, 10) : 42;
   SSD ssd(capacity, erase, 4096, fill);
   GreedyGC gc(ssd);
   std::mt19937_64 rng{seed};
   std::uniform_int_distribution<uint64_t> page(0, ssd.logicalPages - 1);
   const double c0 = cpu_secs();
   for (uint64_t i = 0; i < ssd.logicalPages; i++) {
      gc.writePage(i);
   }
   for (uint64_t i = 0; i < ssd.physicalPages; i++) {
      gc.writePage(page(rng));
   }
   ssd.resetPhysicalCounters();
   const auto writes = static_cast<uint64_t>(drive_writes * static_cast<double>(ssd.logicalPages));
   const double c1 = cpu_secs();
   for (uint64_t i = 0; i < writes; i++) {
      gc.writePage(page(rng));
   }
   const double c2 = cpu_secs();
   std::printf("ssdiq greedy: %llu physical pages, %llu logical; WAF %.4f; %llu measured writes in %.2f CPU s: %.2f M host writes per CPU second (prefill %.2f CPU s)\n",
               static_cast<unsigned long long>(ssd.physicalPages), static_cast<unsigned long long>(ssd.logicalPages),
               static_cast<double>(ssd.physWrites()) / static_cast<double>(writes), static_cast<unsigned long long>(writes),
               c2 - c1, static_cast<double>(writes) / (c2 - c1) / 1e6, c1 - c0);
   return 0;
}
CPP
g++ -std=c++2b -O3 -march=native -DNDEBUG -I"$SSDIQ/shared" -I"$SSDIQ/sim" \
    "$work/driver.cpp" -o "$work/ssdiq-greedy"

# nowa's capacity is logical: the SSD-iq capacity is physical with ssdfill 0.9 in use.
logical_gib=$(awk -v c="$CAP_GIB" 'BEGIN { printf "%g", c * 0.9375 }')
for r in $(seq 1 "$ROUNDS"); do
    ref=$("$work/ssdiq-greedy" "$CAP_GIB" 8 0.9 "$DRIVE_WRITES")
    echo "round $r: $ref"
    ours=$("$NOWA" sim -q --capacity "${logical_gib}GiB" --op-physical 0.0625 --fill 0.96 \
        --warmup 1 --volume "$DRIVE_WRITES" | grep -E '^(WAF|speed)')
    echo "$ours" | sed "s/^/round $r: nowa /"
    a=$(echo "$ref" | sed -E 's/.*: ([0-9.]+) M host writes per CPU second.*/\1/')
    b=$(echo "$ours" | sed -nE 's/^speed +([0-9.]+) M host writes per CPU second.*/\1/p')
    awk -v a="$a" -v b="$b" -v r="$r" 'BEGIN { printf "round %d: nowa / SSD-iq = %.2f / %.2f = %.1fx\n", r, b, a, b / a }'
done
