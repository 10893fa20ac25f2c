"""Parallel snapshot verification: one read per snapshot, excerpts and reasons, any executor."""

from __future__ import annotations

import hashlib
import json
import os
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from publisher.cli.progress import terminal_progress
from publisher.kernel import snapshots as checks_module
from publisher.kernel.canonical import canonical_bytes
from publisher.kernel.reasons import Reason
from publisher.kernel.spans import MAX_SPAN
from publisher.kernel.store import SnapshotStore, build_record
from publisher.parallel import SnapshotCheck, pool, verify_many
from publisher.parallel.progress import no_progress

TEXT = "Κλινική δοκιμή — étude randomisée.\nPatients (n = 120) 𝛽-cell ≤ 0.05; 治疗 结果.\n" * 40


def _put(store: SnapshotStore, url: str, text: str = TEXT, **extra: object) -> str:
    record = build_record(
        url=url,
        text=text,
        title="Trial",
        retrieved_at="2026-01-02T03:04:05Z",
        access="full_text",
        origin="pmc",
        paper={"pmid": "123", "doi": None, "pmcid": None},
        **extra,  # type: ignore[arg-type]
    )
    snap, _ = store.put(record)
    return snap.source_id


@pytest.fixture
def store(tmp_path: Path) -> SnapshotStore:
    return SnapshotStore(tmp_path / "sources")


def _by_id(checks: list[SnapshotCheck]) -> dict[str, SnapshotCheck]:
    return {c.source_id: c for c in checks}


def test_excerpts_maps_and_metadata_without_text(store: SnapshotStore) -> None:
    n = len(TEXT)
    sid = _put(
        store,
        "https://example.org/a",
        sections=[{"title": "Body", "start": 0, "end": n}, {"title": "Results", "start": 100, "end": 300}],
        pages=[{"page": 1, "start": 0, "end": 150}, {"page": 2, "start": 150, "end": n}],
    )
    (check,) = verify_many([(store.folder, sid, [(120, 160), (10, 20)])], workers=1)
    assert check.ok and check.reason is None
    assert check.ok and check.sealed
    assert check.text_length == n
    assert check.url == "https://example.org/a" and check.access == "full_text" and check.origin == "pmc"
    assert check.paper is not None and check.paper.pmid == "123"
    assert check.text_sha256 == check.content_hash[7:]
    first = check.span(120, 160)
    assert first is not None and first.excerpt == TEXT[120:160]
    assert (first.section, first.page) == ("Results", 1)
    second = check.span(10, 20)
    assert second is not None and (second.section, second.page) == ("Body", 1)
    assert not hasattr(check, "text")
    assert TEXT not in json.dumps([s.excerpt for s in check.spans])


def test_each_snapshot_read_once_and_spans_deduplicated(store: SnapshotStore, monkeypatch: pytest.MonkeyPatch) -> None:
    a = _put(store, "https://example.org/a")
    b = _put(store, "https://example.org/b")
    reads: list[str] = []
    original = checks_module.read_view

    def counting(folder: Path | str, source_id: str):  # type: ignore[no-untyped-def]
        reads.append(source_id)
        return original(folder, source_id)

    monkeypatch.setattr(checks_module, "read_view", counting)
    requests = [(store.folder, a, [(0, 5)]), (store.folder, b, [(1, 2)]), (store.folder, a, [(0, 5), (5, 9)])]
    checks = list(verify_many(requests, workers=1))
    assert sorted(reads) == sorted([a, b])
    got = _by_id(checks)
    assert [(s.start, s.end) for s in got[a].spans] == [(0, 5), (5, 9)]


def test_span_reasons_per_span(store: SnapshotStore) -> None:
    sid = _put(store, "https://example.org/a", text="x" * 5000)
    spans = [(0, 10), (-1, 3), (5, 5), (4990, 5001), (0, MAX_SPAN + 1), (0, MAX_SPAN)]
    (check,) = verify_many([(store.folder, sid, spans)], workers=1)
    assert check.ok
    reasons = [s.reason for s in check.spans]
    assert reasons == [
        None,
        Reason.SPAN_OUT_OF_RANGE,
        Reason.SPAN_OUT_OF_RANGE,
        Reason.SPAN_OUT_OF_RANGE,
        Reason.SPAN_TOO_LONG,
        None,
    ]
    assert all(s.excerpt is None for s in check.spans if s.reason is not None)


def test_missing_tampered_and_misnamed(store: SnapshotStore) -> None:
    good = _put(store, "https://example.org/good")
    bad = _put(store, "https://example.org/bad")
    path = store.path_for(bad)
    data = path.read_bytes().replace("étude".encode(), b"etude", 1)
    os.chmod(path, 0o644)
    path.write_bytes(data)
    missing = "src-" + "0" * 64
    requests = [(store.folder, sid, [(0, 4)]) for sid in (good, bad, missing, "src-NOT-AN-ID")]
    got = _by_id(list(verify_many(requests, workers=1)))
    assert got[good].ok
    assert got[bad].reason is Reason.SNAPSHOT_HASH_MISMATCH and not got[bad].ok
    assert got[bad].spans == () and got[bad].url is None
    assert got[missing].reason is Reason.UNKNOWN_SOURCE
    assert got["src-NOT-AN-ID"].reason is Reason.SNAPSHOT_HASH_MISMATCH


def test_unsealed_upstream_record(store: SnapshotStore) -> None:
    record = build_record(
        url="https://example.org/u",
        text=TEXT,
        title=None,
        retrieved_at="2026-01-02T03:04:05Z",
        access="web",
        origin="web",
        paper=None,
    )
    del record["record_hash"]
    store.folder.mkdir(parents=True)
    store.path_for(record["source_id"]).write_bytes(json.dumps(record, indent=2).encode())
    (check,) = verify_many([(store.folder, record["source_id"], [(0, 3)])], workers=1)
    assert check.ok and not check.sealed


def test_request_may_name_the_file(store: SnapshotStore) -> None:
    sid = _put(store, "https://example.org/a")
    (check,) = verify_many([(store.path_for(sid), sid, [(0, 3)])], workers=1)
    assert check.ok and check.location == os.fspath(store.folder)


def test_one_folder_however_spelled_is_one_group(store: SnapshotStore) -> None:
    # A Path, the same folder as a string with a doubled slash, a dot and a trailing slash, and the snapshot's
    # own file: one task, its spans merged, the folder in its normal spelling.
    sid = _put(store, "https://example.org/a")
    folder = os.fspath(store.folder)
    messy = os.path.dirname(folder) + "//./" + os.path.basename(folder) + "/"
    tasks = pool.normalise(
        [(store.folder, sid, [(0, 3)]), (messy, sid, [(0, 3), (4, 9)]), (store.path_for(sid), sid, [(10, 12)])]
    )
    assert tasks == [(folder, sid, ((0, 3), (4, 9), (10, 12)))]


def test_offsets_must_be_ints(store: SnapshotStore) -> None:
    sid = _put(store, "https://example.org/a")
    with pytest.raises(TypeError):
        list(verify_many([(store.folder, sid, [(0, True)])], workers=1))
    with pytest.raises(ValueError):
        list(verify_many([(store.folder, sid, [(0, 1)])], workers=0))


def _many(store: SnapshotStore, count: int) -> list[tuple[Path, str, list[tuple[int, int]]]]:
    requests = []
    for i in range(count):
        sid = _put(store, f"https://example.org/{i}", text=TEXT * (1 + i % 3))
        requests.append((store.folder, sid, [(i, i + 10), (0, 1)]))
    return requests


def _summary(checks: list[SnapshotCheck]) -> list[tuple[str, bool, tuple[object, ...]]]:
    return sorted((c.source_id, c.ok, c.spans) for c in checks)


def test_process_pool_matches_in_process(store: SnapshotStore, monkeypatch: pytest.MonkeyPatch) -> None:
    requests = _many(store, 12)
    requests.append((store.folder, "src-" + "1" * 64, [(0, 1)]))
    local = list(verify_many(requests, workers=1))
    monkeypatch.setattr(pool, "IN_PROCESS_BYTES", 0)
    monkeypatch.setattr(pool, "_CHUNK_MAX", 2)
    seen: list[tuple[int, int]] = []
    pooled = list(verify_many(requests, workers=2, progress=lambda d, t: seen.append((d, t))))
    assert _summary(pooled) == _summary(local)
    assert seen[-1] == (13, 13) and [d for d, _ in seen] == list(range(1, 14))


def test_ordered_gives_first_request_order(store: SnapshotStore, monkeypatch: pytest.MonkeyPatch) -> None:
    requests = _many(store, 9)
    monkeypatch.setattr(pool, "IN_PROCESS_BYTES", 0)
    monkeypatch.setattr(pool, "_CHUNK_MAX", 1)
    pooled = list(verify_many(requests, workers=2, ordered=True))
    assert [c.source_id for c in pooled] == [sid for _, sid, _ in requests]


def test_any_executor(store: SnapshotStore) -> None:
    requests = _many(store, 6)
    with ThreadPoolExecutor(max_workers=3) as pool:
        threaded = list(verify_many(requests, executor=pool, workers=3))
    assert _summary(threaded) == _summary(list(verify_many(requests, workers=1)))


@pytest.mark.parametrize("processes", [False, True])
def test_dask_executor(store: SnapshotStore, processes: bool) -> None:
    distributed = pytest.importorskip("distributed")
    requests = _many(store, 6)
    expected = _summary(list(verify_many(requests, workers=1)))
    with (
        distributed.LocalCluster(
            n_workers=2, threads_per_worker=1, processes=processes, dashboard_address=None
        ) as cluster,
        distributed.Client(cluster) as client,
    ):
        got = list(verify_many(requests, executor=client.get_executor(), workers=2))
    assert _summary(got) == expected


def test_corpus_spans_reslice(store: SnapshotStore, corpus_dir: Path) -> None:
    texts = corpus_dir / "evidence-inference" / "texts"
    wanted: dict[str, list[dict[str, object]]] = {}
    with open(corpus_dir / "evidence-inference" / "spans.jsonl", encoding="utf-8") as fh:
        for line in fh:
            row = json.loads(line)
            wanted.setdefault(row["pmcid"], []).append(row)
    requests = []
    expected = {}
    for pmcid, rows in sorted(wanted.items())[:25]:
        path = texts / f"PMC{pmcid}.txt"
        if not path.is_file():
            continue
        sid = _put(store, f"https://www.ncbi.nlm.nih.gov/pmc/articles/PMC{pmcid}/", text=path.read_text("utf-8"))
        spans = [(int(r["start"]), int(r["end"])) for r in rows]
        requests.append((store.folder, sid, spans))
        expected[sid] = {(int(r["start"]), int(r["end"])): r["excerpt"] for r in rows}
    assert requests, "no corpus text matched spans.jsonl"
    for check in verify_many(requests, workers=2):
        assert check.ok
        for span in check.spans:
            assert span.reason is None
            assert span.excerpt == expected[check.source_id][(span.start, span.end)]


def test_terminal_progress_quiet(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys.stderr, "isatty", lambda: True)
    monkeypatch.delenv("CI", raising=False)
    with terminal_progress("x", quiet=True) as bar:  # --json
        assert bar is None
    monkeypatch.setenv("CI", "true")
    with terminal_progress("x") as bar:
        assert bar is None
    monkeypatch.setattr(sys.stderr, "isatty", lambda: False)
    monkeypatch.delenv("CI")
    with terminal_progress("x") as bar:  # stderr is not a terminal
        assert bar is None


def test_terminal_progress_draws_on_a_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys.stderr, "isatty", lambda: True)
    monkeypatch.delenv("CI", raising=False)
    with terminal_progress("x") as bar:
        assert bar is not None
        bar(1, 2)
        bar(2, 2)


def test_no_progress_shows_nothing() -> None:
    with no_progress("x") as bar:
        assert bar is None


def test_canonical_store_bytes_are_what_batch_reads(store: SnapshotStore) -> None:
    sid = _put(store, "https://example.org/a")
    raw = json.loads(store.path_for(sid).read_bytes())
    assert canonical_bytes(raw) + b"\n" == store.path_for(sid).read_bytes()


def _asset_snapshot(store: SnapshotStore, root: Path, name: str, data: bytes, *, write: bool = True) -> str:
    digest = hashlib.sha256(data).hexdigest()
    rel = f"assets/papers/{name}.pdf"
    if write:
        (root / "assets" / "papers").mkdir(parents=True, exist_ok=True)
        (root / rel).write_bytes(data)
    return _put(
        store,
        f"file:///papers/{name}.pdf",
        text=f"Page one of {name}. " + TEXT,
        asset={"path": rel, "sha256": digest, "bytes": len(data)},
    )


def test_workers_hash_assets_under_the_root(
    store: SnapshotStore, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With ``assets_root`` each snapshot's asset file is hashed by the worker that verified it."""
    root = tmp_path
    good = _asset_snapshot(store, root, "good", b"%PDF-1.4 good")
    changed = _asset_snapshot(store, root, "changed", b"%PDF-1.4 before")
    (root / "assets" / "papers" / "changed.pdf").write_bytes(b"%PDF-1.4 after")
    missing = _asset_snapshot(store, root, "missing", b"%PDF-1.4 gone", write=False)
    plain = _put(store, "https://example.org/plain")
    requests = [(store.folder, sid, [(0, 4)]) for sid in (good, changed, missing, plain)]
    expected = {
        good: hashlib.sha256(b"%PDF-1.4 good").hexdigest(),
        changed: hashlib.sha256(b"%PDF-1.4 after").hexdigest(),
        missing: None,
        plain: None,
    }
    local = _by_id(list(verify_many(requests, workers=1, assets_root=root)))
    assert {sid: c.asset_digest for sid, c in local.items()} == expected
    monkeypatch.setattr(pool, "IN_PROCESS_BYTES", 0)
    pooled = _by_id(list(verify_many(requests, workers=2, assets_root=root)))
    assert {sid: c.asset_digest for sid, c in pooled.items()} == expected
    unasked = _by_id(list(verify_many(requests, workers=1)))
    assert all(c.asset_digest is None for c in unasked.values()), "no root, no asset read"


def test_asset_links_and_special_files_count_as_missing(store: SnapshotStore, tmp_path: Path) -> None:
    sid = _asset_snapshot(store, tmp_path, "linked", b"%PDF-1.4 linked")
    target = tmp_path / "assets" / "papers" / "linked.pdf"
    real = tmp_path / "elsewhere.pdf"
    target.rename(real)
    target.symlink_to(real)
    (check,) = verify_many([(store.folder, sid, [])], workers=1, assets_root=tmp_path)
    assert check.ok and check.asset_digest is None
    target.unlink()
    os.mkfifo(target)
    (check,) = verify_many([(store.folder, sid, [])], workers=1, assets_root=tmp_path)
    assert check.ok and check.asset_digest is None


def test_small_batches_stay_in_process_longer_when_workers_would_start_slowly() -> None:
    """A forked pool starts in milliseconds; with other threads alive the pool would come from a
    forkserver (a fresh interpreter), so more work is done in-process before starting one."""
    import threading

    assert pool._in_process_limit() == pool.IN_PROCESS_BYTES or threading.active_count() > 1
    release = threading.Event()
    other = threading.Thread(target=release.wait)
    other.start()
    try:
        assert pool._in_process_limit() == pool.IN_PROCESS_BYTES * pool.SLOW_START_FACTOR
    finally:
        release.set()
        other.join()


# --- batches handed over step by step (the wiki check) ------------------------------------------


@pytest.mark.parametrize("on_pool", [False, True])
def test_batches_give_what_verify_many_gives(
    store: SnapshotStore, monkeypatch: pytest.MonkeyPatch, on_pool: bool
) -> None:
    requests = _many(store, 8)
    requests.append((store.folder, "src-" + "2" * 64, [(0, 1)]))
    expected = _summary(list(verify_many(requests, workers=1)))
    monkeypatch.setattr(pool, "_CHUNK_MAX", 2)
    seen: list[tuple[int, int]] = []
    executor = pool.worker_pool(2) if on_pool else None
    try:
        batches = pool.Batches(executor, progress=lambda d, t: seen.append((d, t)))
        first = batches.submit(requests[:4])
        second = batches.submit(requests[4:])
        got = list(batches.collect(second)) + list(batches.collect(first))
    finally:
        if executor is not None:
            executor.shutdown()
    assert _summary(got) == expected
    assert [d for d, _ in seen] == list(range(1, 10)) and seen[-1] == (9, 9)


def test_a_dropped_batch_leaves_the_total_and_never_runs(store: SnapshotStore) -> None:
    import threading

    requests = _many(store, 4)
    seen: list[tuple[int, int]] = []
    gate = threading.Event()
    with ThreadPoolExecutor(max_workers=1) as executor:
        executor.submit(gate.wait)  # holds the only thread, so what follows stays queued
        batches = pool.Batches(executor, progress=lambda d, t: seen.append((d, t)))
        kept = batches.submit(requests[:2])
        dropped = batches.submit(requests[2:])
        futures = list(dropped.futures)
        batches.drop(dropped)
        gate.set()
        assert futures and all(f.cancelled() for f in futures)
        assert dropped.count == 0 and not dropped.futures
        assert len(list(batches.collect(kept))) == 2
        assert list(batches.collect(dropped)) == []
    assert seen[-1] == (2, 2), "a dropped batch no longer counts in the total"


def test_a_dead_worker_is_an_error_not_a_failed_check(store: SnapshotStore, monkeypatch: pytest.MonkeyPatch) -> None:
    from concurrent.futures.process import BrokenProcessPool

    from publisher.kernel.errors import PublisherError

    class Broken(ThreadPoolExecutor):
        def submit(self, fn, /, *args, **kwargs):  # type: ignore[no-untyped-def,override]
            def die(*_: object) -> object:
                raise BrokenProcessPool("worker killed")

            return super().submit(die)

    with Broken(max_workers=1) as executor:
        batches = pool.Batches(executor)
        batch = batches.submit(_many(store, 2))
        with pytest.raises(PublisherError) as caught:
            list(batches.collect(batch))
    # The machine failed, not the evidence: a plain error without a reason code, from the pool's.
    assert type(caught.value) is PublisherError and caught.value.reason is None
    assert isinstance(caught.value.__cause__, BrokenProcessPool)


def test_reader_hands_work_out_once_and_merges_the_steps(store: SnapshotStore, monkeypatch: pytest.MonkeyPatch) -> None:
    from publisher.parallel import CheckedSnapshots

    sid = _put(store, "https://example.org/steps")
    reader = CheckedSnapshots(store.folder)
    reader.want(sid, [(0, 5)])
    first = reader.pending()
    assert [(s, spans) for _, s, spans in first] == [(sid, [(0, 5)])]
    reader.want(sid, [(0, 5)])
    assert reader.pending() == [], "handed out already: not again"
    reader.want(sid, [(0, 5), (6, 12)])
    second = reader.pending()
    assert [(s, spans) for _, s, spans in second] == [(sid, [(6, 12)])], "only the span not handed out yet"
    # The checks come back in any order; the reader keeps both steps' spans.
    for check in verify_many(second, workers=1):
        reader.keep(check)
    for check in verify_many(first, workers=1):
        reader.keep(check)
    assert {(s.start, s.end) for s in reader.check(sid).spans} == {(0, 5), (6, 12)}
    reads: list[object] = []
    monkeypatch.setattr(checks_module, "check_snapshot", lambda *a, **k: reads.append(a))
    assert reader.span(sid, 0, 5).excerpt == TEXT[0:5]
    assert reader.span(sid, 6, 12).excerpt == TEXT[6:12]
    assert reads == [], "both spans answered from the merged checks, no second read"


def test_two_reads_that_disagree_are_a_failure_not_a_mix(store: SnapshotStore) -> None:
    from dataclasses import replace

    from publisher.kernel.errors import IntegrityError
    from publisher.parallel import CheckedSnapshots

    sid = _put(store, "https://example.org/changing")
    reader = CheckedSnapshots(store.folder)
    (good,) = verify_many([(store.folder, sid, [(0, 5)])], workers=1)
    reader.keep(good)
    reader.keep(replace(good, content_hash="sha256:" + "0" * 64, spans=()))
    with pytest.raises(IntegrityError) as caught:
        reader.get(sid)
    assert (caught.value.reason, caught.value.finding().source_id) == (Reason.SNAPSHOT_HASH_MISMATCH, sid)
    # A failure seen by either read stands, whichever came first.
    failed = SnapshotCheck(os.fspath(store.folder), sid, False, Reason.SNAPSHOT_HASH_MISMATCH, "tampered")
    for order in ((good, failed), (failed, good)):
        fresh = CheckedSnapshots(store.folder)
        for check in order:
            fresh.keep(check)
        with pytest.raises(IntegrityError):
            fresh.get(sid)


def test_workers_freeze_what_they_inherit() -> None:
    import gc

    executor = pool.worker_pool(1)
    try:
        frozen = executor.submit(gc.get_freeze_count).result()
    finally:
        executor.shutdown()
    assert frozen > 0


def test_fewer_collections_raises_the_threshold_and_restores_it() -> None:
    import gc

    from publisher.parallel import fewer_collections
    from publisher.parallel.gcpause import BURST_THRESHOLD

    before = gc.get_threshold()
    try:
        gc.set_threshold(700, 11, 12)
        with fewer_collections():
            assert gc.get_threshold() == (BURST_THRESHOLD, 11, 12)
            with fewer_collections():  # nested (or another thread's) use shares the raise
                assert gc.get_threshold()[0] == BURST_THRESHOLD
            assert gc.get_threshold()[0] == BURST_THRESHOLD, "the inner exit does not restore early"
        assert gc.get_threshold() == (700, 11, 12)
        with pytest.raises(RuntimeError), fewer_collections():
            raise RuntimeError("boom")
        assert gc.get_threshold() == (700, 11, 12), "restored on the way out of an error too"
    finally:
        gc.set_threshold(*before)


_TRIM_PROBE = """
import ctypes, sys
from publisher.parallel import trim_heap
try:
    ctypes.CDLL(None).malloc_trim
except AttributeError:
    print("none"); sys.exit()
def rss():
    with open("/proc/self/statm") as fh:
        return int(fh.read().split()[1]) * 4096
junk = [bytes(2000) for _ in range(30_000)]
pinned = junk[::50]  # a few objects live on between the freed ones, as a finished task leaves them
del junk
before = rss()
trimmed = trim_heap()
print(before - rss(), trimmed)
"""


def test_trimming_the_heap_hands_what_a_task_freed_back() -> None:
    """A worker trims its heap when a run's check ends: the pages of what the run freed (here
    60 MB of 2 KB buffers, a few of them still alive) leave its resident memory."""
    import subprocess
    import sys

    if not Path("/proc/self/statm").exists():
        pytest.skip("no /proc: resident memory cannot be read here")
    out = subprocess.run([sys.executable, "-c", _TRIM_PROBE], capture_output=True, text=True, check=True).stdout
    if out.strip() == "none":
        pytest.skip("not glibc: no malloc_trim")
    handed_back, trimmed = out.split()
    assert int(handed_back) > 20 << 20 and trimmed == "True"


_SMALL_FREE_PROBE = """
import ctypes, sys
from publisher.parallel.gcpause import TRIM_KEEP, trim_heap
try:
    ctypes.CDLL(None).mallinfo2
except AttributeError:
    print("none"); sys.exit()
junk = [bytes(2000) for _ in range(1_000)]  # 2 MB freed: what a small run leaves
del junk
print(trim_heap(), trim_heap(0), TRIM_KEEP)
"""


def test_a_worker_keeps_the_little_a_small_task_freed() -> None:
    """Trimming after every small run cost each run a page fault per page it used again: a heap
    holding less than TRIM_KEEP free is left alone, and trimmed when asked to keep nothing."""
    import subprocess
    import sys

    out = subprocess.run([sys.executable, "-c", _SMALL_FREE_PROBE], capture_output=True, text=True, check=True)
    if out.stdout.strip() == "none":
        pytest.skip("no glibc mallinfo2: the heap is trimmed every time")
    kept, trimmed, keep = out.stdout.split()
    assert (kept, trimmed) == ("False", "True") and int(keep) >= 4 << 20
