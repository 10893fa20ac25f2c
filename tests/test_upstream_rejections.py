"""What the upstream kit rejects is rejected here too; the upstream layouts it accepts are accepted.

Runs in the upstream on-disk form (:mod:`_upstream_helpers`); scenario ids as in docs/upstream.md.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from pathlib import Path

import pytest
from _policy import options_of, policy_of
from _upstream_helpers import EVIDENCE_ID, TRIAL, UpstreamRun, corpus_entry, upstream_run
from conftest import CliResult

from publisher.gate.assemble import Assembly, assemble_run
from publisher.gate.pipeline import check_run, verify_run
from publisher.runs import Run, find_wiki_root
from publisher.wiki.check import check_wiki

NOTE = "[^pubmed-31415926]: Okafor A. PMID 31415926."
CLAIM = "Morning light shortened sleep onset.[^pubmed-31415926]"


def found(assembly: Assembly, artifact_id: str | None = None) -> set[tuple[str, str]]:
    return {(f.code, f.field) for f in assembly.findings if artifact_id is None or f.artifact_id == artifact_id}


def accepted(assembly: Assembly) -> set[str]:
    return {a["artifact_id"] for a in assembly.result["accepted"]}


def run_with_extraction(tmp_path: Path, *, corpus: bool = True, **options: object) -> tuple[UpstreamRun, str]:
    up = upstream_run(tmp_path, **options)  # type: ignore[arg-type]
    sid = up.snapshot()
    if corpus:
        up.corpus(corpus_entry(source_ids=[sid]))
    up.extraction([up.span(sid, "Sleep-onset latency fell by 7.9 minutes")])
    return up, sid


# ---------------------------------------------------------------------------------------------
# R1: every report footnote is a citation


def test_r1_key_only_footnote_is_source_outside_accepted(tmp_path: Path) -> None:
    up, _ = run_with_extraction(tmp_path)
    up.report("Light helps.[^smith2024]", ["[^smith2024]: Smith JA, 2024."])
    assembly = assemble_run(Run(up.path), options_of(Run(up.path)))
    assert found(assembly, "report:smith2024") == {("SOURCE_OUTSIDE_ACCEPTED", "label")}
    assert f"extraction:{EVIDENCE_ID}" in accepted(assembly)


def test_r1_key_only_footnote_without_a_corpus(tmp_path: Path) -> None:
    up, _ = run_with_extraction(tmp_path, corpus=False)
    up.report("Light helps.[^smith2024]", ["[^smith2024]: Smith JA, 2024."])
    assert found(assemble_run(Run(up.path), options_of(Run(up.path))), "report:smith2024") == {
        ("SOURCE_OUTSIDE_ACCEPTED", "label")
    }


@pytest.mark.parametrize(
    "label", ["pubmed-31415926", "pmid-31415926", "pmid31415926", "pmc-2718281", "doi-10-5555-upstream-trial"]
)
def test_r1_a_bare_key_resolves_through_the_corpus(tmp_path: Path, label: str) -> None:
    up, _ = run_with_extraction(tmp_path)
    up.report(f"Light helps.[^{label}]", [f"[^{label}]: Okafor A, 2025."])
    assembly = assemble_run(Run(up.path), options_of(Run(up.path)))
    assert assembly.findings == [] and f"report:{label}" in accepted(assembly)


def test_r1_id_style_footnote_resolving_to_no_accepted_artifact(tmp_path: Path) -> None:
    up, _ = run_with_extraction(tmp_path)
    other = {"pmid": "27182818", "doi": "10.5555/other", "pmcid": None}
    up.corpus(corpus_entry(source_ids=[]), corpus_entry("pmid:27182818", other))
    up.report("Other paper.[^pubmed-27182818]", ["[^pubmed-27182818]: PMID 27182818."])
    assert found(assemble_run(Run(up.path), options_of(Run(up.path))), "report:pubmed-27182818") == {
        ("SOURCE_OUTSIDE_ACCEPTED", "label")
    }


def test_r1_label_must_resolve_when_the_run_has_a_corpus(tmp_path: Path) -> None:
    up, _ = run_with_extraction(tmp_path)
    # the PMID is of an accepted paper, but the label names nothing in the corpus: upstream rejects it
    up.report("Light helps.[^ref1]", ["[^ref1]: PMID 31415926."])
    assert found(assemble_run(Run(up.path), options_of(Run(up.path))), "report:ref1") == {
        ("SOURCE_OUTSIDE_ACCEPTED", "label")
    }


def test_r1_stated_ids_must_agree_with_the_label(tmp_path: Path) -> None:
    up, _ = run_with_extraction(tmp_path)
    up.report(CLAIM, ["[^pubmed-31415926]: PMID 31415926. DOI 10.5555/someone.else."])
    assert found(assemble_run(Run(up.path), options_of(Run(up.path)))) == {("SOURCE_OUTSIDE_ACCEPTED", "paper_ids")}


def test_r1_a_reference_without_definition_cites_nothing(tmp_path: Path) -> None:
    up, _ = run_with_extraction(tmp_path)
    up.report(CLAIM + " And more.[^ghost]", [NOTE])
    assembly = assemble_run(Run(up.path), options_of(Run(up.path)))
    assert found(assembly) == {("SOURCE_OUTSIDE_ACCEPTED", "definition")}
    assert {f.artifact_id for f in assembly.findings} == {"report:ghost"}


# ---------------------------------------------------------------------------------------------
# R2: URLs never retrieved


def test_r2_url_in_an_extraction_record(tmp_path: Path) -> None:
    up, sid = run_with_extraction(tmp_path)
    span = up.span(sid, "Sleep-onset latency fell by 7.9 minutes")
    up.extraction([span], extractor_notes="numbers checked against https://trials.example/record/77.")
    assembly = assemble_run(Run(up.path), options_of(Run(up.path)))
    assert found(assembly) == {("URL_NOT_RETRIEVED", "extractor_notes")}
    detail = assembly.findings[0].detail
    assert "https://trials.example/record/77 " in detail  # the sentence's full stop is not part of it


def test_r2_url_in_any_string_of_an_appraisal(tmp_path: Path) -> None:
    up, sid = run_with_extraction(tmp_path)
    span = up.span(sid, "randomised to a morning light box")
    domain = {"domain": "randomisation", "judgement": "low", "rationale": "see http://x.example/p", "spans": [span]}
    up.write_json("workspace/appraisals/rob.json", {"evidence_id": EVIDENCE_ID, "tool": "RoB2", "domains": [domain]})
    assert found(assemble_run(Run(up.path), options_of(Run(up.path))), f"appraisal:{EVIDENCE_ID}") == {
        ("URL_NOT_RETRIEVED", "domains[0].rationale")
    }


def test_r2_urls_a_record_may_cite(tmp_path: Path) -> None:
    up, sid = run_with_extraction(tmp_path)
    span = up.span(sid, "Sleep-onset latency fell by 7.9 minutes")
    notes = (
        "read at https://www.ncbi.nlm.nih.gov/pmc/articles/PMC2718281 (its own snapshot, fetched), "
        "indexed at https://pubmed.ncbi.nlm.nih.gov/31415926/ and https://doi.org/10.5555/UPSTREAM.trial"
    )
    up.extraction([span], extractor_notes=notes)
    assert assemble_run(Run(up.path), options_of(Run(up.path))).findings == []


def test_r2_a_record_may_not_cite_another_papers_page(tmp_path: Path) -> None:
    up, sid = run_with_extraction(tmp_path)
    up.snapshot("Another trial's page.", url="https://other.example/trial", paper={"pmid": "1"})
    span = up.span(sid, "Sleep-onset latency fell by 7.9 minutes")
    up.extraction([span], extractor_notes="compare https://other.example/trial")
    assert found(assemble_run(Run(up.path), options_of(Run(up.path)))) == {("URL_NOT_RETRIEVED", "extractor_notes")}


def test_r2_bare_url_in_a_footnote(tmp_path: Path) -> None:
    up, _ = run_with_extraction(tmp_path)
    up.report(CLAIM, [NOTE + " Registry https://registry.example/NCT0001"])
    assert found(assemble_run(Run(up.path), options_of(Run(up.path)))) == {("URL_NOT_RETRIEVED", "urls[0]")}


def test_r2_bare_url_of_a_fetched_page_backs_the_claim(tmp_path: Path) -> None:
    up, _ = run_with_extraction(tmp_path)
    up.snapshot("A press release.", url="https://news.example/light", paper=None)
    up.report(CLAIM, [NOTE + " Press: https://news.example/light."])
    # retrieved, but the page backs no accepted record: the claim rests on it all the same
    assert found(assemble_run(Run(up.path), options_of(Run(up.path)))) == {("SOURCE_OUTSIDE_ACCEPTED", "urls[0]")}


# ---------------------------------------------------------------------------------------------
# R3: an independent checker's verdict in upstream's outputs/verification.json


def _upstream_verification(up: UpstreamRun, *claims: dict[str, str]) -> Path:
    checks = [{"check_id": "C-CITE-RESOLVE", "status": "fail", "detail": "x"}]
    return up.write_json(
        "outputs/verification.json", {"schema_version": 1, "checks": checks, "unsupported_claims": list(claims)}
    )


def test_r3_unsupported_claims_by_location(tmp_path: Path) -> None:
    up, _ = run_with_extraction(tmp_path)
    up.report(CLAIM, [NOTE])
    _upstream_verification(up, {"location": "report.md:L3", "claim": "Morning light ...", "reason": "overstated"})
    assembly = assemble_run(Run(up.path), options_of(Run(up.path)))
    assert found(assembly) == {("UNSUPPORTED_VERDICT", "verification")}
    assert assembly.findings[0].artifact_id == "report:pubmed-31415926"
    digests = {e[0]: e[1] for e in assembly.result["inputs"] if len(e) == 2}
    assert (
        digests["verification"]
        == "sha256:" + hashlib.sha256((up.outputs / "verification.json").read_bytes()).hexdigest()
    )


def test_r3_unsupported_claims_by_evidence_id(tmp_path: Path) -> None:
    up, _ = run_with_extraction(tmp_path)
    up.report(CLAIM, [NOTE])
    _upstream_verification(up, {"evidence_id": EVIDENCE_ID, "reason": "effect misread"}, {"location": "report.md:L99"})
    assembly = assemble_run(Run(up.path), options_of(Run(up.path)))
    assert found(assembly, f"extraction:{EVIDENCE_ID}") == {("UNSUPPORTED_VERDICT", "verification")}
    # the report claim rests on the rejected extraction
    assert found(assembly, "report:pubmed-31415926") == {("SOURCE_OUTSIDE_ACCEPTED", "label")}
    warned = [w["field"] for w in assembly.result["diagnostics"]["warnings"]]
    assert warned == ["unsupported_claims[1]"]


def test_r3_verify_keeps_upstreams_file_and_writes_beside_it(tmp_path: Path, cli: Callable[..., CliResult]) -> None:
    up, _ = run_with_extraction(tmp_path)
    up.report(CLAIM, [NOTE])
    upstream = _upstream_verification(up)
    before = upstream.read_bytes()
    assert cli("assemble", "--run-dir", up.path).status == 0
    out = cli("verify", "--run-dir", up.path, "--json")
    assert out.status == 0, out.out
    assert upstream.read_bytes() == before
    ours = up.outputs / "publisher-verification.json"
    assert json.loads(ours.read_text())["verdict"] == "Verified"
    assert out.json()["written"] == str(ours)  # where our verdict went, by its path
    # the file is an input: editing it makes the stored result stale
    result = json.loads((up.outputs / "result.json").read_text())
    entry = next(e for e in result["inputs"] if e[0] == "verification")
    assert entry[1] == "sha256:" + hashlib.sha256(before).hexdigest()
    _upstream_verification(up, {"evidence_id": EVIDENCE_ID, "reason": "late verdict"})
    rc = check_run(Run(up.path), options_of(Run(up.path)))
    assert rc.status("C-ASSEMBLER") == "warn"
    stale = [(f.check, f.field, f.severity) for f in rc.findings if f.check == "C-ASSEMBLER"]
    assert stale == [("C-ASSEMBLER", "inputs", "warn")]  # stale by its inputs: only the verification was edited


def test_r3_our_own_verification_is_overwritten_and_no_input(tmp_path: Path) -> None:
    up, _ = run_with_extraction(tmp_path)
    up.report(CLAIM, [NOTE])
    assemble_run(Run(up.path), options_of(Run(up.path)))
    first = verify_run(Run(up.path), options_of(Run(up.path)))
    assert first.written == Run(up.path).verification_path
    again = verify_run(Run(up.path), options_of(Run(up.path)))
    assert again.written == first.written and again.status("C-ASSEMBLER") == "pass"
    inputs = dict((e[0], e[1]) for e in again.result["inputs"] if len(e) == 2)
    assert inputs["verification"] is None


def test_r3_malformed_upstream_verification_is_fatal(tmp_path: Path, cli: Callable[..., CliResult]) -> None:
    up, _ = run_with_extraction(tmp_path)
    up.write_json("outputs/verification.json", {"unsupported_claims": "all of them"})
    out = cli("assemble", "--run-dir", up.path, "--json")
    assert out.status == 2 and len(out.err_lines) == 1 and out.json()["error"]["reason_code"] == "SCHEMA_ERROR"


# ---------------------------------------------------------------------------------------------
# R4: corpus membership and registration


def test_r4_evidence_id_absent_from_the_corpus(tmp_path: Path) -> None:
    up, sid = run_with_extraction(tmp_path)
    up.corpus(corpus_entry("pmid:1", {"pmid": "1"}, source_ids=[sid]))
    assert found(assemble_run(Run(up.path), options_of(Run(up.path)))) == {("SCHEMA_ERROR", "evidence_id")}


def test_r4_snapshot_not_registered_for_the_evidence_id(tmp_path: Path) -> None:
    up, _ = run_with_extraction(tmp_path)
    mirror = up.snapshot(TRIAL, url="https://mirror.example/trial", access="web", origin="web")
    up.corpus(corpus_entry(source_ids=[mirror]))
    assert found(assemble_run(Run(up.path), options_of(Run(up.path)))) == {("NO_PAPER_ID", "spans[0]")}
    up.corpus(corpus_entry(source_ids=[]))  # a corpus that names no snapshots registers none
    assert assemble_run(Run(up.path), options_of(Run(up.path))).findings == []


@pytest.mark.parametrize(
    "line",
    ['{"evidence_id": "pmid:1"', '["pmid:1"]', '{"title": "no id"}', '{"evidence_id": "pmid:1", "pmid": "x1"}'],
)
def test_r4_malformed_corpus_is_fatal(tmp_path: Path, cli: Callable[..., CliResult], line: str) -> None:
    up, _ = run_with_extraction(tmp_path)
    (up.path / "corpus.jsonl").write_text(line + "\n", encoding="utf-8")
    out = cli("assemble", "--run-dir", up.path, "--json")
    assert out.status == 2 and len(out.err_lines) == 1
    error = out.json()["error"]  # the line of corpus.jsonl at fault
    assert (error["reason_code"], error["file"], error["line"]) == ("SCHEMA_ERROR", str(up.path / "corpus.jsonl"), 1)


# ---------------------------------------------------------------------------------------------
# R5: a run without config.json is refused outright


@pytest.mark.parametrize("command", ["assemble", "verify", "render"])
def test_r5_no_config_is_refused(tmp_path: Path, cli: Callable[..., CliResult], command: str) -> None:
    up, _ = run_with_extraction(tmp_path)
    (up.path / "config.json").unlink()
    out = cli(command, "--run-dir", up.path, "--json")
    assert out.status == 2 and len(out.err_lines) == 1
    assert out.json()["error"]["file"] == str(up.path / "config.json")
    assert not (up.outputs / "result.json").exists()


def test_r5_no_config_promote_and_wiki_check(tmp_path: Path, cli: Callable[..., CliResult]) -> None:
    up, _ = run_with_extraction(tmp_path, mkdocs=True)
    assert cli("assemble", "--run-dir", up.path).status == 0
    (up.path / "config.json").unlink()
    out = cli("promote", "--run-dir", up.path, "--wiki", up.wiki, "--concept", "light", "--json")
    assert out.status == 2 and out.json()["error"]["file"] == str(up.path / "config.json")
    findings = check_wiki(up.wiki, policy=policy_of(up.wiki)).findings
    assert [(f.code, f.file) for f in findings] == [("SCHEMA_ERROR", "outputs/deep-research/light-review/config.json")]


# ---------------------------------------------------------------------------------------------
# R6: the upstream layout without mkdocs.yml


def test_r6_wiki_root_from_the_upstream_layout(tmp_path: Path) -> None:
    up = upstream_run(tmp_path)
    assert find_wiki_root(up.path) == up.wiki.resolve()
    assert find_wiki_root(up.wiki / "elsewhere") is None


def test_r6_upstream_layout_is_where_the_run_really_sits(tmp_path: Path) -> None:
    """A run's layout is told from where it resolves to, asked again after links and folders
    change under the same names (the resolved folders are held between runs)."""

    def resolved(path: Path) -> bool:
        parents = path.resolve().parents
        return len(parents) >= 2 and parents[0].name == "deep-research" and parents[1].name == "outputs"

    upstream = tmp_path / "outputs" / "deep-research"
    (upstream / "a").mkdir(parents=True)
    (upstream / "deep-research").mkdir()
    (tmp_path / "runs" / "b").mkdir(parents=True)
    (tmp_path / "runs" / "link").symlink_to(upstream / "a")
    (tmp_path / "up").symlink_to(upstream)
    paths = [upstream / "a", tmp_path / "runs" / "b", tmp_path / "runs" / "link", tmp_path / "up" / "a"]
    paths += [upstream / "deep-research", upstream / "a" / "..", tmp_path / "gone" / "x", Path("runs/b")]
    for path in paths * 2:  # the second time from the held folders
        assert Run(path).upstream_layout is resolved(path), path
    # The folder behind a name changes: a link pointed elsewhere, the same folder renamed.
    (tmp_path / "up").unlink()
    (tmp_path / "up").symlink_to(tmp_path / "runs")
    (tmp_path / "up" / "a").mkdir()
    assert Run(tmp_path / "up" / "a").upstream_layout is False
    (tmp_path / "up").unlink()
    (tmp_path / "up").symlink_to(upstream)
    assert Run(tmp_path / "up" / "a").upstream_layout is True
    (tmp_path / "outputs").rename(tmp_path / "renamed")  # the link now points at the same folder's new name
    (tmp_path / "up").unlink()
    (tmp_path / "up").symlink_to(tmp_path / "renamed" / "deep-research")
    assert Run(tmp_path / "up" / "a").upstream_layout is False
    assert resolved(tmp_path / "up" / "a") is False


def test_r6_user_supplied_pdf_without_mkdocs(tmp_path: Path, cli: Callable[..., CliResult]) -> None:
    up = upstream_run(tmp_path)
    pdf = b"%PDF-1.4 a user-supplied trial report"
    digest = hashlib.sha256(pdf).hexdigest()
    (up.wiki / "assets" / "papers" / f"{digest}.pdf").write_bytes(pdf)
    asset = {"path": f"assets/papers/{digest}.pdf", "sha256": digest, "bytes": len(pdf)}
    sid = up.snapshot(url=(up.wiki / "upload.pdf").as_uri(), origin="user-supplied-pdf", asset=asset, event="local_pdf")
    up.corpus(corpus_entry(source_ids=[sid]))
    up.extraction([up.span(sid, "Sleep-onset latency fell by 7.9 minutes")])
    out = cli("assemble", "--run-dir", up.path, "--json")
    assert out.status == 0 and out.json()["gate"]["verdict"] == "pass", out.out
    (up.wiki / "assets" / "papers" / f"{digest}.pdf").write_bytes(pdf + b" changed")
    assert found(assemble_run(Run(up.path), options_of(Run(up.path)))) == {("ASSET_HASH_MISMATCH", "spans[0]")}


# ---------------------------------------------------------------------------------------------
# R7: the verifier's report checks


def test_r7_cite_resolve_holds_the_unresolved_citations(tmp_path: Path) -> None:
    up, _ = run_with_extraction(tmp_path)
    up.report(CLAIM + " Also.[^ghost]", [NOTE])
    assemble_run(Run(up.path), options_of(Run(up.path)))
    rc = check_run(Run(up.path), options_of(Run(up.path)))
    assert rc.status("C-CITE-RESOLVE") == "warn"
    assert {(f.check, f.code, f.artifact_id) for f in rc.findings} == {
        ("C-CITE-RESOLVE", "SOURCE_OUTSIDE_ACCEPTED", "report:ghost")
    }
    assert check_run(Run(up.path), options_of(Run(up.path)), gate=True).status("C-CITE-RESOLVE") == "fail"


def test_r7_a_report_that_cites_nothing(tmp_path: Path) -> None:
    up, _ = run_with_extraction(tmp_path)
    up.report("Morning light works.", [])
    assemble_run(Run(up.path), options_of(Run(up.path)))
    rc = check_run(Run(up.path), options_of(Run(up.path)), gate=True)
    assert rc.failed("C-CITE-RESOLVE") and [f.check for f in rc.findings] == ["C-CITE-RESOLVE"]


def _abstract_run(tmp_path: Path, sentence: str, note: str) -> tuple[UpstreamRun, str]:
    """A run whose one paper was read as its PubMed abstract only."""
    up = upstream_run(tmp_path)
    sid = up.snapshot(url="https://pubmed.ncbi.nlm.nih.gov/31415926/", access="abstract", origin="pubmed")
    up.corpus(corpus_entry(source_ids=[sid]))
    up.extraction([up.span(sid, "Sleep-onset latency fell by 7.9 minutes")], evidence_basis="abstract_only")
    up.report(sentence, [note])
    assemble_run(Run(up.path), options_of(Run(up.path)))
    return up, sid


def test_r7_fulltext_an_abstract_only_claim_must_say_so(tmp_path: Path) -> None:
    up, _ = _abstract_run(tmp_path, CLAIM, NOTE)
    rc = check_run(Run(up.path), options_of(Run(up.path)))
    assert rc.failed("C-FULLTEXT")  # whatever the gate
    assert {(f.check, f.artifact_id) for f in rc.findings} == {("C-FULLTEXT", "report:pubmed-31415926")}


@pytest.mark.parametrize(
    ("sentence", "note"),
    [
        ("Morning light shortened sleep onset (abstract only).[^pubmed-31415926]", NOTE),
        (CLAIM, NOTE + " Abstract-only: the full text was not available."),
        ("Based on the abstract, light shortened sleep onset.[^pubmed-31415926]", NOTE),
    ],
)
def test_r7_fulltext_labelled_abstract_claims_pass(tmp_path: Path, sentence: str, note: str) -> None:
    up, _ = _abstract_run(tmp_path, sentence, note)
    assert check_run(Run(up.path), options_of(Run(up.path))).status("C-FULLTEXT") == "pass"


def test_r7_fulltext_a_record_stating_full_text_on_an_abstract(tmp_path: Path) -> None:
    up, sid = _abstract_run(tmp_path, "Morning light helps (abstract only).[^pubmed-31415926]", NOTE)
    up.extraction([up.span(sid, "Sleep-onset latency fell by 7.9 minutes")], evidence_basis="fulltext")
    assembly = assemble_run(Run(up.path), options_of(Run(up.path)))
    assert found(assembly, f"extraction:{EVIDENCE_ID}") == {("ACCESS_MISMATCH", "evidence_basis")}
    rc = check_run(Run(up.path), options_of(Run(up.path)))
    assert rc.status("C-FULLTEXT") == "warn"
    assert {f.check for f in rc.findings if f.code == "ACCESS_MISMATCH"} == {"C-FULLTEXT"}


WALL = "## New insights and hypotheses\n\n"


@pytest.mark.parametrize(
    ("body", "line"),
    [
        (CLAIM + "\n\n" + WALL + "Studies show that light resets the clock of every nurse.", 7),
        (CLAIM + "\n\n" + WALL + "Light is associated with fewer errors on the ward.", 7),
        ("We hypothesise that light works through melatonin.\n" + CLAIM, 3),
        (CLAIM + " This proves that light works.", 3),
        (
            CLAIM + "\n\n" + WALL + "Light might help.\n\n## Limitations\n\nIt is well known that nurses sleep badly.",
            11,
        ),
    ],
)
def test_r7_hypothesis_wall_crossings_fail(tmp_path: Path, body: str, line: int) -> None:
    up, _ = run_with_extraction(tmp_path)
    up.report(body, [NOTE])
    assemble_run(Run(up.path), options_of(Run(up.path)))
    rc = check_run(Run(up.path), options_of(Run(up.path)))
    assert rc.failed("C-HYPOTHESIS-WALL")
    assert [(f.check, f.line) for f in rc.findings] == [("C-HYPOTHESIS-WALL", line)]


def test_r7_hypothesis_wall_respected_passes(tmp_path: Path) -> None:
    up, _ = run_with_extraction(tmp_path)
    hedged = "Light might reset the circadian clock; a crossover trial could test this."
    up.report(CLAIM + "\n\n" + WALL + hedged + "\n\n## Limitations\n\nOne trial only.", [NOTE])
    assemble_run(Run(up.path), options_of(Run(up.path)))
    rc = check_run(Run(up.path), options_of(Run(up.path)))
    assert rc.status("C-HYPOTHESIS-WALL") == "pass" and rc.verdict == "Verified", rc.report["checks"]
    assert rc.check("C-HYPOTHESIS-WALL").counts == {"walled": 1, "crossings": 0}
    assert rc.check("C-HYPOTHESIS-WALL").to_dict()["counts"] == {"walled": 1, "crossings": 0}
