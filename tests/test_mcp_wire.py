"""``publisher mcp`` on the wire: every malformed line gets one JSON-RPC error and the next is served.

The real server runs as a subprocess; each case writes one line as a client could (a request whose
id is a float, ``NaN``, an array, an object, a boolean or null; JSON that is no JSON-RPC message; a
batch; a line that is not JSON or not UTF-8; nesting 100,000 deep; a line of 50 MB), then a
``ping``, and asserts the error's code and id and that the ping is answered next. Before the
server read stdin itself, the SDK read an unreadable id as a notification and never answered it,
and held a line of any length in memory.
"""

from __future__ import annotations

import io
import json
import select
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

pytest.importorskip("mcp")

from publisher.mcp.transport import MAX_LINE, read_line

REPO = Path(__file__).resolve().parents[1]
PARSE_ERROR, INVALID_REQUEST = -32700, -32600
REQUEST = '{"jsonrpc": "2.0", "id": %s, "method": "ping"}'


class Server:
    """A ``publisher mcp`` subprocess, initialised, that a test writes lines to and reads answers of."""

    def __init__(self, wiki: Path, log: Path) -> None:
        command = [sys.executable, "-m", "publisher", "mcp", "--wiki", str(wiki)]
        self.log = log
        with log.open("wb") as stderr:
            self.proc = subprocess.Popen(
                command, cwd=REPO, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=stderr
            )
        self.pings = 1000
        hello = {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}
        self.write(json.dumps({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": hello}).encode())
        assert "result" in self.answer()
        self.write(b'{"jsonrpc": "2.0", "method": "notifications/initialized"}')

    def write(self, line: bytes) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(line + b"\n")
        self.proc.stdin.flush()

    def answer(self, timeout: float = 30) -> dict[str, Any]:
        assert self.proc.stdout is not None
        ready, _, _ = select.select([self.proc.stdout], [], [], timeout)
        assert ready, "no answer: the server left a line unanswered"
        line = self.proc.stdout.readline()
        assert line, "the server stopped"
        answer: dict[str, Any] = json.loads(line)
        return answer

    def served(self) -> bool:
        """Whether a ping written now is the next thing answered."""
        self.pings += 1
        self.write((REQUEST % self.pings).encode())
        return self.answer() == {"jsonrpc": "2.0", "id": self.pings, "result": {}}

    def peak_memory(self) -> int:
        """The process's peak resident memory, in bytes (Linux)."""
        status = Path(f"/proc/{self.proc.pid}/status").read_text(encoding="ascii")
        return int(status.split("VmHWM:")[1].split()[0]) * 1024

    def close(self) -> None:
        """End the session as a client does (closing stdin): the server exits 0, having logged nothing."""
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.close()
        assert self.proc.wait(timeout=30) == 0
        self.proc.stdout.close()
        assert self.log.read_text(encoding="utf-8", errors="replace") == ""


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    root = tmp_path_factory.mktemp("mcp-wire")
    (root / "wiki").mkdir()
    (root / "wiki" / "mkdocs.yml").write_text("site_name: x\n", encoding="utf-8")
    running = Server(root / "wiki", root / "stderr.txt")
    yield running
    running.close()


DEEP = b"[" * 100_000 + b"]" * 100_000
MALFORMED: dict[str, tuple[bytes, int, int | str | None]] = {
    # an id that is not a string or an integer: the SDK read each as a notification, never answered
    "id a float": (b'{"jsonrpc": "2.0", "id": 1.5, "method": "ping"}', INVALID_REQUEST, None),
    "id an integral float": (b'{"jsonrpc": "2.0", "id": 2.0, "method": "ping"}', INVALID_REQUEST, None),
    "id an array": (b'{"jsonrpc": "2.0", "id": [1], "method": "ping"}', INVALID_REQUEST, None),
    "id an object": (b'{"jsonrpc": "2.0", "id": {"a": 1}, "method": "ping"}', INVALID_REQUEST, None),
    "id a boolean": (b'{"jsonrpc": "2.0", "id": true, "method": "ping"}', INVALID_REQUEST, None),
    "id null": (b'{"jsonrpc": "2.0", "id": null, "method": "ping"}', INVALID_REQUEST, None),
    "id a float on a notification": (
        b'{"jsonrpc": "2.0", "id": 1.5, "method": "notifications/initialized"}',
        INVALID_REQUEST,
        None,
    ),
    "id a float on a response": (b'{"jsonrpc": "2.0", "id": 1.5, "result": {}}', INVALID_REQUEST, None),
    # NaN, Infinity: read by the SDK's parser, but no JSON
    "id NaN": (b'{"jsonrpc": "2.0", "id": NaN, "method": "ping"}', PARSE_ERROR, None),
    "Infinity in params": (
        b'{"jsonrpc": "2.0", "id": 9, "method": "ping", "params": {"a": -Infinity}}',
        PARSE_ERROR,
        9,
    ),
    # JSON that is no JSON-RPC message
    "an empty batch": (b"[]", INVALID_REQUEST, None),
    "a batch": (b'[{"jsonrpc": "2.0", "id": 7, "method": "ping"}]', INVALID_REQUEST, None),
    "a number": (b"5", INVALID_REQUEST, None),
    "a string": (b'"x"', INVALID_REQUEST, None),
    "null": (b"null", INVALID_REQUEST, None),
    "no method": (b'{"jsonrpc": "2.0", "id": 3}', INVALID_REQUEST, 3),
    "a method that is a number": (b'{"jsonrpc": "2.0", "id": 4, "method": 5}', INVALID_REQUEST, 4),
    "a method that is an array, no id": (b'{"jsonrpc": "2.0", "method": ["ping"]}', INVALID_REQUEST, None),
    "jsonrpc 1.0": (b'{"jsonrpc": "1.0", "id": 5, "method": "ping"}', INVALID_REQUEST, 5),
    "no jsonrpc": (b'{"id": 6, "method": "ping"}', INVALID_REQUEST, 6),
    "params an array": (b'{"jsonrpc": "2.0", "id": 8, "method": "ping", "params": [1]}', INVALID_REQUEST, 8),
    # no JSON at all
    "a cut-off line": (b'{"jsonrpc": "2.0", "id": 3, "method": ', PARSE_ERROR, None),
    "a blank line": (b"", PARSE_ERROR, None),
    "not UTF-8": (b'{"jsonrpc": "2.0", "id": 10, "method": "ping", "params": {"a": "\xff"}}', PARSE_ERROR, None),
    "100,000 nested arrays": (DEEP, PARSE_ERROR, None),
    "100,000 nested arrays in a request": (
        b'{"jsonrpc": "2.0", "id": 11, "method": "ping", "params": {"a": ' + DEEP + b"}}",
        PARSE_ERROR,
        None,
    ),
}


@pytest.mark.parametrize("case", MALFORMED)
def test_a_malformed_line_gets_one_error_and_the_next_request_is_served(server: Server, case: str) -> None:
    line, code, id_ = MALFORMED[case]
    server.write(line)
    answer = server.answer()
    assert (answer.get("id", "absent"), answer.get("error", {}).get("code")) == (id_, code), answer
    assert set(answer) == {"jsonrpc", "id", "error"} and answer["error"]["message"], answer
    assert server.served()


def test_a_well_formed_notification_is_not_answered(server: Server) -> None:
    server.write(b'{"jsonrpc": "2.0", "method": "notifications/initialized"}')
    server.write(b'{"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 12345}}')
    assert server.served()


def test_a_line_of_the_limit_is_read_and_one_byte_more_is_refused(server: Server) -> None:
    request = (REQUEST % 77).encode()
    server.write(request + b" " * (MAX_LINE - len(request)))
    assert server.answer() == {"jsonrpc": "2.0", "id": 77, "result": {}}
    server.write(request + b" " * (MAX_LINE - len(request) + 1))
    answer = server.answer()
    assert (answer["id"], answer["error"]["code"]) == (None, INVALID_REQUEST), answer
    assert server.served()


def test_a_line_of_50_mb_is_refused_without_being_held(server: Server) -> None:
    """Over the limit, a line is read and dropped as it comes: the server's peak memory grows by
    far less than the line (before, the SDK held it, and its parse, at over three times its size)."""
    size = 50 * 1000 * 1000
    before = server.peak_memory()
    head = b'{"jsonrpc": "2.0", "id": 78, "method": "ping", "params": {"a": "'
    server.write(head + b"a" * (size - len(head) - 3) + b'"}}')
    answer = server.answer()
    assert (answer["id"], answer["error"]["code"]) == (None, INVALID_REQUEST), answer
    assert server.served()
    assert server.peak_memory() - before < size // 2


def _lines(data: bytes, limit: int) -> list[bytes | int]:
    wire = io.BytesIO(data)
    out: list[bytes | int] = []
    while (line := read_line(wire, limit)) is not None:
        out.append(line)
    return out


def test_read_line_keeps_a_line_of_the_limit_and_measures_a_longer_one() -> None:
    assert _lines(b"abcd\nabcde\nab\n", 4) == [b"abcd\n", 5, b"ab\n"]
    assert _lines(b"abcd", 4) == [b"abcd"]  # the last line, without its newline
    assert _lines(b"abcde", 4) == [5]
    assert _lines(b"\n\n", 0) == [b"\n", b"\n"]


@given(
    st.lists(st.binary(max_size=40).map(lambda b: b.replace(b"\n", b"")), min_size=1), st.integers(0, 30), st.booleans()
)
def test_read_line_reads_every_line_or_its_length(lines: list[bytes], limit: int, last_newline: bool) -> None:
    data = b"\n".join(lines) + (b"\n" if last_newline else b"")
    expected: list[bytes | int] = [
        (line + b"\n" if i < len(lines) - 1 or last_newline else line) if len(line) <= limit else len(line)
        for i, line in enumerate(lines)
    ]
    if lines and not last_newline and lines[-1] == b"":
        expected.pop()  # nothing after the last newline is no line
    assert _lines(data, limit) == expected
