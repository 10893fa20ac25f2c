"""Assessments and the C-CLAIM guards on a wiki of real articles (CONTRACT section 14).

Every refusal is asserted by the guard it names (the ``check``/``field`` of a finding, or of the
``--json`` error object), never by wording; every rejected attempt stays in ``assessments.jsonl``.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from _claims_helpers import CONCEPT, ClaimsWiki, claims_wiki
from _policy import policy_of
from _wiki_helpers import build_wiki, leftovers, refused_build, tree_digest
from conftest import CliResult

from publisher.kernel.eventlog import append_event
from publisher.kernel.models import Receipt
from publisher.site.checks.checksite import check_site
from publisher.wiki.check import check_wiki
from publisher.wiki.claims.log import read_assessments
from publisher.wiki.promote import promote

Cli = Callable[..., CliResult]


@pytest.fixture
def cw(tmp_path: Path, corpus_dir: Path) -> ClaimsWiki:
    return claims_wiki(tmp_path / "wiki", corpus_dir)


def assess(cli: Cli, cw: ClaimsWiki, claim_id: str, statement: str, status: str, *extra: str) -> CliResult:
    return cli(
        "assess", "--wiki", cw.wiki, "--concept", CONCEPT, "--claim-id", claim_id, "--statement", statement,
        "--status", status, *extra,
    )  # fmt: skip


def assess_json(cli: Cli, cw: ClaimsWiki, claim_id: str, statement: str, status: str, *extra: str) -> CliResult:
    return assess(cli, cw, claim_id, statement, status, *extra, "--json")


def refused(out: CliResult, guard: str) -> None:
    assert out.status == 1, out.err
    assert len(out.err_lines) == 1, out.err
    error = out.json()["error"]
    assert (error["check"], error["field"], error["exit_status"]) == ("C-CLAIM", guard, 1), error


def claim_findings(wiki: Path) -> list[tuple[str | None, str | None]]:
    return [(f.check, f.field) for f in check_wiki(wiki, policy=policy_of(wiki)).findings]


def test_fabricated_or_unknown_evidence_is_rejected_and_logged(cli: Cli, cw: ClaimsWiki) -> None:
    before = cw.concept.read_bytes()
    statement = "The intervention helps."
    refused(assess_json(cli, cw, "c1", statement, "S", "--evidence", "REV_FABRICATED"), "EVIDENCE_UNRESOLVED")
    no_evidence = assess_json(cli, cw, "c1", statement, "S")
    refused(no_evidence, "EVIDENCE_REQUIRED")
    error = no_evidence.json()["error"]  # the claim, named as the wiki check names it
    assert (error["file"], error["artifact_id"]) == (cw.concept.relative_to(cw.wiki).as_posix(), "claim:c1")
    refused(assess_json(cli, cw, "c1", statement, "C", "--evidence", "^" + cw.labels[0]), "EVIDENCE_UNRESOLVED")
    refused(assess_json(cli, cw, "c1", statement, "NS", "--review", "rev-" + "0" * 64), "REVIEW_UNRESOLVED")
    refused(assess_json(cli, cw, "c1", statement, "NS", "--review", "REV_FABRICATED"), "REVIEW_UNRESOLVED")
    refused(assess_json(cli, cw, "c1", statement, "NE", "--missingness", "MIS_FAKE"), "MISSINGNESS_UNRESOLVED")
    assert cw.concept.read_bytes() == before  # a rejected attempt writes nothing but its log line
    state = read_assessments(cw.wiki)
    assert state.intact and [e.admitted for e in state.events] == [False] * 6
    assert [e.guard.value for e in state.events if e.guard] == [
        "EVIDENCE_UNRESOLVED",
        "EVIDENCE_REQUIRED",
        "EVIDENCE_UNRESOLVED",
        "REVIEW_UNRESOLVED",
        "REVIEW_UNRESOLVED",
        "MISSINGNESS_UNRESOLVED",
    ]
    assert check_wiki(cw.wiki, policy=policy_of(cw.wiki)).ok


def test_supported_is_admitted_written_and_checked(cli: Cli, cw: ClaimsWiki) -> None:
    body_before = cw.concept.read_text(encoding="utf-8").split("\n---\n", 1)[1]
    out = assess(cli, cw, "c1", "  The  intervention\thelps. ", "S", "--evidence", cw.labels[0], "--json")
    assert out.status == 0, out.err
    entry = out.json()["entry"]
    claim = cw.front().claims[0]
    assert (claim.id, claim.status.value, claim.evidence, claim.assessment) == (
        "c1", "supported", (cw.labels[0],), entry["assessment_id"],
    )  # fmt: skip
    assert claim.statement == "The intervention helps."
    assert entry["bound"]["evidence"][0]["refs"][0]["source_id"] == cw.a_full
    assert cw.concept.read_text(encoding="utf-8").split("\n---\n", 1)[1] == body_before  # prose untouched
    wiki = check_wiki(cw.wiki, policy=policy_of(cw.wiki))
    assert wiki.ok, wiki.findings
    assert [(s.claim.id, s.provenance_valid) for s in wiki.claims] == [("c1", True)]


def test_partially_supported_needs_and_keeps_conditions(cli: Cli, cw: ClaimsWiki) -> None:
    label = cw.labels[0]
    refused(assess_json(cli, cw, "p1", "It helps some.", "P", "--evidence", label), "CONDITIONS_REQUIRED")
    refused(
        assess_json(cli, cw, "p1", "It helps some.", "P", "--evidence", label, "--condition", "  "),
        "CONDITIONS_REQUIRED",
    )
    refused(
        assess_json(cli, cw, "s1", "It helps.", "S", "--evidence", label, "--condition", "adults"),
        "CONDITIONS_NOT_ALLOWED",
    )
    out = assess(
        cli, cw, "p1", "It helps some.", "P", "--evidence", label, "--condition", "at six months",
        "--condition", "in adults",
    )  # fmt: skip
    assert out.status == 0, out.err
    assert cw.front().claims[0].conditions == ("at six months", "in adults")
    assert read_assessments(cw.wiki).events[-1].conditions == ("at six months", "in adults")
    assert check_wiki(cw.wiki, policy=policy_of(cw.wiki)).ok


def test_same_statement_under_two_ids_is_one_claim(cli: Cli, cw: ClaimsWiki) -> None:
    assert assess(cli, cw, "c1", "Caf\u00e9 users improved.", "S", "--evidence", cw.labels[0]).status == 0
    refused(
        assess_json(cli, cw, "c2", "Cafe\u0301  users improved.", "S", "--evidence", cw.labels[1]), "CLAIM_CONFLICT"
    )


def _fetch_failed(cw: ClaimsWiki, url: str) -> str:
    append_event(
        cw.rb.run.events_path, type="fetch_failed", source_id=None, url=url, fresh=False, sha256=None,
        detail="test: connection refused",
        receipt=Receipt(requested_url=url, final_url=None, redirects=None, status=None, media_type=None,
                        raw_sha256=None, raw_bytes=None, extractor=None),
    )  # fmt: skip
    return str(json.loads(cw.rb.run.events_path.read_text(encoding="utf-8").splitlines()[-1])["event_id"])


def test_ne_is_bound_to_its_exact_missingness_record(cli: Cli, cw: ClaimsWiki) -> None:
    run = cw.rb.run.path
    mis = cli("missing", "--run-dir", run, "--claim", "The abstract suffices.", "--source-id", cw.c_abstract, "--json")
    assert mis.status == 0, mis.err
    mis_id = mis.json()["missingness_id"]
    assert mis.json()["record"]["kind"] == "ACCESS_RESTRICTED"
    # A record of another claim does not make this claim non-evaluable.
    refused(assess_json(cli, cw, "n1", "Another claim.", "NE", "--missingness", mis_id), "MISSINGNESS_OTHER_CLAIM")
    assert assess(cli, cw, "n1", "The abstract suffices.", "NE", "--missingness", mis_id).status == 0
    assert check_wiki(cw.wiki, policy=policy_of(cw.wiki)).ok
    # A later record of the same claim cannot be swapped in by hand: front matter must equal the entry.
    failed = _fetch_failed(cw, "https://example.org/gone")
    later = cli("missing", "--run-dir", run, "--claim", "The abstract suffices.", "--event", failed, "--json")
    assert later.status == 0 and later.json()["record"]["kind"] == "SOURCE_UNAVAILABLE"
    text = cw.concept.read_text(encoding="utf-8")
    cw.concept.write_text(text.replace(mis_id, later.json()["missingness_id"]), encoding="utf-8")
    assert ("C-CLAIM", "ASSESSMENT_MISMATCH") in claim_findings(cw.wiki)


def test_missingness_is_idempotent_and_refused_without_facts(cli: Cli, cw: ClaimsWiki) -> None:
    run = cw.rb.run.path
    first = cli(
        "missing", "--run-dir", run, "--claim", "Caf\u00e9  data  lacking.", "--source-id", cw.c_abstract, "--json"
    )
    path = run / "missingness" / f"{first.json()['missingness_id']}.json"
    stat_before, bytes_before = path.stat(), path.read_bytes()
    again = cli(
        "missing", "--run-dir", run, "--claim", "Cafe\u0301 data\nlacking.", "--source-id", cw.c_abstract, "--json"
    )
    assert again.json()["missingness_id"] == first.json()["missingness_id"]
    assert again.json()["created"] is False
    assert again.json()["record"]["created_at"] == first.json()["record"]["created_at"]
    assert path.read_bytes() == bytes_before and path.stat().st_mtime_ns == stat_before.st_mtime_ns
    assert os.listdir(run / "missingness") == [path.name]
    # Full text with a complete declared surface: nothing is missing, so no record.
    refused(cli("missing", "--run-dir", run, "--claim", "x", "--source-id", cw.a_full, "--json"), "NOTHING_MISSING")
    # A fetch event is no failure.
    refused(cli("missing", "--run-dir", run, "--claim", "x", "--event", "ev-0001", "--json"), "NOTHING_MISSING")
    # Nor is any other event that is not fetch_failed, even naming an address never fetched.
    fetched = json.loads(cw.rb.run.events_path.read_text(encoding="utf-8").splitlines()[0])
    append_event(
        cw.rb.run.events_path, type="read", source_id=fetched["source_id"], sha256=fetched["sha256"],
        url="https://example.org/never-fetched", fresh=False, detail="test: an agent read this",
    )  # fmt: skip
    other = str(json.loads(cw.rb.run.events_path.read_text(encoding="utf-8").splitlines()[-1])["event_id"])
    refused(cli("missing", "--run-dir", run, "--claim", "x", "--event", other, "--json"), "NOTHING_MISSING")
    assert len(os.listdir(run / "missingness")) == 1
    # A tampered record no longer resolves.
    os.chmod(path, 0o644)
    path.write_text(
        path.read_text(encoding="utf-8").replace("ACCESS_RESTRICTED", "SURFACE_INCOMPLETE"), encoding="utf-8"
    )
    refused(
        assess_json(cli, cw, "n1", "Caf\u00e9 data lacking.", "NE", "--missingness", path.stem),
        "MISSINGNESS_UNRESOLVED",
    )


def test_edited_log_line_and_tampered_front_matter_fail_the_check(cli: Cli, cw: ClaimsWiki) -> None:
    refused(assess_json(cli, cw, "c1", "It helps.", "S"), "EVIDENCE_REQUIRED")
    assert assess(cli, cw, "c1", "It helps.", "S", "--evidence", cw.labels[0]).status == 0
    assert check_wiki(cw.wiki, policy=policy_of(cw.wiki)).ok
    # A status changed by hand.
    original = cw.concept.read_text(encoding="utf-8")
    cw.concept.write_text(original.replace("status: supported", "status: contradicted"), encoding="utf-8")
    assert claim_findings(cw.wiki) == [("C-CLAIM", "ASSESSMENT_MISMATCH")]
    cw.concept.write_text(original, encoding="utf-8")
    # The rejected attempt turned into an admitted one by editing its line breaks the chain.
    log = cw.wiki / "assessments.jsonl"
    lines = log.read_text(encoding="utf-8").splitlines(keepends=True)
    lines[0] = lines[0].replace('"admitted":false', '"admitted":true')
    log.write_text("".join(lines), encoding="utf-8")
    found = check_wiki(cw.wiki, policy=policy_of(cw.wiki)).findings
    assert ("C-CLAIM", "ASSESSMENT_LOG") in [(f.check, f.field) for f in found]
    # ... and the claim resting on that log is named too: its entry is no longer a trusted fact.
    assert ("claim:c1", "ASSESSMENT_LOG") in [(f.artifact_id, f.field) for f in found]


def test_hand_written_claims_fail_the_check(cw: ClaimsWiki) -> None:
    text = cw.concept.read_text(encoding="utf-8")
    claim = "claims:\n- id: c1\n  statement: It helps.\n  status: supported\n  evidence: []\n  review: REV_FABRICATED\n"
    cw.concept.write_text(text.replace("claims: []\n", claim), encoding="utf-8")
    found = claim_findings(cw.wiki)
    assert ("C-CLAIM", "EVIDENCE_REQUIRED") in found and ("C-CLAIM", "ASSESSMENT_MISSING") in found
    assert ("C-CLAIM", "REVIEW_UNRESOLVED") in found
    confident = "claims:\n- id: c1\n  statement: x\n  status: supported\n  confidence: 0.99\n"
    cw.concept.write_text(text.replace("claims: []\n", confident), encoding="utf-8")
    assert [f.code for f in check_wiki(cw.wiki, policy=policy_of(cw.wiki)).findings] == ["SCHEMA_ERROR"]


def test_tampered_front_matter_fails_the_build_with_the_site_untouched(cli: Cli, cw: ClaimsWiki) -> None:
    assert assess(cli, cw, "c1", "It helps.", "S", "--evidence", cw.labels[0]).status == 0
    build_wiki(cw.wiki)
    before = tree_digest(cw.wiki / "site")
    text = cw.concept.read_text(encoding="utf-8")
    cw.concept.write_text(text.replace(f"- {cw.labels[0]}\n", f"- {cw.labels[1]}\n", 1), encoding="utf-8")
    found = [(f.check, f.file) for f in refused_build(cw.wiki)]
    assert found and all(
        check == "C-CLAIM" and file == cw.concept.relative_to(cw.wiki).as_posix() for check, file in found
    )
    assert tree_digest(cw.wiki / "site") == before
    assert leftovers(cw.wiki) == []


def test_a_later_source_revision_changes_provenance_now_not_admissibility(cli: Cli, cw: ClaimsWiki) -> None:
    assert assess(cli, cw, "c1", "It helps.", "S", "--evidence", cw.labels[0]).status == 0
    entry = read_assessments(cw.wiki).events[-1]
    # An erratum: the journal corrects the full text; the extraction now quotes the corrected one.
    revised_text = cw.a_text + "\n\nErratum: a typographical error in the methods was corrected."
    rec_path = next((cw.rb.run.extractions_dir).iterdir())
    record = json.loads(rec_path.read_text(encoding="utf-8"))
    paper = {"pmid": None, "doi": None, "pmcid": record["evidence_id"].split(":", 1)[1]}
    revised = cw.rb.source(cw.rb.records[cw.a_full]["url"], revised_text, paper=paper)
    for span in record["spans"]:
        if span["source_id"] == cw.a_full:
            span["source_id"] = revised
    rec_path.write_text(json.dumps(record), encoding="utf-8")
    cw.rb.assemble()
    promote(cw.rb.run.path, cw.wiki, concept=CONCEPT, policy=policy_of(cw.wiki))
    wiki = check_wiki(cw.wiki, policy=policy_of(cw.wiki))
    assert wiki.ok, wiki.findings  # history holds: the build does not fail ...
    (state,) = wiki.claims
    assert state.entry is not None and state.entry.assessment_id == entry.assessment_id and state.entry.admitted
    assert not state.provenance_valid and state.provenance  # ... and provenance now says why not
    build_wiki(cw.wiki)
    page = (cw.wiki / "site" / "concepts" / CONCEPT / "index.html").read_text(encoding="utf-8")
    assert "admissible when assessed, provenance invalid now" in page
    shown = json.loads((cw.wiki / "site" / "claims.json").read_text(encoding="utf-8"))["claims"][0]
    assert shown["admissible_when_assessed"] is True and shown["provenance_now"]["valid"] is False


def test_claims_are_published_with_status_counts_and_lineage(cli: Cli, cw: ClaimsWiki) -> None:
    a_labels = cw.labels_of(cw.a_full) + cw.labels_of(cw.a_abstract)
    everything = a_labels + cw.labels_of(cw.b_full)
    args = [x for label in everything for x in ("--evidence", label)]
    assert assess(cli, cw, "s1", "Both trials report an effect.", "S", *args).status == 0
    args = [x for label in a_labels for x in ("--evidence", label)]
    out = assess(cli, cw, "p1", "The first trial reports an effect.", "P", *args, "--condition", "at six <b>months</b>")
    assert out.status == 0, out.err
    build_wiki(cw.wiki)
    site = cw.wiki / "site"
    data = json.loads((site / "claims.json").read_text(encoding="utf-8"))
    counts = {c["id"]: c["counts"] for c in data["claims"]}
    # Full text and abstract of one paper are one work; two papers are two.
    # Nobody but their author has reviewed them: no independent confirmation (section 17).
    assert counts["s1"] == {
        "citations": 4, "excerpts": 4, "snapshots": 3, "urls": 3, "works": 2, "retracted_works": 0,
        "independently_confirmed": 0, "independent_runs": 1,
    }  # fmt: skip
    assert counts["p1"] == {
        "citations": 3, "excerpts": 3, "snapshots": 2, "urls": 2, "works": 1, "retracted_works": 0,
        "independently_confirmed": 0, "independent_runs": 1,
    }  # fmt: skip
    assert {c["warrant"]["state"] for c in data["claims"]} == {"author_proposal"}
    page = (site / "concepts" / CONCEPT / "index.html").read_text(encoding="utf-8")
    assert 'class="admonition success pub-claim"' in page and 'class="admonition warning pub-claim"' in page
    assert "structurally admissible proposal for partially_supported — not adjudicated" in page
    assert "at six &lt;b&gt;months&lt;/b&gt;" in page and "<b>months</b>" not in page  # data, escaped
    assert 'class="language-mermaid"' in page and 'class="mermaid"' not in page
    matrix = (site / "claims" / "index.html").read_text(encoding="utf-8")
    assert "status-S" in matrix and "status-P" in matrix
    # Sparse: each row lists only the works its own excerpts come from (a dense claims x works
    # grid grows with the square of the wiki), with the excerpts per work.
    works = {c["id"]: c["lineage"]["works"] for c in data["claims"]}
    rows = {row.split("</a>")[0].rsplit(">", 1)[-1]: row for row in matrix.split("<tr>")[2:]}
    p1_row = rows["The first trial reports an effect."]
    (p1_work,) = works["p1"]
    other = next(w for w in works["s1"] if w != p1_work)
    assert f'title="{p1_work}"' in p1_row and "×3" in p1_row and f'title="{other}"' not in p1_row
    s1_row = rows["Both trials report an effect."]
    assert all(f'title="{w}"' in s1_row for w in works["s1"])
    assert check_site(site, cw.wiki, policy=policy_of(cw.wiki)).ok


def test_the_source_page_states_the_declared_surface(cw: ClaimsWiki) -> None:
    build_wiki(cw.wiki)
    site = cw.wiki / "site" / "sources"
    declared = (site / cw.a_full / "index.html").read_text(encoding="utf-8")
    assert "Declared surface" in declared and "whole text, complete as declared at acquisition" in declared
    undeclared = (site / cw.b_full / "index.html").read_text(encoding="utf-8")
    assert "whole text, not declared complete" in undeclared
    assert "Declared surface" not in (site / cw.a_abstract / "index.html").read_text(encoding="utf-8")


def test_a_docs_claims_json_is_a_finding_and_the_site_stays(cli: Cli, cw: ClaimsWiki) -> None:
    assert assess(cli, cw, "c1", "It helps.", "S", "--evidence", cw.labels[0]).status == 0
    build_wiki(cw.wiki)
    before = tree_digest(cw.wiki / "site")
    (cw.wiki / "docs" / "claims.json").write_text("[]", encoding="utf-8")
    assert [(f.check, f.file) for f in refused_build(cw.wiki)] == [("C-BUILD", "docs/claims.json")]
    assert tree_digest(cw.wiki / "site") == before and leftovers(cw.wiki) == []


def _concepts_linked_out(cw: ClaimsWiki) -> Path:
    """Move the wiki's ``concepts/`` outside it and leave a symbolic link there; returns the folder."""
    outside = cw.wiki.parent / "outside-concepts"
    (cw.wiki / "concepts").rename(outside)
    (cw.wiki / "concepts").symlink_to(outside)
    return outside


def test_assess_refuses_a_linked_concepts_folder_before_anything_is_logged(cli: Cli, cw: ClaimsWiki) -> None:
    """An admissible claim, but ``concepts/`` links out of the wiki: refused up front (one line,
    naming ``concepts``), no log line, and nothing written where the link points."""
    outside = _concepts_linked_out(cw)
    before, outside_before = tree_digest(cw.wiki), tree_digest(outside)
    out = assess_json(cli, cw, "c1", "The intervention helps.", "S", "--evidence", cw.labels[0])
    assert out.status == 2 and len(out.err_lines) == 1, out.err
    error = out.json()["error"]
    assert (error["reason_code"], error["file"]) == ("SCHEMA_ERROR", "concepts")
    assert tree_digest(cw.wiki) == before and tree_digest(outside) == outside_before


def test_assess_never_writes_a_claim_through_a_concepts_folder_linked_meanwhile(
    cw: ClaimsWiki, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``concepts/`` becomes a link while the assessment is being logged: the claim is not written
    through it (the writer's own refusal, behind the one up front)."""
    from publisher.kernel._fs import LinkedFolderError
    from publisher.wiki import assess as assessing
    from publisher.wiki.claims.admission import Proposal
    from publisher.wiki.concepts import EpistemicStatus

    real_append = assessing.append_assessment
    moved: list[Path] = []

    def append_then_link(*args: Any, **kwargs: Any) -> Any:
        entry = real_append(*args, **kwargs)
        moved.append(_concepts_linked_out(cw))
        return entry

    monkeypatch.setattr(assessing, "append_assessment", append_then_link)
    proposal = Proposal("c1", "The intervention helps.", EpistemicStatus.SUPPORTED, evidence=(cw.labels[0],))
    concept = cw.concept.read_bytes()
    with pytest.raises(LinkedFolderError):
        assessing.assess(cw.wiki, CONCEPT, proposal, signer=None, policy=policy_of(cw.wiki))
    assert (moved[0] / cw.concept.name).read_bytes() == concept
