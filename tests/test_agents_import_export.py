"""``publisher import anthropic`` and ``publisher export annotations``.

The import: a Messages API response with one exact, one altered and one shifted citation keeps
only the exact one (the others are reported with the locator's candidates), and the record it
writes is accepted by the real assembler. The export: every selector of every annotation slices
back out of its snapshot, astral characters included.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from _gate_helpers import make_run
from _policy import options_of, policy_of
from _wiki_helpers import Claim, RunBuilder, make_wiki, sample_run
from conftest import CliResult, make_record

from publisher.gate.assemble import assemble_run
from publisher.kernel.store import read_snapshot
from publisher.runs import Run
from publisher.wiki.annotations import AFFIX, CONTEXT, AnnotationsRefused, export_annotations, snapshot_uri

Cli = Callable[..., CliResult]


def _response(blocks: list[dict[str, Any]], message_id: str = "msg_01TestImport") -> dict[str, Any]:
    return {
        "id": message_id,
        "type": "message",
        "role": "assistant",
        "model": "claude-test",
        "content": blocks,
        "stop_reason": "end_turn",
        "usage": {"input_tokens": 1, "output_tokens": 1},
    }


def _char(doc: int, text: str, start: int, end: int, cited: str | None = None) -> dict[str, Any]:
    return {
        "type": "char_location",
        "cited_text": text[start:end] if cited is None else cited,
        "document_index": doc,
        "document_title": "an article",
        "start_char_index": start,
        "end_char_index": end,
    }


def _write(path: Path, data: Any) -> Path:
    path.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
    return path


def _import(cli: Cli, run: Run, response: Path, *docs: str, more: tuple[str, ...] = ()) -> CliResult:
    args: list[Any] = ["import", "anthropic", "--run-dir", run.path, "--response", response]
    for doc in docs:
        args += ["--document", doc]
    return cli(*args, *more, "--json")


def test_exact_altered_and_shifted_citations(tmp_path: Path, cli: Cli) -> None:
    fx = make_run(tmp_path, articles=1, report=False, appraisals=False)
    article = fx.articles[0]
    fx.extractions[0].unlink()  # the imported record stands in for the agent's own
    text, sid = article.text, article.source_id
    one, two = article.spans[0], article.spans[1 % len(article.spans)]
    s, e = one["start"], one["end"]
    altered = text[s:e].replace(" ", "  ", 1) + " (emphasis added)"
    blocks = [
        {"type": "text", "text": "Before the claim, "},
        {"type": "text", "text": "The outcome improved.", "citations": [_char(0, text, s, e)]},
        {"type": "text", "text": "An altered quote.", "citations": [_char(0, text, s, e, cited=altered)]},
        {
            "type": "text",
            "text": "A shifted quote.",
            "citations": [_char(0, text, two["start"] + 7, two["end"] + 7, cited=text[two["start"] : two["end"]])],
        },
        {"type": "tool_use", "id": "t1", "name": "x", "input": {}},
    ]
    response = _write(tmp_path / "response.json", _response(blocks))
    sources_before = {p.name: p.read_bytes() for p in fx.run.sources_dir.iterdir()}
    events_before = fx.run.events_path.read_bytes()
    res = _import(cli, fx.run, response, f"0={sid}")
    assert res.status == 1, res.err  # not every citation was kept
    out = res.json()
    assert out["kept"] == 1 and out["rejected"] == 2 and out["written"] is True
    assert out["evidence_id"] == article.evidence_id
    kept, altered_c, shifted = out["citations"]
    assert (kept["kept"], kept["start"], kept["end"], kept["reason_code"]) == (True, s, e, None)
    assert altered_c["reason_code"] == "EXCERPT_MISMATCH" and not altered_c["kept"]
    assert shifted["reason_code"] == "EXCERPT_MISMATCH" and not shifted["kept"]
    # the shifted citation's quote is located where it really is: the suggestion, never the span
    assert {"kind": "exact", "start": two["start"], "end": two["end"]} in shifted["candidates"]
    assert shifted["located"] == "LOCATED" and kept["located"] is None
    record = json.loads((fx.run.path / out["record"]).read_text(encoding="utf-8"))
    assert [(sp["source_id"], sp["start"], sp["end"]) for sp in record["spans"]] == [(sid, s, e)]
    assert record["spans"][0]["claim"] == "The outcome improved." and record["evidence_id"] == article.evidence_id
    # no snapshot or event was written; the record passes the real gate
    assert {p.name: p.read_bytes() for p in fx.run.sources_dir.iterdir()} == sources_before
    assert fx.run.events_path.read_bytes() == events_before
    assembly = assemble_run(fx.run, options_of(fx.run))
    assert assembly.findings == []
    assert [a["artifact_id"] for a in assembly.result["accepted"]] == [f"extraction:{article.evidence_id}"]
    # importing the same response again leaves the record as it is
    again = _import(cli, fx.run, response, f"0={sid}")
    assert again.json()["written"] is False and again.json()["record"] == out["record"]


def test_every_citation_kept_exits_zero(tmp_path: Path, cli: Cli) -> None:
    fx = make_run(tmp_path, articles=1, report=False, appraisals=False)
    article = fx.articles[0]
    text = article.text
    cites = [_char(0, text, sp["start"], sp["end"]) for sp in article.spans[:2]]
    response = _write(tmp_path / "r.json", _response([{"type": "text", "text": "Claim.", "citations": cites}]))
    res = _import(cli, fx.run, response, f"0={article.source_id}", more=("--name", "imported"))
    assert res.status == 0 and res.json()["ok"] is True
    assert (fx.run.extractions_dir / "imported.json").is_file()


def test_page_locations_resolve_through_the_page_map(run: Run, tmp_path: Path, cli: Cli) -> None:
    pages_text = ["Page one says little.", "Page two: the effect was 0.41 \U0001d45d < 0.05.", "Page three repeats."]
    sep = "\n\f\n"
    text = sep.join(pages_text)
    pages, pos = [], 0
    for number, page in enumerate(pages_text, start=1):
        pages.append({"page": number, "start": pos, "end": pos + len(page)})
        pos += len(page) + len(sep)
    snap, _ = run.store.put(make_record(text=text, pages=pages))
    cited = "the effect was 0.41 \U0001d45d < 0.05"
    good = {"type": "page_location", "cited_text": cited, "document_index": 0, "start_page_number": 2}
    blocks = [
        {"type": "text", "text": "Effect.", "citations": [good | {"end_page_number": 3}]},
        {"type": "text", "text": "Wrong page.", "citations": [good | {"start_page_number": 1, "end_page_number": 2}]},
        {"type": "text", "text": "No such page.", "citations": [good | {"start_page_number": 3, "end_page_number": 9}]},
        {"type": "text", "text": "Other doc.", "citations": [good | {"document_index": 4, "end_page_number": 3}]},
        {
            "type": "text",
            "text": "Twice.",
            "citations": [good | {"cited_text": "Page", "start_page_number": 1, "end_page_number": 4}],
        },
    ]
    res = _import(cli, run, _write(tmp_path / "p.json", _response(blocks)), f"0={snap.source_id}")
    assert res.status == 1
    outcomes = res.json()["citations"]
    start = text.index(cited)
    assert (outcomes[0]["kept"], outcomes[0]["start"], outcomes[0]["end"]) == (True, start, start + len(cited))
    assert text[start : start + len(cited)] == cited
    codes = [c["reason_code"] for c in outcomes[1:]]
    assert codes == ["EXCERPT_MISMATCH", "SPAN_OUT_OF_RANGE", "UNKNOWN_SOURCE", "EXCERPT_MISMATCH"]
    assert len(outcomes[4]["candidates"]) == 3  # "Page" on each page: ambiguous, never guessed
    assert outcomes[1]["candidates"] == [{"kind": "exact", "start": start, "end": start + len(cited)}]


def test_a_page_location_on_a_snapshot_without_pages_is_refused(run: Run, tmp_path: Path, cli: Cli) -> None:
    snap, _ = run.store.put(make_record())
    cit = {"type": "page_location", "cited_text": "SMD", "document_index": 0, "start_page_number": 1}
    blocks = [{"type": "text", "text": "x", "citations": [cit | {"end_page_number": 2}]}]
    res = _import(cli, run, _write(tmp_path / "p.json", _response(blocks)), f"0={snap.source_id}")
    assert res.status == 1 and res.json()["citations"][0]["reason_code"] == "SCHEMA_ERROR"
    assert res.json()["written"] is False and not any(run.extractions_dir.iterdir())


def test_locating_rejected_citations_is_bounded(run: Run, tmp_path: Path, cli: Cli, monkeypatch: pytest.MonkeyPatch):
    # A hostile response of thousands of mismatched citations must not cost a normalisation of the
    # whole snapshot (and a search of it) for each one.
    from publisher.gate import citations
    from publisher.kernel import locate as locator

    snap, _ = run.store.put(make_record())
    text = snap.text
    normalised = [0]
    real_map = locator.normalize_map

    def counted_map(value: str, **kwargs: Any) -> Any:
        normalised[0] += len(value) >= len(text)
        return real_map(value, **kwargs)

    monkeypatch.setattr(locator, "normalize_map", counted_map)
    monkeypatch.setattr(citations, "normalize_map", counted_map, raising=False)
    many = citations.MAX_LOCATED + 20
    cites = [_char(0, text, 0, 10, cited="randomised  120 children") for _ in range(many)]
    cites.append(_char(0, text, 0, 10, cited="x" * (4 * len(text))))
    blocks = [{"type": "text", "text": "Claim.", "citations": cites}]
    res = _import(cli, run, _write(tmp_path / "many.json", _response(blocks)), f"0={snap.source_id}")
    assert res.status == 1
    outcomes = res.json()["citations"]
    assert [c["reason_code"] for c in outcomes] == ["EXCERPT_MISMATCH"] * (many + 1)
    located = [c for c in outcomes if c["candidates"]]
    assert len(located) == citations.MAX_LOCATED
    assert located[0]["candidates"][0]["kind"] == "normalized"
    assert all(not c["candidates"] for c in outcomes[citations.MAX_LOCATED :])
    # why the rest name no candidate: the limit was reached
    beyond = many + 1 - citations.MAX_LOCATED
    assert [c["located"] for c in outcomes] == ["LOCATED"] * citations.MAX_LOCATED + ["OVER_LIMIT"] * beyond
    assert normalised[0] <= 1


@pytest.mark.parametrize(
    "document",
    ["0=../../etc/passwd", "x=src-" + "0" * 64, "0=src-" + "A" * 64, "0=" + "src-" + "0" * 63],
)
def test_bad_document_options_are_usage_errors(run: Run, tmp_path: Path, cli: Cli, document: str) -> None:
    res = _import(cli, run, _write(tmp_path / "r.json", _response([])), document)
    assert res.status == 2 and len(res.err_lines) == 1


CITED = b'{"content": [{"type": "text", "text": "a", "citations": [%s]}]}'


@pytest.mark.parametrize(
    "body",
    [
        b"{not json",
        b'{"content": [], "content": []}',
        CITED % b'{"type": "char_location", "document_index": "0"}',
        b'{"content": "text"}',
        b"[]",
        CITED % b'{"type": "char_location", "start_char_index": NaN}',
        CITED % b'{"type": "char_location", "document_index": -1}',
    ],
)
def test_malformed_responses_are_refused_whole(run: Run, tmp_path: Path, cli: Cli, body: bytes) -> None:
    snap, _ = run.store.put(make_record())
    path = tmp_path / "bad.json"
    path.write_bytes(body)
    res = _import(cli, run, path, f"0={snap.source_id}")
    assert res.status == 2 and res.json()["error"]["reason_code"] == "SCHEMA_ERROR" and len(res.err_lines) == 1
    assert not any(run.extractions_dir.iterdir())


def test_a_fifo_or_missing_response_is_refused(run: Run, tmp_path: Path, cli: Cli) -> None:
    snap, _ = run.store.put(make_record())
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    for path in (fifo, tmp_path / "missing.json", tmp_path):
        res = _import(cli, run, path, f"0={snap.source_id}")
        assert res.status == 2 and len(res.err_lines) == 1


def test_an_existing_record_of_another_content_is_never_replaced(run: Run, tmp_path: Path, cli: Cli) -> None:
    text = "Background. The trial randomised 120 children.\nResults: SMD -0.41."
    snap, _ = run.store.put(make_record(text=text))
    blocks = [{"type": "text", "text": "c", "citations": [_char(0, text, 12, 46)]}]
    (run.extractions_dir / "mine.json").write_text("{}", encoding="utf-8")
    res = _import(
        cli, run, _write(tmp_path / "r.json", _response(blocks)), f"0={snap.source_id}", more=("--name", "mine")
    )
    assert res.status == 2 and (run.extractions_dir / "mine.json").read_text() == "{}"
    res = _import(
        cli, run, _write(tmp_path / "r.json", _response(blocks)), f"0={snap.source_id}", more=("--name", "../x")
    )
    assert res.status == 2


def test_documents_of_two_papers_need_one_import_each(run: Run, tmp_path: Path, cli: Cli) -> None:
    a, _ = run.store.put(make_record(url="https://x.org/a", paper={"pmid": "1", "doi": None, "pmcid": None}))
    b, _ = run.store.put(make_record(url="https://x.org/b", paper={"pmid": "2", "doi": None, "pmcid": None}))
    res = _import(
        cli, run, _write(tmp_path / "r.json", _response([])), f"0={a.source_id}", f"1={b.source_id}", more=("--json",)
    )
    error = res.json()["error"]  # the option at fault and the first document of another paper
    assert res.status == 2 and (error["field"], error["source_id"]) == ("--document", b.source_id), error
    assert not run.extractions_dir.exists() or os.listdir(run.extractions_dir) == []


# -- export ---------------------------------------------------------------------------------------

ASTRAL = "Astral \U0001f600 and \U0001d45d = 0.04 (\U00010348) beside \u00e9 and e\u0301. "


def _astral_wiki(tmp_path: Path) -> tuple[Path, RunBuilder]:
    wiki = make_wiki(tmp_path / "wiki")
    rb = sample_run(wiki)
    text = ASTRAL * 3 + "The finding \U0001f9ea held at \U0001d45d < 0.05 in 120 children. " + ASTRAL
    sid = rb.source("https://example.org/astral", text, paper={"pmid": "333", "doi": None, "pmcid": None})
    start = text.index("The finding")
    end = text.index("children.") + len("children.")
    rb.extraction(
        "pmid:333", [Claim("spans[0]", "Held in children.", sid, start, end), Claim("spans[1]", None, sid, 0, 6)]
    )
    rb.assemble()
    return wiki, rb


def test_export_selectors_slice_back_out_of_the_snapshots(tmp_path: Path, cli: Cli) -> None:
    wiki, rb = _astral_wiki(tmp_path)
    out = tmp_path / "annotations.jsonld"
    res = cli("export", "annotations", "--wiki", wiki, "--out", out)
    assert res.status == 0, res.err
    data = json.loads(out.read_text(encoding="utf-8"))
    assert data["@context"] == CONTEXT and data["type"] == "AnnotationCollection"
    items = data["first"]["items"]
    assert data["total"] == len(items) >= 5 and data["first"]["type"] == "AnnotationPage"
    assert data["first"]["partOf"] == data["id"]
    ids = [a["id"] for a in items]
    assert len(set(ids)) == len(ids) and all(i.startswith("urn:uuid:") for i in ids)
    texts = {sid: read_snapshot(rb.run.sources_dir, sid) for sid in rb.texts}
    urls = {snap.url: snap for snap in texts.values()}
    astral_seen = False
    for item in items:
        assert item["type"] == "Annotation" and item["@context"] == CONTEXT  # the model's MUST properties
        target = item["target"]
        snap = urls[target["via"]]  # the page it was fetched from; the target is the snapshot itself
        assert target["source"] == snapshot_uri(snap.source_id, snap.content_hash)
        pos, quote = target["selector"]
        assert pos["type"] == "TextPositionSelector" and quote["type"] == "TextQuoteSelector"
        start, end = pos["start"], pos["end"]
        assert snap.text[start:end] == quote["exact"]
        assert snap.text[max(0, start - AFFIX) : start] == quote["prefix"]
        assert snap.text[end : end + AFFIX] == quote["suffix"]
        assert len(quote["prefix"]) == min(AFFIX, start) and len(quote["suffix"]) == min(AFFIX, len(snap.text) - end)
        # the quote with its context occurs in the text exactly where the position says
        assert snap.text.index(
            quote["prefix"] + quote["exact"] + quote["suffix"], max(0, start - AFFIX)
        ) == start - len(quote["prefix"])
        astral_seen |= any(ord(ch) > 0xFFFF for ch in quote["exact"] + quote["prefix"] + quote["suffix"])
    assert astral_seen
    held = next(a for a in items if "finding" in a["target"]["selector"][1]["exact"])
    assert held["body"][0]["value"] == "Held in children."
    # stable ids: a second export is byte-identical; a base URI gives resolvable ids
    again = cli("export", "annotations", "--wiki", wiki)
    assert again.status == 0 and json.loads(again.out) == data
    based = cli("export", "annotations", "--wiki", wiki, "--base", "https://wiki.example.org/annotations/")
    assert all(a["id"].startswith("https://wiki.example.org/annotations/src-") for a in based.json()["first"]["items"])
    sited = cli("export", "annotations", "--wiki", wiki, "--site", "https://wiki.example.org/")
    for item in sited.json()["first"]["items"]:
        assert re.fullmatch(r"https://wiki\.example\.org/sources/src-[0-9a-f]{64}/", item["target"]["source"])
        assert item["target"]["via"] in urls


def test_export_refuses_a_wiki_that_does_not_check(tmp_path: Path, cli: Cli) -> None:
    wiki, rb = _astral_wiki(tmp_path)
    result = rb.run.result_path
    os.chmod(result, 0o644)
    data = json.loads(result.read_text(encoding="utf-8"))
    data["accepted"][0]["claims"][0]["excerpt"] += "!"
    result.write_text(json.dumps(data), encoding="utf-8")
    out = tmp_path / "a.jsonld"
    res = cli("export", "annotations", "--wiki", wiki, "--out", out)
    assert res.status == 1 and not out.exists()
    with pytest.raises(AnnotationsRefused) as refused:  # the refusal carries the wiki check's findings
        export_annotations(wiki, policy=policy_of(wiki))
    found = {(f.code, f.file, f.field) for f in refused.value.findings}
    assert ("EXCERPT_MISMATCH", "runs/alpha/outputs/result.json", "claims[0]") in found, found
    assert cli("export", "annotations", "--wiki", tmp_path / "nowhere").status == 2
    assert cli("export", "annotations", "--wiki", wiki, "--base", "not a uri").status == 2


@pytest.mark.parametrize("linked", ["workspace", "workspace/extractions"])
def test_an_import_never_writes_through_a_linked_workspace(tmp_path: Path, cli: Cli, linked: str) -> None:
    """The record goes into ``workspace/extractions/``: a link in place of that folder, or of the
    ``workspace/`` holding it, would put it wherever the link points. Refused, nothing written."""
    fx = make_run(tmp_path, articles=1, report=False, appraisals=False)
    article = fx.articles[0]
    cites = [_char(0, article.text, sp["start"], sp["end"]) for sp in article.spans[:1]]
    response = _write(tmp_path / "r.json", _response([{"type": "text", "text": "Claim.", "citations": cites}]))
    folder = fx.run.path / linked
    outside = tmp_path / "outside"
    folder.rename(outside)
    folder.symlink_to(outside)
    names = sorted(p.name for p in outside.rglob("*"))
    res = _import(cli, fx.run, response, f"0={article.source_id}", more=("--name", "imported"))
    assert res.status == 2, res.err
    assert sorted(p.name for p in outside.rglob("*")) == names
