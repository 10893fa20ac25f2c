"""The per-run re-derivation of the wiki check, in milliseconds a run, against another library.

Every run of a wiki is checked as a worker of the wiki check checks it
(``publisher.wiki.runchecks.check_whole_run``: its stored result, records, event log and config
read and validated, the run assembled again and compared with its stored result, its check
indexed and packed for the parent) with its snapshots verified beforehand, so what is timed is
the per-run work alone, not the snapshot pass. Each timing runs in a fresh interpreter, one
warm-up pass and then ``--passes`` timed passes over every run, in one process.

With ``--baseline DIR`` (another checkout of this project, e.g. a ``git worktree`` of ``main``)
the same probe runs against that checkout's ``publisher`` package too, the two interleaved
round by round, so both see the same machine load.

    python benchmarks/bench_runcheck.py --cache /tmp/bench-grid                  # the 100 MB runs cell
    python benchmarks/bench_runcheck.py --cache /tmp/bench-grid --baseline ../main --repeat 5
    python benchmarks/bench_runcheck.py --quick                                  # seconds, tiny wiki
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from statistics import median
from typing import Any

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks._common import table
from benchmarks.bench_preflight import cell_wiki

ROOT = Path(__file__).resolve().parents[1]

_PROBE = """
import inspect, json, os, sys, time
root, wiki, passes = sys.argv[1], sys.argv[2], int(sys.argv[3])
sys.path.insert(0, root)
from pathlib import Path
from publisher.wiki.runchecks import check_whole_run
from publisher.gate.checks.assembler import stored_requests
from publisher.site.lifecycle.policy import resolve_policy
from publisher.parallel import folder_size, verify_many
from publisher.runs import RUN_LAYOUTS, Run
wiki = Path(wiki)
keys = resolve_policy(wiki).trusted_keys
runs = [p for pattern in RUN_LAYOUTS for p in sorted(wiki.glob(pattern)) if (p / "config.json").is_file()]
checks, sizes = {}, {}
sized = "snapshot_bytes" in inspect.signature(check_whole_run).parameters  # as the wiki check passes it
for path in runs:
    run = Run(path)
    requests = [(run.sources_dir, sid, spans) for sid, spans in stored_requests(run)]
    checks[path] = list(verify_many(requests, workers=1))
    sizes[path] = (folder_size(run.sources_dir)[0],) if sized else ()
times = []
for n in range(passes + 1):
    began = time.perf_counter()
    for path in runs:
        done = check_whole_run(os.fspath(path), os.fspath(wiki), keys, path.name, checks[path], *sizes[path])
        if done.index is None or done.index.refusals:
            raise SystemExit(f"{path.name}: not a clean check")
    if n:
        times.append((time.perf_counter() - began) / len(runs) * 1000)
print(json.dumps({"runs": len(runs), "ms": times}))
"""


def probe(root: Path, wiki: Path, passes: int) -> dict[str, Any]:
    """Time the per-run work of ``wiki``'s runs with the ``publisher`` package of ``root``."""
    out = subprocess.run(
        [sys.executable, "-c", _PROBE, os.fspath(root), os.fspath(wiki), str(passes)],
        check=True,
        capture_output=True,
        text=True,
    )
    return dict(json.loads(out.stdout.strip().splitlines()[-1]))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--wiki", type=Path, help="an existing wiki (default: the grid's runs cell)")
    parser.add_argument("--cache", type=Path, help="where the grid's wikis are kept (bench_preflight's --cache)")
    parser.add_argument("--size", type=float, default=100, help="the grid cell's size in MB (default 100)")
    parser.add_argument("--shape", default="runs", help="the grid cell's shape (default runs)")
    parser.add_argument("--baseline", type=Path, help="another checkout whose publisher package is timed alike")
    parser.add_argument("--repeat", type=int, default=3, help="rounds, each timing every library once")
    parser.add_argument("--passes", type=int, default=2, help="timed passes over every run in each probe")
    parser.add_argument("--quick", action="store_true", help="a tiny wiki, one round")
    args = parser.parse_args(argv)
    if args.quick:
        args.size, args.repeat, args.passes = 3, 1, 1
    with tempfile.TemporaryDirectory(prefix="bench-runcheck-") as tmp:
        wiki = args.wiki or cell_wiki(args.cache or Path(tmp), args.size, args.shape)
        libraries = {"this": ROOT} | ({"baseline": args.baseline.resolve()} if args.baseline else {})
        got: dict[str, list[float]] = {name: [] for name in libraries}
        count = 0
        for _ in range(args.repeat):
            for name, root in libraries.items():
                result = probe(root, wiki, args.passes)
                count = int(result["runs"])
                got[name].extend(result["ms"])
        rows = [[name, count, min(ms), median(ms)] for name, ms in got.items()]
        if args.baseline:
            this, base = got["this"], got["baseline"]
            rows.append(["baseline / this", "", min(base) / min(this), median(base) / median(this)])
        print(table(f"Per-run re-derivation (ms a run; {wiki.name})", ["library", "runs", "best", "median"], rows))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
