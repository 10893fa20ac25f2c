"""The per-run re-derivation of the wiki check, in milliseconds a run, against another library.

Every run of a wiki is checked as a worker of the wiki check checks it
(``publisher.wiki.runchecks.check_whole_run``: its stored result, records, event log and config
read and validated, the run assembled again and compared with its stored result, its check
indexed and packed for the parent) with its snapshots verified beforehand, so what is timed is
the per-run work alone, not the snapshot pass. Each timing runs in a fresh interpreter, one
warm-up pass and then ``--passes`` timed passes over every run, in one process; each pass is
given as wall time and as the process's CPU time (steadier on a shared machine).

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
import importlib, inspect, json, os, sys, time
from collections import defaultdict
root, wiki, passes, phases = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4:]
sys.path.insert(0, root)
from pathlib import Path
spent = defaultdict(float)
for name in phases:  # module:function, timed (CPU) where check_whole_run's modules call it
    module, dotted = name.split(":")
    host = importlib.import_module(module)
    *owners, function = dotted.split(".")
    for owner in owners:
        host = getattr(host, owner)
    real = getattr(host, function)
    def timed(*args, _real=real, _name=name, **kwargs):
        began = time.process_time()
        try:
            return _real(*args, **kwargs)
        finally:
            spent[_name] += time.process_time() - began
    setattr(host, function, timed)
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
times, cpu = [], []
for n in range(passes + 1):
    began, began_cpu = time.perf_counter(), time.process_time()
    for path in runs:
        done = check_whole_run(os.fspath(path), os.fspath(wiki), keys, path.name, checks[path], *sizes[path])
        if done.index is None or done.index.refusals:
            raise SystemExit(f"{path.name}: not a clean check")
    if n:
        times.append((time.perf_counter() - began) / len(runs) * 1000)
        cpu.append((time.process_time() - began_cpu) / len(runs) * 1000)
    else:
        spent.clear()
share = {name: spent[name] / passes / len(runs) * 1000 for name in phases}
print(json.dumps({"runs": len(runs), "ms": times, "cpu": cpu, "phases": share}))
"""


PHASES = [
    "publisher.wiki.runchecks:load_inputs",
    "publisher.gate.inputs:read_records",
    "publisher.gate.inputs:read_log",
    "publisher.wiki.runchecks:check_run",
    "publisher.gate.pipeline:assemble",
    "publisher.gate.pipeline:Prepared.adopt",
    "publisher.gate.pipeline:stored_written_as",
    "publisher.wiki.runchecks:index_run",
    "publisher.wiki.runchecks:release_records",
    "publisher.wiki.runchecks:pack_pair",
]
"""What ``--phases`` times (CPU, ms a run), each where ``check_whole_run``'s modules call it: the
inputs read (of which the records and the event log), the check (of which the assembly, the
result's model validated, and the comparison with the stored file), the index, the release and
the packing for the parent. Nested phases are inside the ones above them."""


def probe(root: Path, wiki: Path, passes: int, phases: list[str] = ()) -> dict[str, Any]:  # type: ignore[assignment]
    """Time the per-run work of ``wiki``'s runs with the ``publisher`` package of ``root``
    (and the CPU time of each of ``phases``, ``module:function``)."""
    out = subprocess.run(
        [sys.executable, "-c", _PROBE, os.fspath(root), os.fspath(wiki), str(passes), *phases],
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
    parser.add_argument("--passes", type=int, default=3, help="timed passes over every run in each probe")
    parser.add_argument("--phases", action="store_true", help="also time the main steps (this library only)")
    parser.add_argument("--quick", action="store_true", help="a tiny wiki, one round")
    args = parser.parse_args(argv)
    if args.quick:
        args.size, args.repeat, args.passes = 1, 1, 1
    with tempfile.TemporaryDirectory(prefix="bench-runcheck-") as tmp:
        wiki = args.wiki or cell_wiki(args.cache or Path(tmp), args.size, args.shape)
        libraries = {"this": ROOT} | ({"baseline": args.baseline.resolve()} if args.baseline else {})
        wall: dict[str, list[float]] = {name: [] for name in libraries}
        cpu: dict[str, list[float]] = {name: [] for name in libraries}
        count = 0
        for _ in range(args.repeat):
            for name, root in libraries.items():
                result = probe(root, wiki, args.passes)
                count = int(result["runs"])
                wall[name].extend(result["ms"])
                cpu[name].extend(result["cpu"])
        rows = [[name, count, min(wall[name]), median(wall[name]), min(cpu[name]), median(cpu[name])] for name in wall]
        if args.baseline:
            base, this = (wall["baseline"], cpu["baseline"]), (wall["this"], cpu["this"])
            ratios = [f(b) / f(t) for b, t in zip(base, this, strict=True) for f in (min, median)]
            rows.append(["baseline / this", "", *ratios])
        header = ["library", "runs", "wall best", "wall median", "CPU best", "CPU median"]
        print(table(f"Per-run re-derivation (ms a run; {wiki.name})", header, rows))
        if args.phases:
            share = probe(ROOT, wiki, args.passes, PHASES)["phases"]
            steps = [[name.replace("publisher.", ""), share[name]] for name in PHASES]
            print(table(f"Where it goes (CPU ms a run, with the probes' own cost; {wiki.name})", ["step", "ms"], steps))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
