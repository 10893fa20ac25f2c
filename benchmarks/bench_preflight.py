"""The whole wiki check against the in-run floor, on a grid of sizes and shapes; peak memory at 1 GB.

The **in-run floor** is what any verifier must at least do with the same files, measured in the
same run with the same process pool: read each snapshot file, parse it, re-encode it canonically,
compute two SHA-256 digests (the text's and the canonical record's) and the text's Merkle root
(CONTRACT section 16: every leaf hashed, then the tree); stored PDFs are hashed. The wiki check
(``check_wiki``, what ``publisher check`` and the build run first) does that plus the schema
check, the third digest (the source id), the span slices, reading and validating every agent
record, assembling each run again and comparing it with its stored result, the event logs and
the concepts. Files are read once beforehand so both passes read from the page cache.

The **inputs floor** adds what any verifier must at least do with the rest of what the check
reads: each run's config, event log, stored result and agent records, and the concept files,
read and parsed (nothing validated, nothing assembled). Where a wiki holds many runs or records
per megabyte of snapshots, the gap between the two floors is the cost of merely reading them.

The **snapshot pass** is the part of the check every snapshot needs, and nothing per run:
``verify_many`` over every snapshot of the wiki with the spans its stored result accepts (the
floor's work plus the schema check, the source id's digest and the span slices and lookups), on
the same pool. No whole check can be faster than this pass, so its ratio to the floor is the
ceiling of the whole check's ratio in that cell.

The grid (default) crosses three sizes with three shapes of wiki, generated once into
``--cache`` and reused by later invocations:

* ``large``: few large sources (1-8 MB texts, 50 to a run);
* ``runs``: many runs of few sources (8-256 KB texts, 3 to a run);
* ``records``: many small records per source (16 KB-1 MB texts, 40 spans over 20 extraction
  records per source).

    python benchmarks/bench_preflight.py --cache /tmp/bench-grid      # 10 MB, 100 MB and 1 GB
    python benchmarks/bench_preflight.py --sizes 10,100 --repeat 5    # a smaller grid
    python benchmarks/bench_preflight.py --quick                      # seconds, tiny sizes
    python benchmarks/bench_preflight.py --sizes 1000 --memory-only   # the 1 GB memory table only
    python benchmarks/bench_preflight.py --sizes 100,1000 --snapshot-pass  # floor and snapshot pass only
    python benchmarks/bench_preflight.py --wiki /tmp/wiki             # one existing wiki, 1 and all workers
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from statistics import median
from typing import Any

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks._common import (
    MB,
    asset_files,
    rounds,
    run_dirs,
    snapshot_files,
    table,
    tree_pss,
    tree_rss,
    wiki_requests,
)
from benchmarks.generate import WikiSpec, generate_wiki
from publisher.kernel.store import SnapshotStore, build_record
from publisher.parallel import Workers, default_workers, verify_many
from publisher.parallel import pool as batch
from publisher.site.lifecycle.policy import resolve_policy

try:
    import orjson

    def _loads(data: bytes) -> Any:
        return orjson.loads(data)

    def _dumps(value: Any) -> bytes:
        return orjson.dumps(value, option=orjson.OPT_SORT_KEYS)

except ImportError:  # the floor uses the fastest parser the preflight could use

    def _loads(data: bytes) -> Any:
        return json.loads(data)

    def _dumps(value: Any) -> bytes:
        return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()


SHARED_CORPUS = Path(__file__).resolve().parents[2] / "shared" / "corpus"


def _floor_chunk(paths: list[str]) -> int:
    """Read, parse, re-encode and hash two digests of each snapshot file (read and hash one digest
    of each asset file, a path starting with ``+``); the bytes processed."""
    total = 0
    for path in paths:
        if path.startswith("~"):  # another input of the check: read and parsed, nothing more
            with open(path[1:], "rb") as fh:
                data = fh.read()
            if path.endswith(".jsonl"):
                for line in data.splitlines():
                    if line.strip():
                        _loads(line)
            elif path.endswith(".json"):
                _loads(data)
            else:
                data.decode("utf-8")
            total += len(data)
            continue
        if path.startswith("+"):
            with open(path[1:], "rb") as fh:
                data = fh.read()
            hashlib.sha256(data).digest()
            total += len(data)
            continue
        with open(path, "rb") as fh:
            data = fh.read()
        value = _loads(data)
        encoded = _dumps(value)
        hashlib.sha256(value["text"].encode("utf-8")).digest()
        hashlib.sha256(encoded).digest()
        _merkle_root(value["text"])
        total += len(data)
    return total


_LEAF = hashlib.sha256(b"\x00")


def _merkle_root(text: str) -> bytes:
    """The Merkle root of section 16, written here from the contract: leaves of 1024 code points
    (``SHA-256(0x00 || UTF-8(chunk))``, the prefix hashed once and copied; an ASCII text sliced as
    bytes), then each level paired (``SHA-256(0x01 || left || right)``), an odd last node promoted."""
    leaves = []
    if text.isascii():
        data = memoryview(text.encode("ascii"))
        for i in range(0, len(data), 1024):
            h = _LEAF.copy()
            h.update(data[i : i + 1024])
            leaves.append(h.digest())
    else:
        for i in range(0, len(text), 1024):
            h = _LEAF.copy()
            h.update(text[i : i + 1024].encode("utf-8"))
            leaves.append(h.digest())
    level = leaves or [hashlib.sha256(b"").digest()]
    while len(level) > 1:
        paired = [hashlib.sha256(b"\x01" + level[i] + level[i + 1]).digest() for i in range(0, len(level) - 1, 2)]
        if len(level) % 2:
            paired.append(level[-1])
        level = paired
    return level[0]


def other_inputs(wiki: Path) -> list[Path]:
    """Every file the check reads besides snapshots and assets: each run's config, event log,
    stored result and agent records, and the concept files."""
    files: list[Path] = []
    for run in run_dirs(wiki):
        files += [p for p in sorted(run.rglob("*")) if p.is_file() and "sources" not in p.relative_to(run).parts]
    return files + sorted(p for p in (wiki / "concepts").rglob("*.md") if p.is_file())


def floor_pass(
    files: list[Path],
    workers: int,
    assets: list[Path] = (),  # type: ignore[assignment]
    others: list[Path] = (),  # type: ignore[assignment]
) -> int:
    """The floor over ``files`` (and ``assets``; and ``others``, read and parsed: the inputs
    floor) with ``workers`` processes (in-process for one)."""
    items = [os.fspath(f) for f in files] + ["+" + os.fspath(a) for a in assets] + ["~" + os.fspath(o) for o in others]
    if workers == 1:
        return _floor_chunk(items)
    sizes = [os.stat(item.lstrip("+~")).st_size for item in items]
    pairs = sorted(zip(sizes, items, strict=True), key=lambda p: -p[0])
    tasks = [(item, "", ()) for _, item in pairs]
    chunks = batch._chunks(tasks, [s for s, _ in pairs])  # type: ignore[arg-type]
    paths = [[item for item, _, _ in chunk] for chunk in chunks]
    pool = batch._process_pool(workers)
    try:
        return sum(pool.map(_floor_chunk, paths))
    finally:
        pool.shutdown()


def preflight_pass(requests: list[Any], workers: int, assets_root: Path | None = None) -> int:
    """Verify every request (and hash the assets under ``assets_root``); the snapshots that failed."""
    checks = verify_many(requests, workers=workers, assets_root=assets_root)
    return sum(0 if check.ok else 1 for check in checks)


def library_preflight_pass(wiki: Path, workers: int) -> int:
    """The whole library preflight (``run_preflight``: results, spans, assets, logs); its findings."""
    from publisher.wiki.check import check_wiki as run_preflight

    return len(run_preflight(wiki, policy=resolve_policy(wiki), workers=Workers(count=workers)).findings)


def _warm(files: list[Path]) -> int:
    total = 0
    for f in files:
        total += len(f.read_bytes())
    return total


def throughput(wiki: Path, workers_list: list[int], repeat: int, library: bool = True) -> list[list[Any]]:
    """Rows: workers, floor MB/s, verify_many MB/s, its ratio to the floor (best / median of the
    rounds), failures, then ``run_preflight`` MB/s, its ratios and findings (when ``library``: the
    wiki has results to check). The passes are interleaved in each of ``repeat`` rounds."""
    files = snapshot_files(wiki)
    assets = asset_files(wiki)
    requests = wiki_requests(wiki)
    size = _warm(files) + _warm(assets)
    rows = []
    for workers in workers_list:
        passes = {
            "floor": lambda w=workers: floor_pass(files, w, assets),
            "verify_many": lambda w=workers: preflight_pass(requests, w, wiki),
        }
        if library:
            passes["run_preflight"] = lambda w=workers: library_preflight_pass(wiki, w)
        times = rounds(repeat, passes)
        failures = preflight_pass(requests, workers, wiki)
        floor = times["floor"]
        row = [workers, size / MB / min(floor)]
        for name in passes:
            if name == "floor":
                continue
            got = times[name]
            row += [size / MB / min(got), f"{min(floor) / min(got):.2f} / {median(floor) / median(got):.2f}"]
            row.append(failures if name == "verify_many" else library_preflight_pass(wiki, workers))
        rows.append(row)
    return rows


_THROUGHPUT = ["workers", "floor MB/s", "verify_many MB/s", "ratio best / median", "failed"]
_LIBRARY = ["run_preflight MB/s", "ratio best / median", "findings"]


SHAPES: dict[str, dict[str, int]] = {
    "large": {"min_bytes": 1_000_000, "max_bytes": 8_000_000, "sources_per_run": 50},
    "runs": {"min_bytes": 8 * 1024, "max_bytes": 256 * 1024, "sources_per_run": 3},
    "records": {
        "min_bytes": 16 * 1024,
        "max_bytes": 1_000_000,
        "sources_per_run": 100,
        "spans_per_source": 40,
        "records_per_source": 20,
    },
}
"""The grid's shapes of wiki (:class:`~benchmarks.generate.WikiSpec` fields), by name."""


def cell_wiki(cache: Path, size_mb: float, shape: str) -> Path:
    """The generated wiki of one cell under ``cache`` (made on first use, reused after)."""
    root = cache / f"{shape}-{size_mb:g}mb"
    done = root / ".generated"
    if done.is_file():
        return root
    if root.exists():
        shutil.rmtree(root)  # a generation cut short: start it again
    spec = WikiSpec(root=root, seed=5, total_bytes=int(size_mb * MB), **SHAPES[shape])  # type: ignore[arg-type]
    began = time.perf_counter()
    got = generate_wiki(spec)
    print(
        f"generated {root.name}: {len(got.runs)} runs, {got.sources} sources, {got.file_bytes / MB:.0f} MB "
        f"in {time.perf_counter() - began:.0f} s",
        file=sys.stderr,
    )
    done.write_text("ok\n", encoding="utf-8")
    return root


def _count_records(wiki: Path) -> int:
    return sum(1 for _ in wiki.glob("runs/*/workspace/extractions/*.json"))


def grid(cache: Path, sizes: list[float], shapes: list[str], workers: int, repeat: int) -> list[list[Any]]:
    """One row per cell: what it holds, the floor's and the whole check's best times and their
    ratio (best / median of the interleaved rounds), the inputs floor and the snapshot pass with
    their ratios, and the check's findings (0 expected)."""
    from publisher.wiki.check import check_wiki

    rows = []
    for size in sizes:
        for shape in shapes:
            wiki = cell_wiki(cache, size, shape)
            files, assets, others = snapshot_files(wiki), asset_files(wiki), other_inputs(wiki)
            requests = wiki_requests(wiki)
            total = _warm(files) + _warm(assets)
            _warm(others)
            times = rounds(
                repeat,
                {
                    "floor": lambda f=files, a=assets: floor_pass(f, workers, a),
                    "inputs": lambda f=files, a=assets, o=others: floor_pass(f, workers, a, o),
                    "snapshots": lambda r=requests, w=wiki: preflight_pass(r, workers, w),
                    "check": lambda w=wiki: check_wiki(w, policy=resolve_policy(w), workers=Workers(count=workers)),
                },
            )
            findings = len(check_wiki(wiki, policy=resolve_policy(wiki), workers=Workers(count=workers)).findings)
            floor, inputs, check = times["floor"], times["inputs"], times["check"]
            snaps = times["snapshots"]
            rows.append(
                [
                    f"{size:g} MB",
                    shape,
                    len(run_dirs(wiki)),
                    len(files),
                    _count_records(wiki),
                    total / MB,
                    min(floor),
                    min(check),
                    f"{min(floor) / min(check):.2f} / {median(floor) / median(check):.2f}",
                    min(inputs),
                    f"{min(inputs) / min(check):.2f} / {median(inputs) / median(check):.2f}",
                    min(snaps),
                    f"{min(floor) / min(snaps):.2f} / {median(floor) / median(snaps):.2f}",
                    findings,
                ]
            )
            print(table("cell", _GRID, rows[-1:]), file=sys.stderr)
    return rows


_GRID = [
    "size",
    "shape",
    "runs",
    "snapshots",
    "records",
    "MB read",
    "floor s",
    "check s",
    "ratio best / median",
    "inputs floor s",
    "ratio to it",
    "snapshot pass s",
    "its ratio to the floor (the ceiling)",
    "findings",
]


def _cpu_of(spent: list[float], fn: Any) -> Any:
    """``fn`` that also appends the CPU seconds it took to ``spent``: this process's and its
    finished children's (a pass's pool is shut down, so its workers are counted, when it returns)."""

    def timed() -> Any:
        before = _tree_cpu()
        value = fn()
        spent.append(_tree_cpu() - before)
        return value

    return timed


def _tree_cpu() -> float:
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def snapshot_grid(cache: Path, sizes: list[float], shapes: list[str], workers: int, repeat: int) -> list[list[Any]]:
    """One row per cell, the floor and the snapshot pass alone (no whole check): their best times,
    the pass's ratio to the floor (best / median of the interleaved rounds), the same ratio of the
    CPU time the process tree spent (steadier than wall time on a shared machine) and its failed
    snapshots (0 expected). A few seconds a cell at 100 MB, where the whole grid takes minutes."""
    rows = []
    for size in sizes:
        for shape in shapes:
            wiki = cell_wiki(cache, size, shape)
            files, assets = snapshot_files(wiki), asset_files(wiki)
            requests = wiki_requests(wiki)
            total = _warm(files) + _warm(assets)
            cpu: dict[str, list[float]] = {"floor": [], "snapshots": []}
            times = rounds(
                repeat,
                {
                    "floor": _cpu_of(cpu["floor"], lambda f=files, a=assets: floor_pass(f, workers, a)),
                    "snapshots": _cpu_of(cpu["snapshots"], lambda r=requests, w=wiki: preflight_pass(r, workers, w)),
                },
            )
            floor, snaps = times["floor"], times["snapshots"]
            rows.append(
                [
                    f"{size:g} MB",
                    shape,
                    len(files),
                    sum(len(spans) for _, _, spans in requests),
                    total / MB,
                    min(floor),
                    min(snaps),
                    f"{min(floor) / min(snaps):.2f} / {median(floor) / median(snaps):.2f}",
                    f"{min(cpu['floor']) / min(cpu['snapshots']):.2f}",
                    preflight_pass(requests, workers, wiki),
                ]
            )
            print(table("cell", _SNAPSHOT_GRID, rows[-1:]), file=sys.stderr)
    return rows


_SNAPSHOT_GRID = [
    "size",
    "shape",
    "snapshots",
    "spans",
    "MB read",
    "floor s",
    "snapshot pass s",
    "ratio best / median",
    "CPU ratio best",
    "failed",
]


def check_memory_rows(wikis: list[Path], workers: int) -> list[list[Any]]:
    """Peak memory of the whole check of each wiki, in a fresh interpreter sampled from outside."""
    rows = []
    for wiki in wikis:
        with tempfile.TemporaryFile() as out:
            proc = subprocess.Popen(
                [sys.executable, __file__, "--check-probe", os.fspath(wiki), "--workers", str(workers)],
                stdout=out,
            )
            peak = peak_pss = 0
            while proc.poll() is None:
                peak = max(peak, tree_rss(proc.pid))
                peak_pss = max(peak_pss, tree_pss(proc.pid))
                time.sleep(0.02)
            if proc.returncode != 0:
                raise SystemExit(f"memory probe failed with status {proc.returncode}")
            out.seek(0)
            got = json.loads(out.read().decode().strip().splitlines()[-1])
        row = [wiki.name, got["files"], got["bytes"] / MB, got["largest"] / MB, peak / MB, peak_pss / MB]
        rows.append([*row, got["findings"]])
    return rows


def check_probe(wiki: Path, workers: int) -> dict[str, Any]:
    """The whole check of ``wiki`` in this process (the probe :func:`check_memory_rows` samples)."""
    from publisher.wiki.check import check_wiki

    sizes = [f.stat().st_size for f in snapshot_files(wiki)]
    found = check_wiki(wiki, policy=resolve_policy(wiki), workers=Workers(count=workers))
    return {"files": len(sizes), "bytes": sum(sizes), "largest": max(sizes, default=0), "findings": len(found.findings)}


def corpus_wiki(corpus: Path, root: Path) -> Path:
    """A one-run wiki holding the real corpus texts as snapshots, with spans.jsonl as its spans."""
    from publisher.runs import init_run

    run = init_run(root / "runs" / "corpus", "corpus")
    store = SnapshotStore(run.sources_dir)
    texts = corpus / "evidence-inference" / "texts"
    by_pmcid: dict[str, list[tuple[int, int]]] = {}
    with open(corpus / "evidence-inference" / "spans.jsonl", encoding="utf-8") as fh:
        for line in fh:
            row = json.loads(line)
            by_pmcid.setdefault(str(row["pmcid"]), []).append((int(row["start"]), int(row["end"])))
    claims = []
    for path in sorted(texts.glob("PMC*.txt")):
        pmcid = path.stem[3:]
        text = path.read_text("utf-8")
        snap, _ = store.put(
            build_record(
                url=f"https://www.ncbi.nlm.nih.gov/pmc/articles/PMC{pmcid}/",
                text=text,
                title=None,
                retrieved_at="2026-01-01T00:00:00Z",
                access="full_text",
                origin="pmc",
                paper={"pmid": None, "doi": None, "pmcid": f"PMC{pmcid}"},
            )
        )
        for start, end in by_pmcid.get(pmcid, []):
            claims.append({"source_id": snap.source_id, "start": start, "end": end})
    (run.outputs_dir).mkdir(parents=True, exist_ok=True)
    (run.result_path).write_text(json.dumps({"accepted": [{"claims": claims}]}), encoding="utf-8")
    return root


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--wiki", type=Path, help="one existing wiki, with 1 and all workers (instead of the grid)")
    parser.add_argument("--sizes", default="10,100,1000", help="grid sizes in MB, comma-separated")
    parser.add_argument("--shapes", default=",".join(SHAPES), help="grid shapes, comma-separated")
    parser.add_argument("--cache", type=Path, help="where the grid's wikis are kept between runs (default: a temp dir)")
    parser.add_argument("--corpus", type=Path, default=SHARED_CORPUS, help="real corpus (../shared/corpus)")
    parser.add_argument("--repeat", type=int, default=3, help="rounds, each running every pass once")
    parser.add_argument("--workers", default=None, help="comma-separated worker counts (default: all cores)")
    parser.add_argument("--no-memory", action="store_true", help="skip the peak-memory run of the 1 GB cells")
    parser.add_argument("--memory-only", action="store_true", help="only the peak-memory run of the 1 GB cells")
    parser.add_argument("--quick", action="store_true", help="tiny sizes, one repeat")
    parser.add_argument(
        "--snapshot-pass", action="store_true", help="the grid's floor and snapshot pass only (no check, no memory)"
    )
    parser.add_argument("--check-probe", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    cores = default_workers()
    if args.check_probe:
        print(json.dumps(check_probe(args.check_probe, int(args.workers or cores))))
        return 0
    if args.quick:
        args.sizes, args.repeat = "3", 1
    workers_list = [int(w) for w in args.workers.split(",")] if args.workers else None
    with tempfile.TemporaryDirectory(prefix="bench-preflight-") as tmp:
        if args.wiki is not None:
            rows = throughput(args.wiki, workers_list or sorted({1, cores}), args.repeat)
            print(table(f"Preflight vs in-run floor ({args.wiki}, {cores} cores)", _THROUGHPUT + _LIBRARY, rows))
        else:
            cache = args.cache or Path(tmp) / "grid"
            cache.mkdir(parents=True, exist_ok=True)
            sizes = [float(x) for x in args.sizes.split(",")]
            shapes = [x for x in args.shapes.split(",") if x]
            unknown = sorted(set(shapes) - set(SHAPES))
            if unknown:
                raise SystemExit(f"bench_preflight: unknown shape {unknown[0]!r} (known: {', '.join(SHAPES)})")
            workers = (workers_list or [cores])[-1]
            if args.snapshot_pass:
                rows = snapshot_grid(cache, sizes, shapes, workers, args.repeat)
                title = f"The snapshot pass vs the in-run floor ({workers} workers, {cores} cores"
                print(table(f"{title}, {args.repeat} rounds)", _SNAPSHOT_GRID, rows))
                args.no_memory = True
            elif not args.memory_only:
                rows = grid(cache, sizes, shapes, workers, args.repeat)
                title = f"The whole wiki check vs the in-run floor ({workers} workers, {cores} cores"
                print(table(f"{title}, {args.repeat} rounds)", _GRID, rows))
            at = [size for size in sizes if size >= 1000] or (sizes[-1:] if args.quick else [])
            big = [cell_wiki(cache, size, shape) for size in at for shape in shapes]
            if big and not args.no_memory:
                print(
                    table(
                        "Peak memory of the whole check (MB; the process tree sampled every 20 ms)",
                        ["wiki", "snapshots", "MB", "largest MB", "peak RSS sum", "peak PSS sum", "findings"],
                        check_memory_rows(big, workers),
                    )
                )
        if args.corpus and (args.corpus / "evidence-inference" / "texts").is_dir():
            real = corpus_wiki(args.corpus, Path(tmp) / "corpus-wiki")
            rows = throughput(real, workers_list or sorted({1, cores}), args.repeat, library=False)
            print(table(f"Real corpus ({args.corpus})", _THROUGHPUT, rows))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
