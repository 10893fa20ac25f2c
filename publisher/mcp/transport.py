"""The server's end of stdin: one bounded line per message, each handed to the SDK or answered here.

The SDK's stdio transport reads a line of any length into memory, drops a line its parser refuses
without an answer (a lone surrogate escape, a number of thousands of digits, a cut-off line), and
reads a request whose id is not a string or an integer (``1.5``, ``true``, ``null``, ``[1]``) as a
notification, which is never answered: in each case the client waits for ever. So the server reads
stdin itself, and the SDK's transport (``stdio_server(stdin=...)``, which still owns stdout and
parses the messages it serves) is given only the lines its parser reads as what they mean. Every
other line is answered with one JSON-RPC error, and the next line is served:

- longer than :data:`MAX_LINE` bytes: ``-32600`` with id null; the line is skipped, never held;
- not UTF-8, or not JSON (cut off, ``NaN``, a lone surrogate escape, a number of thousands of
  digits, nesting deeper than the parser goes): ``-32700``, with the request's id where Python's
  JSON parser can still read a valid one, null where not;
- JSON but no JSON-RPC message: ``-32600`` with the id where it is a valid one, naming why: not an
  object; an array, as a batch is not supported (MCP dropped batches in its 2025-06-18 revision,
  and the SDK never read them): one message per line; an id that is not a string or an integer;
  ``jsonrpc`` not ``"2.0"``; no ``method``, or one that is not a string; ``params`` not an object.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from contextlib import contextmanager
from typing import BinaryIO, Protocol

import anyio
from mcp.shared.message import SessionMessage
from mcp.types import (
    INVALID_REQUEST,
    PARSE_ERROR,
    ErrorData,
    JSONRPCError,
    JSONRPCNotification,
    jsonrpc_message_adapter,
)
from pydantic import ValidationError

__all__ = ["MAX_LINE", "Lines", "claimed_stdin", "read_line", "refusal", "too_long"]

MAX_LINE = 8 * 1024 * 1024
"""The longest message line the server reads, in bytes (newline excluded). The largest call any
tool accepts (a document review: a claim of 4,000 code points and 200 terms of 2,000) fits even
with every code point written as a 12-byte surrogate-pair escape (about 4.9 MB)."""

_SKIP = 64 * 1024
"""How much of an over-long line is read (and dropped) at a time."""

_SHOWN_ID = 200
"""The longest string id echoed in an error answer."""


def read_line(wire: BinaryIO, limit: int = MAX_LINE) -> bytes | int | None:
    """The next line of ``wire``; its length when longer than ``limit`` bytes (the rest of it is
    read and dropped, so memory stays bounded); None at the end of the stream."""
    line = wire.readline(limit + 1)
    if not line:
        return None
    if line.endswith(b"\n") or len(line) <= limit:
        return line
    size = len(line)
    while True:
        rest = wire.readline(_SKIP)
        size += len(rest)
        if not rest:
            return size
        if rest.endswith(b"\n"):
            return size - 1


def _error(code: int, message: str, id_: int | str | None = None) -> JSONRPCError:
    return JSONRPCError(jsonrpc="2.0", id=id_, error=ErrorData(code=code, message=message))


def _loads(text: str) -> object:
    """``text`` as Python's JSON parser reads it (numbers of more than 18 digits as None, so a long
    one cannot fail the parse); None where it cannot."""
    try:
        return json.loads(text, parse_int=lambda digits: int(digits) if len(digits) <= 18 else None)
    except (ValueError, RecursionError):
        return None


class _Constant(Exception):
    """A ``NaN``, ``Infinity`` or ``-Infinity`` token, which the SDK's parser reads and JSON has not."""


def _constant(text: str) -> str | None:
    """The first such token in the JSON ``text``, or None (also where Python's parser fails)."""

    def refuse(token: str) -> object:
        raise _Constant(token)

    try:
        json.loads(text, parse_constant=refuse)
    except _Constant as exc:
        return str(exc)
    except (ValueError, RecursionError):
        return None
    return None


def _is_id(value: object) -> bool:
    """Whether ``value`` is an id MCP allows: a string or an integer (never null, never a boolean)."""
    return type(value) is int or isinstance(value, str)


def _shown_id(data: object) -> int | str | None:
    """The id of the JSON value ``data`` to answer with: a valid one, short and encodable, or None."""
    found = data.get("id") if isinstance(data, dict) else None
    if not _is_id(found):
        return None
    if isinstance(found, str):
        try:
            found.encode("utf-8")
        except UnicodeEncodeError:  # a lone surrogate Python's parser let through
            return None
        if len(found) > _SHOWN_ID:
            return None
    return found


def _kind(value: object) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int):
        return "an integer"
    if isinstance(value, float):
        return "a number that is not an integer"
    if isinstance(value, str):
        return "a string"
    return "an array" if isinstance(value, list) else "an object"


def _invalid(data: object) -> JSONRPCError:
    """The Invalid Request answer to the JSON value ``data``, naming what makes it no JSON-RPC
    message this server reads."""
    if isinstance(data, list):
        why = "a batch (a JSON array) is not supported: send one message per line"
    elif not isinstance(data, dict):
        why = f"the message is {_kind(data)}, not a JSON object"
    elif "id" in data and not _is_id(data["id"]):
        why = f'its "id" is {_kind(data["id"])}: an id is a string or an integer'
    elif data.get("jsonrpc") != "2.0":
        why = 'its "jsonrpc" is not "2.0"'
    elif "method" in data and not isinstance(data["method"], str):
        why = f'its "method" is {_kind(data["method"])}, not a string'
    elif "method" not in data and "result" not in data and "error" not in data:
        why = 'it has no "method"'
    elif "params" in data and not isinstance(data["params"], dict):
        why = f'its "params" is {_kind(data["params"])}, not an object'
    else:
        why = "it is no JSON-RPC request, notification or response this server reads"
    return _error(INVALID_REQUEST, f"invalid request: {why}", _shown_id(data))


def too_long(size: int) -> JSONRPCError:
    """The answer to a line of ``size`` bytes that :func:`read_line` skipped."""
    return _error(
        INVALID_REQUEST,
        f"invalid request: the line has {size:,} bytes; this server reads lines of at most {MAX_LINE:,}",
    )


def refusal(line: bytes) -> JSONRPCError | None:
    """None when the SDK's parser reads the message ``line`` as what it means; else the error that
    answers it."""
    try:
        text = line.decode("utf-8")
    except UnicodeDecodeError as exc:
        return _error(PARSE_ERROR, f"parse error: the line is not UTF-8 (byte {exc.start:,})")
    try:
        message = jsonrpc_message_adapter.validate_json(text, by_name=False)
    except ValidationError as exc:
        first = exc.errors()[0]
        if first["type"] == "json_invalid":
            why = str(first["msg"]).removeprefix("Invalid JSON: ")
            return _error(PARSE_ERROR, f"parse error: the line is not JSON ({why})", _shown_id(_loads(text)))
        return _invalid(_loads(text))
    if (b"NaN" in line or b"Infinity" in line) and (token := _constant(text)) is not None:
        return _error(
            PARSE_ERROR, f"parse error: the line is not JSON ({token} is no JSON value)", _shown_id(_loads(text))
        )
    if isinstance(message, JSONRPCNotification):  # the SDK ignores an id it cannot read: a request unanswered
        data = _loads(text)
        if isinstance(data, dict) and "id" in data:
            return _invalid(data)
    return None


class _Answers(Protocol):
    """Where refused lines are answered: the transport's write stream."""

    async def send(self, item: SessionMessage, /) -> None: ...


class Lines:
    """stdin as the SDK's stdio transport iterates it (``async for line in stdin``): the lines
    :func:`refusal` lets through, each other line answered on the stream :meth:`answer_on` names.

    Reading and checking run in a worker thread, so a long line never blocks the event loop.
    """

    def __init__(self, wire: BinaryIO) -> None:
        self._wire = wire
        self._answers: _Answers | None = None
        self._ready = anyio.Event()

    def answer_on(self, write_stream: _Answers) -> None:
        """Answer refused lines on ``write_stream`` (the transport's, which it hands out only once
        it has started reading; a refusal found before waits for it)."""
        self._answers = write_stream
        self._ready.set()

    def _next(self) -> str | JSONRPCError | None:
        """The next line to hand on, the answer to the next refused one, or None at the end."""
        line = read_line(self._wire)
        if line is None:
            return None
        if isinstance(line, int):
            return too_long(line)
        problem = refusal(line)
        return line.decode("utf-8") if problem is None else problem

    def __aiter__(self) -> Lines:
        return self

    async def __anext__(self) -> str:
        while True:
            item = await anyio.to_thread.run_sync(self._next, abandon_on_cancel=True)
            if item is None:
                raise StopAsyncIteration
            if isinstance(item, str):
                return item
            await self._ready.wait()
            if self._answers is not None:  # always, once ready
                await self._answers.send(SessionMessage(item))


@contextmanager
def claimed_stdin() -> Iterator[BinaryIO]:
    """The wire on stdin, with fd 0 pointed at the null device while it is served (as the SDK's
    transport does when it reads stdin itself), so nothing else in the process reads the wire."""
    try:
        wire = os.dup(0)
    except OSError:  # no stdin at all: nothing to serve
        with open(os.devnull, "rb") as nothing:
            yield nothing
        return
    null = os.open(os.devnull, os.O_RDONLY)
    try:
        os.dup2(null, 0)
    finally:
        os.close(null)
    try:
        # never closed: a worker thread may still block on it after the server stops
        yield os.fdopen(wire, "rb", closefd=False)
    finally:
        os.dup2(wire, 0)
