"""Hostile files around claims: links, FIFOs, torn and deleted lines, bad ids. Each is refused with
one line or a finding naming its guard; nothing half-written."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest
from _claims_helpers import ClaimsWiki, claims_wiki
from conftest import CliResult
from test_claims_assess import assess, assess_json, claim_findings, refused

from publisher.wiki.claims.log import read_assessments

Cli = Callable[..., CliResult]


@pytest.fixture
def cw(tmp_path: Path, corpus_dir: Path) -> ClaimsWiki:
    return claims_wiki(tmp_path / "wiki", corpus_dir)


def _admitted(cli: Cli, cw: ClaimsWiki) -> None:
    assert assess(cli, cw, "c1", "It helps.", "S", "--evidence", cw.labels[0]).status == 0


def test_a_linked_log_is_refused(cli: Cli, cw: ClaimsWiki, tmp_path: Path) -> None:
    _admitted(cli, cw)
    log = cw.wiki / "assessments.jsonl"
    elsewhere = tmp_path / "elsewhere.jsonl"
    os.replace(log, elsewhere)
    log.symlink_to(elsewhere)
    assert ("C-CLAIM", "ASSESSMENT_LOG") in claim_findings(cw.wiki)
    out = assess(cli, cw, "c2", "It harms.", "C", "--evidence", cw.labels[0])
    assert out.status == 1 and len(out.err_lines) == 1


def test_a_torn_or_shortened_log_is_evident(cli: Cli, cw: ClaimsWiki) -> None:
    refused(assess_json(cli, cw, "c1", "It helps.", "S"), "EVIDENCE_REQUIRED")
    _admitted(cli, cw)
    log = cw.wiki / "assessments.jsonl"
    data = log.read_bytes()
    log.write_bytes(data + b'{"schema_version": 1, "assess')  # torn: no newline
    before = cw.concept.read_bytes()
    out = assess(cli, cw, "c2", "It harms.", "C", "--evidence", cw.labels[0])
    assert out.status == 1 and len(out.err_lines) == 1  # appends refused until a person repairs it
    assert cw.concept.read_bytes() == before
    assert ("C-CLAIM", "ASSESSMENT_LOG") in claim_findings(cw.wiki)
    # A deleted first line (the rejected attempt) breaks the chain of the next.
    lines = data.splitlines(keepends=True)
    log.write_bytes(b"".join(lines[1:]))
    assert not read_assessments(cw.wiki).intact
    assert ("C-CLAIM", "ASSESSMENT_LOG") in claim_findings(cw.wiki)


def test_linked_or_special_records_do_not_resolve(cli: Cli, cw: ClaimsWiki, tmp_path: Path) -> None:
    run = cw.rb.run.path
    out = cli("review", "--run-dir", run, "--source-id", cw.a_full, "--claim", "X.", "--term", "adverse", "--json")
    rid = out.json()["review_id"]
    path = run / "reviews" / f"{rid}.json"
    moved = tmp_path / "review.json"
    os.replace(path, moved)
    path.symlink_to(moved)
    refused(assess_json(cli, cw, "n1", "X.", "NS", "--review", rid), "REVIEW_UNRESOLVED")
    (run / "missingness").mkdir()
    fifo = run / "missingness" / ("mis-" + "a" * 64 + ".json")
    os.mkfifo(fifo)
    refused(assess_json(cli, cw, "n2", "Y.", "NE", "--missingness", fifo.stem), "MISSINGNESS_UNRESOLVED")
    # Both attempts are logged as rejected, and neither claim reached the front matter.
    assert [e.admitted for e in read_assessments(cw.wiki).events] == [False, False]
    assert cw.front().claims == ()


def test_a_new_assessment_replaces_the_claim_and_keeps_the_history(cli: Cli, cw: ClaimsWiki) -> None:
    _admitted(cli, cw)
    assert assess(cli, cw, "c1", "It helps.", "C", "--evidence", cw.labels[0]).status == 0
    (claim,) = cw.front().claims
    assert claim.status.value == "contradicted" and claim.assessment == "as-0002"
    assert [e.status.value for e in read_assessments(cw.wiki).events] == ["supported", "contradicted"]
    assert claim_findings(cw.wiki) == []


def test_bad_arguments_are_one_line_usage_errors(cli: Cli, cw: ClaimsWiki) -> None:
    for args in (
        ("--claim-id", "../up", "--statement", "X.", "--status", "S"),
        ("--claim-id", "c1", "--statement", "  ", "--status", "S"),
        ("--claim-id", "c1", "--statement", "X.", "--status", "likely"),
    ):
        out = cli("assess", "--wiki", cw.wiki, "--concept", "trials", *args)
        assert out.status == 2 and len(out.err_lines) == 1, out.err
    out = cli(
        "assess", "--wiki", cw.wiki, "--concept", "../etc", "--claim-id", "c", "--statement", "X", "--status", "S"
    )
    assert out.status == 2 and len(out.err_lines) == 1
    assert not (cw.wiki / "assessments.jsonl").exists()  # usage errors are not attempts


def test_a_confidence_has_no_way_in(cli: Cli, cw: ClaimsWiki) -> None:
    out = assess(cli, cw, "c1", "It helps.", "S", "--evidence", cw.labels[0], "--confidence", "0.99")
    assert out.status == 2 and len(out.err_lines) == 1  # no such option
    assert not (cw.wiki / "assessments.jsonl").exists()
