"""Preflight throughput against the in-run floor, scaling with cores, and peak memory on a big corpus.

The **in-run floor** is what any verifier must at least do with the same files, measured in the
same run with the same process pool: read each snapshot file, parse it, re-encode it canonically,
and compute two SHA-256 digests (the text's and the canonical record's). The preflight does that
plus the schema check, the third digest (the source id), span slicing and section/page lookup.
Files are read once beforehand so both passes read from the page cache.

    python benchmarks/bench_preflight.py                      # 200 MB wiki, 1 GB memory run
    python benchmarks/bench_preflight.py --quick              # seconds, tiny sizes
    python benchmarks/bench_preflight.py --wiki /tmp/wiki     # an existing wiki
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from statistics import median
from typing import Any

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks._common import MB, asset_files, rounds, snapshot_files, table, tree_rss, wiki_requests
from benchmarks.generate import WikiSpec, generate_wiki
from publisher.kernel.store import SnapshotStore, build_record
from publisher.parallel import default_workers, verify_many
from publisher.parallel import pool as batch

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
        total += len(data)
    return total


def floor_pass(files: list[Path], workers: int, assets: list[Path] = ()) -> int:  # type: ignore[assignment]
    """The floor over ``files`` (and ``assets``) with ``workers`` processes (in-process for one)."""
    items = [os.fspath(f) for f in files] + ["+" + os.fspath(a) for a in assets]
    if workers == 1:
        return _floor_chunk(items)
    sizes = [os.stat(item.lstrip("+")).st_size for item in items]
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

    return len(run_preflight(wiki, workers=workers).findings)


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


def memory_probe(wiki: Path, workers: int) -> dict[str, Any]:
    """Verify the whole wiki in this process (single-threaded, as a command would) and report."""
    requests = wiki_requests(wiki)
    files = snapshot_files(wiki)
    sizes = [f.stat().st_size for f in files]
    failures = preflight_pass(requests, workers)
    return {
        "files": len(files),
        "bytes": sum(sizes),
        "largest": max(sizes, default=0),
        "failures": failures,
        "child_max": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024,
    }


def memory_rows(wiki: Path, workers: int) -> list[list[Any]]:
    """Run :func:`memory_probe` in a fresh interpreter, sampling its process tree from outside."""
    with tempfile.TemporaryFile() as out:
        proc = subprocess.Popen(
            [sys.executable, __file__, "--memory-probe", os.fspath(wiki), "--workers", str(workers)],
            stdout=out,
        )
        peak = 0
        while proc.poll() is None:
            peak = max(peak, tree_rss(proc.pid))
            time.sleep(0.02)
        if proc.returncode != 0:
            raise SystemExit(f"memory probe failed with status {proc.returncode}")
        out.seek(0)
        got = json.loads(out.read().decode().strip().splitlines()[-1])
    return [
        [
            workers,
            got["files"],
            got["bytes"] / MB,
            got["largest"] / MB,
            peak / MB,
            got["child_max"] / MB,
            got["failures"],
        ]
    ]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--wiki", type=Path, help="an existing wiki (default: generate one)")
    parser.add_argument("--total-mb", type=float, default=200.0, help="size of the generated wiki")
    parser.add_argument("--memory-mb", type=float, default=1024.0, help="size of the memory run (0: skip)")
    parser.add_argument("--memory-wiki", type=Path, help="an existing wiki for the memory run")
    parser.add_argument("--corpus", type=Path, default=SHARED_CORPUS, help="real corpus (../shared/corpus)")
    parser.add_argument("--repeat", type=int, default=5, help="rounds, each running every pass once")
    parser.add_argument(
        "--pdf-every", type=int, default=4, help="every n-th generated source is a stored PDF (0: none)"
    )
    parser.add_argument("--workers", default=None, help="comma-separated worker counts (default: 1 and all)")
    parser.add_argument("--quick", action="store_true", help="tiny sizes, one repeat")
    parser.add_argument("--memory-probe", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    cores = default_workers()
    if args.memory_probe:
        print(json.dumps(memory_probe(args.memory_probe, int(args.workers or cores))))
        return 0
    if args.quick:
        args.total_mb, args.memory_mb, args.repeat = 3.0, 3.0, 1
    workers_list = [int(w) for w in args.workers.split(",")] if args.workers else sorted({1, cores})
    with tempfile.TemporaryDirectory(prefix="bench-preflight-") as tmp:
        wiki = args.wiki
        if wiki is None:
            wiki = Path(tmp) / "wiki"
            generate_wiki(
                WikiSpec(
                    root=wiki,
                    seed=7,
                    total_bytes=int(args.total_mb * MB),
                    max_bytes=4 * 1024 * 1024,
                    pdf_every=args.pdf_every,
                )
            )
        rows = throughput(wiki, workers_list, args.repeat)
        print(table(f"Preflight vs in-run floor ({wiki}, {cores} cores)", _THROUGHPUT + _LIBRARY, rows))
        if len(rows) > 1:
            base = rows[0]
            scaling = [[r[0], r[1] / base[1], r[2] / base[2], r[5] / base[5]] for r in rows]
            print(
                table(
                    "Scaling with workers (speed-up over the first row)",
                    ["workers", "floor", "verify_many", "run_preflight"],
                    scaling,
                )
            )
        if args.corpus and (args.corpus / "evidence-inference" / "texts").is_dir():
            real = corpus_wiki(args.corpus, Path(tmp) / "corpus-wiki")
            rows = throughput(real, workers_list, args.repeat, library=False)
            print(table(f"Real corpus ({args.corpus})", _THROUGHPUT, rows))
        if args.memory_mb > 0:
            mem_wiki = args.memory_wiki
            if mem_wiki is None:
                mem_wiki = Path(tmp) / "memory-wiki"
                generate_wiki(
                    WikiSpec(
                        root=mem_wiki,
                        seed=11,
                        total_bytes=int(args.memory_mb * MB),
                        min_bytes=16 * 1024,
                        max_bytes=8 * 1024 * 1024,
                        sources_per_run=500,
                        assemble=False,
                    )
                )
            print(
                table(
                    "Peak memory while verifying the memory corpus (MB)",
                    [
                        "workers",
                        "files",
                        "corpus MB",
                        "largest MB",
                        "peak RSS sum",
                        "worker max",
                        "failed",
                    ],
                    memory_rows(mem_wiki, cores),
                )
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
