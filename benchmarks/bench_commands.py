"""Throughput of ``assemble``, ``verify`` and ``promote --check`` at N and 2N sources.

Each command runs in-process through ``publisher.cli.main`` (no interpreter start-up counted) on
one generated run; its throughput in MB of snapshot files per second is set against the in-run
floor of :mod:`benchmarks.bench_preflight` on the same files, and the 2N/N time ratio shows
whether it scales linearly.

    python benchmarks/bench_commands.py                # 50 MB and 100 MB runs
    python benchmarks/bench_commands.py --total-mb 4   # small
"""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks._common import MB, run_dirs, snapshot_files, table
from benchmarks.bench_preflight import floor_pass
from benchmarks.generate import WikiSpec, generate_wiki
from publisher.parallel import default_workers

COMMANDS = {
    "assemble": lambda run, wiki: ["assemble", "--run-dir", run, "--json"],
    "verify": lambda run, wiki: ["verify", "--run-dir", run, "--json"],
    "promote --check": lambda run, wiki: ["promote", "--run-dir", run, "--wiki", wiki, "--check", "--json"],
}


def run_command(argv: list[str]) -> tuple[float, int]:
    """Wall time and exit status of one in-process CLI call (its output discarded)."""
    from publisher.cli import main

    sink = io.StringIO()
    began = time.perf_counter()
    with contextlib.redirect_stdout(sink), contextlib.redirect_stderr(sink):
        try:
            status = main(argv)
        except SystemExit as exc:  # argparse refuses a command this checkout lacks
            status = exc.code if isinstance(exc.code, int) else 2
    return time.perf_counter() - began, status


def measure(base: Path, total_mb: float, repeat: int) -> dict[str, Any]:
    wiki = base / f"wiki-{total_mb:g}"
    generate_wiki(
        WikiSpec(root=wiki, seed=3, total_bytes=int(total_mb * MB), max_bytes=2 * 1024 * 1024, sources_per_run=10**9)
    )
    (run,) = run_dirs(wiki)
    files = snapshot_files(wiki)
    size = sum(f.stat().st_size for f in files)
    for f in files:
        f.read_bytes()
    cores = default_workers()
    floor = min(_timed(lambda: floor_pass(files, cores)) for _ in range(repeat))
    out: dict[str, Any] = {"files": len(files), "bytes": size, "floor": floor}
    for name, argv in COMMANDS.items():
        best, status = float("inf"), 0
        for _ in range(repeat):
            took, status = run_command(argv(os.fspath(run), os.fspath(wiki)))
            best = min(best, took)
        out[name] = (best, status)
    return out


def _timed(fn: Any) -> float:
    began = time.perf_counter()
    fn()
    return time.perf_counter() - began


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--total-mb", type=float, default=50.0, help="N in MB of text (the second run is 2N)")
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--quick", action="store_true", help="2 MB, one repeat")
    args = parser.parse_args(argv)
    if args.quick:
        args.total_mb, args.repeat = 2.0, 1
    results = []
    with tempfile.TemporaryDirectory(prefix="bench-commands-") as tmp:
        for total in (args.total_mb, 2 * args.total_mb):
            results.append(measure(Path(tmp), total, args.repeat))
    rows = []
    for got in results:
        mb = got["bytes"] / MB
        rows.append(["floor (all cores)", got["files"], mb, got["floor"], mb / got["floor"], 1.0, 0])
        for name in COMMANDS:
            took, status = got[name]
            rows.append([name, got["files"], mb, took, mb / took, got["floor"] / took, status])
    print(table("Commands vs the in-run floor", ["command", "files", "MB", "s", "MB/s", "x floor", "rc"], rows))
    small, large = results
    lin = [[name, large[name][0] / small[name][0]] for name in COMMANDS]
    print(table("Linearity: time at 2N / time at N", ["command", "ratio"], lin))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
