"""Measures what the Python face and Ray cost (docs/sweeps.md quotes its output):

1. Python call overhead per run: wall time of nowa.sim() minus the run's own elapsed_secs,
   beside the same for a `nowa sim --json` process.
2. Ray task overhead: a sweep of tiny points on an already-started local Ray cluster vs the
   local backend, per task.
3. Sweep throughput on this machine's cores: medium points per second, local vs ray.

Usage: python python/bench/overhead.py [--nowa target/release/nowa] [--calls 200]
"""

import argparse
import json
import os
import statistics
import subprocess
import tempfile
import time

import nowa

TINY = dict(capacity="64MiB", pages_per_block=64, blocks_per_superblock=2, warmup=0.5, volume=0.5, interval=0.25)
MEDIUM = dict(capacity="4GiB", warmup=1, volume=2, workload="zipf:0.9")


def call_overhead(calls: int, binary: str) -> None:
    over = []
    for i in range(calls):
        t = time.perf_counter()
        r = nowa.sim(**TINY, seed=i)
        over.append(time.perf_counter() - t - r["elapsed_secs"])
    print(f"python call overhead: median {statistics.median(over) * 1e3:.3f} ms per run over {calls} calls "
          f"(run itself: {r['elapsed_secs'] * 1e3:.2f} ms)")
    argv = [binary, "sim", "-q", "--json"] + sum((["--" + k.replace("_", "-"), str(v)] for k, v in TINY.items()), [])
    over = []
    for i in range(min(calls, 50)):
        t = time.perf_counter()
        out = subprocess.run(argv, capture_output=True, text=True, check=True)
        over.append(time.perf_counter() - t - json.loads(out.stdout)["elapsed_secs"])
    print(f"cli process overhead: median {statistics.median(over) * 1e3:.3f} ms per run over {len(over)} runs")


def timed_sweep(points: dict, base: dict, backend: str) -> float:
    with tempfile.TemporaryDirectory() as d:
        t = time.perf_counter()
        nowa.sweep("sim", base=base, grid=points, backend=backend, store=os.path.join(d, "s"), quiet=True)
        return time.perf_counter() - t


def ray_overhead(tasks: int) -> None:
    import ray

    cores = os.cpu_count() or 1
    ray.init(num_cpus=cores, include_dashboard=False, log_to_driver=False)
    try:
        timed_sweep({"seed": [10_000]}, TINY, "ray")  # workers start, the module loads
        from nowa.sweep import _ray_run

        task = ray.remote(num_cpus=1)(_ray_run)
        job = nowa.resolve("sim", **TINY)
        trip = []
        for _ in range(50):
            t = time.perf_counter()
            r = ray.get(task.remote(job))
            trip.append(time.perf_counter() - t - r["elapsed_secs"])
        print(f"ray task round trip (one task at a time, submit to result): median {statistics.median(trip) * 1e3:.2f} ms "
              f"beyond the run over {len(trip)} tasks")
        grid = {"seed": list(range(tasks))}
        local = timed_sweep(grid, TINY, "local")
        remote = timed_sweep(grid, TINY, "ray")
        print(f"ray task overhead: {tasks} tiny tasks on {cores} cores: local {local:.2f} s, ray {remote:.2f} s, "
              f"{(remote - local) / tasks * cores * 1e3:.1f} ms more per task on a core")
        n = 16
        grid = {"seed": list(range(n))}
        local = timed_sweep(grid, MEDIUM, "local")
        remote = timed_sweep(grid, MEDIUM, "ray")
        print(f"sweep throughput: {n} points (4 GiB zipf:0.9, 3 drive writes) on {cores} cores: "
              f"local {n / local:.2f} points/s ({local:.2f} s), ray {n / remote:.2f} points/s ({remote:.2f} s)")
    finally:
        ray.shutdown()


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--nowa", default="target/release/nowa")
    p.add_argument("--calls", type=int, default=200)
    p.add_argument("--tasks", type=int, default=100)
    a = p.parse_args()
    call_overhead(a.calls, a.nowa)
    ray_overhead(a.tasks)


if __name__ == "__main__":
    main()
