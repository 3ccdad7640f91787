"""Shared helpers of the Python tests: the CLI binary, wall-clock fields, tiny specs."""

import os
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

# A device small enough for a run in milliseconds: 256 MiB, 128-page GC units.
SMALL = dict(capacity="256MiB", pages_per_block=64, blocks_per_superblock=2, warmup=0.5, volume=1, interval=0.25)


def nowa_bin() -> str:
    """The `nowa` binary of this checkout (NOWA_BIN, else target/debug or target/release)."""
    if os.environ.get("NOWA_BIN"):
        return os.environ["NOWA_BIN"]
    for profile in ("debug", "release"):
        p = ROOT / "target" / profile / "nowa"
        if p.exists():
            return str(p)
    pytest.fail("no nowa binary: build it (cargo build -p nowa-cli) or set NOWA_BIN")


def cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([nowa_bin(), *args], capture_output=True, text=True)


def deterministic(v):
    """A result without what it measured of the machine (start time, wall and CPU speeds)."""
    if isinstance(v, dict):
        return {
            k: deterministic(x)
            for k, x in v.items()
            if not (k == "started" or k.endswith("_secs") or k.endswith("_per_sec") or k.endswith("_per_cpu_sec"))
        }
    if isinstance(v, list):
        return [deterministic(x) for x in v]
    return v
