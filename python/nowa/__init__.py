"""nowa from Python: the CLI's experiments as functions returning the CLI's JSON as dicts.

    import nowa
    r = nowa.sim(workload="zipf:0.9", capacity="16GiB", op_physical="10%", policy="greedy", seed=7)
    print(r["waf"], r["nowa"]["spec"])

Keyword arguments are the CLI's flags with underscores (``nowa sim --help``); they go through
the same parsers, so a bad value raises ``ValueError`` naming the flag. Runs release the GIL.
Ctrl-C raises ``KeyboardInterrupt`` whose ``partial`` attribute holds the result measured so
far (as the CLI prints it before exiting 130).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, Iterable, Mapping

from . import _nowa

__all__ = ["UnknownFlag", "sim", "table1", "ycsb", "tpcc", "run", "resolve", "frame", "sweep", "load", "spec_hash", "__version__", "__commit__"]

__version__, __commit__ = _nowa.version()

# The commands with a Python function (more follow as they move into nowa-lab).
COMMANDS = ("sim", "table1", "ycsb", "tpcc")


class UnknownFlag(ValueError, TypeError):
    """A keyword argument that is no flag of the command (a ValueError, as every bad spec;
    a TypeError too, as Python's own unexpected keyword arguments)."""


def _argv(command: str, kwargs: Mapping[str, Any]) -> list[str]:
    """Keyword arguments as the CLI's flags: ``op_physical="10%"`` -> ``--op-physical 10%``;
    ``True`` gives a switch (``zns=True`` -> ``--zns``), ``False`` and ``None`` leave it out."""
    known = {name: takes for name, _, _, takes in _nowa.flags(command)}
    argv: list[str] = []
    for key, value in kwargs.items():
        if key not in known:
            raise UnknownFlag(f"{key}: not a flag of nowa {command} (see help(nowa.{command}))")
        flag = "--" + key.replace("_", "-")
        if known[key]:
            if value is None:
                continue
            if isinstance(value, bool):
                raise ValueError(f"{key}: expects a value, not {value!r}")
            argv += [flag, str(value)]
        elif value is True:
            argv.append(flag)
        elif value not in (False, None):
            raise ValueError(f"{key}: a switch takes True or False, not {value!r}")
    return argv


def _finish(out: tuple[str, bool], what: str) -> dict:
    text, interrupted = out
    result = json.loads(text)
    if interrupted:
        e = KeyboardInterrupt(f"{what} interrupted (Ctrl-C): the result measured so far is in .partial")
        e.partial = result  # type: ignore[attr-defined]
        raise e
    return result


def sim(**flags: Any) -> dict:
    return _finish(_nowa.sim(_argv("sim", flags)), "nowa.sim")


def _doc(command: str, summary: str) -> str:
    lines = [summary, "", "Keyword arguments (the flags of `nowa %s`):" % command, ""]
    for name, help_text, default, takes in _nowa.flags(command):
        d = f" (default: {default})" if default is not None and takes else ""
        lines.append(f"{name}: {help_text}{d}")
    lines += ["", "Returns the dict `nowa %s --json` prints, with its `nowa` identity object." % command]
    return "\n".join(lines)


sim.__doc__ = _doc("sim", "Simulate an SSD (FTL model) under a workload, or replay a trace (trace=...).")


def table1(**flags: Any) -> dict:
    return _finish(_nowa.table1(_argv("table1", flags)), "nowa.table1")


table1.__doc__ = _doc(
    "table1",
    "Table 1 of how-to-write-to-ssds (in place vs out of place and its optimizations), row by row on identical simulated SSDs.",
)


def ycsb(**flags: Any) -> dict:
    return _finish(_nowa.ycsb(_argv("ycsb", flags)), "nowa.ycsb")


ycsb.__doc__ = _doc(
    "ycsb",
    "Load and run a YCSB mix on the engine, on the simulated SSD (device='sim', the default) or in memory (device='mem'); the write drill-down and what bounds the run.",
)


def tpcc(**flags: Any) -> dict:
    return _finish(_nowa.tpcc(_argv("tpcc", flags)), "nowa.tpcc")


tpcc.__doc__ = _doc(
    "tpcc",
    "TPC-C (standard or steady) on the engine, on the simulated SSD (device='sim', the default) or in memory (device='mem'): WAF, bytes per transaction, the consistency check.",
)


def run(job: str | os.PathLike | Mapping[str, Any]) -> dict:
    """Run a job: a job file (TOML or JSON), a JSON result (its run again, same spec and seed),
    or a dict (``{"command": "sim", "spec": {...}}`` or a result dict)."""
    if isinstance(job, Mapping):
        return _finish(_nowa.run(json.dumps(dict(job)), False), "nowa.run")
    path = Path(job)
    try:
        text = path.read_text()
    except OSError as e:
        raise ValueError(f"{path}: {e.strerror}") from None
    try:
        return _finish(_nowa.run(text, path.suffix == ".toml"), "nowa.run")
    except ValueError as e:
        raise ValueError(f"{path}: {e}") from None


def resolve(command: str, **flags: Any) -> dict:
    """The job ``{"command", "spec"}`` these flags give, every default resolved (no run)."""
    return json.loads(_nowa.resolve(command, _argv(command, flags)))


def is_machine(key: str) -> bool:
    """True for a result key or a flattened column (``a.b``) that measures the machine (start
    time, wall and CPU durations and rates, resident memory, what bound the run): two runs of
    one spec and seed agree on every other key."""
    return _nowa.is_machine(key)


def spec_hash(job: Mapping[str, Any]) -> str:
    """The identity of a point of a sweep: SHA-256 of the canonical JSON of command and spec."""
    canon = json.dumps({"command": job["command"], "spec": job["spec"]}, sort_keys=True, separators=(",", ":"))
    import hashlib

    return hashlib.sha256(canon.encode()).hexdigest()


def _flat(prefix: str, mapping: Mapping[str, Any], out: dict) -> None:
    # Nested objects become dotted columns; series (intervals, histograms) stay one cell.
    for k, v in mapping.items():
        if isinstance(v, Mapping):
            _flat(f"{prefix}{k}.", v, out)
        else:
            out[f"{prefix}{k}"] = v


def row(result: Mapping[str, Any]) -> dict:
    """One result as a flat row: identity (``version``, ``commit``, ``command``, ``seed``,
    ``started``), ``spec.*`` and the result's fields (nested ones as ``a.b``), ``spec_hash``."""
    ident = dict(result["nowa"])
    spec = ident.pop("spec")
    out: dict = dict(ident)
    out["spec_hash"] = spec_hash({"command": ident["command"], "spec": spec})
    _flat("spec.", spec, out)
    _flat("", {k: v for k, v in result.items() if k != "nowa"}, out)
    return out


def frame(results: Iterable[Mapping[str, Any]] | Mapping[str, Any]):
    """A pandas DataFrame of results, one row each, spec and result columns flattened."""
    import pandas as pd

    if isinstance(results, Mapping):
        results = [results]
    return pd.DataFrame([row(r) for r in results])


from .sweep import load, sweep  # noqa: E402  (sweep imports the functions above)
