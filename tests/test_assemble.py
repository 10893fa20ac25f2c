"""The assembler over valid runs built on real corpus texts: acceptance, derivation, determinism."""

from __future__ import annotations

import json
from pathlib import Path

from _gate_helpers import make_run, make_upstream_run, read_json
from _policy import options_of

from publisher.gate.assemble import assemble_run
from publisher.gate.pipeline import verify_run
from publisher.gate.result import Result
from publisher.kernel.findings import NoteCode
from publisher.kernel.ids import paper_problem
from publisher.kernel.models import Paper


def test_valid_corpus_run_is_fully_accepted_and_every_excerpt_is_the_reslice(tmp_path: Path) -> None:
    fx = make_run(tmp_path, articles=2)
    assembly = assemble_run(fx.run, options_of(fx.run))
    result = assembly.result
    assert assembly.verdict == "pass" and assembly.exit_status == 0
    assert assembly.findings == []
    assert result["counts"]["accepted"] == result["counts"]["artifacts_seen"] == 10
    texts = {a.source_id: a.text for a in fx.articles}
    corpus = {(a.source_id, s["start"], s["end"]): s["excerpt"] for a in fx.articles for s in a.spans}
    claims = [c for entry in result["accepted"] for c in entry["claims"]]
    assert len(claims) == result["counts"]["spans_checked"] == 9
    for claim in claims:
        assert claim["excerpt"] == texts[claim["source_id"]][claim["start"] : claim["end"]]
        assert claim["excerpt"] == corpus[(claim["source_id"], claim["start"], claim["end"])]
        assert claim["section"] in ("First half", "Second half") and claim["page"] is None
    Result.model_validate(read_json(fx.run.result_path))


def test_accepted_metadata_comes_from_the_snapshot(tmp_path: Path) -> None:
    fx = make_run(tmp_path, articles=1, report=False)
    article = fx.articles[0]
    record = fx.extraction(0)
    record["spans"][0]["url"] = article.snapshot.url.rstrip("/").replace("https://www.ncbi", "https://WWW.NCBI")
    record["spans"][0]["paper"] = {"pmid": "1"}
    fx.put_extraction(0, record)
    result = assemble_run(fx.run, options_of(fx.run)).result
    # the URL the agent wrote names its own fetched snapshot (a cited URL must): still ignored
    assert result["diagnostics"]["unresolved"] == []
    entry = next(a for a in result["accepted"] if a["kind"] == "extraction")
    assert entry["url"] == article.snapshot.url
    assert entry["paper"] == {"pmid": None, "doi": None, "pmcid": article.pmcid}
    assert entry["access"] == "full_text" and entry["fresh"] is True
    assert entry["data"]["quotes"] == [c["excerpt"] for c in entry["claims"]]
    assert entry["quotes"] == [
        {
            "text": c["excerpt"],
            "source_id": c["source_id"],
            "start": c["start"],
            "end": c["end"],
            "url": article.snapshot.url,
            "fresh": True,
            "section": c["section"],
            "page": c["page"],
        }
        for c in entry["claims"]
    ]
    warned = {w["field"] for w in result["diagnostics"]["warnings"]}
    assert {"spans[0].url", "spans[0].paper"} <= warned


def test_weakest_access_wins_across_snapshots(tmp_path: Path) -> None:
    fx = make_run(tmp_path, articles=1, report=False, appraisals=False)
    article = fx.articles[0]
    abstract = fx.add_snapshot(
        article.text[:3000], url="https://pubmed.example/abstract", access="abstract", paper={"pmcid": article.pmcid}
    )
    record = fx.extraction(0)
    record["spans"].append(article.span(0, source_id=abstract.source_id, start=0, end=100, access="abstract"))
    fx.put_extraction(0, record)
    assembly = assemble_run(fx.run, options_of(fx.run))
    assert assembly.verdict == "pass", assembly.findings
    entry = assembly.result["accepted"][0]
    assert entry["access"] == "abstract" and entry["url"] == "https://pubmed.example/abstract"
    assert entry["source_ids"] == [article.source_id, abstract.source_id]


def test_sources_log_and_inputs_hash(tmp_path: Path) -> None:
    fx = make_run(tmp_path, articles=2)
    result = assemble_run(fx.run, options_of(fx.run)).result
    assert [s["source_id"] for s in result["sources"]] == sorted(a.source_id for a in fx.articles)
    assert all(s["fresh"] and s["fresh_event_id"].startswith("ev-") and s["sealed"] for s in result["sources"])
    assert result["log"]["events"] == 2 and result["log"]["head"].startswith("sha256:")
    assert result["inputs_hash"].startswith("sha256:")
    fx.run.report_md.write_text(fx.run.report_md.read_text() + "\nOne more line.\n")
    assert assemble_run(fx.run, options_of(fx.run), write=False).result["inputs_hash"] != result["inputs_hash"]


def test_assembling_twice_is_identical_apart_from_generated_at(tmp_path: Path) -> None:
    fx = make_run(tmp_path, articles=2)
    record = fx.extraction(1)
    record["outcomes"][0]["spans"][0]["start"] = -1
    fx.put_extraction(1, record)
    first = assemble_run(fx.run, options_of(fx.run))
    data_first = fx.run.result_path.read_bytes()
    second = assemble_run(fx.run, options_of(fx.run))
    one, two = dict(first.result), dict(second.result)
    one.pop("generated_at")
    two.pop("generated_at")
    assert one == two
    assert json.loads(data_first).keys() == json.loads(fx.run.result_path.read_bytes()).keys()


def test_write_false_writes_nothing(tmp_path: Path) -> None:
    fx = make_run(tmp_path, articles=1)
    assemble_run(fx.run, options_of(fx.run), write=False)
    assert not fx.run.result_path.exists()


def test_gate_decides_only_the_verdict(tmp_path: Path) -> None:
    fx = make_run(tmp_path, articles=1, report=False)
    record = fx.extraction(0)
    record["spans"][0]["access"] = "web"
    fx.put_extraction(0, record)
    off = assemble_run(fx.run, options_of(fx.run), write=False)
    on = assemble_run(fx.run, options_of(fx.run), gate=True, write=False)
    assert off.verdict == "warn" and off.exit_status == 0
    assert on.verdict == "fail" and on.exit_status == 1
    assert on.result["gate"] == {"enabled": True, "verdict": "fail", "flag": "--gate"}
    assert off.result["counts"]["unresolved"] == on.result["counts"]["unresolved"] == 1
    assert off.result["diagnostics"]["unresolved"] == on.result["diagnostics"]["unresolved"]


def test_gate_from_config(tmp_path: Path) -> None:
    fx = make_run(tmp_path, articles=1, gate=True)
    assert assemble_run(fx.run, options_of(fx.run), write=False).result["gate"] == {
        "enabled": True,
        "verdict": "pass",
        "flag": "gates.evidence_kernel",
    }


def test_empty_evidence_set_is_never_a_pass(tmp_path: Path) -> None:
    fx = make_run(tmp_path, articles=1, report=False, appraisals=False)
    fx.extractions[0].unlink()
    assembly = assemble_run(fx.run, options_of(fx.run), write=False)
    assert assembly.result["counts"]["artifacts_seen"] == 0
    assert assembly.verdict == "warn"
    assert assemble_run(fx.run, options_of(fx.run), gate=True, write=False).verdict == "fail"


def test_upstream_v1_run_assembles_and_verifies(tmp_path: Path) -> None:
    fx = make_upstream_run(tmp_path, articles=2)
    assembly = assemble_run(fx.run, options_of(fx.run))
    assert assembly.verdict == "pass", assembly.findings
    result = assembly.result
    assert result["run_slug"] == "upstream-review"
    assert result["config"]["question"] == "Does the intervention work?"
    assert all(s["sealed"] is False and s["record_hash"] is None for s in result["sources"])
    kinds = {a["artifact_id"]: a["kind"] for a in result["accepted"]}
    assert kinds["report:pmc-0"] == "synthesis_claim"
    verification = verify_run(fx.run, options_of(fx.run))
    assert verification.verdict == "Verified", verification.report["checks"]
    assert NoteCode.METADATA_UNSEALED.value in verification.check("C-SNAPSHOT").detail  # the note's code, shown


def test_paper_problem_rules() -> None:
    paper = Paper(pmid="123", doi="10.1000/ABC", pmcid="PMC77")
    assert paper_problem("pmid:123", paper) is None
    assert paper_problem("doi:10.1000/abc", paper) is None
    assert paper_problem("pmcid:PMC77", paper) is None
    assert paper_problem("pmcid:77", paper) is None
    assert paper_problem("web:some-page", None) is None
    assert paper_problem("pmid:124", paper) is not None
    assert paper_problem("pmid:123", None) is not None
    assert paper_problem("doi:10.1/x", Paper(pmid="1")) is not None
    assert paper_problem("pmid:", paper) is not None
