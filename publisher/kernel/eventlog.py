"""Append-only, hash-chained retrieval log (``events.jsonl``) and the fresh-fetch rule.

Each line is one canonical JSON event whose ``prev`` is the digest of the previous line's exact
bytes, so an edit, a reordering or a deletion breaks the chain. Appends hold an exclusive lock on
the log itself and refuse to touch a log whose last line is torn: such a log needs a person.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Generic, Protocol, TypeVar

from . import _fs
from .canonical import (
    StrictJSONError,
    canonical_bytes,
    format_ts,
    loads_canonical_floats_unchecked,
    loads_strict,
    prefixed,
    utc_now,
)
from .checkids import CheckId
from .errors import EventLogError, UsageError
from .eventviews import EventView, view_of_event
from .findings import Finding
from .shapes import event_shape
from .text import one_line
from .vocab import ACQUISITIONS, EventType

if TYPE_CHECKING:
    from .models import Event, Receipt, Surface

__all__ = [
    "Chained",
    "append_chained",
    "read_chain",
    "EventSigner",
    "LogState",
    "append_event",
    "append_read",
    "check_appendable",
    "read_log",
    "line_digest",
]

_TAIL_CHUNK = 1 << 16

T = TypeVar("T")
C = TypeVar("C", bound="Chained")


def line_digest(line: bytes) -> str:
    """``sha256:`` of one log line's exact bytes, without its newline."""
    return prefixed(hashlib.sha256(line).hexdigest())


def _parse_event(line: bytes) -> EventView:
    """One line as an event. A line :func:`~publisher.kernel.shapes.event_shape` accepts is one
    the model accepts, held as it would hold it (:class:`~.eventviews.EventView`), without loading
    the validation library. A line this product wrote is canonical JSON, read first without a walk
    for floats (the hand check refuses every float, as the model's schema does); any other line is
    read by the strict path, and a line the hand check is unsure of is judged by the model, which
    accepts it or says why."""
    raw = loads_canonical_floats_unchecked(line)
    if event_shape(raw):
        return EventView(raw)
    raw = loads_strict(line)
    if event_shape(raw):
        return EventView(raw)
    from .models import Event  # the validation library only for a line the hand check is unsure of

    return view_of_event(Event.model_validate(raw))


class _Place:
    """Where a log line stands in its chain: its counter and the digest it chains to (a plain
    class: a dataclass compiles its methods at import, which every read would pay)."""

    __slots__ = ("number", "prev")

    def __init__(self, number: int, prev: str | None) -> None:
        self.number, self.prev = number, prev


def _event_place(line: bytes) -> Chained:
    """The counter and ``prev`` of a valid event line, for the append that follows it. A line
    :func:`~publisher.kernel.shapes.event_shape` accepts is one the model accepts (and canonical,
    read without a walk for floats); any other is judged by the model (:func:`_parse_event`)."""
    raw = loads_canonical_floats_unchecked(line)
    if event_shape(raw):
        return _Place(int(raw["event_id"][3:]), raw.get("prev"))
    return _parse_event(line)


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


class EventSigner(Protocol):
    """Signs acquisition events as they are appended (the key itself lives in the acquire layer)."""

    @property
    def key_id(self) -> str: ...
    @property
    def run(self) -> str: ...
    def sign(self, payload: bytes) -> str:
        """The base64 signature of ``payload``."""
        ...


def append_event(
    path: Path,
    *,
    type: EventType | str,
    source_id: str | None,
    url: str,
    fresh: bool,
    sha256: str | None,
    actor: str = "main",
    detail: str | None = None,
    at: datetime | None = None,
    record_hash: str | None = None,
    receipt: Receipt | None = None,
    signer: EventSigner | None = None,
    surface: Surface | None = None,
    merkle_root: str | None = None,
    merkle_size: int | None = None,
    supersedes: str | None = None,
) -> Event:
    """Append one event under an exclusive lock, chained to the last line.

    Raises :class:`EventLogError` if the last line is torn or invalid: appends stay refused until
    a person resolves it. A ``fresh`` flag on a ``register`` or ``read`` event is refused.
    With a ``signer``, an acquisition event is signed under the lock, once its ``event_id`` and
    ``prev`` are known, so the signature covers its place in the chain (and the declared
    ``surface`` it records).
    """
    try:
        kind = EventType(type)
    except ValueError:
        raise UsageError(f"refused to log an event of unknown type {str(type)[:40]!r}", path=str(path)) from None
    if fresh and kind not in (EventType.FETCH, EventType.LOCAL_PDF):
        raise EventLogError(f"a {kind.value} event is never fresh")
    if detail is not None:
        detail = one_line(detail)
    from pydantic import ValidationError

    from .models import Event, Signature, signed_payload

    def line(number: int, prev: str | None) -> tuple[Event, bytes]:
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
                record_hash=record_hash,
                receipt=receipt,
                surface=surface,
                merkle_root=merkle_root,
                merkle_size=merkle_size,
                supersedes=supersedes,
            )
            if signer is not None and kind in ACQUISITIONS:
                unsigned = Signature(alg="ed25519", key_id=signer.key_id, run=signer.run, value="")
                value = signer.sign(signed_payload(event.model_copy(update={"sig": unsigned})))
                event = Event.model_validate({**event.wire(), "sig": {**unsigned.model_dump(), "value": value}})
        except ValidationError as exc:
            raise UsageError(f"refused to log an invalid event: {_short(exc)}", path=str(path)) from exc
        return event, canonical_bytes(event.wire()) + b"\n"

    return append_chained(path, line, _event_place, what="event")


def append_read(
    path: Path,
    *,
    source_id: str,
    url: str,
    sha256: str,
    actor: str = "main",
    detail: str | None = None,
    at: datetime | None = None,
) -> dict[str, Any]:
    """Append a ``read`` event (never fresh) exactly as :func:`append_event` writes it, without
    the validation library where :func:`~publisher.kernel.shapes.event_shape` accepts the line;
    returns the line's JSON object. Anything it does not accept is judged by the model, which
    refuses it with the same :class:`UsageError` as :func:`append_event`. The commands agents
    call most (``source read``) log through this."""
    detail = one_line(detail) if detail is not None else None

    def line(number: int, prev: str | None) -> tuple[dict[str, Any], bytes]:
        moment = format_ts(at or utc_now())  # under the lock, as append_event stamps its events
        wire: dict[str, Any] = {
            "schema_version": 1,
            "event_id": f"ev-{number:04d}",
            "type": EventType.READ.value,
            "source_id": source_id,
            "url": url,
            "at": moment,
            "fresh": False,
            "sha256": sha256,
            "actor": actor,
            "detail": detail,
            "prev": prev,
        }
        if not event_shape(wire):
            from pydantic import ValidationError

            from .models import Event

            try:
                wire = Event.model_validate(wire).wire()
            except ValidationError as exc:
                raise UsageError(f"refused to log an invalid event: {_short(exc)}", path=str(path)) from exc
        return wire, canonical_bytes(wire) + b"\n"

    return append_chained(path, line, _event_place, what="event")


class Chained(Protocol):
    """An entry of a hash-chained JSON Lines log: its counter and the previous line's digest."""

    @property
    def number(self) -> int: ...
    @property
    def prev(self) -> str | None: ...


def _next_place(fd: int, size: int, parse: Callable[[bytes], Chained], path: Path, what: str) -> tuple[int, str | None]:
    """The counter and ``prev`` of the entry that follows the log's last line, read from that line
    alone; a torn or invalid last line refuses (:class:`EventLogError`)."""
    last = _tail(fd, size)
    if not last:
        return 1, None
    if not last.endswith(b"\n"):
        raise EventLogError(
            f"{path}: the last line is torn (no trailing newline); appends are refused until "
            "a person repairs or removes it",
            path=str(path),
        )
    body = last[:-1]
    try:
        previous = parse(body)
    except (ValueError, StrictJSONError) as exc:  # the library's validation error is a ValueError
        raise EventLogError(
            f"{path}: the last line is not a valid {what}; appends are refused until a person repairs it",
            path=str(path),
        ) from exc
    return previous.number + 1, line_digest(body)


def check_appendable(path: Path) -> None:
    """Refuse now, with :class:`EventLogError`, what :func:`append_event` would refuse later: a
    torn or invalid last line of the log at ``path`` (a missing log is appendable).

    A command that writes a file before it logs the event checks first, so nothing is written
    that no event records. Only the last line is read (under a shared lock): the check costs
    the same on a log of ten lines or of a million.
    """
    try:
        fd = _open_log(path, os.O_RDONLY)
    except FileNotFoundError:
        return
    try:
        _fs.lock(fd, shared=True)
        _next_place(fd, os.fstat(fd).st_size, _event_place, path, "event")
    finally:
        os.close(fd)


def append_chained(
    path: Path,
    make: Callable[[int, str | None], tuple[T, bytes]],
    parse: Callable[[bytes], Chained],
    *,
    what: str = "entry",
) -> T:
    """Append one line to a hash-chained log under an exclusive lock; the log's one writer.

    ``make(number, prev)`` builds the entry that follows the last line (its counter and the
    digest of that line's exact bytes) and returns it with its line (newline included);
    ``parse`` reads the last line back. A torn or invalid last line refuses the append
    (:class:`EventLogError`) until a person resolves it. ``events.jsonl`` and the wiki's
    ``assessments.jsonl`` are both written here. It writes the line itself rather than through
    :func:`~publisher.kernel._fs.write_atomic`: a log only ever grows by a line, never replaced.
    """
    created = not os.path.lexists(path)
    fd = _open_log(path, os.O_RDWR | os.O_APPEND | os.O_CREAT)
    try:
        _fs.lock(fd)
        size = os.fstat(fd).st_size
        number, prev = _next_place(fd, size, parse, path, what)
        entry, data = make(number, prev)
        try:
            _write_all(fd, data, path)
            os.fsync(fd)
        except BaseException:
            # Whatever failed (a full disk, a short write, an interrupt), the log goes back to the
            # length it had, under the same lock: a partial line would refuse every later append.
            os.ftruncate(fd, size)
            os.fsync(fd)
            raise
    finally:
        os.close(fd)
    if created:
        _fs.fsync_dir(path.parent)
    return entry


_os_write = os.write
"""The one call that writes log bytes (a test injects a full disk or a short write here)."""


def _write_all(fd: int, data: bytes, path: Path) -> None:
    """Write all of ``data`` at the end of the log; a write that makes no progress is an error."""
    view = memoryview(data)
    while view:
        try:
            written = _os_write(fd, view)
        except OSError as exc:
            raise EventLogError(f"{path}: cannot append ({exc.strerror or exc}); the log is unchanged") from exc
        if written <= 0:
            raise EventLogError(f"{path}: short write ({len(data) - len(view)} of {len(data)} bytes)")
        view = view[written:]


def _refused(path: Path, exc: OSError, doing: str) -> EventLogError:
    """The log's own refusal of a name the careful reader turned down (link, folder, FIFO, I/O)."""
    if isinstance(exc, _fs.NotRegularFileError):
        return EventLogError(f"{path}: the event log is {exc.what}, not a regular file", path=str(path))
    return EventLogError(f"{path}: the event log cannot be {doing} ({exc.strerror or exc})", path=str(path))


def _open_log(path: Path, flags: int) -> int:
    """Open the log itself through the careful open: never through a link, a FIFO or a folder."""
    try:
        fd, _info = _fs.open_regular(path, flags, follow_symlinks=False, mode=0o644)
    except FileNotFoundError:
        raise
    except OSError as exc:
        raise _refused(path, exc, "opened") from exc
    return fd


def _read_locked(path: Path) -> bytes | None:
    """The whole log under a shared lock, so an append in progress is never seen half-written."""
    try:
        return _fs.read_regular(path, follow_symlinks=False, shared_lock=True)
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise _refused(path, exc, "read") from exc


class LogState(Generic[T]):
    """Everything read from a log: the events (or entries), line digests and chain findings.

    ``findings``: broken links of the chain, each on its 1-based line of ``events.jsonl``;
    ``crlf``: lines ending in a carriage return (line endings converted by a checkout or an
    editor); ``torn``: the last line is no usable entry, either cut short (no trailing newline)
    or complete but invalid, which ``invalid_last`` then says why (None for a cut-short line).
    A plain slotted class: a dataclass compiles its methods when its module is imported, which
    every command that reads a log would pay, and nothing compares or copies these."""

    __slots__ = ("chained", "crlf", "digests", "events", "exists", "findings", "invalid_last", "torn")

    def __init__(
        self,
        events: list[T] | None = None,
        digests: list[str] | None = None,
        findings: list[Finding] | None = None,
        torn: bool = False,
        chained: bool = False,
        exists: bool = False,
        crlf: int = 0,
        invalid_last: str | None = None,
    ) -> None:
        self.events: list[T] = [] if events is None else events
        self.digests: list[str] = [] if digests is None else digests
        self.findings: list[Finding] = [] if findings is None else findings
        self.torn, self.chained, self.exists, self.crlf = torn, chained, exists, crlf
        self.invalid_last = invalid_last

    def last_line_problem(self, what: str = "entry") -> str | None:
        """What is wrong with the last line, in words (None when it is a usable ``what``): torn, a
        write cut short before its newline, or complete but not a valid ``what``, which no
        interrupted write explains."""
        if not self.torn:
            return None
        if self.invalid_last is not None:
            return f"the last line is complete but not a valid {what} ({self.invalid_last})"
        return "the last line is torn (no trailing newline: a write was cut short)"

    def integrity_findings(self, file: str, *, check: CheckId, field: str) -> list[Finding]:
        """A torn or invalid last line and every broken link of the chain as findings of ``check``
        (with ``field``) on ``file``: the integrity of one of the logs besides the event log."""
        out: list[Finding] = []
        problem = self.last_line_problem()
        if problem is not None:
            out.append(Finding(None, file, f"{problem}; repair it by hand", check=check, field=field))
        for f in self.findings:
            detail = f"{f.detail}: an edited, reordered or deleted line"
            out.append(Finding(None, f.file, detail, line=f.line, check=check, field=field))
        return out

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


def read_log(path: Path) -> LogState[EventView]:
    """Read and check the whole log: line syntax, ids increasing, and the ``prev`` chain.

    Upstream logs without ``prev`` are readable; once a line carries ``prev``, every later
    line must carry it too. A missing log reads as empty; a symbolic link, folder or FIFO in its
    place raises :class:`EventLogError`.
    """
    return read_chain(path, _parse_event, lambda event: event.event_id, "events.jsonl")


def read_chain(path: Path, parse: Callable[[bytes], C], ident: Callable[[C], str], name: str) -> LogState[C]:
    """Read and check a hash-chained log whose lines ``parse`` reads (see :func:`read_log`).

    ``ident`` names an entry in a finding; ``name`` is the log's file name in findings.
    """
    state: LogState[C] = LogState()
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
        if line.endswith(b"\r"):
            state.crlf += 1
        try:
            event = parse(line)
        except (ValueError, StrictJSONError) as exc:  # the library's validation error is a ValueError
            if is_last:
                if not state.torn:  # its newline was written: no write was cut short
                    state.invalid_last = _short(exc)
                state.torn = True
            else:
                state.findings.append(_broken(index, f"not a valid entry ({_short(exc)})", name))
            previous_digest = line_digest(line)
            continue
        if event.number <= last_number:
            state.findings.append(_broken(index, f"{ident(event)} does not increase", name))
        last_number = max(last_number, event.number)
        if event.prev is not None:
            state.chained = True
            if index == 1:
                state.findings.append(_broken(index, "first line carries a prev digest", name))
            elif event.prev != previous_digest:
                state.findings.append(_broken(index, f"{ident(event)}: prev does not match line {index - 1}", name))
        elif state.chained:
            state.findings.append(_broken(index, f"{ident(event)}: prev missing after a chained line", name))
        digest = line_digest(line)
        previous_digest = digest
        if not (is_last and state.torn):
            state.events.append(event)
            state.digests.append(digest)
    return state


def _broken(line: int, problem: str, name: str = "events.jsonl") -> Finding:
    """A broken link of the chain at ``line`` of the log ``name``."""
    return Finding(None, name, problem, line=line)


def _short(exc: BaseException) -> str:
    return one_line(exc, 120)
