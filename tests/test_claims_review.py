"""Document reviews and NS on real articles (CONTRACT section 14): the tool searches, binds, refuses."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from _claims_helpers import ClaimsWiki, claims_wiki
from _policy import policy_of, run_keys
from conftest import CliResult, minimal_pdf
from test_claims_assess import assess, assess_json, claim_findings, refused

from publisher.acquire.sources import Declaration, add_local_pdf
from publisher.kernel import _fs
from publisher.kernel.canonical import canonical_bytes
from publisher.wiki.check import check_wiki
from publisher.wiki.claims.records import ReviewRecord, record_id

Cli = Callable[..., CliResult]
CLAIM = "The trial reports serious adverse events."


@pytest.fixture
def cw(tmp_path: Path, corpus_dir: Path) -> ClaimsWiki:
    return claims_wiki(tmp_path / "wiki", corpus_dir)


def review(cli: Cli, cw: ClaimsWiki, source_id: str, claim: str, *args: str) -> CliResult:
    out = cli("review", "--run-dir", cw.rb.run.path, "--source-id", source_id, "--claim", claim, *args, "--json")
    assert out.status == 0, out.err
    return out


def a_phrase(cw: ClaimsWiki) -> str:
    """Three words of article A as they stand in its text."""
    words = cw.a_text[600:].split()
    return " ".join(words[:3])


def test_ns_needs_a_complete_review_of_the_same_claim_and_is_bound_to_it(cli: Cli, cw: ClaimsWiki) -> None:
    first = review(cli, cw, cw.a_full, CLAIM, "--term", "serious adverse event", "--term", a_phrase(cw)).json()
    record = first["record"]
    assert record["protocol_complete"] is True and record["surface_complete"] is True
    assert any(h["term"] == a_phrase(cw) for h in record["hits"])
    for hit in record["hits"]:
        assert cw.a_text[hit["start"] : hit["end"]].split() == hit["term"].split() or hit["match"] == "normalized"
    other = review(cli, cw, cw.a_full, "A different claim.", "--term", "adverse").json()
    refused(assess_json(cli, cw, "ns1", CLAIM, "NS", "--review", other["review_id"]), "REVIEW_OTHER_CLAIM")
    # Its terms were found: NS rests on it only once a person has adjudicated every hit.
    refused(assess_json(cli, cw, "ns1", CLAIM, "NS", "--review", first["review_id"]), "REVIEW_UNADJUDICATED")
    for number in range(1, len(record["hits"]) + 1):
        done = cli("review", "adjudicate", "--run-dir", cw.rb.run.path, "--review", first["review_id"],
                   "--hit", str(number), "--reason", "names the phrase, not the claim")  # fmt: skip
        assert done.status == 0, done.err
    assert assess(cli, cw, "ns1", CLAIM, "NS", "--review", first["review_id"]).status == 0
    assert check_wiki(cw.wiki, policy=policy_of(cw.wiki)).ok
    # A later review of the same claim cannot revalidate or replace the bound one by hand.
    later = review(cli, cw, cw.a_full, CLAIM, "--term", "serious adverse event", "--term", "death").json()
    assert later["review_id"] != first["review_id"]
    text = cw.concept.read_text(encoding="utf-8")
    cw.concept.write_text(text.replace(first["review_id"], later["review_id"]), encoding="utf-8")
    assert claim_findings(cw.wiki) == [("C-CLAIM", "ASSESSMENT_MISMATCH")]


def test_partial_extraction_cannot_give_a_complete_review(cli: Cli, cw: ClaimsWiki, tmp_path: Path) -> None:
    words = cw.a_text.split()
    pages = [" ".join(w for w in words[i * 10 : i * 10 + 10] if w.isascii()) for i in range(2)]
    pdf = tmp_path / "paper.pdf"
    pdf.write_bytes(minimal_pdf(pages))
    declared = Declaration(expected_page_count=12)
    snap = add_local_pdf(cw.rb.run, pdf, cw.wiki, declaration=declared).snapshot
    assert snap.surface is not None and snap.surface.missing_pages == tuple(range(3, 13))
    partial = review(cli, cw, snap.source_id, CLAIM, "--term", "adverse").json()
    assert partial["record"]["protocol_complete"] is False
    refused(assess_json(cli, cw, "ns1", CLAIM, "NS", "--review", partial["review_id"]), "REVIEW_INCOMPLETE")
    # Undeclared full text: never complete, whatever was extracted.
    undeclared = review(cli, cw, cw.b_full, CLAIM, "--term", "adverse").json()
    assert undeclared["record"]["surface_complete"] is False
    refused(assess_json(cli, cw, "ns1", CLAIM, "NS", "--review", undeclared["review_id"]), "REVIEW_INCOMPLETE")
    # The same PDF's missing pages are a missingness fact instead.
    mis = cli("missing", "--run-dir", cw.rb.run.path, "--claim", CLAIM, "--source-id", snap.source_id, "--json")
    assert mis.status == 0 and mis.json()["record"]["kind"] == "SURFACE_INCOMPLETE"


def test_semantic_queries_remain_visibly_unexecuted(cli: Cli, cw: ClaimsWiki) -> None:
    plain = review(cli, cw, cw.a_full, CLAIM, "--term", "adverse").json()["record"]
    asked = review(
        cli, cw, cw.a_full, CLAIM, "--term", "adverse", "--semantic-query", "does the trial discuss harms?"
    ).json()["record"]
    assert asked["semantic_queries_declared_not_executed"] == ["does the trial discuss harms?"]
    assert asked["semantic_search_executed"] is False
    assert asked["executed_review_trace_hash"] == plain["executed_review_trace_hash"]  # nothing more was executed
    assert asked["review_contract_hash"] != plain["review_contract_hash"]  # but more was declared
    human = cli("review", "--run-dir", cw.rb.run.path, "--source-id", cw.a_full, "--claim", CLAIM, "--term", "adverse",
                "--semantic-query", "does the trial discuss harms?")  # fmt: skip
    assert human.status == 0 and "does the trial discuss harms?" in human.out  # the declared query is shown too


def test_reviews_are_idempotent_and_terms_are_found_normalised(cli: Cli, cw: ClaimsWiki) -> None:
    phrase = a_phrase(cw)
    spaced = "  ".join(phrase.split())  # a doubled space the text does not have
    first = review(cli, cw, cw.a_full, CLAIM, "--term", spaced).json()
    again = review(cli, cw, cw.a_full, "The  trial reports serious\nadverse events. ", "--term", spaced).json()
    assert again["review_id"] == first["review_id"] and again["created"] is False
    assert again["record"]["created_at"] == first["record"]["created_at"]
    hits = first["record"]["hits"]
    assert hits and all(h["match"] == "normalized" for h in hits)
    assert all(cw.a_text[h["start"] : h["end"]].split() == phrase.split() for h in hits)


def test_a_review_not_written_by_the_tool_does_not_resolve(cli: Cli, cw: ClaimsWiki) -> None:
    honest = review(cli, cw, cw.b_full, CLAIM, "--term", "adverse").json()
    forged = ReviewRecord.model_validate({**honest["record"], "surface_complete": True, "protocol_complete": True})
    rid = record_id(forged)
    _fs.create_exclusive(cw.rb.run.path / "reviews" / f"{rid}.json", canonical_bytes(forged.model_dump(mode="json")))
    refused(assess_json(cli, cw, "ns1", CLAIM, "NS", "--review", rid), "REVIEW_UNRESOLVED")
    assert json.loads((cw.rb.run.path / "reviews" / f"{rid}.json").read_text())["protocol_complete"] is True
    # A forged record the tool would refuse to execute (an empty term) is refused, never a crash.
    odd = ReviewRecord.model_validate(
        {**forged.model_dump(mode="json"), "search_terms": ["   "], "hits": [], "protocol_complete": True}
    )
    odd_id = record_id(odd)
    _fs.create_exclusive(cw.rb.run.path / "reviews" / f"{odd_id}.json", canonical_bytes(odd.model_dump(mode="json")))
    refused(assess_json(cli, cw, "ns1", CLAIM, "NS", "--review", odd_id), "REVIEW_UNRESOLVED")


def test_a_review_normalises_its_snapshot_once_for_all_its_terms(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    # Every term is also searched normalised; normalising the whole text again for each of up to
    # 100 terms made one review (and each re-execution by the wiki check) cost 100 passes over it.
    from conftest import make_record

    from publisher.kernel import locate as locator
    from publisher.runs import init_run
    from publisher.wiki.claims import reviews
    from publisher.wiki.claims.reviews import build_review

    run = init_run(tmp_path / "run", "run")
    snap, _ = run.store.put(make_record(text="The trial \u201crandomised\u201d 120 children \u2013 SMD \u22120.41."))
    calls = [0]
    real_map = locator.normalize_map

    def counted(value: str, **kwargs: object) -> locator.Normalized:
        calls[0] += value == snap.text
        return real_map(value, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(locator, "normalize_map", counted)
    monkeypatch.setattr(reviews, "normalize_map", counted, raising=False)
    terms = ['"randomised"', "children - SMD", "-0.41", *(f"absent term {i}" for i in range(20))]
    record = build_review(run, snap.source_id, CLAIM, terms, keys=run_keys(run))
    found = {(h.term, h.match) for h in record.hits}
    assert found == {('"randomised"', "normalized"), ("children - SMD", "normalized"), ("-0.41", "normalized")}
    assert calls[0] == 1


def test_a_review_never_writes_through_a_linked_reviews_folder(cli: Cli, cw: ClaimsWiki, tmp_path: Path) -> None:
    """A received run whose ``reviews/`` is a link elsewhere: the tool refuses, writing nothing there."""
    outside = tmp_path / "outside"
    outside.mkdir()
    reviews = cw.rb.run.path / "reviews"
    if reviews.exists():
        reviews.rename(tmp_path / "old-reviews")
    reviews.symlink_to(outside)
    run = cw.rb.run.path
    done = cli("review", "--run-dir", run, "--source-id", cw.b_full, "--claim", CLAIM, "--term", "adverse", "--json")
    assert done.status == 2 and len(done.err_lines) == 1, done.err
    assert list(outside.iterdir()) == []
