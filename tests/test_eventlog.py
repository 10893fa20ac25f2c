"""Attacks on the append-only, hash-chained event log (CONTRACT section 3)."""

from __future__ import annotations

import errno
import json
import os
import threading
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from publisher.kernel import eventlog
from publisher.kernel.canonical import canonical_bytes, loads_strict
from publisher.kernel.checkids import CheckId
from publisher.kernel.errors import EventLogError, PublisherError
from publisher.kernel.eventlog import append_event, line_digest, read_log
from publisher.kernel.models import Event, EventType

SID = "src-" + "1" * 64
SHA = "2" * 64


def _append(path: Path, n: int, **kw: Any) -> list[Event]:
    out = []
    for i in range(n):
        args: dict[str, Any] = {
            "type": "fetch",
            "source_id": SID,
            "url": f"https://example.org/{i}",
            "fresh": True,
            "sha256": SHA,
            "detail": f"event {i}",
        }
        args.update(kw)
        out.append(append_event(path, **args))
    return out


def _lines(path: Path) -> list[bytes]:
    return path.read_bytes().split(b"\n")[:-1]


def _write_lines(path: Path, lines: list[bytes], *, newline: bool = True) -> None:
    path.write_bytes(b"\n".join(lines) + (b"\n" if newline else b""))


@pytest.fixture
def log(tmp_path: Path) -> Path:
    path = tmp_path / "events.jsonl"
    _append(path, 5)
    return path


# --- a clean log -----------------------------------------------------------------------------


def test_appends_are_chained_canonical_lines(log: Path) -> None:
    state = read_log(log)
    assert state.exists and state.intact and state.chained and not state.torn
    assert [e.event_id for e in state.events] == ["ev-0001", "ev-0002", "ev-0003", "ev-0004", "ev-0005"]
    lines = _lines(log)
    assert state.events[0].prev is None
    for previous, event in zip(lines, state.events[1:], strict=False):
        assert event.prev == line_digest(previous)
    for line, event in zip(lines, state.events, strict=True):
        assert line == canonical_bytes(event.wire())
    assert state.digests == [line_digest(line) for line in lines]
    assert state.head == state.digests[-1]
    assert state.head_at(2) == state.digests[1]
    assert state.head_at(0) is None and state.head_at(6) is None


def test_missing_and_empty_logs(tmp_path: Path) -> None:
    missing = read_log(tmp_path / "none.jsonl")
    assert not missing.exists and missing.intact and missing.events == [] and missing.head is None
    empty = tmp_path / "empty.jsonl"
    empty.write_bytes(b"")
    state = read_log(empty)
    assert state.exists and state.intact and state.head is None
    first = append_event(empty, type="register", source_id=SID, url="u", fresh=False, sha256=SHA)
    assert first.event_id == "ev-0001" and first.prev is None


def test_append_returns_what_was_written(tmp_path: Path) -> None:
    path = tmp_path / "e.jsonl"
    at = datetime(2026, 3, 4, 5, 6, 7, 890000, tzinfo=UTC)
    event = append_event(
        path,
        type=EventType.LOCAL_PDF,
        source_id=SID,
        url="file:///x.pdf",
        fresh=True,
        sha256=SHA,
        actor="worker-3",
        detail="multi\nline\tdetail  " + "x" * 400,
        at=at,
    )
    assert event.at == "2026-03-04T05:06:07Z"
    assert event.detail is not None and "\n" not in event.detail and len(event.detail) <= 300
    assert read_log(path).events == [event]


@pytest.mark.parametrize("kind", ["register", "read"])
def test_register_and_read_are_never_fresh(tmp_path: Path, kind: str) -> None:
    path = tmp_path / "e.jsonl"
    with pytest.raises(EventLogError):
        append_event(path, type=kind, source_id=SID, url="u", fresh=True, sha256=SHA)
    assert not path.exists() or path.read_bytes() == b""
    event = append_event(path, type=kind, source_id=SID, url="u", fresh=False, sha256=SHA)
    assert event.fresh is False


def test_invalid_arguments_write_nothing(tmp_path: Path) -> None:
    path = tmp_path / "e.jsonl"
    _append(path, 1)
    before = path.read_bytes()
    for bad in ({"source_id": "src-nope"}, {"sha256": "sha256:" + SHA}, {"sha256": "A" * 64}):
        with pytest.raises(PublisherError):
            _append(path, 1, **bad)
    with pytest.raises(PublisherError):
        _append(path, 1, type="cache-hit")
    assert path.read_bytes() == before


# --- tampering -------------------------------------------------------------------------------


def test_edit_a_middle_line(log: Path) -> None:
    lines = _lines(log)
    raw = json.loads(lines[2])
    raw["url"] = "https://evil.example/"
    lines[2] = canonical_bytes(raw)
    _write_lines(log, lines)
    state = read_log(log)
    assert not state.intact and not state.torn
    assert [f.line for f in state.findings] == [4]


def test_whitespace_only_edit_is_caught(log: Path) -> None:
    lines = _lines(log)
    lines[1] = lines[1].replace(b'"fresh":true', b'"fresh": true')
    _write_lines(log, lines)
    assert [f.line for f in read_log(log).findings] == [3]


def test_reorder_lines(log: Path) -> None:
    lines = _lines(log)
    lines[1], lines[2] = lines[2], lines[1]
    _write_lines(log, lines)
    state = read_log(log)
    assert not state.intact
    assert {f.line for f in state.findings} >= {2, 3}


def test_delete_a_middle_line(log: Path) -> None:
    lines = _lines(log)
    del lines[2]
    _write_lines(log, lines)
    state = read_log(log)
    assert [f.line for f in state.findings] == [3]


def test_delete_the_first_line(log: Path) -> None:
    lines = _lines(log)
    _write_lines(log, lines[1:])
    state = read_log(log)
    assert not state.intact
    assert [f.line for f in state.findings] == [1]


def test_prev_mismatch_is_detected(log: Path) -> None:
    lines = _lines(log)
    raw = json.loads(lines[3])
    raw["prev"] = "sha256:" + "0" * 64
    lines[3] = canonical_bytes(raw)
    _write_lines(log, lines)
    # Line 4 no longer chains to line 3, and its new bytes no longer match line 5's prev.
    assert [f.line for f in read_log(log).findings] == [4, 5]


def test_prev_dropped_after_a_chained_line_is_detected(log: Path) -> None:
    lines = _lines(log)
    raw = json.loads(lines[3])
    del raw["prev"]
    lines[3] = canonical_bytes(raw)
    _write_lines(log, lines)
    assert 4 in [f.line for f in read_log(log).findings]


def test_duplicate_event_id_is_detected(log: Path) -> None:
    lines = _lines(log)
    _write_lines(log, [*lines, lines[-1]])
    state = read_log(log)
    assert not state.intact
    assert 6 in [f.line for f in state.findings]


def test_garbage_middle_line_is_a_finding(log: Path) -> None:
    lines = _lines(log)
    for garbage in (b"", b"not json", b'{"event_id":"ev-0003"}', b"[" * 50_000):
        broken = [*lines[:2], garbage, *lines[2:]]
        _write_lines(log, broken)
        state = read_log(log)
        assert not state.torn
        assert 3 in [f.line for f in state.findings]


def test_duplicate_key_line_is_a_finding(log: Path) -> None:
    lines = _lines(log)
    lines[1] = lines[1].replace(b'"fresh":true', b'"fresh":true,"fresh":true')
    _write_lines(log, lines)
    assert 2 in [f.line for f in read_log(log).findings]


# --- torn last lines -------------------------------------------------------------------------


@pytest.mark.parametrize("cut", [1, 10, -1])
def test_truncated_last_line_is_torn_and_appends_are_refused(log: Path, cut: int) -> None:
    data = log.read_bytes()
    last_start = data.rstrip(b"\n").rfind(b"\n") + 1
    torn = data[: last_start + cut] if cut > 0 else data[:cut]
    log.write_bytes(torn)
    state = read_log(log)
    assert state.torn and not state.intact and state.invalid_last is None  # cut short, not invalid
    assert "torn" in str(state.last_line_problem())
    assert len(state.events) == 4
    with pytest.raises(EventLogError):
        _append(log, 1)
    assert log.read_bytes() == torn  # never silently repaired


@pytest.mark.parametrize("last", [b'{"half": "an event"}\n', b"not json\n"])
def test_complete_but_invalid_last_line_is_unusable_and_not_called_torn(log: Path, last: bytes) -> None:
    """A last line with its newline was written whole: it is as unusable as a torn one (appends
    refused), but no interrupted write explains it, and it is not called torn."""
    with log.open("ab") as fh:
        fh.write(last)
    state = read_log(log)
    assert state.torn and not state.intact and len(state.events) == 5
    assert state.invalid_last is not None
    problem = str(state.last_line_problem())
    assert "not a valid" in problem and "torn" not in problem
    (finding,) = state.integrity_findings("x.jsonl", check=CheckId.CLAIM, field="log")  # as the wiki's logs report it
    assert "not a valid" in finding.detail and "torn" not in finding.detail
    with pytest.raises(EventLogError):
        _append(log, 1)


def test_append_resumes_once_a_person_removes_the_torn_line(log: Path) -> None:
    data = log.read_bytes()
    log.write_bytes(data + b'{"schema_version":1,"ev')
    with pytest.raises(EventLogError):
        _append(log, 1)
    log.write_bytes(data)
    (event,) = _append(log, 1)
    assert event.event_id == "ev-0006"
    assert read_log(log).intact


# --- upstream logs ---------------------------------------------------------------------------


def _upstream_line(n: int) -> bytes:
    raw = {
        "schema_version": 1,
        "event_id": f"ev-{n:04d}",
        "type": "fetch",
        "source_id": SID,
        "url": "https://example.org/",
        "at": "2026-01-01T00:00:00Z",
        "fresh": True,
        "sha256": SHA,
        "actor": "main",
        "detail": None,
    }
    return json.dumps(raw).encode()  # upstream layout: spaces, no prev


def test_upstream_log_without_prev_is_readable_and_extendable(tmp_path: Path) -> None:
    path = tmp_path / "events.jsonl"
    _write_lines(path, [_upstream_line(1), _upstream_line(2)])
    state = read_log(path)
    assert state.intact and not state.chained and len(state.events) == 2
    (event,) = _append(path, 1)
    assert event.event_id == "ev-0003"
    assert event.prev == line_digest(_upstream_line(2))
    state = read_log(path)
    assert state.intact and state.chained and len(state.events) == 3


# --- special files ---------------------------------------------------------------------------


def test_symlinked_log_is_refused(tmp_path: Path, log: Path) -> None:
    link = tmp_path / "link.jsonl"
    link.symlink_to(log)
    with pytest.raises(EventLogError):
        read_log(link)
    with pytest.raises(EventLogError):
        _append(link, 1)


def test_directory_in_place_of_the_log(tmp_path: Path) -> None:
    path = tmp_path / "events.jsonl"
    path.mkdir()
    with pytest.raises(EventLogError):
        read_log(path)
    with pytest.raises(EventLogError):
        _append(path, 1)


def test_fifo_in_place_of_the_log_does_not_block(tmp_path: Path) -> None:
    path = tmp_path / "events.jsonl"
    os.mkfifo(path)
    outcome: list[str] = []

    def attempt() -> None:
        for call in (lambda: read_log(path), lambda: _append(path, 1)):
            try:
                call()
                outcome.append("ok")
            except EventLogError:
                outcome.append("refused")

    worker = threading.Thread(target=attempt, daemon=True)
    worker.start()
    worker.join(timeout=5)
    if worker.is_alive():
        os.close(os.open(path, os.O_RDWR | os.O_NONBLOCK))
        pytest.fail("a FIFO in place of the log blocked")
    assert outcome == ["refused", "refused"]


@pytest.mark.skipif(os.name == "nt", reason="POSIX flock")
def test_a_read_waits_for_an_append_in_progress(tmp_path: Path) -> None:
    import fcntl

    path = tmp_path / "events.jsonl"
    _append(path, 1)
    fd = os.open(path, os.O_WRONLY | os.O_APPEND)
    fcntl.flock(fd, fcntl.LOCK_EX)  # an append holds the exclusive lock
    states: list[int] = []
    reader = threading.Thread(target=lambda: states.append(len(read_log(path).events)), daemon=True)
    reader.start()
    reader.join(timeout=0.5)
    assert reader.is_alive() and not states
    os.close(fd)
    reader.join(timeout=5)
    assert states == [1]


# --- the line codec, as properties -----------------------------------------------------------

_text = st.text(st.characters(exclude_categories=["Cs"]), max_size=40)
_events = st.builds(
    dict,
    schema_version=st.just(1),
    event_id=st.integers(1, 10**7).map(lambda n: f"ev-{n:04d}"),
    type=st.sampled_from([t.value for t in EventType if t is not EventType.FETCH_FAILED]),
    source_id=st.text("0123456789abcdef", min_size=64, max_size=64).map(lambda h: "src-" + h),
    url=_text,
    at=st.datetimes(min_value=datetime(1970, 1, 2), max_value=datetime(9998, 1, 1)).map(
        lambda d: d.strftime("%Y-%m-%dT%H:%M:%SZ")
    ),
    fresh=st.booleans(),
    sha256=st.text("0123456789abcdef", min_size=64, max_size=64),
    actor=_text,
    detail=st.none() | st.text(st.characters(exclude_categories=["Cs"]), max_size=300),
    prev=st.none() | st.text("0123456789abcdef", min_size=64, max_size=64).map(lambda h: "sha256:" + h),
)


@settings(max_examples=150, deadline=None)
@given(_events)
def test_event_line_codec_round_trips(raw: dict[str, Any]) -> None:
    event = Event.model_validate(raw)
    line = canonical_bytes(event.model_dump(mode="json"))
    assert b"\n" not in line  # one event is one line whatever its strings hold
    again = Event.model_validate(loads_strict(line))
    assert again == event
    assert canonical_bytes(again.model_dump(mode="json")) == line
    assert event.number == int(raw["event_id"][3:])


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["fetch", "local_pdf", "register", "read"]), _text), min_size=1, max_size=8))
def test_any_appended_sequence_reads_back_intact(tmp_path_factory: pytest.TempPathFactory, items: Any) -> None:
    path = tmp_path_factory.mktemp("prop") / "events.jsonl"
    written = [
        append_event(path, type=kind, source_id=SID, url=url, fresh=kind in ("fetch", "local_pdf"), sha256=SHA)
        for kind, url in items
    ]
    state = read_log(path)
    assert state.intact
    assert state.events == written


# --- a failing disk: nothing partial stays -------------------------------------------------------


def _faulty_writer(mode: str) -> Any:
    """``os.write`` that writes half the line, then fails the way a full disk or a broken writer does."""
    calls = {"n": 0}

    def write(fd: int, data: Any) -> int:
        calls["n"] += 1
        if calls["n"] == 1:
            return os.write(fd, bytes(data[: len(data) // 2]))
        if mode == "enospc":
            raise OSError(errno.ENOSPC, "No space left on device")
        if mode == "short":
            return 0
        raise KeyboardInterrupt  # any failure, not only an OSError

    return write


@pytest.mark.parametrize("mode", ["enospc", "short", "interrupt"])
def test_a_failed_append_leaves_the_log_byte_identical(log: Path, mode: str, monkeypatch: pytest.MonkeyPatch) -> None:
    before = log.read_bytes()
    monkeypatch.setattr(eventlog, "_os_write", _faulty_writer(mode))
    with pytest.raises((EventLogError, KeyboardInterrupt)):
        _append(log, 1)
    assert log.read_bytes() == before  # truncated back to the length it had, under the lock
    monkeypatch.undo()
    (event,) = _append(log, 1)  # and the next append is not blocked by a torn line
    assert event.event_id == "ev-0006" and read_log(log).intact


def test_a_failed_fsync_also_truncates(log: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    before = log.read_bytes()
    real = os.fsync
    calls = {"n": 0}

    def fsync(fd: int) -> None:
        calls["n"] += 1
        if calls["n"] == 1:
            raise OSError(errno.EIO, "Input/output error")
        real(fd)

    monkeypatch.setattr(eventlog.os, "fsync", fsync)
    with pytest.raises(OSError):
        _append(log, 1)
    monkeypatch.undo()
    assert log.read_bytes() == before


def _outcome(parse: Any, line: bytes) -> Any:
    """What parsing ``line`` gives: the event, or the kind and wording of the refusal."""
    try:
        return parse(line)
    except Exception as exc:  # the refusal itself is what is compared
        return (type(exc).__name__, str(exc))


def test_a_line_reads_as_the_strict_path_reads_it(log: Path) -> None:
    """A canonical line is read without the strict parser's walk for floats: every line reads
    as the strict parse and the event's schema read it (the same event, or the same refusal)."""
    line = _lines(log)[1]
    raw = json.loads(line)
    canonical = canonical_bytes(raw)
    duplicate = canonical.replace(b'"actor":"main"', b'"actor":"main","actor":"other"')
    lines = [
        line,
        canonical,
        canonical.replace(b'"fresh":true', b'"fresh":true,"merkle_size":1.0'),  # a float, canonical
        canonical.replace(b'"fresh":true', b'"fresh":true,"merkle_size":18446744073709551616'),  # past 64 bits
        canonical.replace(b'"fresh":true', b'"fresh":true,"merkle_size":3'),
        duplicate,  # orjson keeps the last key: only the strict path refuses it
        duplicate.replace(b'"actor":"other"', b'"actor":"main"'),
        canonical + b"\r",
        line.replace(b'"main"', b'"m\\u0061in"'),
        b'{"schema_version":1}',
        b"[1]",
        b"{",
    ]
    for each in lines:
        strict = _outcome(lambda data: Event.model_validate(loads_strict(data)), each)
        assert _outcome(eventlog._parse_event, each) == strict, each
    assert isinstance(_outcome(eventlog._parse_event, duplicate), tuple)
