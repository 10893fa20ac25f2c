"""Append-only, hash-chained retrieval log (``events.jsonl``) and the fresh-fetch rule.

Each line is one canonical JSON event whose ``prev`` is the digest of the previous line's exact
bytes, so an edit, a reordering or a deletion breaks the chain. Appends hold an exclusive lock on
the log itself and refuse to touch a log whose last line is torn: such a log needs a person.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import stat
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Protocol

from pydantic import ValidationError

from . import _fs
from .canonical import StrictJSONError, canonical_bytes, format_ts, loads_strict, parse_ts, prefixed, utc_now
from .errors import EventLogError, UsageError
from .models import Asset, Event, EventType, Snapshot
from .reasons import Reason

__all__ = [
    "LogState",
    "LogFinding",
    "append_event",
    "read_log",
    "line_digest",
    "Freshness",
    "SnapshotFacts",
    "freshness",
    "AssetChecker",
    "hash_asset",
]

_TAIL_CHUNK = 1 << 16


def line_digest(line: bytes) -> str:
    """``sha256:`` of one log line's exact bytes, without its newline."""
    return prefixed(hashlib.sha256(line).hexdigest())


def _parse_event(line: bytes) -> Event:
    raw = loads_strict(line)
    return Event.model_validate(raw)


def _tail(fd: int, size: int) -> bytes:
    """The last line of the file (with its newline, if any)."""
    if size == 0:
        return b""
    pos = size
    buf = b""
    while pos > 0:
        step = min(_TAIL_CHUNK, pos)
        pos -= step
        buf = os.pread(fd, step, pos) + buf
        body = buf[:-1] if buf.endswith(b"\n") else buf
        cut = body.rfind(b"\n")
        if cut >= 0:
            return buf[cut + 1 :]
    return buf


def append_event(
    path: Path,
    *,
    type: EventType | str,
    source_id: str,
    url: str,
    fresh: bool,
    sha256: str,
    actor: str = "main",
    detail: str | None = None,
    at: datetime | None = None,
) -> Event:
    """Append one event under an exclusive lock, chained to the last line.

    Raises :class:`EventLogError` if the last line is torn or invalid: appends stay refused until
    a person resolves it. A ``fresh`` flag on a ``register`` or ``read`` event is refused.
    """
    try:
        kind = EventType(type)
    except ValueError:
        raise UsageError(f"refused to log an event of unknown type {str(type)[:40]!r}", path=str(path)) from None
    if fresh and kind not in (EventType.FETCH, EventType.LOCAL_PDF):
        raise EventLogError(f"a {kind.value} event is never fresh")
    if detail is not None:
        detail = " ".join(detail.split())[:300]
    created = not os.path.lexists(path)
    fd = _open_log(path, os.O_RDWR | os.O_APPEND | os.O_CREAT)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        size = os.fstat(fd).st_size
        last = _tail(fd, size)
        if last and not last.endswith(b"\n"):
            raise EventLogError(
                f"{path}: the last line is torn (no trailing newline); appends are refused until "
                "a person repairs or removes it",
                path=str(path),
            )
        prev: str | None = None
        number = 1
        if last:
            body = last[:-1]
            try:
                previous = _parse_event(body)
            except (ValueError, ValidationError, StrictJSONError) as exc:
                raise EventLogError(
                    f"{path}: the last line is not a valid event; appends are refused until a person repairs it",
                    path=str(path),
                ) from exc
            prev = line_digest(body)
            number = previous.number + 1
        try:
            event = Event(
                schema_version=1,
                event_id=f"ev-{number:04d}",
                type=kind,
                source_id=source_id,
                url=url,
                at=format_ts(at or utc_now()),
                fresh=fresh,
                sha256=sha256,
                actor=actor,
                detail=detail,
                prev=prev,
            )
        except ValidationError as exc:
            raise UsageError(f"refused to log an invalid event: {_short(exc)}", path=str(path)) from exc
        data = canonical_bytes(event.model_dump(mode="json")) + b"\n"
        written = os.write(fd, data)
        if written != len(data):
            raise EventLogError(f"{path}: short write ({written} of {len(data)} bytes)")
        os.fsync(fd)
    finally:
        os.close(fd)
    if created:
        _fs.fsync_dir(path.parent)
    return event


def _open_log(path: Path, flags: int) -> int:
    """Open the log itself: never through a symbolic link, never a FIFO or a folder."""
    try:
        fd = os.open(path, flags | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, 0o644)
    except FileNotFoundError:
        raise
    except OSError as exc:
        raise EventLogError(f"{path}: the event log cannot be opened ({exc.strerror})", path=str(path)) from exc
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise EventLogError(f"{path}: the event log is not a regular file", path=str(path))
    return fd


def _read_locked(path: Path) -> bytes | None:
    """The whole log under a shared lock, so an append in progress is never seen half-written."""
    try:
        fd = _open_log(path, os.O_RDONLY)
    except FileNotFoundError:
        return None
    try:
        fcntl.flock(fd, fcntl.LOCK_SH)
        return _fs.read_fd(fd)
    finally:
        os.close(fd)


@dataclass(frozen=True)
class LogFinding:
    """One problem found in the log: 1-based line number and what is wrong."""

    line: int
    problem: str


@dataclass
class LogState:
    """Everything read from a log: the events, line digests and chain findings."""

    events: list[Event] = field(default_factory=list)
    digests: list[str] = field(default_factory=list)
    findings: list[LogFinding] = field(default_factory=list)
    torn: bool = False
    chained: bool = False
    exists: bool = False

    @property
    def head(self) -> str | None:
        """Digest of the last complete line, or None for an empty log."""
        return self.digests[-1] if self.digests else None

    @property
    def intact(self) -> bool:
        """No torn line and no chain finding."""
        return not self.torn and not self.findings

    def head_at(self, count: int) -> str | None:
        """Digest of line ``count`` (1-based), i.e. the head as it was after that many lines."""
        if count <= 0 or count > len(self.digests):
            return None
        return self.digests[count - 1]


def read_log(path: Path) -> LogState:
    """Read and check the whole log: line syntax, ids increasing, and the ``prev`` chain.

    Upstream logs without ``prev`` are readable; once a line carries ``prev``, every later
    line must carry it too. A missing log reads as empty; a symbolic link, folder or FIFO in its
    place raises :class:`EventLogError`.
    """
    state = LogState()
    data = _read_locked(path)
    if data is None:
        return state
    state.exists = True
    if not data:
        return state
    lines = data.split(b"\n")
    if lines[-1] == b"":
        lines.pop()
    else:
        state.torn = True
    previous_digest: str | None = None
    last_number = 0
    for index, line in enumerate(lines, start=1):
        is_last = index == len(lines)
        try:
            event = _parse_event(line)
        except (ValueError, ValidationError, StrictJSONError) as exc:
            if is_last:
                state.torn = True
            else:
                state.findings.append(LogFinding(index, f"not a valid event ({_short(exc)})"))
            previous_digest = line_digest(line)
            continue
        if event.number <= last_number:
            state.findings.append(LogFinding(index, f"{event.event_id} does not increase"))
        last_number = max(last_number, event.number)
        if event.prev is not None:
            state.chained = True
            if index == 1:
                state.findings.append(LogFinding(index, "first line carries a prev digest"))
            elif event.prev != previous_digest:
                state.findings.append(LogFinding(index, f"{event.event_id}: prev does not match line {index - 1}"))
        elif state.chained:
            state.findings.append(LogFinding(index, f"{event.event_id}: prev missing after a chained line"))
        digest = line_digest(line)
        previous_digest = digest
        if not (is_last and state.torn):
            state.events.append(event)
            state.digests.append(digest)
    return state


def _short(exc: BaseException) -> str:
    return " ".join(str(exc).split())[:120]


def hash_asset(wiki_root: Path | str, relative: str) -> str | None:
    """Bare hex sha256 of the regular file ``relative`` under ``wiki_root``; None if it is missing.

    Links are not followed and special files are not read (they count as missing).
    """
    path = Path(wiki_root) / relative
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except (OSError, ValueError):  # ValueError: a NUL in the recorded path
        return None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        h = hashlib.sha256()
        while chunk := os.read(fd, 1 << 20):
            h.update(chunk)
        return h.hexdigest()
    except OSError:
        return None
    finally:
        os.close(fd)


class AssetChecker:
    """Hashes each stored asset file once per command and says whether it still matches."""

    def __init__(self, wiki_root: Path | None) -> None:
        self.wiki_root = wiki_root
        self._digests: dict[str, str | None] = {}

    def digest(self, relative: str) -> str | None:
        """Bare hex sha256 of the asset at ``relative`` under the wiki root, None if missing."""
        if relative not in self._digests:
            self._digests[relative] = self._hash(relative)
        return self._digests[relative]

    def remember(self, relative: str, digest: str | None) -> None:
        """Adopt a digest this command already computed of the asset (a worker hashed it)."""
        self._digests.setdefault(relative, digest)

    def _hash(self, relative: str) -> str | None:
        return hash_asset(self.wiki_root, relative) if self.wiki_root is not None else None

    def check(self, snap: Snapshot | SnapshotFacts) -> str | None:
        """Why the snapshot's asset fails (one line), or None when it has none or it matches."""
        if snap.asset is None:
            if str(snap.origin) == "user-supplied-pdf":
                return "user-supplied PDF snapshot has no asset"
            return None
        got = self.digest(snap.asset.path)
        if got is None:
            return f"asset {snap.asset.path} is missing"
        if got != snap.asset.sha256:
            return f"asset {snap.asset.path} hashes to {got}, expected {snap.asset.sha256}"
        return None


class SnapshotFacts(Protocol):
    """What the fresh-fetch rule needs of a verified snapshot besides its text's digest.

    A :class:`~publisher.models.Snapshot` has all of it; so does a ``batch.SnapshotCheck``,
    which carries the text's digest instead of the text.
    """

    @property
    def source_id(self) -> str: ...
    @property
    def url(self) -> str | None: ...
    @property
    def asset(self) -> Asset | None: ...
    @property
    def origin(self) -> object: ...


@dataclass(frozen=True)
class Freshness:
    """Outcome of the fresh-fetch rule for one snapshot in one run."""

    fresh: bool
    event_id: str | None
    reason: Reason | None
    detail: str


def freshness(
    snap: Snapshot | SnapshotFacts,
    events: Iterable[Event],
    created_at: str | None,
    assets: AssetChecker,
    *,
    text_sha256: str | None = None,
) -> Freshness:
    """Apply the fresh-fetch rule (CONTRACT section 3) to one snapshot.

    Fresh iff some ``fetch`` or ``local_pdf`` event for this source, ``fresh: true``, at or after
    ``created_at``, carries a digest that still matches what is recomputed now: the text for a
    fetch; for a local PDF, the asset file's bytes, which must also equal ``asset.sha256``.
    A run without ``created_at`` has no fresh sources.

    ``text_sha256`` is the bare hex digest of the text as just verified (a reader that keeps no
    text passes it); without it the digest is computed from ``snap.text``.
    """
    if created_at is None:
        return Freshness(False, None, Reason.NO_FRESH_FETCH, "run config has no created_at")
    try:
        since = parse_ts(created_at)
    except ValueError:
        return Freshness(False, None, Reason.NO_FRESH_FETCH, "run created_at is not a timestamp")
    text_digest = text_sha256
    asset_problem: str | None = None
    saw_local = False
    for event in events:
        if event.source_id != snap.source_id or not event.fresh:
            continue
        if event.type not in (EventType.FETCH, EventType.LOCAL_PDF):
            continue
        if parse_ts(event.at) < since or event.url != snap.url:
            continue
        if event.type is EventType.FETCH:
            if text_digest is None:
                if not isinstance(snap, Snapshot):
                    raise TypeError("freshness needs the snapshot's text or its text_sha256")
                text_digest = hashlib.sha256(snap.text.encode("utf-8")).hexdigest()
            if event.sha256 == text_digest:
                return Freshness(True, event.event_id, None, f"fetched in {event.event_id}")
            continue
        saw_local = True
        if snap.asset is None:
            asset_problem = f"{event.event_id} is a local_pdf event on a snapshot without an asset"
            continue
        problem = assets.check(snap)
        if problem is not None:
            asset_problem = problem
            continue
        if event.sha256 == snap.asset.sha256:
            return Freshness(True, event.event_id, None, f"local PDF verified in {event.event_id}")
    if saw_local and asset_problem:
        return Freshness(False, None, Reason.ASSET_HASH_MISMATCH, asset_problem)
    return Freshness(False, None, Reason.NO_FRESH_FETCH, f"no fresh fetch of {snap.source_id} since {created_at}")
