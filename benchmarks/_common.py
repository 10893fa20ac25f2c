"""Helpers shared by the benchmark scripts: tables, wiki requests, timing and memory sampling."""

from __future__ import annotations

import json
import os
import resource
import sys
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from publisher.kernel.store import SnapshotStore
from publisher.runs import RUN_LAYOUTS

__all__ = [
    "table",
    "wiki_requests",
    "run_dirs",
    "snapshot_files",
    "best_of",
    "PeakMemory",
    "peak_memory",
    "MB",
    "tree_rss",
    "tree_pss",
]

MB = 1_000_000


def table(title: str, header: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    """A plain-text table (first column left-aligned, the others right-aligned)."""
    cells = [[str(h) for h in header]] + [[_fmt(c) for c in row] for row in rows]
    widths = [max(len(row[i]) for row in cells) for i in range(len(header))]
    lines = [title, "-" * len(title)]
    for n, row in enumerate(cells):
        parts = [row[0].ljust(widths[0])] + [c.rjust(w) for c, w in zip(row[1:], widths[1:], strict=True)]
        lines.append("  ".join(parts))
        if n == 0:
            lines.append("  ".join("-" * w for w in widths))
    return "\n".join(lines) + "\n"


def _fmt(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:.2f}" if abs(value) < 100 else f"{value:.0f}"
    return str(value)


def run_dirs(wiki: Path) -> list[Path]:
    """Every run folder of a wiki, in both layouts."""
    out: list[Path] = []
    for pattern in RUN_LAYOUTS:
        out.extend(p for p in sorted(wiki.glob(pattern)) if (p / "config.json").is_file())
    return out


def snapshot_files(wiki: Path) -> list[Path]:
    """Every snapshot file of every run of a wiki."""
    files = []
    for run in run_dirs(wiki):
        store = SnapshotStore(run / "sources")
        files.extend(store.folder / f"{sid}.json" for sid in store.ids())
    return files


def asset_files(wiki: Path) -> list[Path]:
    """Every stored asset (PDF) of a wiki, under ``assets/``."""
    folder = wiki / "assets"
    return sorted(p for p in folder.rglob("*") if p.is_file()) if folder.is_dir() else []


def rounds(repeat: int, passes: dict[str, Callable[[], Any]]) -> dict[str, list[float]]:
    """Wall times of each pass over ``repeat`` rounds, the passes interleaved within each round.

    Interleaving lets a change of load on a shared machine weigh on every pass alike, so ratios
    taken within a round (or between the best, or the median, of each) stay comparable.
    """
    times: dict[str, list[float]] = {name: [] for name in passes}
    for _ in range(repeat):
        for name, fn in passes.items():
            began = time.perf_counter()
            fn()
            times[name].append(time.perf_counter() - began)
    return times


def wiki_requests(wiki: Path) -> list[tuple[Path, str, list[tuple[int, int]]]]:
    """What a preflight asks of a wiki: every snapshot, with the spans its result.json accepted."""
    requests = []
    for run in run_dirs(wiki):
        spans: dict[str, list[tuple[int, int]]] = {}
        result = run / "outputs" / "result.json"
        if result.is_file():
            data = json.loads(result.read_bytes())
            for art in data.get("accepted", []):
                for claim in art.get("claims", []):
                    spans.setdefault(claim["source_id"], []).append((claim["start"], claim["end"]))
        store = SnapshotStore(run / "sources")
        for sid in store.ids():
            requests.append((store.folder, sid, spans.get(sid, [])))
    return requests


def best_of(repeat: int, fn: Callable[[], Any]) -> tuple[float, Any]:
    """Fastest wall time of ``repeat`` calls, and the last result."""
    best = float("inf")
    result = None
    for _ in range(repeat):
        began = time.perf_counter()
        result = fn()
        best = min(best, time.perf_counter() - began)
    return best, result


@dataclass
class PeakMemory:
    """Peak resident memory while a block ran, in bytes."""

    sampled_total: int = 0
    """Highest sum of RSS over this process and all its descendants (sampled every 20 ms)."""
    self_max: int = 0
    """getrusage(RUSAGE_SELF).ru_maxrss: this process's own peak."""
    child_max: int = 0
    """getrusage(RUSAGE_CHILDREN).ru_maxrss: the largest peak of any waited-for child."""
    samples: int = 0


def tree_rss(pid: int) -> int:
    """Sum of the resident memory of ``pid`` and all its descendants (psutil, else /proc)."""
    try:
        import psutil
    except ImportError:
        return _proc_tree_rss(pid)
    try:
        proc = psutil.Process(pid)
        total = proc.memory_info().rss
        for child in proc.children(recursive=True):
            try:
                total += child.memory_info().rss
            except psutil.Error:
                pass
        return total
    except psutil.Error:
        return 0


def _proc_tree_rss(pid: int) -> int:
    """Sum of VmRSS of ``pid`` and its descendants, from /proc (no psutil)."""
    total = 0
    for member in _tree(pid):
        try:
            with open(f"/proc/{member}/status", encoding="ascii", errors="replace") as fh:
                for line in fh:
                    if line.startswith("VmRSS:"):
                        total += int(line.split()[1]) * 1024
                        break
        except (OSError, ValueError):
            continue
    return total


def tree_pss(pid: int) -> int:
    """Sum of the proportional set size of ``pid`` and its descendants (0 where the kernel has no
    ``smaps_rollup``): each page shared by n of them counts 1/n to each, so forked workers' pages
    shared with their parent are counted once, where the RSS sum counts them in every process."""
    tree = _tree(pid)
    total = 0
    for member in tree:
        try:
            with open(f"/proc/{member}/smaps_rollup", encoding="ascii", errors="replace") as fh:
                for line in fh:
                    if line.startswith("Pss:"):
                        total += int(line.split()[1]) * 1024
                        break
        except OSError:
            continue
    return total


def _tree(pid: int) -> set[int]:
    """``pid`` and its descendants, from /proc."""
    parents: dict[int, int] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", encoding="ascii", errors="replace") as fh:
                parents[int(entry)] = int(fh.read().rsplit(")", 1)[1].split()[1])
        except (OSError, IndexError, ValueError):
            continue
    tree = {pid}
    grew = True
    while grew:
        grew = False
        for child, parent in parents.items():
            if parent in tree and child not in tree:
                tree.add(child)
                grew = True
    return tree


@contextmanager
def peak_memory(interval: float = 0.02) -> Iterator[PeakMemory]:
    """Sample the RSS of this process tree while the block runs."""
    peak = PeakMemory()
    stop = threading.Event()

    def sample() -> None:
        while not stop.is_set():
            peak.sampled_total = max(peak.sampled_total, tree_rss(os.getpid()))
            peak.samples += 1
            stop.wait(interval)

    thread = threading.Thread(target=sample, daemon=True)
    thread.start()
    try:
        yield peak
    finally:
        stop.set()
        thread.join()
        peak.sampled_total = max(peak.sampled_total, tree_rss(os.getpid()))
        peak.self_max = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
        peak.child_max = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024
