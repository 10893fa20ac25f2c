"""Upstream runs judged as the upstream kit judges them (docs/upstream.md, scenario by scenario).

Every run here is written in the upstream on-disk form (:mod:`_upstream_helpers`): indented
snapshots without ``record_hash``, events without ``prev``, a config without ``run_slug``, the run
under ``<wiki>/outputs/deep-research/<slug>/``. The scenario ids are those of docs/upstream.md.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from _policy import options_of
from _upstream_helpers import EVIDENCE_ID, TRIAL, UpstreamRun, corpus_entry, upstream_run
from conftest import CliResult

from publisher.gate.assemble import Assembly, assemble_run
from publisher.gate.pipeline import verify_run
from publisher.gate.result import Result
from publisher.runs import Run

PUBMED_NOTE = "[^pubmed-31415926]: Okafor A. J Invent Trials. PMID 31415926. DOI 10.5555/upstream.trial. PubMed https://pubmed.ncbi.nlm.nih.gov/31415926/"
CLAIM = "Morning light shortened sleep onset by about eight minutes.[^pubmed-31415926]"


def reasons(assembly: Assembly) -> dict[str, int]:
    return dict(assembly.result["diagnostics"]["counts_by_reason"])


def found(assembly: Assembly, artifact_id: str | None = None) -> set[tuple[str, str]]:
    return {(f.code, f.field) for f in assembly.findings if artifact_id is None or f.artifact_id == artifact_id}


def valid(tmp_path: Path, **options: Any) -> tuple[UpstreamRun, str]:
    """Upstream's valid case: a fetched PMC snapshot, one extraction span, a corpus, a PubMed footnote."""
    up = upstream_run(tmp_path, **options)
    sid = up.snapshot()
    up.corpus(corpus_entry(source_ids=[sid]))
    up.extraction([up.span(sid, "Sleep-onset latency fell by 7.9 minutes")])
    up.report(CLAIM, [PUBMED_NOTE])
    return up, sid


# ---------------------------------------------------------------------------------------------
# upstream's evaluation cases and assembler tests


def test_u1_valid_span_is_accepted_with_quotes(tmp_path: Path) -> None:
    up, sid = valid(tmp_path)
    assembly = assemble_run(Run(up.path), options_of(Run(up.path)))
    assert assembly.verdict == "pass" and reasons(assembly) == {}
    result = assembly.result
    Result.model_validate(result)
    assert result["run_slug"] == "light-review"
    extraction = next(a for a in result["accepted"] if a["artifact_id"] == f"extraction:{EVIDENCE_ID}")
    start = TRIAL.index("Sleep-onset latency")
    assert extraction["quotes"] == [
        {
            "text": "Sleep-onset latency fell by 7.9 minutes",
            "source_id": sid,
            "start": start,
            "end": start + len("Sleep-onset latency fell by 7.9 minutes"),
            "url": "https://www.ncbi.nlm.nih.gov/pmc/articles/PMC2718281/",
            "fresh": True,
            "section": None,
            "page": None,
        }
    ]
    assert [q["text"] for q in extraction["quotes"]] == [c["excerpt"] for c in extraction["claims"]]
    claim = next(a for a in result["accepted"] if a["artifact_id"] == "report:pubmed-31415926")
    assert claim["kind"] == "synthesis_claim" and claim["evidence_id"] == EVIDENCE_ID
    verification = verify_run(Run(up.path), options_of(Run(up.path)))
    assert verification.verdict == "Verified", verification.report["checks"]


def test_u2_registered_source_is_not_fresh(tmp_path: Path) -> None:
    up = upstream_run(tmp_path)
    sid = up.snapshot(event="register", fresh=False)
    up.corpus(corpus_entry(source_ids=[sid]))
    up.extraction([up.span(sid, "Sleep-onset latency fell")])
    assembly = assemble_run(Run(up.path), options_of(Run(up.path)))
    assert assembly.verdict == "warn" and reasons(assembly) == {"NO_FRESH_FETCH": 1}


def test_u3_tampered_snapshot_one_finding_per_span(tmp_path: Path) -> None:
    up = upstream_run(tmp_path)
    sid = up.snapshot()
    up.corpus(corpus_entry())
    span = up.span(sid, "Sleep-onset latency fell")
    quote = {"text": "Sleep-onset latency fell", "source_id": sid, "start": span["start"], "end": span["end"]}
    up.extraction([span], quotes=[quote])
    path = up.path / "sources" / f"{sid}.json"
    record = json.loads(path.read_text())
    record["text"] += "\nTampered."
    up.write_json(f"sources/{sid}.json", record)
    assembly = assemble_run(Run(up.path), options_of(Run(up.path)))
    # upstream reports the first failure of the artifact; we report the span and the legacy quote
    assert assembly.verdict == "warn" and reasons(assembly) == {"SNAPSHOT_HASH_MISMATCH": 2}
    assert verify_run(Run(up.path), options_of(Run(up.path))).failed("C-SNAPSHOT")


def test_u4_invented_source(tmp_path: Path) -> None:
    up = upstream_run(tmp_path)
    up.corpus(corpus_entry())
    up.extraction([{"claim": "invented", "source_id": "src-" + "0" * 64, "start": 9, "end": 30}])
    assert reasons(assemble_run(Run(up.path), options_of(Run(up.path)))) == {"UNKNOWN_SOURCE": 1}


def test_u5_literature_claim_without_paper_ids(tmp_path: Path) -> None:
    up = upstream_run(tmp_path)
    sid = up.snapshot(paper=None)
    up.corpus(corpus_entry())
    up.extraction([up.span(sid, "Sleep-onset latency fell")])
    assert reasons(assemble_run(Run(up.path), options_of(Run(up.path)))) == {"NO_PAPER_ID": 1}


def test_u6_legacy_record_without_spans(tmp_path: Path) -> None:
    up = upstream_run(tmp_path)
    up.corpus(corpus_entry())
    up.write_json(
        "workspace/extractions/legacy.json",
        {"evidence_id": EVIDENCE_ID, "design": "randomised trial", "quotes": [{"text": "nurses were randomised"}]},
    )
    assert reasons(assemble_run(Run(up.path), options_of(Run(up.path)))) == {"NO_SPANS": 1}


def test_u7_legacy_quote_differing_from_the_reslice(tmp_path: Path) -> None:
    up = upstream_run(tmp_path)
    sid = up.snapshot()
    up.corpus(corpus_entry())
    span = up.span(sid, "fell by 7.9 minutes")
    quote = {"text": "fell by 9.7 minutes", "source_id": sid, "start": span["start"], "end": span["end"]}
    up.extraction([span], quotes=[quote])
    assert reasons(assemble_run(Run(up.path), options_of(Run(up.path)))) == {"EXCERPT_MISMATCH": 1}


@pytest.mark.parametrize(
    ("start", "end", "code"), [(-1, 5, "SPAN_OUT_OF_RANGE"), (0, 2001, "SPAN_TOO_LONG"), (5, 5, "SPAN_OUT_OF_RANGE")]
)
def test_u8_bad_offsets_fail_with_the_gate(tmp_path: Path, start: int, end: int, code: str) -> None:
    up = upstream_run(tmp_path)
    sid = up.snapshot("x" * 2100, url="https://example.org/long")
    up.corpus(corpus_entry())
    up.extraction([{"claim": "c", "source_id": sid, "start": start, "end": end}])
    assembly = assemble_run(Run(up.path), options_of(Run(up.path)), gate=True)
    assert assembly.verdict == "fail" and assembly.exit_status == 1 and reasons(assembly) == {code: 1}


def test_u9_report_claim_outside_accepted_evidence(tmp_path: Path) -> None:
    up = upstream_run(tmp_path)
    up.corpus(corpus_entry())
    up.report("A cited claim.[^pubmed-31415926]", ["[^pubmed-31415926]: PMID 31415926. DOI 10.5555/upstream.trial."])
    assert reasons(assemble_run(Run(up.path), options_of(Run(up.path)))) == {"SOURCE_OUTSIDE_ACCEPTED": 1}


def test_u10_missing_result_is_gated(tmp_path: Path) -> None:
    up, _ = valid(tmp_path)
    assert verify_run(Run(up.path), options_of(Run(up.path)), write=False).status("C-ASSEMBLER") == "warn"
    assert verify_run(Run(up.path), options_of(Run(up.path)), write=False, gate=True).status("C-ASSEMBLER") == "fail"


def test_u11_promote_check_writes_nothing_and_blocks_tampering(tmp_path: Path, cli: Callable[..., CliResult]) -> None:
    up, sid = valid(tmp_path)
    assert cli("assemble", "--run-dir", up.path).status == 0
    before = sorted(p.relative_to(up.wiki) for p in up.wiki.rglob("*"))
    checked = cli("promote", "--run-dir", up.path, "--wiki", up.wiki, "--concept", "light", "--check")
    assert checked.status == 0, checked.err
    assert sorted(p.relative_to(up.wiki) for p in up.wiki.rglob("*")) == before
    record = json.loads((up.path / "sources" / f"{sid}.json").read_text())
    record["text"] += " Tampered."
    up.write_json(f"sources/{sid}.json", record)
    blocked = cli("promote", "--run-dir", up.path, "--wiki", up.wiki, "--concept", "light", "--check", "--json")
    assert blocked.status == 1
    assert "SNAPSHOT_HASH_MISMATCH" in {f["reason_code"] for f in blocked.json()["findings"]}


def test_u12_assemble_exits_0_on_warn_with_the_gate_off(tmp_path: Path, cli: Callable[..., CliResult]) -> None:
    up = upstream_run(tmp_path)
    sid = up.snapshot(event="register", fresh=False)
    up.corpus(corpus_entry())
    up.extraction([up.span(sid, "Sleep-onset latency fell")])
    off = cli("assemble", "--run-dir", up.path, "--json")
    assert off.status == 0 and off.json()["gate"]["verdict"] == "warn"  # upstream exits 1 here
    assert cli("assemble", "--run-dir", up.path, "--gate").status == 1
