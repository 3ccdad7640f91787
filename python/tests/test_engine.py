"""nowa.ycsb / nowa.tpcc against the CLI: the same flags give the same run (on the simulated
SSD or in memory, small sizes), bad keyword arguments raise ValueError naming the flag."""

import json
import threading

import pytest

import nowa
from conftest import cli


def flags_of(kwargs):
    argv = []
    for k, v in kwargs.items():
        argv += ["--" + k.replace("_", "-"), str(v)]
    return argv


# What a repeatable run writes: one worker, no page-cleaner or background GC thread, an
# operation-count stop (the speeds and latencies are the machine's, left out).
WRITTEN = ("drilldown", "stats", "hit_ratio", "ops", "db_waf", "ssd_waf")

YCSB = dict(records="5k", ops="5k", threads=1, page_cleaner="off", seed=7)
YCSB_OOP = dict(YCSB, write_path="oop", background_gc="off", zone_size="256KiB", placement="sepbit")


def written(r, keys=WRITTEN):
    return {k: r[k] for k in keys}


@pytest.mark.parametrize("kw", [YCSB, YCSB_OOP], ids=["inplace", "oop"])
def test_ycsb_returns_what_the_cli_prints_for_the_same_flags(kw):
    out = cli("ycsb", "-q", "--json", *flags_of(kw))
    assert out.returncode == 0, out.stderr
    from_cli = json.loads(out.stdout)
    from_py = nowa.ycsb(**kw)
    assert from_py["nowa"]["spec"] == from_cli["nowa"]["spec"]
    assert from_py["nowa"]["command"] == "ycsb" and from_py["ops"] == 5000
    assert written(from_py) == written(from_cli)
    # The comparison sees the run: another seed writes other bytes.
    assert written(nowa.ycsb(**dict(kw, seed=8))) != written(from_cli)


def test_a_ycsb_result_runs_again_bit_for_bit():
    r = nowa.ycsb(**YCSB_OOP)
    assert written(nowa.run(r)) == written(r)


TPCC = dict(warehouses=1, transactions=300, threads=1, page_cleaner="off", device="mem", seed=3, check=True)
TPCC_KEYS = ("db_waf", "drilldown", "db", "consistency")


def test_tpcc_returns_what_the_cli_prints_for_the_same_flags():
    out = cli("tpcc", "-q", "--json", *flags_of({k: v for k, v in TPCC.items() if k != "check"}), "--check")
    assert out.returncode == 0, out.stderr
    from_cli = json.loads(out.stdout)
    from_py = nowa.tpcc(**TPCC)
    assert from_py["nowa"]["spec"] == from_cli["nowa"]["spec"]
    assert from_py["nowa"]["command"] == "tpcc"
    assert written(from_py, TPCC_KEYS) == written(from_cli, TPCC_KEYS)
    assert from_py["nowa"]["spec"]["stop"] == {"transactions": 300} and from_py["run"]["transactions"] > 0


@pytest.mark.parametrize(
    "command, kwargs, field",
    [
        ("ycsb", dict(recordz="1k"), "recordz"),  # unknown key
        ("ycsb", dict(records="many"), "--records"),  # wrong type
        ("ycsb", dict(capacity="12 parsecs"), "--capacity"),  # bad size
        ("ycsb", dict(dataset_fill=2), "--dataset-fill"),  # out of range
        ("ycsb", dict(separate_wal="yes"), "separate_wal"),  # a switch given a value
        ("ycsb", dict(frozen_model="m.json"), "--frozen-model"),  # needs oop
        ("ycsb", dict(device="/nonexistent/x.img"), "device"),  # a path: the CLI's
        ("tpcc", dict(warehouses=0), "--warehouses"),
        ("tpcc", dict(threads="two"), "--threads"),
        ("tpcc", dict(write_path="sideways"), "--write-path"),
    ],
)
def test_bad_flags_raise_one_line_value_errors_naming_the_flag(command, kwargs, field):
    with pytest.raises(ValueError) as e:
        getattr(nowa, command)(**kwargs)
    assert field in str(e.value) and "\n" not in str(e.value), str(e.value)


def test_ctrl_c_stops_a_ycsb_run_with_the_partial_result(ctrl_c):
    timer = threading.Timer(2.0, ctrl_c)
    timer.start()
    with pytest.raises(KeyboardInterrupt) as e:
        nowa.ycsb(records="2k", seconds=120, interval=0.1, threads=1, pacing="off", seed=1)
    timer.cancel()
    partial = getattr(e.value, "partial", None)
    # Ctrl-C during the run phase keeps what it measured; during the load there is nothing.
    if partial is not None:
        assert partial["interrupted"] is True and partial["ops"] > 0
        assert partial["run_secs"] < 100
    # The next run is not stopped by the old Ctrl-C.
    assert nowa.ycsb(**YCSB)["ops"] == 5000


def test_docstrings_and_stubs_name_the_flags():
    for f in (nowa.ycsb, nowa.tpcc):
        assert "frozen_model:" in f.__doc__ and "record_writes:" in f.__doc__
    assert "warehouses:" in nowa.tpcc.__doc__ and "records:" in nowa.ycsb.__doc__
