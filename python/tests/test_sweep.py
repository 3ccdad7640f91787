"""nowa.sweep: grid, repeats, the Parquet store, resuming, and Ray against the local backend."""

import subprocess
import sys
import time

import pytest

import nowa
from conftest import ROOT, SMALL, default_sigint, deterministic, is_machine
from nowa.sweep import derived_seed, done_hashes, points

BASE = dict(SMALL, workload="zipf:0.9", op=0.2)
GRID = {"op_physical": ["5%", "7%", "10%"]}


def plain(v):
    """Parquet gives series back as numpy arrays: make them lists again."""
    if hasattr(v, "tolist") and not isinstance(v, (int, float, str)):
        v = v.tolist()
    if isinstance(v, dict):
        return {k: plain(x) for k, x in v.items()}
    if isinstance(v, list):
        return [plain(x) for x in v]
    return v


def same_rows(a, b):
    a = a.sort_values("spec_hash").reset_index(drop=True)
    b = b.sort_values("spec_hash").reset_index(drop=True)
    cols = [c for c in a.columns if not is_machine(c)]
    assert list(a["spec_hash"]) == list(b["spec_hash"])
    for c in cols:
        assert [deterministic(plain(x)) for x in a[c]] == [deterministic(plain(x)) for x in b[c]], c


def test_grid_points_resolve_and_repeats_derive_seeds():
    jobs = points("sim", BASE, GRID, repeats=2)
    assert len(jobs) == 6
    assert [j["spec"]["op"] for j in jobs[::2]] == pytest.approx([0.05 / 0.95, 0.07 / 0.93, 0.1 / 0.9], rel=1e-15)
    assert jobs[0]["spec"]["seed"] == 42 and jobs[1]["spec"]["seed"] == derived_seed(42, 1) != 42
    assert len({nowa.spec_hash(j) for j in jobs}) == 6


def test_a_sweep_appends_to_the_store_and_skips_what_is_there(tmp_path, capsys):
    store = tmp_path / "results.parquet"
    first = nowa.sweep("sim", base=BASE, grid=GRID, store=store)
    assert len(first) == 3 and len(done_hashes(store)) == 3
    assert sorted(first["spec.op"]) == sorted(j["spec"]["op"] for j in points("sim", BASE, GRID))
    capsys.readouterr()
    again = nowa.sweep("sim", base=BASE, grid={"op_physical": ["5%", "7%", "10%", "12%"]}, store=store)
    assert "1 to run" in capsys.readouterr().err
    assert len(again) == 4
    same_rows(again[again["spec_hash"].isin(first["spec_hash"])], first)


def test_ray_gives_exactly_the_local_results(tmp_path):
    import ray

    local = nowa.sweep("sim", base=BASE, grid=GRID, store=tmp_path / "local", quiet=True)
    try:
        ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
        remote = nowa.sweep("sim", base=BASE, grid=GRID, store=tmp_path / "ray", backend="ray", quiet=True)
    finally:
        ray.shutdown()
    assert len(remote) == 3
    same_rows(remote, local)
    assert sorted(remote["waf"]) == sorted(local["waf"])


def test_a_killed_sweep_resumes_without_running_finished_points_again(tmp_path):
    job = tmp_path / "job.toml"
    # Points long enough (a few seconds each, more under load) that the kill after the second
    # always finds the sweep running; the resumed run pays for the four left.
    job.write_text('command = "sim"\n[spec]\ncapacity = "1GiB"\nwarmup = 1\nvolume = 8\nworkload = "zipf:0.9"\n')
    store = tmp_path / "store"
    grid = ["--grid", "op_physical=8%,9%,10%,11%,12%,13%"]
    # stderr to a file, not a pipe: nobody reads a pipe while the test polls, so a full one
    # would stop the sweep at its next progress line.
    log = tmp_path / "sweep.err"
    with open(log, "w") as err:
        p = subprocess.Popen([sys.executable, "-m", "nowa", "sweep", str(job), *grid, "--workers", "1", "--store", str(store)],
                             stderr=err, preexec_fn=default_sigint)
        while len(done_hashes(store)) < 2 and p.poll() is None:
            time.sleep(0.05)
        ended_alone = p.poll()
        p.kill()
        p.wait()
    finished = {f.name: f.stat().st_mtime_ns for f in store.glob("part-*.parquet")}
    assert ended_alone is None and 2 <= len(finished) < 6, (
        f"killed mid-sweep: {len(finished)} of 6 points were in the store, the sweep "
        f"{'had ended with exit code %s' % ended_alone if ended_alone is not None else 'was running'}; "
        f"its stderr:\n{log.read_text()[-4000:]}"
    )
    out = subprocess.run([sys.executable, "-m", "nowa", "sweep", str(job), *grid, "--store", str(store)],
                         capture_output=True, text=True, preexec_fn=default_sigint)
    assert out.returncode == 0, out.stderr
    assert f"{len(finished)} already in" in out.stderr
    assert f"{6 - len(finished)} to run" in out.stderr
    for name, mtime in finished.items():
        assert (store / name).stat().st_mtime_ns == mtime, f"{name} ran again"
    assert len(done_hashes(store)) == 6


def test_the_cli_sweep_hands_over_to_the_module(tmp_path):
    from conftest import cli

    job = tmp_path / "job.toml"
    job.write_text('command = "sim"\n[spec]\ncapacity = "256MiB"\npages_per_block = 64\nblocks_per_superblock = 2\nwarmup = 0.5\nvolume = 1\n')
    out = cli("sweep", str(job), "--grid", "op_physical=5%,10%", "--store", str(tmp_path / "s"))
    assert out.returncode == 0, out.stderr
    assert "2 results in" in out.stdout
    bad = cli("sweep", str(job), "--grid", "op_physicall=5%", "--store", str(tmp_path / "s"))
    assert bad.returncode == 2 and "op_physicall" in bad.stderr and len(bad.stderr.strip().splitlines()) == 1, bad.stderr
