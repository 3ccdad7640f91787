//! Bad command lines, table-driven: every subcommand, every flag family. Each line must end
//! within a timeout (no hang), by exiting (no abort, no signal) with code 2, with exactly one
//! line on stderr that names the flag (or the argument) at fault, and without a panic.
//!
//! The binary runs directly, several lines at once: parse-only failures return in
//! milliseconds, so the whole table takes a few seconds.

use std::io::Read;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// How long one line may take before it counts as a hang.
const TIMEOUT: Duration = Duration::from_secs(30);

/// (command line, split on spaces; text the one stderr line must contain).
const CASES: &[(&str, &str)] = &[
    // nowa itself
    ("", "subcommand"),
    ("bogus", "'bogus'"),
    ("simm", "'sim'"),
    ("--bogus", "'--bogus'"),
    ("sim sweep bogus", "'bogus'"),
    // sim: device flags
    ("sim --capacity 0", "--capacity"),
    ("sim --capacity -1", "--capacity"),
    ("sim --capacity 1e9", "--capacity"),
    ("sim --capacity abc", "--capacity"),
    ("sim --capacity 1000000TiB", "--capacity"),
    ("sim --capacity 17TiB", "--capacity"),
    ("sim --capacity 4k5", "--capacity"),
    ("sim --capacity GiB", "--capacity"),
    ("sim --capacity nan", "--capacity"),
    ("sim --capacity inf", "--capacity"),
    ("sim --capacity 1MiB", "--capacity"),
    ("sim --capacity 10TiB", "--capacity"),
    (
        "sim --capacity 8GiB --blocks-per-superblock 65536",
        "--blocks-per-superblock",
    ),
    ("sim --capacity", "--capacity"),
    ("sim --op 7", "--op"),
    ("sim --op 1.5", "--op"),
    ("sim --op -7%", "--op"),
    ("sim --op 101%", "--op"),
    ("sim --op nan", "--op"),
    ("sim --op abc", "--op"),
    ("sim --op 7%%", "--op"),
    ("sim --op 0%", "--op"),
    ("sim --op 0.001", "--op"),
    ("sim --op 7% --op-physical 5%", "--op"),
    ("sim --op-physical 1", "--op-physical"),
    ("sim --op-physical 100%", "--op-physical"),
    ("sim --op-physical 2", "--op-physical"),
    ("sim --op-physical abc", "--op-physical"),
    ("sim --op-physical -0.1", "--op-physical"),
    ("sim --pages-per-block 0", "--pages-per-block"),
    ("sim --pages-per-block 65537", "--pages-per-block"),
    ("sim --pages-per-block -1", "--pages-per-block"),
    ("sim --pages-per-block 1.5", "--pages-per-block"),
    ("sim --pages-per-block abc", "--pages-per-block"),
    ("sim --pages-per-block 5000000000", "--pages-per-block"),
    ("sim --blocks-per-superblock 0", "--blocks-per-superblock"),
    (
        "sim --blocks-per-superblock 65537",
        "--blocks-per-superblock",
    ),
    ("sim --blocks-per-superblock x", "--blocks-per-superblock"),
    (
        "sim --blocks-per-superblock 4 --channels 2",
        "--blocks-per-superblock",
    ),
    ("sim --channels 65537 --chips 4294901761", "--channels"),
    (
        "sim --channels 65536 --chips 65536 --planes 2",
        "--channels",
    ),
    ("sim --channels 0", "--channels"),
    ("sim --chips 0", "--chips"),
    ("sim --planes 0", "--planes"),
    ("sim --chips 4294901761", "--chips"),
    ("sim --planes -2", "--planes"),
    ("sim --gc-unit plane", "--gc-unit"),
    ("sim --gc-unit Superblock", "--gc-unit"),
    ("sim --policy bogus", "--policy"),
    ("sim --policy k-greedy:0", "--policy"),
    ("sim --policy window:x", "--policy"),
    ("sim --gc-frontier nowhere", "--gc-frontier"),
    ("sim --streams 0", "--streams"),
    ("sim --streams 4097", "--streams"),
    ("sim --streams 70000", "--streams"),
    ("sim --streams -1", "--streams"),
    ("sim --write-buffer 1", "--write-buffer"),
    ("sim --write-buffer 2", "--write-buffer"),
    ("sim --write-buffer 100%", "--write-buffer"),
    ("sim --write-buffer nan", "--write-buffer"),
    ("sim --write-buffer -0.1", "--write-buffer"),
    ("sim --min-free-units 0", "--min-free-units"),
    ("sim --min-free-units 2000000", "--min-free-units"),
    ("sim --max-open-zones 0", "--max-open-zones"),
    ("sim --max-open-zones 70000", "--max-open-zones"),
    ("sim --zns", "--zns"),
    ("sim --zns --workload zipf:0.9", "--zns"),
    ("sim --zns --workload sequential", "--zns"),
    // plan
    ("plan run --gc-reserve 0.9", "--gc-reserve"),
    ("plan run --gc-reserve -1", "--gc-reserve"),
    ("plan run --scheme baseline@0", "--scheme"),
    ("plan run --scheme baseline-1/3@4", "--scheme"),
    ("plan figures --captured x", "--captured"),
    ("plan figures --captured a=/nonexistent.csv", "--captured"),
    // sim: run flags
    ("sim --workload zipf:-1", "--workload"),
    ("sim --workload two-zone:90", "--workload"),
    ("sim --workload bogus", "--workload"),
    ("sim --workload zipf:nan", "--workload"),
    ("sim --workload read-only:2", "--workload"),
    ("sim --workload two-zone:100/10", "--workload"),
    ("sim --fill 0", "--fill"),
    ("sim --fill 1.5", "--fill"),
    ("sim --fill 150%", "--fill"),
    ("sim --fill nan", "--fill"),
    ("sim --fill -1", "--fill"),
    ("sim --fill abc", "--fill"),
    ("sim --warmup -1", "--warmup"),
    ("sim --warmup 10001", "--warmup"),
    ("sim --warmup nan", "--warmup"),
    ("sim --warmup inf", "--warmup"),
    ("sim --warmup 1e3", "--warmup"),
    ("sim --volume 0", "--volume"),
    ("sim --volume 1e300", "--volume"),
    ("sim --volume 10001", "--volume"),
    ("sim --volume nan", "--volume"),
    ("sim --volume inf", "--volume"),
    ("sim --volume -2", "--volume"),
    ("sim --interval 0", "--interval"),
    ("sim --interval 1e-9", "--interval"),
    ("sim --interval 0.0000001", "--interval"),
    ("sim --interval nan", "--interval"),
    ("sim --interval 10001", "--interval"),
    ("sim --interval 0.0001 --volume 1000", "--interval"),
    ("sim --stream-assign bogus", "--stream-assign"),
    ("sim --stream-assign hot-cold", "--stream-assign"),
    (
        "sim --stream-assign hot-cold --workload two-zone:90/10",
        "--streams",
    ),
    ("sim --seed -1", "--seed"),
    ("sim --seed abc", "--seed"),
    ("sim --seed 1.5", "--seed"),
    ("sim --seed 99999999999999999999", "--seed"),
    ("sim --fil 0.5", "--fill"),
    ("sim --json=3", "--json"),
    ("sim --csv", "--csv"),
    ("sim --quiet=yes", "--quiet"),
    ("sim --bench --capacity 0", "--capacity"),
    ("sim --csv /nonexistent-nowa-dir/waf.csv", "--csv"),
    ("sim --csv /", "--csv"),
    ("sim --bench --volume 0", "--volume"),
    // sim sweep
    ("sim sweep", "--figure"),
    ("sim sweep --figure fig99", "--figure"),
    ("sim sweep --figure", "--figure"),
    ("sim sweep --all --threads 0", "--threads"),
    ("sim sweep --all --threads 5000", "--threads"),
    ("sim sweep --all --threads x", "--threads"),
    ("sim sweep --all --out", "--out"),
    ("sim sweep --all --out-dir", "--out"),
    ("sim sweep --all --capacity 0", "--capacity"),
    ("sim sweep --all --fill 2", "--fill"),
    ("sim sweep --all --op 7", "--op"),
    ("sim sweep --all --volume 0", "--volume"),
    ("sim sweep --all --capacity 10TiB", "--capacity"),
    ("sim sweep --figure fig3b --policy bogus", "--policy"),
    (
        "sim sweep --figure fig3b --out /proc/nowa-cannot-create",
        "--out",
    ),
    // ycsb: dataset and mix
    ("ycsb --records 0", "--records"),
    ("ycsb --records -1", "--records"),
    ("ycsb --records 1.5", "--records"),
    ("ycsb --records abc", "--records"),
    ("ycsb --records 10G", "--records"),
    ("ycsb --records 1000000000001", "--records"),
    ("ycsb --records 1e6", "--records"),
    ("ycsb --value-size 0", "--value-size"),
    ("ycsb --value-size 1529", "--value-size"),
    ("ycsb --value-size 2000", "--value-size"),
    ("ycsb --value-size 1M", "--value-size"),
    ("ycsb --value-size abc", "--value-size"),
    ("ycsb --value-size -5", "--value-size"),
    ("ycsb --values weird", "--values"),
    ("ycsb --workload Z", "--workload"),
    ("ycsb --workload AB", "--workload"),
    ("ycsb --workload 100W", "--workload"),
    ("ycsb --workload W --ops 0", "--ops"),
    ("ycsb --theta -1", "--theta"),
    ("ycsb --theta nan", "--theta"),
    ("ycsb --theta inf", "--theta"),
    ("ycsb --theta 101", "--theta"),
    ("ycsb --key-order sorted", "--key-order"),
    ("ycsb --threads 0", "--threads"),
    ("ycsb --threads 1025", "--threads"),
    ("ycsb --threads 100000", "--threads"),
    ("ycsb --threads abc", "--threads"),
    // ycsb: stop conditions
    ("ycsb --ops 0", "--ops"),
    ("ycsb --ops -1", "--ops"),
    ("ycsb --ops 1.5", "--ops"),
    ("ycsb --ops abc", "--ops"),
    ("ycsb --ops 5 --seconds 3", "--seconds"),
    ("ycsb --ops 5 --device-writes 1", "--device-writes"),
    ("ycsb --ops 5 --seconds 3 --device-writes 2", "--ops"),
    ("ycsb --seconds 0", "--seconds"),
    ("ycsb --seconds nan", "--seconds"),
    ("ycsb --seconds inf", "--seconds"),
    ("ycsb --seconds -1", "--seconds"),
    ("ycsb --seconds 1e9", "--seconds"),
    ("ycsb --seconds 10y", "--seconds"),
    ("ycsb --seconds 10000h", "--seconds"),
    ("ycsb --device-writes 0", "--device-writes"),
    ("ycsb --device-writes nan", "--device-writes"),
    ("ycsb --device-writes inf", "--device-writes"),
    ("ycsb --device-writes -1", "--device-writes"),
    ("ycsb --device-writes 2000000", "--device-writes"),
    ("ycsb --device-writes 4 --seconds 3", "--seconds"),
    // ycsb: device
    ("ycsb --capacity 0", "--capacity"),
    ("ycsb --capacity 100KiB", "--capacity"),
    ("ycsb --capacity 1000001", "--capacity"),
    ("ycsb --capacity 2PiB", "--capacity"),
    ("ycsb --capacity abc", "--capacity"),
    ("ycsb --device mem --capacity 100TiB", "--capacity"),
    ("ycsb --capacity 100TiB", "--capacity"),
    ("ycsb --dataset-fill 0", "--dataset-fill"),
    ("ycsb --dataset-fill 2", "--dataset-fill"),
    ("ycsb --dataset-fill 150%", "--dataset-fill"),
    ("ycsb --dataset-fill nan", "--dataset-fill"),
    ("ycsb --op 7", "--op"),
    ("ycsb --op 2", "--op"),
    ("ycsb --op -1%", "--op"),
    ("ycsb --sim-mode fdp:0", "--sim-mode"),
    ("ycsb --sim-mode fdp:x", "--sim-mode"),
    ("ycsb --sim-mode weird", "--sim-mode"),
    ("ycsb --sim-mode fdp:70000", "--sim-mode"),
    ("ycsb --pacing maybe", "--pacing"),
    ("ycsb --pacing 2", "--pacing"),
    ("ycsb --device mem --pacing on", "--pacing"),
    (
        "ycsb --device mem --media-bandwidth 1GB",
        "--media-bandwidth",
    ),
    ("ycsb --device mem --read-bandwidth 3GB", "--read-bandwidth"),
    ("ycsb --media-bandwidth 0", "--media-bandwidth"),
    ("ycsb --media-bandwidth 1KB", "--media-bandwidth"),
    ("ycsb --media-bandwidth 1e9", "--media-bandwidth"),
    ("ycsb --read-bandwidth x", "--read-bandwidth"),
    // ycsb: engine
    ("ycsb --pool 0", "--pool"),
    ("ycsb --pool 10TiB", "--pool"),
    ("ycsb --pool 512KiB", "--pool"),
    ("ycsb --pool abc", "--pool"),
    ("ycsb --pool 64GB", "--pool"),
    ("ycsb --wal-limit 0", "--wal-limit"),
    ("ycsb --wal-limit 5TiB", "--wal-limit"),
    ("ycsb --wal-limit 1x", "--wal-limit"),
    ("ycsb --durability maybe", "--durability"),
    ("ycsb --durability SYNC", "--durability"),
    ("ycsb --durable-every 0", "--durable-every"),
    ("ycsb --durable-every -5", "--durable-every"),
    ("ycsb --durable-every 1.5", "--durable-every"),
    ("ycsb --durable-every many", "--durable-every"),
    ("ycsb --durable-every", "--durable-every"),
    (
        "ycsb --durability sync --durable-every 1000",
        "--durable-every",
    ),
    ("ycsb --seed -1", "--seed"),
    ("ycsb --seed x", "--seed"),
    ("ycsb --interval 0", "--interval"),
    ("ycsb --interval 5ms", "--interval"),
    ("ycsb --interval nan", "--interval"),
    ("ycsb --interval 2d", "--interval"),
    ("ycsb --interval 100000", "--interval"),
    ("ycsb --csv", "--csv"),
    ("ycsb --ack-log", "--ack-log"),
    ("ycsb --json=1", "--json"),
    ("ycsb --csv /nonexistent-nowa-dir/ticks.csv", "--csv"),
    ("ycsb --ack-log /nonexistent-nowa-dir/ack.txt", "--ack-log"),
    ("ycsb --ack-log /tmp/nowa-bad-input-ack.txt --threads 2", "--ack-log"),
    // ycsb: write path
    ("ycsb --write-path sideways", "--write-path"),
    ("ycsb --write-path", "--write-path"),
    ("ycsb --compression gzip", "--compression"),
    (
        "ycsb --write-path oop --compression brotli",
        "--compression",
    ),
    ("ycsb --compression lz4", "--compression"),
    ("ycsb --compression zstd", "--compression"),
    ("ycsb --nowa", "--nowa"),
    ("ycsb --gdt", "--gdt"),
    ("ycsb --deltas", "--deltas"),
    ("ycsb --write-path oop --delta-chain 4", "--deltas"),
    ("ycsb --write-path oop --deltas --delta-chain 0", "--delta-chain"),
    ("ycsb --defer-compensation", "--nowa"),
    ("ycsb --write-path oop --defer-compensation", "--nowa"),
    ("ycsb --packing maybe", "--packing"),
    ("ycsb --background-gc maybe", "--background-gc"),
    ("ycsb --write-path oop --zone-size 0", "--zone-size"),
    ("ycsb --write-path oop --zone-size 1TiB", "--zone-size"),
    ("ycsb --write-path oop --zone-size 5000", "--zone-size"),
    ("ycsb --write-path oop --zone-size 16KiB", "--zone-size"),
    ("ycsb --write-path oop --zone-size abc", "--zone-size"),
    ("ycsb --write-path oop --zone-size 4GiB", "--zone-size"),
    ("ycsb --write-path oop --zone-size 3GiB", "--zone-size"),
    // an in-place switch an out-of-place run would ignore (issue 26)
    ("ycsb --write-path oop --no-doublewrite", "--no-doublewrite"),
    ("tpcc --write-path oop --no-doublewrite", "--no-doublewrite"),
    // a missing --image-dir is not created (as root it created /nonexistent; issue 26)
    (
        "capture --image-dir /nonexistent/nowa-image-dir -- true",
        "--image-dir",
    ),
    (
        "ycsb --write-path oop --zone-size infer --device mem",
        "--zone-size",
    ),
    ("ycsb --write-path oop --open-zones 0", "--open-zones"),
    ("ycsb --write-path oop --open-zones 257", "--open-zones"),
    ("ycsb --write-path oop --open-zones -1", "--open-zones"),
    ("ycsb --space-limit 64MiB", "--space-limit"),
    // SepFrozen in the engine: the model flag and the placement need each other, out of place
    ("ycsb --frozen-model m.json", "--frozen-model"),
    ("ycsb --placement sepfrozen-bit", "--placement"),
    // MiDAS picks its own victims: a victim policy or the GP trigger would be ignored.
    (
        "ycsb --write-path oop --placement midas --gc-victim greedy",
        "--gc-victim",
    ),
    ("tpcc --write-path oop --placement midas --gc-trigger gp", "--gc-trigger"),
    // The GP trigger needs victims it can filter (the engine refuses the others).
    (
        "ycsb --write-path oop --placement sepbit --gc-victim fifo --gc-trigger gp",
        "--gc-victim",
    ),
    ("tpcc --write-path oop --nowa --gc-trigger gp:0.2", "--gc-trigger"),
    (
        "ycsb --write-path oop --placement sepfrozen-bit",
        "--frozen-model",
    ),
    (
        "ycsb --write-path oop --placement sepfrozen-dac:1",
        "--placement",
    ),
    (
        "ycsb --write-path oop --placement sepfrozen-bit:3",
        "--placement",
    ),
    (
        "ycsb --write-path oop --placement sepfrozen-bit:17",
        "--placement",
    ),
    (
        "ycsb --write-path oop --placement sepfrozen-bit --frozen-model /nonexistent/m.json",
        "--frozen-model",
    ),
    (
        "ycsb --write-path oop --placement sepbit --frozen-model m.json",
        "--frozen-model",
    ),
    (
        "ycsb --write-path oop --frozen-model m.json",
        "--frozen-model",
    ),
    (
        "ycsb --write-path oop --placement sepfrozen-dac --frozen-model",
        "--frozen-model",
    ),
    ("tpcc --frozen-model m.json", "--frozen-model"),
    ("ycsb --frozen-model online", "--frozen-model"),
    (
        "ycsb --write-path oop --placement sepfrozen-bit --frozen-model online:0",
        "--frozen-model",
    ),
    (
        "ycsb --write-path oop --placement sepfrozen-bit --frozen-model online:abc",
        "--frozen-model",
    ),
    (
        "ycsb --write-path oop --placement sepfrozen-dac --frozen-model online:64k:8",
        "--frozen-model",
    ),
    (
        "tpcc --write-path oop --placement sepfrozen-bit --frozen-model online:1k:1k:1",
        "--frozen-model",
    ),
    (
        "tpcc --write-path oop --placement sepfrozen-dac",
        "--frozen-model",
    ),
    (
        "tpcc --write-path oop --placement sepfrozen-dac --frozen-model /nonexistent/m.json",
        "--frozen-model",
    ),
    (
        "tpcc --write-path oop --placement sepfrozen-bit --frozen-model /dev/null",
        "--frozen-model",
    ),
    ("ycsb --write-path oop --space-limit abc", "--space-limit"),
    ("ycsb --write-path oop --space-limit 0", "--space-limit"),
    (
        "ycsb --write-path oop --steady-writes -1",
        "--steady-writes",
    ),
    ("ycsb --no-such-flag", "--no-such-flag"),
    ("ycsb --record 5", "--records"),
    // tpcc
    ("tpcc --warehouses 0", "--warehouses"),
    ("tpcc --warehouses abc", "--warehouses"),
    ("tpcc --threads 0", "--threads"),
    ("tpcc --duration -1", "--duration"),
    ("tpcc --transactions 0", "--transactions"),
    ("tpcc --duration 5 --transactions 5", "--duration"),
    ("tpcc --pool 1", "--pool"),
    ("tpcc --compression lz4", "--compression"),
    ("tpcc --write-path sideways", "--write-path"),
    ("tpcc --check-only", "--check-only"),
    ("tpcc --check-only --steady", "--check-only"),
    (
        "tpcc --check-only --separate-wal --device x.db",
        "--check-only",
    ),
    ("tpcc --dataset-fill 0", "--dataset-fill"),
    ("tpcc --capacity 1MiB", "--capacity"),
    ("tpcc --warehouses 2 --capacity 150MiB", "--capacity"),
    (
        "tpcc --capacity 400MiB --wal-limit 300MiB",
        "--capacity / --wal-limit",
    ),
    ("tpcc --device-writes 0", "--device-writes"),
    ("tpcc --device-writes 1 --duration 5", "--device-writes"),
    // infer-gc-unit
    ("infer-gc-unit --capacity 0", "--capacity"),
    ("infer-gc-unit --capacity 1MiB", "--capacity"),
    ("infer-gc-unit --capacity 10TiB", "--capacity"),
    ("infer-gc-unit --capacity abc", "--capacity"),
    ("infer-gc-unit --capacity 17TiB", "--capacity"),
    ("infer-gc-unit --op 7", "--op"),
    ("infer-gc-unit --op 2", "--op"),
    ("infer-gc-unit --op nan", "--op"),
    ("infer-gc-unit --op 0", "--op"),
    ("infer-gc-unit --pages-per-block 0", "--pages-per-block"),
    ("infer-gc-unit --pages-per-block 70000", "--pages-per-block"),
    (
        "infer-gc-unit --blocks-per-superblock 0",
        "--blocks-per-superblock",
    ),
    (
        "infer-gc-unit --blocks-per-superblock -8",
        "--blocks-per-superblock",
    ),
    ("infer-gc-unit --min-zone 3000", "--min-zone"),
    ("infer-gc-unit --min-zone 3KiB", "--min-zone"),
    ("infer-gc-unit --min-zone 96KiB", "--min-zone"),
    ("infer-gc-unit --min-zone abc", "--min-zone"),
    ("infer-gc-unit --max-zone 32KiB", "--max-zone"),
    ("infer-gc-unit --max-zone 0", "--max-zone"),
    ("infer-gc-unit --max-zone 2EiB", "--max-zone"),
    ("infer-gc-unit --volume 0", "--volume"),
    ("infer-gc-unit --volume nan", "--volume"),
    ("infer-gc-unit --volume 1001", "--volume"),
    ("infer-gc-unit --volume -1", "--volume"),
    ("infer-gc-unit --volume 1e2", "--volume"),
    ("infer-gc-unit --seed x", "--seed"),
    ("infer-gc-unit --bogus", "--bogus"),
    ("infer-gc-unit --json=1", "--json"),
    // table1
    ("table1 --records 0", "--records"),
    ("table1 --records -1", "--records"),
    ("table1 --records 1.5", "--records"),
    ("table1 --records abc", "--records"),
    ("table1 --records 1000000000000", "--records"),
    ("table1 --device-writes 0", "--device-writes"),
    ("table1 --device-writes nan", "--device-writes"),
    ("table1 --device-writes inf", "--device-writes"),
    ("table1 --device-writes -1", "--device-writes"),
    ("table1 --device-writes 2000000", "--device-writes"),
    ("table1 --threads 0", "--threads"),
    ("table1 --threads 100000", "--threads"),
    ("table1 --threads 1025", "--threads"),
    ("table1 --open-zones 0", "--open-zones"),
    ("table1 --open-zones 300", "--open-zones"),
    ("table1 --pacing maybe", "--pacing"),
    ("table1 --pacing 2", "--pacing"),
    ("table1 --media-bandwidth 0", "--media-bandwidth"),
    ("table1 --media-bandwidth 1KB", "--media-bandwidth"),
    ("table1 --media-bandwidth abc", "--media-bandwidth"),
    ("table1 --media-bandwidth nan", "--media-bandwidth"),
    ("table1 --read-bandwidth 0", "--read-bandwidth"),
    ("table1 --seed abc", "--seed"),
    ("table1 --bogus", "--bogus"),
    ("table1 --out", "--out"),
    ("table1 --quick=1", "--quick"),
    ("table1 --cpu-bound", "--cpu-bound"),
    ("table1 --out /proc/nowa-cannot-create", "--out"),
    ("table1 --quick --records 0", "--records"),
    // ssdiq (its flags validate in ssdiq_cmd.rs)
    ("ssdiq sim --qd 0", "--qd"),
    ("ssdiq sim --qd 100000", "--qd"),
    ("ssdiq sim --threads 0", "--threads"),
    ("ssdiq sim --threads 100000", "--threads"),
    ("ssdiq sim --bs 3k", "--bs"),
    ("ssdiq sim --bs abc", "--bs"),
    ("ssdiq sim --seq-bs 0", "--seq-bs"),
    ("ssdiq sim --engine foo", "--engine"),
    ("ssdiq sim --fill 2", "--fill"),
    ("ssdiq sim --fill 0", "--fill"),
    ("ssdiq sim --fill nan", "--fill"),
    ("ssdiq sim --warmup -1", "--warmup"),
    ("ssdiq sim --volume 0", "--volume"),
    ("ssdiq sim --volume inf", "--volume"),
    ("ssdiq sim --bg-load 2", "--bg-load"),
    ("ssdiq sim --sweep 2,x", "--sweep"),
    ("ssdiq sim --workloads bogus", "--workloads"),
    ("ssdiq sim --steps bogus", "--steps"),
    ("ssdiq sim --interval abc", "--interval"),
    ("ssdiq sim --max-time 0", "--max-time"),
    ("ssdiq sim --rate 0", "--rate"),
    ("ssdiq sim --sim-op 0", "--sim-op"),
    ("ssdiq sim --sim-op 700%", "--sim-op"),
    ("ssdiq sim --plot-format gif", "--plot-format"),
    ("ssdiq sim:abc", "sim:SIZE"),
    ("ssdiq", "target"),
    ("ssdiq report", "<FILES>"),
    ("ssdiq sim --op 7", "--op"),
    ("ssdiq sim --bogus", "--bogus"),
    ("ssdiq sim --dry-run --sim-media-mbps 0", "--sim-media-mbps"),
    ("ssdiq sim --dry-run --sim-read-mbps 0", "--sim-read-mbps"),
    ("ssdiq sim --dry-run --sim-op 7", "--sim-op"),
    ("ssdiq sim --sim-policy bogus", "--sim-policy"),
    ("ssdiq sim:0", "sim:SIZE"),
    ("ssdiq sim --read-time nan", "--read-time"),
    ("ssdiq sim --lat-time -1", "--lat-time"),
    ("ssdiq sim --sweep-time 0", "--sweep-time"),
    ("ssdiq sim:1GiB --dry-run --bs 1GiB", "--bs"),
    ("frozen stats", "--writes"),
    ("frozen stats --writes /nonexistent/w.log", "--writes"),
    // an output whose directory is missing is refused before the work, not after it
    ("frozen train --writes /dev/null --out /nonexistent/dir/m.json", "--out"),
    ("frozen train --writes /dev/null --out /tmp", "--out"),
    ("frozen synth --out /nonexistent/dir/s.log", "--out"),
    // every --out is a directory: one that holds something is refused before any work
    ("frozen synth --out /tmp", "--out"),
    ("frozen from-trace --trace /dev/null --out /tmp", "--out"),
    ("tpcc --out /tmp --transactions 10", "--out"),
    ("tpcc --out /tmp --force /nonexistent/elsewhere --transactions 10", "--out"),
    ("frozen replay --writes /dev/null --csv /nonexistent/dir/r.csv", "--csv"),
    ("ycsb --write-path oop --record-writes /nonexistent/dir/w.log", "--record-writes"),
    (
        "frozen train --writes /nonexistent/w.log --out /nonexistent/m.json --encoding abs",
        "--encoding",
    ),
    (
        "frozen train --writes /nonexistent/w.log --out /nonexistent/m.json --eval-writes /nonexistent/e.log",
        "--eval-writes",
    ),
    // the age input and the decision threshold
    (
        "frozen train --writes /nonexistent/w.log --out /nonexistent/m.json --features all+ag",
        "--features",
    ),
    (
        "frozen train --writes /nonexistent/w.log --out /nonexistent/m.json --features ag --samples user",
        "--features",
    ),
    (
        "frozen train --writes /nonexistent/w.log --out /nonexistent/m.json --features all+xx",
        "--features",
    ),
    (
        "frozen train --writes /nonexistent/w.log --out /nonexistent/m.json --frozen-threshold 0",
        "--frozen-threshold",
    ),
    (
        "frozen train --writes /nonexistent/w.log --out /nonexistent/m.json --frozen-threshold 1",
        "--frozen-threshold",
    ),
    (
        "frozen train --writes /nonexistent/w.log --out /nonexistent/m.json --frozen-threshold 1.5",
        "--frozen-threshold",
    ),
    (
        "frozen train --writes /nonexistent/w.log --out /nonexistent/m.json --frozen-threshold abc",
        "--frozen-threshold",
    ),
    (
        "frozen replay --writes /nonexistent/w.log --frozen-threshold 1",
        "--frozen-threshold",
    ),
    (
        "frozen replay --writes /nonexistent/w.log --frozen-threshold nan",
        "--frozen-threshold",
    ),
    (
        "ycsb --write-path oop --placement sepfrozen-bit --frozen-model m.json --frozen-threshold 0",
        "--frozen-threshold",
    ),
    (
        "tpcc --write-path oop --placement sepfrozen-dac --frozen-model m.json --frozen-threshold 2",
        "--frozen-threshold",
    ),
    ("ycsb --frozen-threshold 0.3", "--frozen-threshold"),
    ("tpcc --frozen-threshold 0.3", "--frozen-threshold"),
    (
        "ycsb --write-path oop --placement sepbit --frozen-threshold 0.3",
        "--frozen-threshold",
    ),
    (
        "ycsb --write-path oop --placement sepfrozen-bit --frozen-model online --frozen-threshold 0.3",
        "--frozen-threshold",
    ),
    // trace: missing, unreadable and wrong inputs (damaged files: tests/damaged_inputs.rs)
    ("trace", "subcommand"),
    ("trace bogus", "'bogus'"),
    ("trace stats", "<FILE>"),
    ("trace stats /nonexistent/t.csv", "/nonexistent/t.csv"),
    ("trace stats /", "/: is a directory"),
    ("trace stats /nonexistent/t.csv --format bogus", "--format"),
    ("trace stats /nonexistent/t.csv --max-volumes -1", "--max-volumes"),
    ("trace convert /nonexistent/t.csv", "<OUTPUT>"),
    ("trace convert /nonexistent/t.csv /tmp/x.nwt", "/nonexistent/t.csv"),
    ("trace convert / /tmp/x.nwt", "/: is a directory"),
    ("trace gen /nonexistent/dir/t.csv", "/nonexistent/dir/t.csv"),
    ("trace gen t.csv --writes 0", "--writes"),
    ("trace gen t.csv --fill 0", "--fill"),
    ("trace gen t.csv --fill 2", "--fill"),
    ("trace gen t.csv --capacity 0", "--capacity"),
    ("trace gen t.csv --workload bogus", "--workload"),
    ("trace gen t.csv --seed x", "--seed"),
    ("sim --skip-bad", "--trace"),
    ("sim --trace /nonexistent/t.csv --trace-format bogus", "--trace-format"),
    ("sim --trace / ", "/: is a directory"),
    ("plan run --skip-bad", "--trace"),
    ("plan run --trace /nonexistent/t.csv", "/nonexistent/t.csv"),
    ("plan run --trace-limit 0", "--trace-limit"),
    ("frozen from-trace --trace /nonexistent/t.csv --out o.wlog", "--trace"),
    ("frozen stats --writes /nonexistent/w.wlog", "--writes"),
    ("frozen stats --writes /", "--writes"),
    // an output directory whose parent is missing is not created (parents never are)
    ("plan figures --out /nonexistent/nowa-figures", "--out"),
    ("ckpt figures --out /nonexistent/nowa-figures", "--out"),
    ("ckpt figures --out . --work /nonexistent/nowa-work", "--work"),
    ("ckpt bogus", "'bogus'"),
    ("ckpt figures --out . --jobs 0", "--jobs"),
    ("ckpt figures --out . --jobs 2 --crash-points 0", "--crash-points"),
    ("capture --fs ntfs -- true", "--fs"),
    ("capture -- ", "<CMD>"),
    // frozen figures --engine (every line fails before any run)
    ("frozen figures --workloads ycsb-50w", "--engine"),
    // --force is every figure command's (refuse to overwrite); --out is checked first.
    ("frozen figures --force --out /nonexistent/figs", "--out"),
    ("frozen figures --engine --workloads tpcc", "--workloads"),
    (
        "frozen figures --engine --workloads ycsb-50w,bogus",
        "--workloads",
    ),
    ("frozen figures --engine --schemes fk", "--schemes"),
    (
        "frozen figures --engine --schemes sepbit,sepbit",
        "--schemes",
    ),
    ("frozen figures --engine --warehouses 0", "--warehouses"),
    (
        "frozen figures --engine --transactions 10",
        "--transactions",
    ),
    ("frozen figures --engine --records 0", "--records"),
    ("frozen figures --engine --ops -5", "--ops"),
    ("frozen figures --engine --writes x.log", "--writes"),
    ("frozen figures --engine --no-synth", "--no-synth"),
    // compare (every line fails before a bed is built)
    ("compare --engines bogus", "--engines"),
    ("compare --engines nowa-oop,bogus", "--engines"),
    ("compare --engines nowa-oop, ", "--engines"),
    ("compare --workload ycsb-z", "--workload"),
    ("compare --records 0", "--records"),
    ("compare --records -5", "--records"),
    ("compare --records 1e9", "--records"),
    ("compare --ops 0", "--ops"),
    ("compare --ops abc", "--ops"),
    ("compare --value-size 0", "--value-size"),
    ("compare --value-size 2001", "--value-size"),
    ("compare --memory 1KiB", "--memory"),
    ("compare --memory abc", "--memory"),
    ("compare --memory 2TiB", "--memory"),
    ("compare --fs ntfs", "--fs"),
    ("compare --capacity 1MiB", "--capacity"),
    ("compare --capacity 64MiB1", "--capacity"),
    ("compare --op 10", "--op"),
    ("compare --op -1%", "--op"),
    ("compare --op abc", "--op"),
    ("compare --seed -1", "--seed"),
    ("compare --work /nonexistent/nowa-work", "--work"),
    ("compare --csv", "--csv"),
    ("compare --bogus", "'--bogus'"),
    // run (a job file: every line fails before a run starts)
    ("run", "<JOB>"),
    ("run /nonexistent/job.toml", "/nonexistent/job.toml"),
    ("run /nonexistent/result.json", "/nonexistent/result.json"),
    ("run /", "/"),
    ("run /dev/null", "/dev/null"),
    ("run Cargo.toml", "Cargo.toml"),
    ("run ../../docs/jobs/sim-zipf.toml --csv", "--csv"),
    (
        "run ../../docs/jobs/sim-zipf.toml --csv /nonexistent/nowa/x.csv",
        "--csv",
    ),
    ("run ../../docs/jobs/sim-zipf.toml --bogus", "'--bogus'"),
    // sweep (refused by its flags before the Python module starts)
    ("sweep", "<JOB>"),
    ("sweep j.toml --store s.parquet", "--grid"),
    ("sweep j.toml --grid op=1%", "--store"),
    (
        "sweep j.toml --grid op=1% --store s.parquet --backend spark",
        "--backend",
    ),
    (
        "sweep j.toml --grid op=1% --store s.parquet --repeats 0",
        "--repeats",
    ),
    (
        "sweep j.toml --grid op=1% --store s.parquet --repeats x",
        "--repeats",
    ),
    (
        "sweep j.toml --grid op=1% --store s.parquet --workers 0",
        "--workers",
    ),
    (
        "sweep j.toml --grid op=1% --store s.parquet --workers 2000",
        "--workers",
    ),
    ("sweep j.toml --grid", "--grid"),
    // reproduce (refused before any run)
    ("reproduce", "--out"),
    ("reproduce --out", "--out"),
    ("reproduce --out x --paper bogus", "--paper"),
    ("reproduce --out x --quick --full", "--full"),
    ("reproduce --out x --seed abc", "--seed"),
    ("reproduce --out x --seed -1", "--seed"),
    ("reproduce --out /nonexistent/nowa-repro", "--out"),
    // vssd (refused before anything is mounted)
    ("vssd", "subcommand"),
    ("vssd bogus", "'bogus'"),
    ("vssd serve", "--dir"),
    ("vssd serve --dir x --timing bogus", "--timing"),
    ("vssd serve --dir x --files 0", "--files"),
    ("vssd serve --dir x --files 5000", "--files"),
    ("vssd serve --dir x --sim-mode bogus", "--sim-mode"),
    ("vssd serve --dir x --bench-writes 0", "--bench-writes"),
    ("vssd serve --dir x --seed -1", "--seed"),
    ("vssd serve --dir x --capacity 0", "--capacity"),
    ("vssd serve --dir x --op 200%", "--op"),
    ("vssd stats", "<DIR>"),
    ("vssd stop", "<DIR>"),
    ("vssd attach", "<DIR>"),
    ("vssd stats /nonexistent/vssd", "/nonexistent/vssd"),
    ("vssd stop /nonexistent/vssd", "/nonexistent/vssd"),
    ("vssd attach /nonexistent/vssd", "/nonexistent/vssd"),
];

/// How one line ended.
struct Outcome {
    code: Option<i32>,
    stderr: String,
    secs: f64,
}

fn run_line(line: &str) -> Outcome {
    let args: Vec<&str> = line.split_whitespace().collect();
    let t = Instant::now();
    let mut child = Command::new(env!("CARGO_BIN_EXE_nowa"))
        .args(&args)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn nowa");
    let status = loop {
        if let Some(st) = child.try_wait().expect("wait for nowa") {
            break Some(st);
        }
        if t.elapsed() > TIMEOUT {
            child.kill().expect("kill a hung nowa");
            child.wait().expect("reap a hung nowa");
            break None;
        }
        std::thread::sleep(Duration::from_millis(2));
    };
    let mut stderr = String::new();
    if let Some(mut e) = child.stderr.take() {
        e.read_to_string(&mut stderr).expect("read stderr");
    }
    Outcome {
        code: status.and_then(|s| s.code()),
        stderr,
        secs: t.elapsed().as_secs_f64(),
    }
}

/// Runs every line on a few threads; returns the outcomes in table order.
fn run_all(cases: &[(&str, &str)]) -> Vec<Outcome> {
    let next = AtomicUsize::new(0);
    let out: Mutex<Vec<Option<Outcome>>> = Mutex::new((0..cases.len()).map(|_| None).collect());
    std::thread::scope(|s| {
        for _ in 0..4 {
            s.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                let Some((line, _)) = cases.get(i) else { break };
                let o = run_line(line);
                out.lock().expect("no runner panicked")[i] = Some(o);
            });
        }
    });
    out.into_inner()
        .expect("no runner panicked")
        .into_iter()
        .map(|o| o.expect("every line ran"))
        .collect()
}

/// What is wrong with a line's outcome, if anything.
fn defects(o: &Outcome, want: &str) -> Vec<String> {
    let mut d = Vec::new();
    if o.stderr.contains("panicked") {
        d.push("panicked".into());
    }
    match o.code {
        None => d.push(format!(
            "no exit code (hang or signal) after {:.1} s",
            o.secs
        )),
        Some(2) => {}
        Some(c) => d.push(format!("exit code {c}, want 2")),
    }
    let lines: Vec<&str> = o.stderr.lines().filter(|l| !l.trim().is_empty()).collect();
    if lines.len() != 1 {
        d.push(format!("{} stderr lines, want 1", lines.len()));
    }
    if !o.stderr.contains(want) {
        d.push(format!("stderr does not name {want}"));
    }
    d
}

#[test]
fn every_bad_command_line_is_one_line_naming_the_flag_and_exit_2() {
    assert!(CASES.len() >= 300, "{} lines", CASES.len());
    let outcomes = run_all(CASES);
    let mut failures = Vec::new();
    for ((line, want), o) in CASES.iter().zip(&outcomes) {
        let d = defects(o, want);
        if !d.is_empty() {
            failures.push(format!(
                "nowa {line}: {}\n  stderr: {}",
                d.join("; "),
                o.stderr.trim()
            ));
        }
    }
    let slowest = outcomes.iter().map(|o| o.secs).fold(0.0, f64::max);
    println!("{} lines, slowest {slowest:.2} s", CASES.len());
    assert!(
        failures.is_empty(),
        "{} of {} lines:\n{}",
        failures.len(),
        CASES.len(),
        failures.join("\n")
    );
}
