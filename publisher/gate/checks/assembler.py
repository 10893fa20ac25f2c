"""``C-ASSEMBLER``: the stored ``result.json`` is what assembling the run now produces.

Reason codes: ``SCHEMA_ERROR`` (unreadable or invalid ``result.json``: fail); otherwise findings
carry the check id only: edited (fail), stale, absent or assembled under other trusted keys (gated).
Also reads the stored result for the other checks (:func:`read_stored`, :func:`result_sources`).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

import orjson

from ...kernel import _fs
from ...kernel.canonical import SOURCE_ID_RE, StrictJSONError, loads_written, same_json
from ...kernel.checkids import CheckId
from ...kernel.reasons import Reason
from ...kernel.text import one_line
from ...runs import Run
from ..inputs import changed_inputs, inputs_digest
from ..resultshape import ResultView, result_shape
from .collect import Collector

if TYPE_CHECKING:
    from pydantic import ValidationError

    from ..assemble import Assembly

__all__ = [
    "ASSEMBLER",
    "read_stored",
    "read_stored_bytes",
    "parse_stored",
    "valid_result",
    "invalid_result",
    "same_as_written",
    "stored_written_as",
    "written_pieces",
    "result_sources",
    "stored_requests",
    "check_assembler",
]

ASSEMBLER = CheckId.ASSEMBLER


def read_stored(run: Run) -> tuple[dict[str, Any] | None, ResultView | None, str | None]:
    """The stored, schema-valid ``result.json`` (as JSON and as the model holds it), or None and
    why (None, None, None when absent)."""
    data, problem = read_stored_bytes(run)
    if data is None:
        return None, None, problem
    return parse_stored(data)


def read_stored_bytes(run: Run) -> tuple[bytes | None, str | None]:
    """The bytes of the stored ``result.json``, or None and why it cannot be read (None, None when
    absent). The first half of :func:`read_stored`."""
    try:
        return _fs.read_regular(run.result_path, follow_symlinks=False), None
    except FileNotFoundError:
        return None, None
    except OSError as exc:
        return None, f"cannot be read ({exc.strerror or exc})"


def parse_stored(data: bytes) -> tuple[dict[str, Any] | None, ResultView | None, str | None]:
    """The stored result's bytes as strict JSON and as a schema-valid result's view, or None and
    why. The second half of :func:`read_stored`."""
    try:
        raw = loads_written(data)
    except (StrictJSONError, ValueError) as exc:
        return None, None, f"is not strict JSON ({one_line(exc, 120)})"
    view, problem = valid_result(raw)
    return (None, None, problem) if view is None else (raw, view, None)


def valid_result(raw: Any) -> tuple[ResultView | None, str | None]:
    """The view of a parsed result (:class:`~publisher.gate.resultshape.ResultView`), or None and
    why it is not a valid result.

    A result the hand check takes (:func:`~publisher.gate.resultshape.result_shape`) is held at
    once, without the validation library; any other is judged by the model
    (:class:`~publisher.gate.result.Result`, loaded only then), which words the refusal, and
    what it accepts is held the same way (its JSON dump)."""
    if result_shape(raw):
        return ResultView(raw), None
    from pydantic import ValidationError

    from ..result import Result  # the model: only for a result the hand check is unsure of

    try:
        model = Result.model_validate(raw)
    except ValidationError as exc:
        return None, invalid_result(exc)
    return ResultView(model.model_dump(mode="json")), None


def invalid_result(exc: ValidationError) -> str:
    """Why a stored result is not a valid one (the problem :func:`read_stored` reports)."""
    from ...kernel.models import first_error  # loaded with the model that raised ``exc``

    return f"is not a valid result ({exc.error_count()} problem(s); first {first_error(exc, 'result')})"


def same_as_written(data: bytes, result: dict[str, Any]) -> bool:
    """Whether ``data`` is exactly the file that writing ``result`` produces (what
    :func:`~publisher.gate.assemble.dump_result` writes, with or without the final newline).

    A proof, not a guess: orjson writes ``result`` in the stored layout and only a byte-for-byte
    match is taken. Equal bytes mean the file parses (strictly: orjson writes no duplicate key, no
    NaN, valid UTF-8) to exactly ``result``, so :func:`parse_stored` would read ``result`` and
    :func:`~publisher.kernel.canonical.same_json` would find the two equal; ``False`` proves
    nothing (another layout, a float orjson spells its own way) and the caller takes the slow path.
    The layout is written and compared piece by piece (:func:`written_pieces`), so a large result
    is never held twice, as a value and written whole, beside the file's bytes.
    """
    return _written_ending(_Forward(data), result) is not None


def stored_written_as(run: Run, result: dict[str, Any]) -> dict[str, Any] | None:
    """``result`` with the stored file's time when the stored ``result.json`` is exactly that
    written (:func:`same_as_written`); else None (absent,
    unreadable, or other bytes: the caller reads the file as usual, which says why).

    The file is read forward in blocks and compared as it comes, so neither it nor the result
    written is ever held whole. The time is taken from where the written layout puts it (the
    result's third key, near the top): only the value in that place can make the file match.
    """
    try:
        fd, _ = _fs.open_regular(run.result_path, follow_symlinks=False)
    except OSError:
        return None
    try:
        source = _Forward(fd)
        head = source.head(_HEAD_BYTES)
        at = head.find(_TIME_KEY)
        if at < 0:
            return None
        start = at + len(_TIME_KEY)
        end = head.find(b'"', start)
        stamp = head[start:end]
        if end < 0 or not stamp.isascii() or b"\\" in stamp:
            return None
        candidate = {**result, "generated_at": stamp.decode("ascii")}
        return candidate if _written_ending(source, candidate) is not None else None
    except OSError:
        return None
    finally:
        os.close(fd)


_TIME_KEY = b'\n  "generated_at": "'
"""Where :func:`~publisher.gate.assemble.dump_result` writes the result's time (its third key,
indented once)."""

_HEAD_BYTES = 1 << 16
"""How much of a stored result's start :func:`stored_written_as` looks in for its time (a run slug
longer than this takes the slow path: the file is parsed)."""


class _Forward:
    """Bytes in hand, or a file read forward in blocks, compared piece by piece from the start."""

    _BLOCK = 1 << 18

    def __init__(self, source: bytes | int) -> None:
        self._fd = source if isinstance(source, int) else None
        self._buffer = source if isinstance(source, bytes) else b""
        self._at = 0
        self._clear: dict[bytes, int] = {}
        """Where in the buffer each mark :meth:`upto` looked for may start at the earliest."""

    def _more(self, size: int = 0) -> bool:
        """Read on (at least ``size`` bytes asked for); False at the end of the file."""
        block = os.read(self._fd, max(self._BLOCK, size)) if self._fd is not None else b""
        if not block:
            return False
        self._clear = {mark: max(0, at - self._at) for mark, at in self._clear.items()}
        self._buffer, self._at = self._buffer[self._at :] + block, 0
        return True

    def _fill(self, size: int) -> bool:
        """Whether ``size`` bytes past the position are at hand (reading more as needed)."""
        while len(self._buffer) - self._at < size:
            if not self._more(size):
                return False
        return True

    def upto(self, *marks: bytes) -> tuple[bytes, bytes] | None:
        """The bytes from the position to the first of ``marks`` to come, and that mark (the
        position moves to it); None when the file ends first."""
        longest = max(len(mark) for mark in marks)
        while True:
            hits = []
            for mark in marks:  # each byte is searched once for each mark, however far the next is
                at = self._buffer.find(mark, max(self._at, self._clear.get(mark, 0)))
                if at >= 0:
                    hits.append((at, mark))
                else:
                    self._clear[mark] = max(self._at, len(self._buffer) - len(mark) + 1)
            # A hit is taken once every mark could have been seen before it.
            if hits and (min(hits)[0] + longest <= len(self._buffer) or not self._more()):
                at, mark = min(hits)
                piece, self._at = self._buffer[self._at : at], at
                return piece, mark
            if not hits and not self._more():
                return None

    def remaining(self) -> bytes:
        """Everything from the position to the end of the file."""
        chunks = [self._buffer[self._at :]]
        self._buffer, self._at = b"", 0
        while self._more():
            chunks.append(self._buffer)
            self._buffer = b""
        return b"".join(chunks)

    def head(self, size: int) -> bytes:
        """Up to ``size`` bytes from the position, which stays where it is."""
        self._fill(size)
        return self._buffer[self._at : self._at + size]

    def takes(self, piece: bytes) -> bool:
        """Whether ``piece`` comes next (then the position moves past it)."""
        if not self._fill(len(piece)) or not self._buffer.startswith(piece, self._at):
            return False
        self._at += len(piece)
        return True

    def whole(self, limit: int) -> bytes | None:
        """What is left from the position, read to the end, when that is at most ``limit`` bytes;
        else None (the position stays where it is either way)."""
        if self._fill(limit + 1):
            return None
        return self._buffer[self._at :]

    def rest(self) -> bytes | None:
        """What is left when it is at most a newline, else None."""
        if self._fill(2):
            return None
        return self._buffer[self._at :]


def _written_ending(source: _Forward, result: dict[str, Any]) -> bytes | None:
    """The file's ending (``b""`` or a newline) when ``source`` holds exactly ``result`` written in
    the stored layout and then at most a newline, else None. A file of at most
    :data:`_WHOLE_BYTES` is compared with ``result`` written whole, at once (the pieces join to
    exactly those bytes, and a small result in many pieces cost more steps than its writing)."""
    small = source.whole(_WHOLE_BYTES)
    if small is not None:
        try:
            written = orjson.dumps(result, option=orjson.OPT_INDENT_2)
        except (TypeError, RecursionError):  # orjson.JSONEncodeError is a TypeError
            return None
        ending = small[len(written) :]
        return ending if ending in (b"", b"\n") and small.startswith(written) else None
    try:
        for piece in written_pieces(result):
            if not source.takes(piece):
                return None
    except (TypeError, RecursionError):  # orjson.JSONEncodeError is a TypeError
        return None
    rest = source.rest()
    return rest if rest in (b"", b"\n") else None


_WHOLE_BYTES = 1 << 20
"""A stored result up to this size is compared written whole (:func:`_written_ending`)."""

_OPEN_DEPTH = 2
_OPEN_LENGTH = 64
"""Which containers :func:`written_pieces` opens: those above depth :data:`_OPEN_DEPTH` (the result
and its sections) and any longer than :data:`_OPEN_LENGTH` items (``accepted``, ``inputs``, a long
``diagnostics.unresolved``); the rest (one accepted entry: a few kilobytes) is written whole."""


def written_pieces(value: Any, depth: int = 0) -> Iterator[bytes]:
    """``orjson.dumps(value, option=OPT_INDENT_2)`` (the stored layout) in pieces that join to
    exactly those bytes: the containers it opens (:data:`_OPEN_DEPTH`) are written bracket by
    bracket and item by item, the others whole, at their indentation (a raw line
    break occurs in orjson's output only between tokens, never inside a string). Raises
    ``TypeError`` for what orjson cannot write, as :func:`orjson.dumps` does."""
    kind = type(value)
    opened = (kind is dict or kind is list) and value and (depth < _OPEN_DEPTH or len(value) > _OPEN_LENGTH)
    if not opened:
        written = orjson.dumps(value, option=orjson.OPT_INDENT_2)
        yield written.replace(b"\n", b"\n" + b"  " * depth) if depth else written
        return
    inner = b"\n" + b"  " * (depth + 1)
    if kind is dict:
        yield b"{"
        for index, (key, item) in enumerate(value.items()):
            if type(key) is not str:
                raise TypeError("Dict key must be str")  # what orjson says of such a key
            yield (b"," if index else b"") + inner + orjson.dumps(key) + b": "
            yield from written_pieces(item, depth + 1)
        yield b"\n" + b"  " * depth + b"}"
    else:
        yield b"["
        for index, item in enumerate(value):
            yield (b"," if index else b"") + inner
            yield from written_pieces(item, depth + 1)
        yield b"\n" + b"  " * depth + b"]"


def result_sources(result: ResultView) -> list[str]:
    """Every source id a stored result names (accepted artifacts, their claims, ``sources[]``)."""
    ids: dict[str, None] = {}
    for entry in result.accepted:
        for source_id in entry.source_ids:
            ids[source_id] = None
        for claim in entry.claims:
            ids[claim.source_id] = None
    for source in result.sources:
        ids[source.source_id] = None
    return list(ids)


def stored_requests(run: Run) -> list[tuple[str, list[tuple[int, int]]]]:
    """The snapshots (and claim spans) a run's stored result names, read without validating it.

    A hint, not a check: it lets the wiki check hand a large run's snapshots to the workers before
    the run's check (on another worker) reads and validates the result for itself. For a valid
    result it is exactly what :func:`result_sources` and the claims name; whatever is unreadable
    or malformed is left out (the check finds it). A file in the written layout is read forward
    and parsed one accepted entry at a time (:func:`_named_apart`), so a large result is held
    neither as a value nor as bytes.
    """
    wanted: dict[str, set[tuple[int, int]]] = {}

    def want(source_id: object) -> set[tuple[int, int]] | None:
        if isinstance(source_id, str) and SOURCE_ID_RE.fullmatch(source_id):
            return wanted.setdefault(source_id, set())
        return None

    def named(entry: Any) -> None:
        if not isinstance(entry, dict):
            return
        ids, claims = entry.get("source_ids"), entry.get("claims")
        for source_id in ids if isinstance(ids, list) else ():
            want(source_id)
        for claim in claims if isinstance(claims, list) else ():
            if not isinstance(claim, dict):
                continue
            spans = want(claim.get("source_id"))
            start, end = claim.get("start"), claim.get("end")
            if spans is not None and type(start) is int and type(end) is int:
                spans.add((start, end))

    try:
        fd, _ = _fs.open_regular(run.result_path, follow_symlinks=False)
    except OSError:
        return []
    try:
        raw: Any = _named_apart(_Forward(fd), named)
    except OSError:
        return []
    finally:
        os.close(fd)
    if raw is None:  # not in the written layout: read whole, as any other file
        wanted.clear()
        try:
            raw = orjson.loads(_fs.read_regular(run.result_path, follow_symlinks=False))
        except (OSError, ValueError):
            return []
        accepted = raw.get("accepted") if isinstance(raw, dict) else None
        for entry in accepted if isinstance(accepted, list) else ():
            named(entry)
    sources = raw.get("sources") if isinstance(raw, dict) else None
    for source in sources if isinstance(sources, list) else ():
        if isinstance(source, dict):
            want(source.get("source_id"))
    return [(source_id, sorted(spans)) for source_id, spans in wanted.items()]


_ACCEPTED_OPEN = b'\n  "accepted": ['
_ACCEPTED_CLOSE = b"\n  ]"
_ENTRY_OPEN = b"\n    {"
_ENTRY_CLOSE = b"\n    }"
_BETWEEN = _ENTRY_CLOSE + b"," + _ENTRY_OPEN
_CUT = b'"\\u0000"'
"""What stands for the accepted entries while the rest is parsed: a JSON string holding NUL, which
a file can spell only this way (a raw control character is not JSON), so only where it is not."""


def _named_apart(source: _Forward, named: Callable[[Any], None]) -> dict[str, Any] | None:
    """A stored result in the written layout, read forward and taken apart: each accepted entry
    parsed alone and handed to ``named`` as it comes, then the result with no accepted entries;
    None for a file in another layout (what ``named`` was handed is then void).

    The written layout puts the result's keys at an indent of two spaces and the accepted entries'
    braces at four, and a line break occurs only between tokens, so those marks cut the file where
    the whole parse would. The cut is taken only when the rest, the entries replaced by a string
    the file cannot hold, parses with that string as ``accepted`` (so the key cut is the one the
    whole parse keeps, duplicates or not); an entry's bytes that are not one whole JSON value (a
    cut in the wrong place) fail to parse. So the parts are exactly the whole parse's.
    """
    found = source.upto(_ACCEPTED_OPEN)
    if found is None or _CUT in found[0]:
        return None
    before = found[0]
    source.takes(_ACCEPTED_OPEN)
    if not source.takes(_ENTRY_OPEN[:-1]) or source.head(1) != b"{":
        return None
    while True:
        found = source.upto(_BETWEEN, _ACCEPTED_CLOSE)
        if found is None:
            return None
        piece, mark = found
        if mark == _BETWEEN:
            piece += _ENTRY_CLOSE
            source.takes(_BETWEEN[:-1])  # to the next entry's brace
        if _CUT in piece:
            return None
        try:
            named(orjson.loads(piece))
        except ValueError:
            return None
        if mark == _ACCEPTED_CLOSE:
            break
    after = source.remaining()
    if _CUT in after:
        return None
    try:
        rest = orjson.loads(before + _ACCEPTED_OPEN + _CUT + after)
    except ValueError:
        return None
    if not isinstance(rest, dict) or rest.get("accepted") != ["\x00"]:
        return None
    rest["accepted"] = []
    return rest


def _without_time(result: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in result.items() if k != "generated_at"}


def _differences(recorded: dict[str, Any], fresh: dict[str, Any]) -> list[str]:
    keys = sorted((set(recorded) | set(fresh)) - {"generated_at"})
    return [k for k in keys if not same_json(recorded.get(k), fresh.get(k))]


def _keys(result: dict[str, Any]) -> set[str]:
    policy = result.get("policy")
    return set(policy["trusted_keys"]) if isinstance(policy, dict) else set()


def _policy_changed(stored: dict[str, Any], fresh: dict[str, Any], label: str) -> tuple[str, str]:
    """The trusted keys changed since assembly, and what fixes it: one line each."""
    then, now = _keys(stored), _keys(fresh)
    run = label or "RUN"
    unsigned = [s["source_id"][:12] for s in fresh["sources"] if s["status"] == "ok" and not s["fresh"]]
    change = f"{len(now - then)} key(s) trusted, {len(then - now)} no longer" if then else "the wiki now trusts keys"
    detail = f"result.json predates the wiki's trusted keys ({change})"
    if unsigned:
        return (
            f"{detail}; {len(unsigned)} source(s) lack a fetch signed by them",
            f"fetch them again (publisher source fetch signs), then 'publisher assemble --run-dir {run}'",
        )
    return detail, f"run 'publisher assemble --run-dir {run}'"


def check_assembler(
    out: Collector, stored: dict[str, Any] | None, problem: str | None, assembly: Assembly, *, written: bool = False
) -> str | None:
    """C-ASSEMBLER: the stored result is what assembling the run now produces. Returns the root key.

    Edited (fail): the stored inputs list does not hash to the stored ``inputs_hash``, or the
    inputs now are the stored ones yet the result differs. Stale (gated): inputs changed since
    assembly, named one by one. Absent (gated). The stored digest is a hint for the message,
    never a reason to pass. The finding's ``field`` names what differs: ``inputs`` (stale, or an
    inputs list that does not hash), else the result's differing keys, comma-separated.
    ``written``: the stored file was proved to be exactly the assembly written with the stored
    time (:func:`same_as_written`), so the two are not compared again.
    """
    fix = f"run 'publisher assemble --run-dir {out.rc.run_shown}'"
    fresh = assembly.result
    file = "outputs/result.json"
    if problem is not None:
        root = out.find(ASSEMBLER, Reason.SCHEMA_ERROR, file, f"result.json {problem}", fix=fix)
        out.add(ASSEMBLER, "fail", f"result.json {problem}")
        return root.key
    if stored is None:
        root = out.find(ASSEMBLER, None, file, "result.json is absent", severity=out.gated(), fix=fix)
        out.add(ASSEMBLER, out.gated(), f"result.json is absent ({fix})")
        return root.key
    if written or same_json(_without_time(stored), _without_time(fresh)):
        out.add(ASSEMBLER, "pass", "result.json equals assembling its inputs now")
        return None
    if not same_json(stored.get("policy"), fresh.get("policy")):
        detail, keys_fix = _policy_changed(stored, fresh, out.rc.run_shown)
        root = out.find(ASSEMBLER, None, file, detail, severity=out.gated(), fix=keys_fix)
        out.add(ASSEMBLER, out.gated(), "result.json was assembled under other trusted keys")
        return root.key
    then = stored.get("inputs")
    differing = ", ".join(_differences(stored, fresh))
    if then is None and differing == "inputs":
        detail = "result.json has no inputs list (written by an older version)"
        root = out.find(ASSEMBLER, None, file, detail, severity=out.gated(), fix=fix)
        out.add(ASSEMBLER, out.gated(), f"{detail}; {fix}")
        return root.key
    if isinstance(then, list) and inputs_digest(then) != stored["inputs_hash"]:
        why, at = "its inputs list does not hash to its inputs_hash", "inputs"
    elif stored["inputs_hash"] == fresh["inputs_hash"] or then == fresh["inputs"]:
        why, at = f"{differing} differ(s) from assembling the same inputs now", differing.replace(" ", "")
    else:
        changed = changed_inputs(then, fresh["inputs"]) if isinstance(then, list) else []
        named = "; ".join(changed[:5]) + (f"; and {len(changed) - 5} more" if len(changed) > 5 else "")
        because = f"inputs changed since assembly ({named})" if named else "the run's inputs changed since assembly"
        detail = f"result.json is stale: {because}"
        root = out.find(ASSEMBLER, None, file, detail, severity=out.gated(), field="inputs", fix=fix)
        out.add(ASSEMBLER, out.gated(), f"{detail}; {fix}")
        return root.key
    detail = f"result.json was edited: {why}"
    root = out.find(ASSEMBLER, None, file, detail, field=at, fix=fix)
    out.add(ASSEMBLER, "fail", f"{detail}; {fix}")
    return root.key
