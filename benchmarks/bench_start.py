"""Whole-process start-up: what one agent call costs, interpreter start included.

Each command runs as a fresh ``python -m publisher …`` process on a small generated run (the way
an agent calls ``source read``, ``spans``, ``locate`` and ``assemble`` hundreds of times a
session); ``python -c pass`` is the interpreter's own start. The commands are interleaved round
by round (A B C … A B C …), so a machine whose speed drifts moves every row alike, and each row
prints the min, median and max wall seconds and its median ratio to the bare interpreter.

    python benchmarks/bench_start.py               # 15 rounds
    python benchmarks/bench_start.py --rounds 5
    python benchmarks/bench_start.py --quick        # smoke run
    python benchmarks/bench_start.py --against ../other-checkout   # each command also from there

``--against DIR`` times every command a second time, in the same round, with ``DIR`` first on
``PYTHONPATH`` (another checkout of this project): a paired before/after on one machine.

Every command runs from byte-code cached in a temporary folder (``PYTHONPYCACHEPREFIX``), as an
installed package does, even where ``PYTHONDONTWRITEBYTECODE`` is set (it would make each process
compile every module of the checkout from source).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks._common import run_dirs, table
from benchmarks.generate import WikiSpec, generate_wiki

__all__ = ["commands", "bytecode_env", "timed", "main"]


def commands(wiki: Path) -> dict[str, list[str]]:
    """The command lines timed, on the generated wiki's run and its first snapshot."""
    (run,) = run_dirs(wiki)
    source = sorted(p.stem for p in (run / "sources").glob("src-*.json"))[0]
    me = [sys.executable, "-m", "publisher"]
    read = [*me, "source", "read", "--run-dir", os.fspath(run), "--source-id", source, "--json"]
    shown = json.loads(subprocess.run(read, capture_output=True, check=True, text=True, cwd=wiki).stdout)["text"]
    phrase = " ".join(shown.split()[:4])
    return {
        "python -c pass": [sys.executable, "-c", "pass"],
        "publisher --help": [*me, "--help"],
        "source read": [*read[:-1], "--start", "0", "--end", "200"],
        "source spans": [*me, "source", "spans", "--run-dir", os.fspath(run), "--source-id", source, "--query", phrase],
        "source locate": [
            *me,
            "source",
            "locate",
            "--run-dir",
            os.fspath(run),
            "--source-id",
            source,
            "--quote",
            phrase,
        ],
        "source revisions": [*me, "source", "revisions", source, "--wiki", os.fspath(wiki)],
        "assemble --gate": [*me, "assemble", "--gate", "--run-dir", os.fspath(run)],
    }


def bytecode_env(folder: Path, base: dict[str, str] | None = None) -> dict[str, str]:
    """``base`` (this environment) with byte-code written to and read from ``folder``."""
    env = {k: v for k, v in (os.environ if base is None else base).items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPYCACHEPREFIX"] = os.fspath(folder / "pycache")
    return env


def timed(argv: list[str], env: dict[str, str] | None = None) -> tuple[float, float]:
    """Wall and CPU seconds (user + system) of one whole process, its output discarded; a failing
    command is an error. On a shared machine the CPU seconds move far less with the load."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    began = time.perf_counter()
    done = subprocess.run(  # from the root folder: ``-m`` must not find a checkout in the working folder
        argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, check=False, env=env, cwd=os.path.abspath(os.sep)
    )
    took = time.perf_counter() - began
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode not in (0, 1):
        raise SystemExit(f"{' '.join(argv[:6])}: exit {done.returncode}: {done.stderr.decode()[-300:]}")
    return took, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=15, help="interleaved rounds (default 15)")
    parser.add_argument("--sources", type=int, default=40, help="snapshots in the generated run (default 40)")
    parser.add_argument("--against", type=Path, metavar="DIR", help="also time each command from this checkout")
    parser.add_argument("--quick", action="store_true", help="1 round on 4 snapshots, for a smoke run")
    args = parser.parse_args(argv)
    if args.quick:
        args.rounds, args.sources = 1, 4
    with tempfile.TemporaryDirectory(prefix="bench-start-") as tmp:
        mine = bytecode_env(Path(tmp))
        other = None
        if args.against is not None:
            other = bytecode_env(Path(tmp) / "against", {**os.environ, "PYTHONPATH": os.fspath(args.against.resolve())})
        wiki = Path(tmp) / "wiki"
        generate_wiki(
            WikiSpec(
                root=wiki,
                seed=5,
                total_bytes=args.sources * 8 * 1024,
                min_bytes=4 * 1024,
                max_bytes=12 * 1024,
                sources_per_run=10**9,
            )
        )
        lines = commands(wiki)
        runs = {name: (line, mine) for name, line in lines.items()}
        if other is not None:
            runs.update({f"{name} [against]": (line, other) for name, line in lines.items() if "publisher" in line})
        for line, env in runs.values():  # warm the file cache and the byte-code once
            timed(line, env)
        got: dict[str, list[tuple[float, float]]] = {name: [] for name in runs}
        for _ in range(args.rounds):
            for name, (line, env) in runs.items():
                got[name].append(timed(line, env))
    base = statistics.median(wall for wall, _ in got["python -c pass"])
    rows = []
    for name, pairs in got.items():
        t, cpu = [wall for wall, _ in pairs], [c for _, c in pairs]
        median = statistics.median(t)
        rows.append(
            [
                name,
                f"{min(t):.3f}",
                f"{median:.3f}",
                f"{max(t):.3f}",
                f"{median / base:.1f}x",
                f"{statistics.median(cpu):.3f}",
            ]
        )
    title = f"whole-process wall seconds, {args.rounds} interleaved rounds"
    print(table(title, ["command", "min", "median", "max", "median / python", "CPU s (median)"], rows))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
