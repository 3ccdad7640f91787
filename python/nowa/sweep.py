"""Sweeps: a grid of runs around a base, one task per point (x repeats with derived seeds),
on this machine (threads: runs release the GIL) or on a Ray cluster; every result lands in a
Parquet store (a directory of ``part-<spec hash>.parquet`` files, written atomically), so a
killed sweep resumes where it stopped: a point whose spec hash is in the store is skipped."""

from __future__ import annotations

import hashlib
import itertools
import os
import sys
import time
from concurrent.futures import FIRST_COMPLETED, ThreadPoolExecutor, wait
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping

from . import _nowa, resolve, row, run, spec_hash

BACKENDS = ("local", "ray")


def derived_seed(seed: int, repeat: int) -> int:
    """The seed of repeat ``repeat`` of a point (repeat 0 keeps the point's own seed)."""
    if repeat == 0:
        return seed
    digest = hashlib.sha256(f"nowa-repeat:{seed}:{repeat}".encode()).digest()
    return int.from_bytes(digest[:8], "little") >> 1


def _conflicts(command: str) -> dict[str, set[str]]:
    # clap records a conflict on one side (op excludes op_physical): make it mutual.
    out: dict[str, set[str]] = {}
    for name, others in _nowa.conflicts(command):
        for o in others:
            out.setdefault(name, set()).add(o)
            out.setdefault(o, set()).add(name)
    return out


def points(command: str, base: Mapping[str, Any], grid: Mapping[str, Iterable[Any]], repeats: int = 1) -> list[dict]:
    """The resolved jobs of a sweep, in grid order (last axis fastest), repeats innermost."""
    if repeats < 1:
        raise ValueError(f"repeats: must be >= 1, got {repeats}")
    grid = {k.replace("-", "_"): list(v) for k, v in grid.items()}
    for k, v in grid.items():
        if not v:
            raise ValueError(f"grid: {k} has no values")
    conflicts = _conflicts(command)
    jobs = []
    for combo in itertools.product(*grid.values()):
        flags = {k.replace("-", "_"): v for k, v in base.items()}
        for k, v in zip(grid, combo):
            for c in conflicts.get(k, ()):
                flags.pop(c, None)
            flags[k] = v
        job = resolve(command, **flags)
        seed = job["spec"]["seed"]
        for r in range(repeats):
            jobs.append(job if r == 0 else resolve(command, **{**flags, "seed": derived_seed(seed, r)}))
    return jobs


def _part(store: Path, h: str) -> Path:
    return store / f"part-{h}.parquet"


def done_hashes(store: str | os.PathLike) -> set[str]:
    """Spec hashes already in the store."""
    p = Path(store)
    if not p.exists():
        return set()
    if not p.is_dir():
        raise ValueError(f"store: {p} is not a directory of parquet parts (a nowa store)")
    return {f.name[len("part-"): -len(".parquet")] for f in p.glob("part-*.parquet")}


def _write(store: Path, result: Mapping[str, Any]) -> str:
    import pyarrow as pa
    import pyarrow.parquet as pq

    r = row(result)
    h = r["spec_hash"]
    table = pa.Table.from_pylist([r])
    tmp = store / f".tmp-{h}-{os.getpid()}.parquet"
    pq.write_table(table, tmp)
    os.replace(tmp, _part(store, h))  # atomic: a killed sweep leaves no half-written part
    return h


def load(store: str | os.PathLike):
    """Every result of a store as a pandas DataFrame (one row per point, flattened columns)."""
    import pandas as pd
    import pyarrow.parquet as pq

    parts = sorted(Path(store).glob("part-*.parquet"))
    if not parts:
        return pd.DataFrame()
    return pd.concat([pq.read_table(p).to_pandas() for p in parts], ignore_index=True)


def _progress(total: int, skipped: int, quiet: bool) -> Callable[[Mapping[str, Any]], None]:
    t0 = time.monotonic()
    count = [0]

    def tick(result: Mapping[str, Any]) -> None:
        count[0] += 1
        if not quiet:
            waf = result.get("waf")
            waf_s = f" waf {waf:.4f}" if isinstance(waf, float) else ""
            print(
                f"nowa sweep: [{count[0]}/{total}] done{waf_s} ({time.monotonic() - t0:.1f} s; {skipped} already in the store)",
                file=sys.stderr,
                flush=True,
            )

    return tick


def _run_local(jobs: list[dict], workers: int, on_result: Callable[[dict], None]) -> None:
    with ThreadPoolExecutor(max_workers=workers) as pool:
        pending = {pool.submit(run, job) for job in jobs}
        try:
            while pending:
                finished, pending = wait(pending, return_when=FIRST_COMPLETED)
                for f in finished:
                    on_result(f.result())
        except BaseException:
            for f in pending:
                f.cancel()
            raise


def _ray_run(job: dict) -> dict:
    import nowa

    return nowa.run(job)


def _run_ray(jobs: list[dict], address: str | None, on_result: Callable[[dict], None]) -> None:
    import ray

    if not ray.is_initialized():
        ray.init(address=address, include_dashboard=False, log_to_driver=False, ignore_reinit_error=True)
    task = ray.remote(num_cpus=1)(_ray_run)
    pending = [task.remote(job) for job in jobs]
    while pending:
        ready, pending = ray.wait(pending, num_returns=1)
        for ref in ready:
            on_result(ray.get(ref))


def sweep(
    command: str,
    base: Mapping[str, Any] | None = None,
    grid: Mapping[str, Iterable[Any]] | None = None,
    backend: str = "local",
    store: str | os.PathLike = "results.parquet",
    repeats: int = 1,
    address: str | None = None,
    workers: int | None = None,
    quiet: bool = False,
):
    """Run ``command`` at every point of ``grid`` (flag -> values, their product) around
    ``base`` (flags), ``repeats`` times each with derived seeds, on ``backend`` ("local":
    ``workers`` threads, default all cores; "ray": the cluster at ``address``, or a running
    one / a local one when None). Results are appended to the Parquet store ``store`` (a
    directory); points already there are skipped. Returns the sweep's rows (a DataFrame)."""
    if backend not in BACKENDS:
        raise ValueError(f"backend: expected local or ray, not {backend!r}")
    jobs = points(command, base or {}, grid or {}, repeats)
    store_p = Path(store)
    have = done_hashes(store_p)
    todo, seen = [], set()
    for job in jobs:
        h = spec_hash(job)
        if h not in have and h not in seen:
            todo.append(job)
        seen.add(h)
    store_p.mkdir(parents=True, exist_ok=True)
    if not quiet:
        print(f"nowa sweep: {len(jobs)} runs, {len(jobs) - len(todo)} already in {store_p}, {len(todo)} to run on {backend}", file=sys.stderr)
    tick = _progress(len(todo), len(jobs) - len(todo), quiet)

    def on_result(result: dict) -> None:
        _write(store_p, result)
        tick(result)

    if todo and backend == "local":
        _run_local(todo, workers or os.cpu_count() or 1, on_result)
    elif todo:
        _run_ray(todo, address, on_result)
    frame = load(store_p)
    return frame[frame["spec_hash"].isin(seen)].reset_index(drop=True)
