"""``publisher mcp``: an MCP client from the official SDK drives the tool server over stdio.

The client lists the tools (exactly the allow-list; no tool acquires or registers, and only the
claim tools write, tested in test_claims_mcp.py), calls each reading one on real articles, shows
the run's ``sources/``, ``events.jsonl`` and every other file byte-identical afterwards, and sends
hostile arguments (path traversal, huge ranges, wrong types), each answered by a tool error,
never a traceback.
"""

from __future__ import annotations

import ast
import hashlib
import json
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio
import pytest
from _gate_helpers import RunFixture, make_run

mcp = pytest.importorskip("mcp")

from mcp import ClientSession, StdioServerParameters  # noqa: E402
from mcp.client.stdio import stdio_client  # noqa: E402

from publisher.acquire.sources import MAX_READ_WINDOW, snapshot_summary  # noqa: E402
from publisher.kernel.canonical import SOURCE_ID_RE  # noqa: E402
from publisher.kernel.locate import normalize  # noqa: E402
from publisher.kernel.reasons import Reason  # noqa: E402
from publisher.mcp.tools import TOOLS, ToolProblem, Workspace, check_span, list_sources, read_source  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
READING = {
    "list_sources",
    "read_source",
    "find_spans",
    "locate_quote",
    "check_span",
    "build_evidence_matrix",
    "list_claims_awaiting_review",
}
ALLOWED = READING | {"run_document_review", "validate_evidence_assessment"}
WRITING_WORDS = (
    "fetch", "register", "acquire", "write", "append", "missing", "complete", "store", "import", "promote", "warrant",
    "confirm",
)  # fmt: skip

Session = Callable[[ClientSession], Awaitable[None]]


def _tree(root: Path) -> dict[str, str]:
    """Every file under ``root`` (relative path -> sha256), folders included as entries."""
    out = {}
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root).as_posix()
        out[rel] = hashlib.sha256(path.read_bytes()).hexdigest() if path.is_file() else "dir"
    return out


def _serve(fx: RunFixture, body: Session, *, run_dir: bool = True) -> None:
    args = ["-m", "publisher", "mcp", "--wiki", str(fx.wiki)]
    if run_dir:
        args += ["--run-dir", str(fx.run.path)]
    params = StdioServerParameters(command=sys.executable, args=args, cwd=str(REPO))

    async def main() -> None:
        with anyio.fail_after(120):
            async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
                await session.initialize()
                await body(session)

    anyio.run(main)


async def _call(session: ClientSession, name: str, arguments: dict[str, Any]) -> tuple[bool, Any]:
    """(is_error, parsed JSON or the error text) of one tool call."""
    result = await session.call_tool(name, arguments)
    text = "".join(getattr(block, "text", "") for block in result.content)
    assert "Traceback" not in text
    return bool(result.is_error), (text if result.is_error else json.loads(text))


@pytest.fixture
def fx(tmp_path: Path) -> RunFixture:
    return make_run(tmp_path, articles=2, report=False)


def test_the_server_lists_only_reading_tools_and_changes_nothing(fx: RunFixture) -> None:
    article = fx.articles[0]
    sid, text = article.source_id, article.text
    span = article.spans[0]
    start, end = span["start"], span["end"]
    before = _tree(fx.run.path)
    events = fx.run.events_path.read_bytes()
    sources = _tree(fx.run.sources_dir)

    async def body(session: ClientSession) -> None:
        listed = (await session.list_tools()).tools
        names = {tool.name for tool in listed}
        assert names == ALLOWED == {spec.name for spec in TOOLS}
        assert not any(word in name for name in names for word in WRITING_WORDS)
        for tool in listed:
            assert tool.annotations is not None and tool.annotations.read_only_hint is (tool.name in READING)
            assert tool.annotations.destructive_hint is False and tool.description

        error, found = await _call(session, "list_sources", {})
        assert not error and {s["source_id"] for s in found["sources"]} == {a.source_id for a in fx.articles}
        assert all(
            s["chars"] == len(a.text) for s in found["sources"] for a in fx.articles if a.source_id == s["source_id"]
        )

        error, window = await _call(session, "read_source", {"source_id": sid, "start": start, "end": end})
        assert not error and window["text"] == text[start:end] and "note" not in window
        error, window = await _call(
            session, "read_source", {"source_id": sid, "start": len(text) - 5, "end": len(text) + 50}
        )
        assert not error and window["end"] == len(text) and "note" in window

        quote = "  ".join(text[start:end].split())  # white space an agent changed
        error, located = await _call(session, "locate_quote", {"source_id": sid, "quote": quote})
        assert not error
        raw = text[start:end]
        trimmed = (start + len(raw) - len(raw.lstrip()), end - len(raw) + len(raw.rstrip()))
        assert trimmed in {(c["start"], c["end"]) for c in located["candidates"]}

        error, checked = await _call(
            session,
            "check_span",
            {
                "source_id": sid,
                "start": start,
                "end": end,
                "quote": text[start:end],
                "evidence_id": article.evidence_id,
            },
        )
        assert not error and checked["ok"] is True and checked["excerpt"] == text[start:end]
        error, shifted = await _call(
            session, "check_span", {"source_id": sid, "start": start + 1, "end": end + 1, "quote": text[start:end]}
        )
        assert not error and shifted["ok"] is False
        (finding,) = shifted["findings"]
        assert finding["reason_code"] == "EXCERPT_MISMATCH"
        assert (finding["nearest_candidate"]["start"], finding["nearest_candidate"]["end"]) == (start, end)
        error, wrong_paper = await _call(
            session, "check_span", {"source_id": sid, "start": start, "end": end, "evidence_id": "pmid:1"}
        )
        assert not error and [f["reason_code"] for f in wrong_paper["findings"]] == ["NO_PAPER_ID"]

        words = text[start:end].split()
        phrase = " ".join(words[: min(4, len(words))])
        error, spans = await _call(session, "find_spans", {"source_id": sid, "query": phrase, "sentence": True})
        assert not error and spans["matches"]
        for match in spans["matches"]:
            assert text[match["start"] : match["end"]] == match["excerpt"]
            assert normalize(phrase) in normalize(match["excerpt"])

    _serve(fx, body)
    assert fx.run.events_path.read_bytes() == events  # not even a read event
    assert _tree(fx.run.sources_dir) == sources
    assert _tree(fx.run.path) == before


HOSTILE: list[tuple[str, dict[str, Any]]] = [
    ("read_source", {"source_id": "../../../etc/passwd"}),
    ("read_source", {"source_id": "../config"}),  # names a file that exists: refused before any access
    ("read_source", {"source_id": "src-" + "0" * 64 + "/../x"}),
    ("read_source", {"source_id": "SRC-" + "A" * 64}),
    ("read_source", {"source_id": 12345}),
    ("read_source", {"source_id": ["src-"]}),
    ("read_source", {}),
    ("read_source", {"source_id": "src-" + "0" * 64}),  # well-formed, unknown
    ("read_source", {"source_id": "@SID", "start": 10**15}),
    ("read_source", {"source_id": "@SID", "start": -1}),
    ("read_source", {"source_id": "@SID", "start": "10"}),
    ("read_source", {"source_id": "@SID", "start": 1.5}),
    ("read_source", {"source_id": "@SID", "start": 50, "end": 10}),
    ("check_span", {"source_id": "@SID", "start": 0, "end": 10**12}),
    ("check_span", {"source_id": "@SID", "start": "0", "end": "10"}),
    ("check_span", {"source_id": "@SID", "start": True, "end": 5}),
    ("locate_quote", {"source_id": "@SID", "quote": ""}),
    ("locate_quote", {"source_id": "@SID", "quote": "x" * 100_000}),
    ("locate_quote", {"source_id": "@SID", "quote": {"a": 1}}),
    ("find_spans", {"source_id": "@SID"}),
    ("find_spans", {"source_id": "@SID", "query": "a", "from_text": "b", "to_text": "c"}),
    ("find_spans", {"source_id": "@SID", "query": "a", "context": 10**9}),
    ("find_spans", {"source_id": "@SID", "query": "   "}),
    ("find_spans", {"source_id": "@SID", "query": "a", "sentence": 1}),  # a number is not a flag
    ("find_spans", {"source_id": "@SID", "query": "a", "ignore_case": "yes"}),
    ("fetch_source", {"url": "https://example.org/"}),
    ("register_text", {"text": "invented"}),
    ("record_missingness", {"claim": "x"}),
]


def test_hostile_arguments_are_tool_errors(fx: RunFixture) -> None:
    sid = fx.articles[0].source_id
    before = _tree(fx.run.path)

    async def body(session: ClientSession) -> None:
        for name, arguments in HOSTILE:
            filled = {k: (sid if v == "@SID" else v) for k, v in arguments.items()}
            error, text = await _call(session, name, filled)
            assert error, (name, arguments, text)
            assert isinstance(text, str) and "\n  File " not in text
            given = filled.get("source_id")
            if isinstance(given, str) and not SOURCE_ID_RE.fullmatch(given):
                assert Reason.UNKNOWN_SOURCE.value in text.split(": "), text  # the code, as "CODE: line"
                with pytest.raises(ToolProblem) as refused:  # refused as an argument, before any file
                    read_source(Workspace(fx.wiki, fx.run.path), given)
                assert (refused.value.reason, refused.value.field) == (Reason.UNKNOWN_SOURCE, "source_id")
        # still serving after all that
        error, found = await _call(session, "list_sources", {})
        assert not error and found["sources"]

    _serve(fx, body)
    assert _tree(fx.run.path) == before


def test_without_a_run_the_server_reads_every_run_of_the_wiki(fx: RunFixture) -> None:
    async def body(session: ClientSession) -> None:
        error, found = await _call(session, "list_sources", {})
        assert not error and {s["run"] for s in found["sources"]} == {fx.run.path.name}
        sid = fx.articles[1].source_id
        error, window = await _call(session, "read_source", {"source_id": sid, "start": 0, "end": 10})
        assert not error and window["text"] == fx.articles[1].text[:10]

    _serve(fx, body, run_dir=False)


@pytest.mark.parametrize(
    ("start", "end", "code"),
    [
        (50, 10, Reason.SPAN_OUT_OF_RANGE),  # reversed
        (0, MAX_READ_WINDOW + 1, Reason.SPAN_TOO_LONG),  # longer than a read: refused, never cut short
    ],
)
def test_a_window_the_command_refuses_the_tool_refuses_with_the_same_code(
    fx: RunFixture, cli: Any, start: int, end: int, code: Reason
) -> None:
    article = max(fx.articles, key=lambda a: len(a.text))
    if len(article.text) <= end:
        pytest.skip("the corpus article is shorter than the window")
    events = fx.run.events_path.read_bytes()
    out = cli("source", "read", "--run-dir", fx.run.path, "--source-id", article.source_id,
              "--start", start, "--end", end, "--json")  # fmt: skip
    assert out.status == 2 and out.json()["error"]["reason_code"] == code.value
    with pytest.raises(ToolProblem) as refused:
        read_source(Workspace(fx.wiki, fx.run.path), article.source_id, start, end)
    assert refused.value.reason == code
    assert fx.run.events_path.read_bytes() == events  # neither logged a read


def test_a_window_both_read_is_the_same_window(fx: RunFixture, cli: Any) -> None:
    article = fx.articles[0]
    n = len(article.text)
    for start, end in ((0, 10), (n - 5, n + 50), (n + 10, n + 20)):
        out = cli("source", "read", "--run-dir", fx.run.path, "--source-id", article.source_id,
                  "--start", start, "--end", end, "--json")  # fmt: skip
        shown = read_source(Workspace(fx.wiki, fx.run.path), article.source_id, start, end)
        assert out.status == 0 and out.json() == {k: shown[k] for k in out.json()}
        assert ("note" in shown) == (end > n)


def test_list_sources_summarises_a_source_as_the_command_does(fx: RunFixture, cli: Any, tmp_path: Path) -> None:
    text = tmp_path / "text.txt"
    text.write_text("A short text an agent registered. It has two sentences.", encoding="utf-8")
    out = cli("source", "register", "--run-dir", fx.run.path, "--url", "https://example.org/short",
              "--text-file", text, "--title", "Short", "--json")  # fmt: skip
    assert out.status == 0
    acquired = out.json()
    (listed,) = [s for s in list_sources(Workspace(fx.wiki, fx.run.path))["sources"]
                 if s["source_id"] == acquired["source_id"]]  # fmt: skip
    assert listed.pop("run") == fx.run.path.name
    assert listed == {key: acquired[key] for key in listed}
    assert set(listed) == set(snapshot_summary(fx.run.store.read(acquired["source_id"])))


def test_a_tampered_snapshot_is_a_tool_error_with_its_reason(fx: RunFixture) -> None:
    article = fx.articles[0]
    path = fx.run.store.path_for(article.source_id)
    path.chmod(0o644)
    path.write_bytes(path.read_bytes().replace(b'"access":"full_text"', b'"access":"abstract"', 1))
    ws = Workspace(fx.wiki, fx.run.path)
    with pytest.raises(ToolProblem) as caught:
        read_source(ws, article.source_id)
    assert str(caught.value).startswith("SNAPSHOT_HASH_MISMATCH")
    with pytest.raises(ToolProblem) as caught:
        check_span(ws, "src-" + "f" * 64, 0, 1)
    assert str(caught.value).startswith("UNKNOWN_SOURCE")
    assert check_span(ws, fx.articles[1].source_id, 0, 1)["ok"] is True  # the other snapshot still reads


def test_only_the_edges_import_the_sdk() -> None:
    """The MCP SDK is imported by publisher/mcp (and the CLI that starts it), nowhere else."""
    offenders = []
    for path in sorted((REPO / "publisher").rglob("*.py")):
        rel = path.relative_to(REPO / "publisher").parts
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            names = []
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            if any(n == "mcp" or n.startswith("mcp.") or n == "anthropic" for n in names) and rel[0] not in (
                "mcp",
                "cli",
            ):
                offenders.append("/".join(rel))
    assert offenders == []


def test_the_command_refuses_a_folder_that_is_not_a_wiki(tmp_path: Path, cli: Any) -> None:
    res = cli("mcp", "--wiki", tmp_path / "nowhere")
    assert res.status == 2 and len(res.err_lines) == 1
    (tmp_path / "wiki").mkdir()
    (tmp_path / "wiki" / "mkdocs.yml").write_text("site_name: x\n", encoding="utf-8")
    res = cli("mcp", "--wiki", tmp_path / "wiki", "--run-dir", tmp_path / "no-run")
    assert res.status == 2 and len(res.err_lines) == 1


def test_a_request_the_transport_cannot_parse_is_answered_not_dropped(fx: RunFixture) -> None:
    """A lone surrogate or a 4,400-digit number is valid to Python's JSON but not to the SDK's
    parser, which dropped the request unanswered (the agent waited for ever); each gets a JSON-RPC
    parse error with its id, and the server goes on serving."""
    import select
    import subprocess

    sid = fx.articles[0].source_id
    args = ["-m", "publisher", "mcp", "--wiki", str(fx.wiki), "--run-dir", str(fx.run.path)]
    proc = subprocess.Popen([sys.executable, *args], cwd=REPO, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    assert proc.stdin is not None and proc.stdout is not None

    def ask(line: str) -> dict[str, Any]:
        assert proc.stdin is not None and proc.stdout is not None
        proc.stdin.write(line.encode("ascii") + b"\n")
        proc.stdin.flush()
        ready, _, _ = select.select([proc.stdout], [], [], 20)
        assert ready, f"no answer to {line[:120]}"
        answer: dict[str, Any] = json.loads(proc.stdout.readline())
        return answer

    def call(id_: int, name: str, arguments: str) -> str:
        params = f'{{"name": "{name}", "arguments": {arguments}}}'
        return f'{{"jsonrpc": "2.0", "id": {id_}, "method": "tools/call", "params": {params}}}'

    try:
        hello = {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}
        assert "result" in ask(json.dumps({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": hello}))
        proc.stdin.write(b'{"jsonrpc": "2.0", "method": "notifications/initialized"}\n')
        surrogate = ask(call(1, "locate_quote", f'{{"source_id": "{sid}", "quote": "\\ud800 a"}}'))
        assert (surrogate["id"], surrogate["error"]["code"]) == (1, -32700), surrogate
        huge = ask(call(2, "read_source", f'{{"source_id": "{sid}", "start": {"9" * 4400}}}'))
        assert (huge["id"], huge["error"]["code"]) == (2, -32700), huge
        garbage = ask('{"jsonrpc": "2.0", "id": 3, "method": ')
        assert (garbage["id"], garbage["error"]["code"]) == (None, -32700), garbage
        not_rpc = ask('{"jsonrpc": "2.0", "id": 5, "method": 7}')
        assert (not_rpc["id"], not_rpc["error"]["code"]) == (5, -32600), not_rpc
        fine = ask(call(4, "read_source", f'{{"source_id": "{sid}", "start": 0, "end": 5}}'))
        assert fine["id"] == 4 and json.loads(fine["result"]["content"][0]["text"])["end"] == 5
    finally:
        proc.stdin.close()
        proc.wait(timeout=30)
        proc.stdout.close()


def test_an_argument_a_tool_does_not_take_is_refused_not_dropped(fx: RunFixture) -> None:
    """A misspelt ``end`` must not read the source to its end: the call is a tool error naming it."""
    article = fx.articles[0]
    sid = article.source_id

    async def body(session: ClientSession) -> None:
        for tool in (await session.list_tools()).tools:
            assert tool.input_schema.get("additionalProperties") is False, tool.name
        error, text = await _call(session, "read_source", {"source_id": sid, "start": 0, "stop": 5})
        assert error and "'stop'" in text and "read_source" in text
        error, text = await _call(session, "list_sources", {"run": "other"})
        assert error and "'run'" in text
        error, text = await _call(session, "check_span", {"source_id": sid, "start": 0, "end": 5, "accept": True})
        assert error and "'accept'" in text
        # the same calls with only their own arguments are answered
        error, found = await _call(session, "read_source", {"source_id": sid, "start": 0, "end": 5})
        assert not error and found["text"] == article.text[0:5]
        error, found = await _call(session, "list_sources", {})
        assert not error and found["sources"]

    _serve(fx, body)
