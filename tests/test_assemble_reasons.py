"""One attack per reason code, on records built over real corpus texts.

Each test starts from a fully valid run, breaks one thing, and asserts the reason code, the
artifact and the field of the finding: the rest of the run stays accepted.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from _gate_helpers import RunFixture, make_run, write_json
from _policy import options_of

from publisher.gate.assemble import Assembly, assemble_run
from publisher.kernel.canonical import format_ts, utc_now
from publisher.kernel.eventlog import append_event
from publisher.kernel.reasons import Reason
from publisher.kernel.refs import format_ref
from publisher.kernel.store import build_record

ZERO_ID = "src-" + "0" * 64


def found(assembly: Assembly, artifact_id: str | None = None) -> set[tuple[str, str]]:
    """(reason code, field) of the findings, optionally of one artifact."""
    return {(f.code, f.field) for f in assembly.findings if artifact_id is None or f.artifact_id == artifact_id}


def codes(assembly: Assembly) -> set[str]:
    return {f.code for f in assembly.findings}


def ext_id(fx: RunFixture, index: int = 0) -> str:
    return f"extraction:{fx.articles[index].evidence_id}"


def edit_extraction(fx: RunFixture, index: int, change: Any) -> None:
    record = fx.extraction(index)
    change(record)
    fx.put_extraction(index, record)


def assert_only(assembly: Assembly, artifact_id: str) -> None:
    """Only ``artifact_id`` is unresolved; everything else stays accepted."""
    assert {f.artifact_id for f in assembly.findings} == {artifact_id}
    counts = assembly.result["counts"]
    assert counts["unresolved"] == 1 and counts["accepted"] == counts["artifacts_seen"] - 1


def test_unknown_source(tmp_path: Path) -> None:
    fx = make_run(tmp_path, report=False)
    edit_extraction(fx, 0, lambda r: r["spans"][0].update(source_id=ZERO_ID))
    assembly = assemble_run(fx.run, options_of(fx.run))
    assert found(assembly) == {("UNKNOWN_SOURCE", "spans[0]")}
    assert_only(assembly, ext_id(fx))
    assert {s["source_id"]: s["status"] for s in assembly.result["sources"]}[ZERO_ID] == "UNKNOWN_SOURCE"


def test_malformed_source_id_is_unknown_source(tmp_path: Path) -> None:
    fx = make_run(tmp_path, report=False)
    edit_extraction(fx, 0, lambda r: r["outcomes"][0]["spans"][0].update(source_id="src-ABC"))
    assert found(assemble_run(fx.run, options_of(fx.run))) == {("UNKNOWN_SOURCE", "outcomes[0].spans[0]")}


def test_snapshot_hash_mismatch_for_a_tampered_snapshot(tmp_path: Path) -> None:
    fx = make_run(tmp_path)
    path = fx.snapshot_file(0)
    raw = json.loads(path.read_bytes())
    raw["text"] = raw["text"].replace("the", "teh", 1)
    write_json(path, raw)
    assembly = assemble_run(fx.run, options_of(fx.run))
    assert found(assembly, ext_id(fx)) == {
        ("SNAPSHOT_HASH_MISMATCH", "spans[0]"),
        ("SNAPSHOT_HASH_MISMATCH", "outcomes[0].spans[0]"),
        ("SNAPSHOT_HASH_MISMATCH", "outcomes[1].spans[0]"),
    }
    assert found(assembly, "report:url0") == {("SNAPSHOT_HASH_MISMATCH", "links[0]")}
    assert found(assembly, "report:pmc0") == {("SOURCE_OUTSIDE_ACCEPTED", "paper_ids")}
    hit = {f.artifact_id for f in assembly.findings if f.code == "SNAPSHOT_HASH_MISMATCH"}
    assert hit == {ext_id(fx), f"appraisal:{fx.articles[0].evidence_id}", "report:a0", "report:url0"}
    assert fx.articles[1].evidence_id in {a["evidence_id"] for a in assembly.result["accepted"]}


def test_snapshot_metadata_edit_breaks_the_seal(tmp_path: Path) -> None:
    fx = make_run(tmp_path, report=False, appraisals=False)
    path = fx.snapshot_file(0)
    raw = json.loads(path.read_bytes())
    raw["access"] = "abstract"
    write_json(path, raw)
    assembly = assemble_run(fx.run, options_of(fx.run))
    assert codes(assembly) == {"SNAPSHOT_HASH_MISMATCH"}
    assert {f.artifact_id for f in assembly.findings} == {ext_id(fx)}


def test_span_out_of_range(tmp_path: Path) -> None:
    fx = make_run(tmp_path, report=False)
    length = len(fx.articles[0].text)
    edit_extraction(fx, 0, lambda r: r["spans"][0].update(start=length - 5, end=length + 1))
    assembly = assemble_run(fx.run, options_of(fx.run))
    assert found(assembly) == {("SPAN_OUT_OF_RANGE", "spans[0]")}
    assert_only(assembly, ext_id(fx))


def test_span_out_of_range_for_empty_and_negative_spans(tmp_path: Path) -> None:
    fx = make_run(tmp_path, report=False)

    def change(r: dict[str, Any]) -> None:
        r["spans"][0].update(start=10, end=10)
        r["outcomes"][0]["spans"][0].update(start=-1)

    edit_extraction(fx, 0, change)
    assert found(assemble_run(fx.run, options_of(fx.run))) == {
        ("SPAN_OUT_OF_RANGE", "spans[0]"),
        ("SPAN_OUT_OF_RANGE", "outcomes[0].spans[0]"),
    }


def test_span_too_long(tmp_path: Path) -> None:
    fx = make_run(tmp_path, report=False)
    edit_extraction(fx, 0, lambda r: r["spans"][0].update(start=0, end=2001))
    assembly = assemble_run(fx.run, options_of(fx.run))
    assert found(assembly) == {("SPAN_TOO_LONG", "spans[0]")}
    edit_extraction(fx, 0, lambda r: r["spans"][0].update(start=0, end=2000))
    assert assemble_run(fx.run, options_of(fx.run)).findings == []


def test_excerpt_mismatch_in_a_record_span(tmp_path: Path) -> None:
    fx = make_run(tmp_path, report=False)
    edit_extraction(
        fx, 0, lambda r: r["outcomes"][0]["spans"][0].update(text=r["outcomes"][0]["spans"][0]["text"] + " ")
    )
    assembly = assemble_run(fx.run, options_of(fx.run))
    assert found(assembly) == {("EXCERPT_MISMATCH", "outcomes[0].spans[0]")}
    assert_only(assembly, ext_id(fx))


def test_shifted_span_with_its_quote_is_an_excerpt_mismatch(tmp_path: Path) -> None:
    fx = make_run(tmp_path, report=False)
    span = fx.articles[0].spans[1]
    edit_extraction(fx, 0, lambda r: r["outcomes"][0]["spans"][0].update(start=span["start"] + 1, end=span["end"] + 1))
    assert found(assemble_run(fx.run, options_of(fx.run))) == {("EXCERPT_MISMATCH", "outcomes[0].spans[0]")}


def test_excerpt_mismatch_in_a_report_footnote(tmp_path: Path) -> None:
    fx = make_run(tmp_path)
    article = fx.articles[0]
    span = article.spans[0]
    good = format_ref(article.source_id, span["start"], span["end"], span["excerpt"])
    bad = format_ref(article.source_id, span["start"], span["end"], span["excerpt"].replace("the", "a", 1) + "!")
    fx.report.write_text(fx.report.read_text().replace(good, bad))
    assembly = assemble_run(fx.run, options_of(fx.run))
    assert found(assembly) == {("EXCERPT_MISMATCH", "spans[0]")}
    assert_only(assembly, "report:a0")


def test_legacy_quote_is_compared_then_discarded(tmp_path: Path) -> None:
    fx = make_run(tmp_path, report=False)
    span = fx.articles[0].spans[0]
    sid = fx.articles[0].source_id
    quote = {"source_id": sid, "start": span["start"], "end": span["end"], "text": span["excerpt"]}
    edit_extraction(fx, 0, lambda r: r.update(quotes=[quote, "free text quote, discarded"]))
    assembly = assemble_run(fx.run, options_of(fx.run))
    assert assembly.findings == []
    assert {w["field"] for w in assembly.result["diagnostics"]["warnings"]} == {"quotes"}
    edit_extraction(fx, 0, lambda r: r.update(quotes=[dict(quote, text="Invented words.")]))
    assert found(assemble_run(fx.run, options_of(fx.run))) == {("EXCERPT_MISMATCH", "quotes[0]")}


def test_no_spans_where_a_record_owes_them(tmp_path: Path) -> None:
    fx = make_run(tmp_path, report=False)

    def change(r: dict[str, Any]) -> None:
        r["spans"] = []
        r["outcomes"][0]["spans"] = []

    edit_extraction(fx, 0, change)
    appraisal = fx.appraisal(0)
    appraisal["domains"][0]["spans"] = []
    fx.put_appraisal(0, appraisal)
    assembly = assemble_run(fx.run, options_of(fx.run))
    assert found(assembly, ext_id(fx)) == {("NO_SPANS", "spans"), ("NO_SPANS", "outcomes[0].spans")}
    assert found(assembly, f"appraisal:{fx.articles[0].evidence_id}") == {
        ("NO_SPANS", "domains[0].spans"),
    }


def test_unclear_judgement_and_null_fields_owe_no_spans(tmp_path: Path) -> None:
    fx = make_run(tmp_path, report=False)

    def change(r: dict[str, Any]) -> None:
        for name in ("design", "intervention", "comparator"):
            r[name] = None
        r["spans"] = []

    edit_extraction(fx, 0, change)
    assert assemble_run(fx.run, options_of(fx.run)).findings == []


def test_record_without_any_span_is_no_spans(tmp_path: Path) -> None:
    fx = make_run(tmp_path, report=False)
    appraisal = fx.appraisal(0)
    appraisal["domains"] = [dict(d, judgement="unclear", spans=[]) for d in appraisal["domains"]]
    fx.put_appraisal(0, appraisal)
    assert found(assemble_run(fx.run, options_of(fx.run))) == {("NO_SPANS", "spans")}


def test_url_not_retrieved(tmp_path: Path) -> None:
    fx = make_run(tmp_path)
    text = fx.report.read_text() + "Unfetched.[^web]\n\n[^web]: [a page](https://example.org/never-fetched)\n"
    fx.report.write_text(text)
    assembly = assemble_run(fx.run, options_of(fx.run))
    assert found(assembly) == {("URL_NOT_RETRIEVED", "links[0]")}
    assert_only(assembly, "report:web")


def test_registered_url_is_not_retrieved(tmp_path: Path) -> None:
    fx = make_run(tmp_path)
    snap = fx.add_snapshot("Registered text.", url="https://example.org/registered", event="register", fresh=False)
    fx.report.write_text(fx.report.read_text() + f"X.[^reg]\n\n[^reg]: [page]({snap.url})\n")
    assert found(assemble_run(fx.run, options_of(fx.run)), "report:reg") == {("URL_NOT_RETRIEVED", "links[0]")}


def test_no_fresh_fetch_for_a_registered_source(tmp_path: Path) -> None:
    fx = make_run(tmp_path, report=False)
    article = fx.articles[0]
    snap = fx.add_snapshot(
        article.text, url="https://mirror.example/copy", paper={"pmcid": article.pmcid}, event="register", fresh=False
    )
    edit_extraction(fx, 0, lambda r: r["spans"].append(article.span(0, source_id=snap.source_id, access="web")))
    assembly = assemble_run(fx.run, options_of(fx.run))
    assert found(assembly) == {("NO_FRESH_FETCH", "spans[1]")}
    source = {s["source_id"]: s for s in assembly.result["sources"]}[snap.source_id]
    assert source["fresh"] is False and source["fresh_event_id"] is None


def test_no_fresh_fetch_for_events_before_the_run(tmp_path: Path) -> None:
    fx = make_run(tmp_path, report=False, appraisals=False)
    config = json.loads(fx.run.config_path.read_text())
    config["created_at"] = "2999-01-01T00:00:00Z"
    fx.run.config_path.chmod(0o644)
    fx.run.config_path.write_text(json.dumps(config))
    assembly = assemble_run(fx.run, options_of(fx.run))
    assert codes(assembly) == {"NO_FRESH_FETCH"}
    assert found(assembly) == {("NO_FRESH_FETCH", "spans[0]")}


def test_unsupported_verdict(tmp_path: Path) -> None:
    fx = make_run(tmp_path)
    write_json(
        fx.run.verifier_path,
        {"unsupported": [{"artifact_id": ext_id(fx, 1), "reason": "overstated"}, {"artifact_id": "report:nope"}]},
    )
    assembly = assemble_run(fx.run, options_of(fx.run))
    assert found(assembly, ext_id(fx, 1)) == {("UNSUPPORTED_VERDICT", "verifier")}
    assert {w["artifact_id"] for w in assembly.result["diagnostics"]["warnings"]} == {"report:nope"}


def test_source_outside_accepted_for_a_span_reference(tmp_path: Path) -> None:
    fx = make_run(tmp_path)
    other = fx.add_snapshot("A web page that backs no record of this run.", url="https://example.org/other")
    ref = format_ref(other.source_id, 0, 10)
    fx.report.write_text(fx.report.read_text() + f"Claim.[^out]\n\n[^out]: {ref}\n")
    assembly = assemble_run(fx.run, options_of(fx.run))
    assert found(assembly) == {("SOURCE_OUTSIDE_ACCEPTED", "spans[0]")}
    assert_only(assembly, "report:out")


def test_source_outside_accepted_when_its_record_is_unresolved(tmp_path: Path) -> None:
    fx = make_run(tmp_path, appraisals=False)
    edit_extraction(fx, 0, lambda r: r["spans"][0].update(access="abstract"))
    assembly = assemble_run(fx.run, options_of(fx.run))
    assert found(assembly, "report:a0") == {("SOURCE_OUTSIDE_ACCEPTED", "spans[0]")}
    assert found(assembly, "report:pmc0") == {("SOURCE_OUTSIDE_ACCEPTED", "paper_ids")}


def test_source_outside_accepted_for_an_upstream_paper_footnote(tmp_path: Path) -> None:
    fx = make_run(tmp_path)
    fx.report.write_text(fx.report.read_text() + "Claim.[^pubmed-1]\n\n[^pubmed-1]: PMID 12345678. DOI 10.1000/x.\n")
    assembly = assemble_run(fx.run, options_of(fx.run))
    assert found(assembly) == {("SOURCE_OUTSIDE_ACCEPTED", "paper_ids")}
    assert_only(assembly, "report:pubmed-1")


def test_no_paper_id_when_the_snapshot_contradicts_the_evidence_id(tmp_path: Path) -> None:
    fx = make_run(tmp_path, report=False)
    edit_extraction(fx, 0, lambda r: r["outcomes"][0]["spans"][0].update(evidence_id="pmcid:PMC1"))
    assembly = assemble_run(fx.run, options_of(fx.run))
    assert found(assembly) == {("NO_PAPER_ID", "outcomes[0].spans[0]")}
    assert_only(assembly, ext_id(fx))


def test_no_paper_id_when_the_snapshot_lacks_the_id(tmp_path: Path) -> None:
    fx = make_run(tmp_path, report=False, appraisals=False)
    article = fx.articles[0]

    def change(r: dict[str, Any]) -> None:
        r["evidence_id"] = "doi:10.1000/Example"
        for span in [r["spans"][0], *(s for o in r["outcomes"] for s in o["spans"])]:
            span["evidence_id"] = "doi:10.1000/Example"

    edit_extraction(fx, 0, change)
    assembly = assemble_run(fx.run, options_of(fx.run))
    assert codes(assembly) == {"NO_PAPER_ID"}
    doi_snap = fx.add_snapshot(
        article.text, url="https://doi.example/x", paper={"doi": "10.1000/EXAMPLE"}, access="full_text"
    )

    def to_doi_snapshot(r: dict[str, Any]) -> None:
        for span in [r["spans"][0], *(s for o in r["outcomes"] for s in o["spans"])]:
            span["source_id"] = doi_snap.source_id

    edit_extraction(fx, 0, to_doi_snapshot)
    assert assemble_run(fx.run, options_of(fx.run)).findings == []


def test_web_evidence_ids_need_no_paper(tmp_path: Path) -> None:
    fx = make_run(tmp_path, report=False, appraisals=False)
    page = fx.add_snapshot("Guidance text for the web claim. " * 5, url="https://example.org/guidance")
    record = {
        "evidence_id": "web:guidance",
        "design": "guidance",
        "spans": [{"source_id": page.source_id, "start": 0, "end": 30}],
    }
    write_json(fx.run.extractions_dir / "web.json", record)
    assembly = assemble_run(fx.run, options_of(fx.run))
    assert assembly.findings == []


def _local_pdf(fx: RunFixture, data: bytes) -> Any:
    digest = hashlib.sha256(data).hexdigest()
    relative = f"assets/papers/{digest}.pdf"
    (fx.wiki / "assets" / "papers").mkdir(parents=True, exist_ok=True)
    (fx.wiki / relative).write_bytes(data)
    text = "Text extracted from a user-supplied PDF about a trial. " * 4
    record = build_record(
        url=(fx.wiki / "paper.pdf").as_uri(),
        text=text,
        title=None,
        retrieved_at=format_ts(utc_now()),
        access="full_text",
        origin="user-supplied-pdf",
        paper=None,
        asset={"path": relative, "sha256": digest, "bytes": len(data)},
        pages=[{"page": 1, "start": 0, "end": len(text)}],
    )
    snap, _ = fx.run.store.put(record)
    append_event(
        fx.run.events_path, type="local_pdf", source_id=snap.source_id, url=snap.url, fresh=True, sha256=digest
    )
    return snap


def test_asset_hash_mismatch(tmp_path: Path) -> None:
    fx = make_run(tmp_path, report=False, appraisals=False)
    snap = _local_pdf(fx, b"%PDF-1.4 test bytes")
    record = {
        "evidence_id": "web:user-pdf",
        "design": "trial",
        "spans": [{"source_id": snap.source_id, "start": 0, "end": 40}],
    }
    write_json(fx.run.extractions_dir / "pdf.json", record)
    good = assemble_run(fx.run, options_of(fx.run))
    assert good.findings == []
    assert next(a for a in good.result["accepted"] if a["evidence_id"] == "web:user-pdf")["claims"][0]["page"] == 1
    (fx.wiki / snap.asset.path).write_bytes(b"%PDF-1.4 other bytes")
    assembly = assemble_run(fx.run, options_of(fx.run))
    assert found(assembly) == {("ASSET_HASH_MISMATCH", "spans[0]")}
    (fx.wiki / snap.asset.path).unlink()
    assert found(assemble_run(fx.run, options_of(fx.run))) == {("ASSET_HASH_MISMATCH", "spans[0]")}


def test_access_mismatch(tmp_path: Path) -> None:
    fx = make_run(tmp_path, report=False)
    edit_extraction(fx, 0, lambda r: r["spans"][0].update(access="abstract"))
    assembly = assemble_run(fx.run, options_of(fx.run))
    assert found(assembly) == {("ACCESS_MISMATCH", "spans[0]")}
    assert_only(assembly, ext_id(fx))


def test_schema_errors_are_each_reported_with_their_field(tmp_path: Path) -> None:
    fx = make_run(tmp_path, report=False)

    def change(r: dict[str, Any]) -> None:
        r["n_total"] = "120"
        r["n_arms"] = [60, "60"]
        r["outcomes"][0]["effect"] = True
        del r["spans"][0]["end"]
        r["outcomes"][1]["spans"][0]["start"] = 1.5

    edit_extraction(fx, 0, change)
    assert found(assemble_run(fx.run, options_of(fx.run))) == {
        ("SCHEMA_ERROR", "n_total"),
        ("SCHEMA_ERROR", "n_arms[1]"),
        ("SCHEMA_ERROR", "outcomes[0].effect"),
        ("SCHEMA_ERROR", "spans[0].end"),
        ("SCHEMA_ERROR", "outcomes[1].spans[0].start"),
    }


def test_schema_error_for_missing_evidence_id_and_bad_json(tmp_path: Path) -> None:
    fx = make_run(tmp_path, report=False)
    edit_extraction(fx, 0, lambda r: r.pop("evidence_id"))
    (fx.run.appraisals_dir / "broken.json").write_text('{"evidence_id": "pmid:1", "evidence_id": "pmid:2"}')
    assembly = assemble_run(fx.run, options_of(fx.run))
    assert found(assembly, f"extraction:{fx.extractions[0].relative_to(fx.run.path)}") == {
        ("SCHEMA_ERROR", "evidence_id")
    }
    assert found(assembly, "appraisal:workspace/appraisals/broken.json") == {("SCHEMA_ERROR", "record")}


def test_schema_error_for_a_malformed_footnote_reference(tmp_path: Path) -> None:
    fx = make_run(tmp_path)
    fx.report.write_text(fx.report.read_text() + "Claim.[^bad]\n\n[^bad]: src-ABC#1-2\n")
    assert found(assemble_run(fx.run, options_of(fx.run))) == {("SCHEMA_ERROR", "spans")}


def test_duplicate_footnote_labels_are_a_schema_error(tmp_path: Path) -> None:
    fx = make_run(tmp_path)
    fx.report.write_text(fx.report.read_text() + "[^a0]: plain note that would override the claim\n")
    assert found(assemble_run(fx.run, options_of(fx.run)), "report:a0") == {
        ("SCHEMA_ERROR", "definitions[1].label"),
        ("SOURCE_OUTSIDE_ACCEPTED", "definitions[1].label"),  # and, as every footnote, it must cite
    }


def test_one_finding_never_hides_another(tmp_path: Path) -> None:
    fx = make_run(tmp_path, report=False)
    length = len(fx.articles[0].text)

    def change(r: dict[str, Any]) -> None:
        r["spans"][0].update(source_id=ZERO_ID)
        r["outcomes"][0]["spans"][0].update(access="web", evidence_id="pmcid:PMC9", text="made up")
        r["outcomes"][1]["spans"][0].update(start=length, end=length + 3000)
        r["n_total"] = "many"

    edit_extraction(fx, 0, change)
    assembly = assemble_run(fx.run, options_of(fx.run))
    assert found(assembly) == {
        ("UNKNOWN_SOURCE", "spans[0]"),
        ("ACCESS_MISMATCH", "outcomes[0].spans[0]"),
        ("NO_PAPER_ID", "outcomes[0].spans[0]"),
        ("EXCERPT_MISMATCH", "outcomes[0].spans[0]"),
        ("SPAN_OUT_OF_RANGE", "outcomes[1].spans[0]"),
        ("SCHEMA_ERROR", "n_total"),
    }
    assert assembly.result["counts"]["unresolved"] == 1
    assert sum(assembly.result["diagnostics"]["counts_by_reason"].values()) == len(assembly.findings) == 6
    assert all(len(f.detail) <= 300 and "\n" not in f.detail for f in assembly.findings)


def test_every_reason_code_is_attacked_here() -> None:
    source = Path(__file__).read_text(encoding="utf-8")
    missing = [code.value for code in Reason if f'"{code.value}"' not in source]
    assert missing == []
