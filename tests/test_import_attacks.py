"""Hostile inputs to ``publisher import anthropic``: offsets in the wrong unit, altered quotes,
odd JSON values and odd record paths. Every citation that does not re-slice exactly is refused
with its reason code, never shifted or trusted; a bad file is one line, exit 2, nothing written."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from conftest import CliResult, make_record

from publisher.runs import Run

Cli = Callable[..., CliResult]

# astral characters and combining marks before the cited span: UTF-16 and UTF-8 offsets drift
TEXT = "\U0001f600 e\u0301 \U0001d45d=0.04 caf\u00e9. The trial randomised 120 children. Results: SMD -0.41."
QUOTE = "The trial randomised 120 children."


def _response(citations: list[Any], text: str = "The claim.") -> dict[str, Any]:
    return {
        "id": "msg_attack",
        "type": "message",
        "model": "m",
        "content": [{"type": "text", "text": text, "citations": citations}],
    }


def _char(start: Any, end: Any, cited: Any = QUOTE, doc: Any = 0) -> dict[str, Any]:
    return {
        "type": "char_location",
        "cited_text": cited,
        "document_index": doc,
        "start_char_index": start,
        "end_char_index": end,
    }


def _import(cli: Cli, run: Run, tmp_path: Path, body: Any, *more: str) -> tuple[CliResult, Run]:
    snap, _ = run.store.put(make_record(text=TEXT))
    path = tmp_path / "response.json"
    path.write_bytes(body if isinstance(body, bytes) else json.dumps(body, ensure_ascii=False).encode())
    res = cli(
        "import",
        "anthropic",
        "--run-dir",
        run.path,
        "--response",
        path,
        "--document",
        f"0={snap.source_id}",
        *more,
        "--json",
    )
    return res, snap


def _utf16(index: int) -> int:
    return len(TEXT[:index].encode("utf-16-le")) // 2


def _utf8(index: int) -> int:
    return len(TEXT[:index].encode("utf-8"))


START = TEXT.index(QUOTE)
END = START + len(QUOTE)


@pytest.mark.parametrize("unit", [_utf16, _utf8])
def test_offsets_in_another_unit_are_refused_not_shifted(run: Run, tmp_path: Path, cli: Cli, unit: Any) -> None:
    assert unit(START) != START  # the text makes the units differ before the span
    res, _ = _import(cli, run, tmp_path, _response([_char(unit(START), unit(END))]))
    out = res.json()
    assert res.status == 1 and out["written"] is False
    (c,) = out["citations"]
    assert (c["kept"], c["reason_code"], c["start"], c["end"]) == (False, "EXCERPT_MISMATCH", unit(START), unit(END))
    assert {"kind": "exact", "start": START, "end": END} in c["candidates"]  # suggested, not taken
    assert not any(run.extractions_dir.iterdir())


def test_code_point_offsets_keep_the_span(run: Run, tmp_path: Path, cli: Cli) -> None:
    res, _ = _import(cli, run, tmp_path, _response([_char(START, END), _char(START, END)]))
    assert res.status == 0, res.err
    record = json.loads((run.path / res.json()["record"]).read_text(encoding="utf-8"))
    assert [(s["start"], s["end"], s["text"]) for s in record["spans"]] == [(START, END, QUOTE)]  # duplicate once


@pytest.mark.parametrize(
    "cited",
    [
        QUOTE.replace(" ", "  ", 1),  # whitespace
        QUOTE.replace(" ", "\u00a0", 1),  # NFKC-equal space
        QUOTE.replace("T", "\u0422", 1),  # Cyrillic homoglyph
        QUOTE + " ",
        "\ufb01" + QUOTE[2:],  # ligature
        "",
    ],
)
def test_a_cited_text_unlike_the_slice_is_never_trusted(run: Run, tmp_path: Path, cli: Cli, cited: str) -> None:
    res, _ = _import(cli, run, tmp_path, _response([_char(START, END, cited=cited)]))
    (c,) = res.json()["citations"]
    assert res.status == 1 and c["reason_code"] == "EXCERPT_MISMATCH" and not c["kept"]
    assert not any(run.extractions_dir.iterdir())


@pytest.mark.parametrize(
    ("start", "end", "code"),
    [
        (-1, END, "SPAN_OUT_OF_RANGE"),
        (END, START, "SPAN_OUT_OF_RANGE"),
        (START, START, "SPAN_OUT_OF_RANGE"),
        (START, 10**30, "SPAN_OUT_OF_RANGE"),
        (0, len(TEXT) + 1, "SPAN_OUT_OF_RANGE"),
    ],
)
def test_impossible_ranges_carry_their_code(
    run: Run, tmp_path: Path, cli: Cli, start: int, end: int, code: str
) -> None:
    res, _ = _import(cli, run, tmp_path, _response([_char(start, end, cited="")]))
    (c,) = res.json()["citations"]
    assert res.status == 1 and c["reason_code"] == code


@pytest.mark.parametrize(
    "body",
    [
        _response([_char(True, END)]),
        _response([_char(float(START), END)]),
        _response([_char(str(START), END)]),
        _response([_char(START, END, doc=True)]),
        _response([_char(START, END, doc=0.0)]),
        _response([_char(START, END, cited=1)]),
        _response([_char(START, END)], text=["x"]),  # type: ignore[arg-type]
        b'{"content": [{"type": "text", "text": "a", "citations": [{"type": "char_location", '
        b'"start_char_index": 1, "start_char_index": 2}]}]}',
        b'{"content": ' + b"[" * 100_000 + b"]" * 100_000 + b"}",
        b'{"content": [{"type": "text", "text": "\\ud800", "citations": []}]}',
        b'{"content": [{"type": "text", "text": "caf\xe9", "citations": []}]}',
        b"\xef\xbb\xbf" + json.dumps(_response([_char(START, END)])).encode(),
        json.dumps(_response([_char(START, END)])).encode("utf-16"),
        b'{"content": [{"type": "text", "text": "a", "citations": [{"type": "char_location", "start_char_index": 1'
        + b"0" * 5000
        + b"}]}]}",
    ],
)
def test_bad_values_refuse_the_file_in_one_line(run: Run, tmp_path: Path, cli: Cli, body: Any) -> None:
    res, _ = _import(cli, run, tmp_path, body)
    assert res.status == 2, res.out
    assert res.json()["error"]["reason_code"] == "SCHEMA_ERROR" and len(res.err_lines) == 1, res.err
    assert not any(run.extractions_dir.iterdir())


def test_a_source_of_no_snapshot_in_the_run_is_refused(run: Run, tmp_path: Path, cli: Cli) -> None:
    path = tmp_path / "r.json"
    path.write_text(json.dumps(_response([_char(START, END)])), encoding="utf-8")
    res = cli(
        "import", "anthropic", "--run-dir", run.path, "--response", path, "--document", "0=src-" + "a" * 64, "--json"
    )
    # an integrity finding (exit 1), like every command naming a source the run lacks
    assert res.status == 1 and len(res.err_lines) == 1, res.err
    assert res.json()["error"]["reason_code"] == "UNKNOWN_SOURCE"
    assert not run.extractions_dir.exists() or not any(run.extractions_dir.iterdir())


def test_a_huge_response_is_refused_without_reading_it(
    run: Run, tmp_path: Path, cli: Cli, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A response over the limit is refused by its size: at most the limit is ever read (a sparse
    file of gigabytes must not be loaded into memory to learn that it is too large)."""
    from publisher.gate import citations
    from publisher.kernel import _fs

    monkeypatch.setattr(citations, "MAX_RESPONSE_BYTES", 1000)
    snap, _ = run.store.put(make_record(text=TEXT))
    path = tmp_path / "huge.json"
    with path.open("wb") as fh:
        fh.truncate(256 * 1024 * 1024)  # sparse: costs no disk
    read = [0]
    real_read = os.read

    def counted(fd: int, n: int) -> bytes:
        chunk = real_read(fd, n)
        read[0] += len(chunk)
        return chunk

    monkeypatch.setattr(_fs.os, "read", counted)
    res = cli(
        "import", "anthropic", "--run-dir", run.path, "--response", path, "--document", f"0={snap.source_id}", "--json"
    )
    assert res.status == 2 and res.json()["error"]["reason_code"] == "SCHEMA_ERROR" and len(res.err_lines) == 1, res.err
    assert "over 1000 bytes" in res.err and read[0] <= 1001


@pytest.mark.parametrize("kind", ["link", "dangling", "folder"])
def test_a_record_name_taken_by_a_link_or_folder_is_refused(run: Run, tmp_path: Path, cli: Cli, kind: str) -> None:
    target = tmp_path / "elsewhere.json"
    if kind == "link":
        target.write_text("{}", encoding="utf-8")
    run.extractions_dir.mkdir(parents=True, exist_ok=True)
    name = run.extractions_dir / "mine.json"
    if kind == "folder":
        name.mkdir()
    else:
        name.symlink_to(target)
    res, _ = _import(cli, run, tmp_path, _response([_char(START, END)]), "--name", "mine")
    assert res.status == 2 and len(res.err_lines) == 1, res.err
    assert name.is_symlink() or name.is_dir()
    assert (not target.exists()) if kind == "dangling" else (kind == "folder" or target.read_text() == "{}")


@pytest.mark.parametrize(
    "evidence_id", ["pmid:1\rpmid:2", "pmid:1\u2028x", "pmid:\x1b[2J1", "pmid:1\tx", " ", "x" * 201]
)
def test_an_evidence_id_of_more_than_one_printable_line_is_refused(
    run: Run, tmp_path: Path, cli: Cli, evidence_id: str
) -> None:
    res, _ = _import(cli, run, tmp_path, _response([_char(START, END)]), "--evidence-id", evidence_id)
    assert res.status == 2 and len(res.err_lines) == 1 and "--evidence-id" in res.err, res.err
    assert not run.extractions_dir.exists() or not any(run.extractions_dir.iterdir())


def _paged(run: Run) -> tuple[str, str]:
    """A snapshot of three pages; returns its text and source id."""
    texts = ["Page one: the trial randomised 120 children.", "Page two: SMD -0.41.", "Page three."]
    pages, pos = [], 0
    for number, page in enumerate(texts, start=1):
        pages.append({"page": number, "start": pos, "end": pos + len(page)})
        pos += len(page) + 1
    snap, _ = run.store.put(make_record(text="\n".join(texts), pages=pages))
    return snap.text, snap.source_id


def test_page_searches_are_bounded_before_they_run(
    run: Run, tmp_path: Path, cli: Cli, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each page_location citation searches its pages for its quote: a response of thousands over a
    long text's pages would search for minutes. Their total is refused up front (SCHEMA_ERROR, exit
    2, nothing written); the same citation repeated counts once."""
    from publisher.gate import citations

    text, sid = _paged(run)
    path = tmp_path / "pages.json"

    def page(cited: str, first: int = 1, last: int = 4) -> dict[str, Any]:
        return {
            "type": "page_location",
            "cited_text": cited,
            "document_index": 0,
            "start_page_number": first,
            "end_page_number": last,
        }

    monkeypatch.setattr(citations, "PAGE_SEARCH_BUDGET", 3 * len(text), raising=False)
    args = ("import", "anthropic", "--run-dir", run.path, "--response", path, "--document", f"0={sid}", "--json")
    path.write_text(json.dumps(_response([page("SMD -0.41")] * 50)), encoding="utf-8")
    res = cli(*args)
    assert res.status == 0 and res.json()["kept"] == 50, res.err  # one distinct search, well within
    many = [page(f"absent {i}") for i in range(4)] + [page("nowhere", 10**9, 10**12), page("x", -5, 2)]
    path.write_text(json.dumps(_response(many)), encoding="utf-8")
    res = cli(*args, "--name", "other")
    assert res.status == 2 and res.json()["error"]["reason_code"] == "SCHEMA_ERROR" and len(res.err_lines) == 1
    assert "page_location" in res.err and not (run.extractions_dir / "other.json").exists()
    path.write_text(json.dumps(_response(many[2:])), encoding="utf-8")
    outcomes = cli(*args, "--name", "other").json()["citations"]
    assert [c["reason_code"] for c in outcomes] == ["EXCERPT_MISMATCH"] * 2 + ["SPAN_OUT_OF_RANGE"] * 2


@pytest.mark.parametrize(
    ("second", "agrees"),
    [
        ({"pmid": None, "doi": "10.1/x", "pmcid": None}, True),  # the same DOI: one paper, named by the PMID
        ({"pmid": None, "doi": None, "pmcid": "PMC9"}, False),  # no id in common: cannot tell
        ({"pmid": "2", "doi": "10.1/x", "pmcid": None}, False),  # one DOI, two PMIDs: two papers
    ],
)
def test_documents_agree_on_a_paper_when_their_ids_do(
    run: Run, tmp_path: Path, cli: Cli, second: dict[str, str | None], agrees: bool
) -> None:
    a, _ = run.store.put(
        make_record(url="https://x.org/a", text=TEXT, paper={"pmid": "1", "doi": "10.1/x", "pmcid": None})
    )
    b, _ = run.store.put(make_record(url="https://x.org/b", text=TEXT, paper=second))
    path = tmp_path / "r.json"
    path.write_text(json.dumps(_response([_char(START, END), _char(START, END, doc=1)])), encoding="utf-8")
    docs = ("--document", f"0={a.source_id}", "--document", f"1={b.source_id}")
    res = cli("import", "anthropic", "--run-dir", run.path, "--response", path, *docs, "--json")
    if agrees:
        assert res.status == 0 and res.json()["evidence_id"] == "pmid:1" and res.json()["kept"] == 2, res.err
    else:
        error = res.json()["error"]
        assert res.status == 2 and len(res.err_lines) == 1 and "different papers" in error["message"]
        assert (error["field"], error["source_id"]) == ("--document", b.source_id)
        assert not run.extractions_dir.exists() or not any(run.extractions_dir.iterdir())


def test_a_paper_id_cannot_drive_the_terminal(run: Run, tmp_path: Path, cli: Cli) -> None:
    """The evidence id derived from a snapshot's paper ids is shown escaped in the text output."""
    paper = {"pmid": None, "doi": "10.1/\x1b[2J\rx\u202e", "pmcid": None}
    snap, _ = run.store.put(make_record(text=TEXT, paper=paper))
    path = tmp_path / "r.json"
    path.write_text(json.dumps(_response([_char(START, END)])), encoding="utf-8")
    res = cli("import", "anthropic", "--run-dir", run.path, "--response", path, "--document", f"0={snap.source_id}")
    assert res.status == 0, res.err
    assert not any(c in res.out for c in "\x1b\r\u202e") and "10.1/\\x1b[2J\\x0dx\\u202e" in res.out, res.out


def test_a_snapshot_that_does_not_verify_stops_the_import(run: Run, tmp_path: Path, cli: Cli) -> None:
    """A mapped snapshot whose text was edited after sealing (to make a citation re-slice) is an
    integrity finding: one line, exit 1, no record."""
    snap, _ = run.store.put(make_record(text=TEXT))
    stored = run.sources_dir / f"{snap.source_id}.json"
    data = json.loads(stored.read_text(encoding="utf-8"))
    data["text"] = data["text"].replace("120", "999")
    os.chmod(stored, 0o644)
    stored.write_text(json.dumps(data), encoding="utf-8")
    path = tmp_path / "r.json"
    cited = QUOTE.replace("120", "999")
    path.write_text(json.dumps(_response([_char(START, END, cited=cited)])), encoding="utf-8")
    res = cli(
        "import", "anthropic", "--run-dir", run.path, "--response", path, "--document", f"0={snap.source_id}", "--json"
    )
    assert res.status == 1 and len(res.err_lines) == 1, res.err
    assert res.json()["error"]["reason_code"] == "SNAPSHOT_HASH_MISMATCH", res.out
    assert not run.extractions_dir.exists() or not any(run.extractions_dir.iterdir())
