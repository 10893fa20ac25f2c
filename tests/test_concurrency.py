"""Concurrent writers: appends never lost or interleaved, exclusive creation has one winner."""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from pathlib import Path

from conftest import make_record

from publisher.kernel.eventlog import append_event, read_log
from publisher.kernel.store import SnapshotStore

WORKERS = 16
PER_WORKER = 25
SID = "src-" + "5" * 64


def _fork_all(n: int, work: Callable[[int], int]) -> list[int]:
    """Fork ``n`` children that start together and run ``work(index)``; their exit statuses."""
    gate_r, gate_w = os.pipe()
    pids = []
    for index in range(n):
        pid = os.fork()
        if pid == 0:
            status = 99
            try:
                os.close(gate_w)
                os.read(gate_r, 1)  # wait for the start signal
                status = work(index)
            except BaseException:
                status = 98
            finally:
                os._exit(status)
        pids.append(pid)
    os.close(gate_r)
    os.write(gate_w, b"x" * n)
    os.close(gate_w)
    statuses = []
    for pid in pids:
        _, status = os.waitpid(pid, 0)
        statuses.append(os.WEXITSTATUS(status) if os.WIFEXITED(status) else -1)
    return statuses


def test_sixteen_appenders_lose_and_interleave_nothing(tmp_path: Path) -> None:
    log = tmp_path / "events.jsonl"
    long_detail = "d" * 290  # long lines make an interleaving visible

    def work(index: int) -> int:
        for i in range(PER_WORKER):
            append_event(
                log,
                type="fetch",
                source_id=SID,
                url=f"https://example.org/{index}/{i}",
                fresh=True,
                sha256="6" * 64,
                actor=f"worker-{index}",
                detail=long_detail,
            )
        return 0

    assert _fork_all(WORKERS, work) == [0] * WORKERS
    state = read_log(log)
    assert state.intact and state.chained, state.findings
    assert len(state.events) == WORKERS * PER_WORKER
    numbers = [e.number for e in state.events]
    assert numbers == list(range(1, WORKERS * PER_WORKER + 1))
    assert len({e.event_id for e in state.events}) == len(state.events)
    for index in range(WORKERS):
        mine = [e.url for e in state.events if e.actor == f"worker-{index}"]
        assert mine == [f"https://example.org/{index}/{i}" for i in range(PER_WORKER)]
    assert log.read_bytes().count(b"\n") == WORKERS * PER_WORKER


def test_readers_never_see_a_half_written_append(tmp_path: Path) -> None:
    log = tmp_path / "events.jsonl"
    append_event(log, type="fetch", source_id=SID, url="u", fresh=True, sha256="6" * 64)

    def work(index: int) -> int:
        if index < 4:  # readers
            deadline = time.monotonic() + 1.5
            while time.monotonic() < deadline:
                state = read_log(log)
                if state.torn or state.findings:
                    return 1
            return 0
        for i in range(40):
            append_event(
                log, type="fetch", source_id=SID, url=f"u{index}-{i}", fresh=True, sha256="6" * 64, detail="x" * 300
            )
        return 0

    assert _fork_all(8, work) == [0] * 8
    assert read_log(log).intact


def test_concurrent_puts_of_one_record_have_exactly_one_creator(tmp_path: Path) -> None:
    store = SnapshotStore(tmp_path / "sources")
    record = make_record(text="contended " * 20_000)

    def work(index: int) -> int:
        snap, created = SnapshotStore(store.folder).put(record)
        if snap.source_id != record["source_id"]:
            return 1
        return 3 if created else 0

    statuses = _fork_all(WORKERS, work)
    assert sorted(statuses) == [0] * (WORKERS - 1) + [3]
    assert os.listdir(store.folder) == [f"{record['source_id']}.json"]
    assert store.read(record["source_id"]).text == record["text"]


def test_concurrent_distinct_puts_all_land(tmp_path: Path) -> None:
    store = SnapshotStore(tmp_path / "sources")
    records = [make_record(text=f"text number {i}") for i in range(WORKERS)]

    def work(index: int) -> int:
        _, created = SnapshotStore(store.folder).put(records[index])
        return 0 if created else 1

    assert _fork_all(WORKERS, work) == [0] * WORKERS
    assert store.ids() == sorted(r["source_id"] for r in records)
    for r in records:
        store.read(r["source_id"])
