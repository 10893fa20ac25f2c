"""Run every benchmark at one scale and print their tables.

    python benchmarks/run_all.py            # the real figures (about an hour; ~6 GB under /tmp)
    python benchmarks/run_all.py --quick    # smoke run at tiny sizes (well under 30 s)

Each benchmark runs in its own interpreter so that one's memory and imports do not colour the
next. Generated wikis live in temporary folders under /tmp and are removed afterwards.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent

BENCHMARKS = ("bench_preflight", "bench_commands", "bench_build", "bench_claims")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="tiny sizes, for a smoke run")
    parser.add_argument("--only", choices=BENCHMARKS, action="append", help="run just these (repeatable)")
    args = parser.parse_args(argv)
    failed = 0
    for name in args.only or BENCHMARKS:
        command = [sys.executable, os.fspath(HERE / f"{name}.py")] + (["--quick"] if args.quick else [])
        print(f"== {name} ({' '.join(command[1:])})", flush=True)
        began = time.perf_counter()
        status = subprocess.call(command)
        print(f"== {name}: exit {status} in {time.perf_counter() - began:.1f} s\n", flush=True)
        failed += status != 0
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
