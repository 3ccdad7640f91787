"""nowa.sim / nowa.run / nowa.frame against the CLI."""

import json
import subprocess
import sys
import threading

import pytest

import nowa
from conftest import ROOT, SMALL, cli, deterministic


def flags_of(kwargs):
    argv = []
    for k, v in kwargs.items():
        argv += ["--" + k.replace("_", "-"), str(v)]
    return argv


def test_sim_returns_what_the_cli_prints_for_the_same_flags():
    kw = dict(SMALL, workload="zipf:0.9", op_physical="10%", policy="greedy", seed=7)
    out = cli("sim", "-q", "--json", *flags_of(kw))
    assert out.returncode == 0, out.stderr
    from_cli = json.loads(out.stdout)
    from_py = nowa.sim(**kw)
    assert from_py["nowa"]["spec"] == from_cli["nowa"]["spec"]
    assert deterministic(from_py) == deterministic(from_cli)
    # The comparison sees the run: another seed differs.
    assert deterministic(nowa.sim(**dict(kw, seed=8))) != deterministic(from_cli)


def test_a_result_runs_again_bit_for_bit(tmp_path):
    r = nowa.sim(**SMALL, workload="two-zone:80/20", placement="sepbit", seed=3)
    assert deterministic(nowa.run(r)) == deterministic(r)
    p = tmp_path / "r.json"
    p.write_text(json.dumps(r))
    assert deterministic(nowa.run(p)) == deterministic(r)
    assert deterministic(nowa.run(str(p))) == deterministic(r)


def test_a_toml_job_runs(tmp_path):
    p = tmp_path / "job.toml"
    p.write_text('command = "sim"\n[spec]\ncapacity = "256MiB"\npages_per_block = 64\nblocks_per_superblock = 2\nwarmup = 0.5\nvolume = 1\nseed = 9\n')
    r = nowa.run(p)
    assert r["nowa"]["spec"]["seed"] == 9 and r["waf"] >= 1.0
    assert deterministic(r) == deterministic(nowa.sim(**dict(SMALL, interval=0.1, seed=9)))


@pytest.mark.parametrize(
    "kwargs, field",
    [
        (dict(capacityy="1GiB"), "capacityy"),  # unknown key
        (dict(pages_per_block="many"), "--pages-per-block"),  # wrong type
        (dict(capacity="12 parsecs"), "--capacity"),  # bad size
        (dict(fill=2), "--fill"),  # out of range
        (dict(zns="yes"), "zns"),  # a switch given a value
    ],
)
def test_bad_flags_raise_one_line_value_errors_naming_the_flag(kwargs, field):
    with pytest.raises(ValueError) as e:
        nowa.sim(**kwargs)
    assert field in str(e.value) and "\n" not in str(e.value)


@pytest.mark.parametrize(
    "spec, field",
    [
        ({"capacityy": 1}, "capacityy"),
        ({"seed": "seven"}, "spec.seed"),
        ({"capacity": "8 GiBs"}, "spec.capacity"),
        ({"fill": 1.5}, "spec.fill"),  # a job names its field, not the flag
    ],
)
def test_bad_job_specs_raise_value_errors_naming_the_field(spec, field):
    with pytest.raises(ValueError) as e:
        nowa.run({"command": "sim", "spec": spec})
    assert field in str(e.value) and "\n" not in str(e.value)


def test_frame_flattens_spec_and_result():
    rs = [nowa.sim(**SMALL, seed=s) for s in (1, 2)]
    df = nowa.frame(rs)
    assert len(df) == 2
    for col in ("version", "commit", "seed", "spec_hash", "spec.capacity", "spec.policy", "waf", "layout.units", "measured.host_pages"):
        assert col in df.columns, col
    assert list(df["seed"]) == [1, 2]
    assert df["spec.policy"].tolist() == ["greedy", "greedy"]
    assert df["spec_hash"].nunique() == 2


def test_machine_columns_are_exactly_the_ones_that_differ_between_two_runs_of_one_seed():
    a, b = (nowa.row(nowa.sim(**SMALL, seed=3)) for _ in range(2))
    assert a.keys() == b.keys()
    # Series (intervals) stay one cell: their entries' machine keys are stripped first.
    differ = {k for k in a if deterministic(a[k]) != deterministic(b[k])}
    assert differ, "two runs differ at least in their timing"
    assert all(nowa.is_machine(k) for k in differ), sorted(k for k in differ if not nowa.is_machine(k))
    assert nowa.is_machine("measured.wall_secs") and not nowa.is_machine("waf")


def test_the_gil_is_released_during_a_run():
    started = threading.Event()
    box = {}

    def work():
        started.set()
        box["r"] = nowa.sim(capacity="1GiB", warmup=1, volume=4, seed=1)

    t = threading.Thread(target=work)
    t.start()
    started.wait()
    spins = 0
    while t.is_alive():
        spins += 1
    t.join()
    assert box["r"]["waf"] >= 1.0
    # With the GIL held for the whole run this thread would not run until it ended.
    assert spins > 10_000, spins


def test_ctrl_c_raises_keyboard_interrupt_with_the_partial_result(ctrl_c):
    timer = threading.Timer(1.0, ctrl_c)
    timer.start()
    with pytest.raises(KeyboardInterrupt) as e:
        nowa.sim(capacity="1GiB", warmup=0.2, volume=5000, interval=0.1, seed=1)
    timer.cancel()
    partial = e.value.partial
    n = len(partial["intervals"])
    assert 1 <= n < 50_000, n
    assert partial["waf"] >= 1.0 and partial["nowa"]["spec"]["volume"] == 5000
    # The next run is not stopped by the old Ctrl-C.
    assert len(nowa.sim(**SMALL)["intervals"]) == 4


def test_the_stubs_are_the_flags_help():
    out = subprocess.run([sys.executable, "-m", "nowa", "stubs"], capture_output=True, text=True, check=True)
    assert out.stdout == (ROOT / "python" / "nowa" / "__init__.pyi").read_text(), "regenerate: python -m nowa stubs > python/nowa/__init__.pyi"
