"""Shared helpers of the Python tests: the CLI binary, wall-clock fields, tiny specs."""

import os
import signal
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


def default_sigint() -> None:
    """A child's SIGINT back to the default (death): pytest started as a background job of a
    non-interactive shell inherits SIGINT ignored, and so would every child it starts."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([nowa_bin(), *args], capture_output=True, text=True, preexec_fn=default_sigint)


@pytest.fixture
def ctrl_c():
    """Python's Ctrl-C handler (KeyboardInterrupt) for the test, whatever pytest inherited: a
    background job of a non-interactive shell starts with SIGINT ignored, so Python installs
    none and a SIGINT would never reach nowa's run (the test "DID NOT RAISE")."""
    before = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        yield lambda: os.kill(os.getpid(), signal.SIGINT)
    finally:
        signal.signal(signal.SIGINT, before)


def is_machine(key):
    """True for a result key (or a flattened column) that measures the machine: the module's
    rule (`nowa.is_machine`), the same one the Rust tests use."""
    import nowa

    return nowa.is_machine(key)


def deterministic(v):
    """A result without what it measured of the machine."""
    if isinstance(v, dict):
        return {k: deterministic(x) for k, x in v.items() if not is_machine(k)}
    if isinstance(v, list):
        return [deterministic(x) for x in v]
    return v
