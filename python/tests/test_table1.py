"""nowa.table1: Table 1's rows from Python, as `nowa table1 --json` gives them."""

import json

import pytest

import nowa
from conftest import cli

# A table in about a second: 20k records, one device capacity written per row.
TINY = dict(quick=True, records="20k", device_writes=1)


def test_table1_returns_the_seven_rows_under_the_identity():
    r = nowa.table1(**TINY)
    assert r["nowa"]["command"] == "table1"
    assert r["nowa"]["spec"]["records"] == 20_000 and r["nowa"]["spec"] == r["spec"]
    assert [row["name"] for row in r["rows"]][0] == "in-place" and len(r["rows"]) == 7
    assert r["rows"][0]["db_waf"] == pytest.approx(2.0, abs=0.05)
    # The same flags give the CLI the same spec.
    out = cli("table1", "--quick", "--records", "20k", "--device-writes", "1", "-q", "--json")
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["nowa"]["spec"] == r["nowa"]["spec"]


def test_table1_resolves_and_refuses_bad_flags_naming_them():
    job = nowa.resolve("table1", quick=True, records="1M", sim_timing="femu")
    assert job["command"] == "table1" and job["spec"]["records"] == 1_000_000
    assert "chips" in job["spec"]["pacing"]
    with pytest.raises(ValueError, match="--records"):
        nowa.table1(records="0")
    with pytest.raises(nowa.UnknownFlag, match="recordz"):
        nowa.table1(recordz=5)
