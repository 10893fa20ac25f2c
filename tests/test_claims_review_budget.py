"""A document review's work budget (CONTRACT section 14): a hostile snapshot or term list is refused.

Every stored review is executed again at every build. A repetitive snapshot with a hundred terms
that match (or nearly match) everywhere would make ``publisher review`` and each build spend tens
of seconds to minutes; the terms of one review share :data:`REVIEW_BUDGET` instead, and a review
whose search would exceed it did not finish searching, so it cannot show that something is absent:
the command refuses it and the build does not count it (``REVIEW_INCOMPLETE``). The inputs below
are big enough that, without the budget, each refusal would take tens of seconds.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from pathlib import Path

import pytest
from _claims_helpers import ClaimsWiki, claims_wiki, whole_text
from _policy import policy_of, run_keys
from conftest import CliResult, make_record
from test_claims_assess import assess_json, refused

from publisher.kernel import locate as locate_module
from publisher.kernel.locate import (
    CHECK_OVERHEAD,
    MAX_CANDIDATES,
    NON_ASCII_COST,
    OCCURRENCE_COST,
    Budget,
    check_cost,
    normalize,
    normalize_map,
    search_term,
)
from publisher.runs import Run
from publisher.wiki.check import check_wiki
from publisher.wiki.claims import admission, reviews
from publisher.wiki.claims import records as records_module
from publisher.wiki.claims.model import Guard
from publisher.wiki.claims.records import ReviewRecord, read_record

Cli = Callable[..., CliResult]
CLAIM = "The trial reports serious adverse events."

WORDS = 3000
HOSTILE_TEXT = "ab\u00a0" * WORDS
"""One short word repeated 3,000 times, each followed by a no-break space (9,000 code points)."""
HOSTILE_TERMS = [" ".join(["ab"] * k) for k in range(150, 250)]
"""100 distinct terms of 150 to 249 words (up to 746 code points), with plain spaces: each occurs
at every word only after normalisation, and each of its first 200 occurrences is checked by
normalising its raw slice again, no-break spaces and all (about a millisecond each): over twenty
seconds for the review without the budget."""


def _review_args(run: Path, source_id: str, terms: list[str]) -> list[str | Path]:
    args: list[str | Path] = ["review", "--run-dir", run, "--source-id", source_id, "--claim", CLAIM]
    args += [f"--term={term}" for term in terms]
    return [*args, "--json"]


def _remembering(real: Callable[..., str]) -> Callable[..., str]:
    """``normalize`` that computes each distinct piece once (it is a pure function): the hostile
    review's raw slices are the same 100 strings over and over, so the review can be written as
    the tool without a budget would write it, quickly."""
    seen: dict[tuple[str, bool], str] = {}

    def normalize(piece: str, *, fold_case: bool = False) -> str:
        key = (piece, fold_case)
        if key not in seen:
            seen[key] = real(piece, fold_case=fold_case)
        return seen[key]

    return normalize


def test_publisher_review_refuses_a_review_over_the_budget_and_writes_nothing(cli: Cli, run: Run) -> None:
    snap, _ = run.store.put(make_record(text=HOSTILE_TEXT))
    out = cli(*_review_args(run.path, snap.source_id, HOSTILE_TERMS))
    refused(out, Guard.REVIEW_INCOMPLETE.value)
    assert out.json()["error"]["source_id"] == snap.source_id
    assert not any((run.path / "reviews").glob("*.json"))
    # The same snapshot with a few specific terms is reviewed as usual.
    fine = cli(*_review_args(run.path, snap.source_id, ["b\u00a0a", "absent"]))
    assert fine.status == 0, fine.err
    hits = fine.json()["record"]["hits"]
    assert len(hits) == MAX_CANDIDATES and {h["match"] for h in hits} == {"exact"}


def test_a_review_too_large_to_be_read_back_is_never_written(cli: Cli, run: Run) -> None:
    # Within the budget (every occurrence is verbatim: found twice, exactly and normalised, each
    # time for OCCURRENCE_COST and a unit per FIND_STRIDE code points, never checked), but 100 long
    # terms of 200 hits each would make a record of about 19 MB, over what a record may be when read.
    snap, _ = run.store.put(make_record(text="a" * 3000))
    out = cli(*_review_args(run.path, snap.source_id, ["a" * k for k in range(901, 1001)]))
    assert out.status == 2 and len(out.err_lines) == 1 and "Traceback" not in out.err, out.err
    assert out.json()["error"]["exit_status"] == 2
    assert not any((run.path / "reviews").glob("*"))
    fine = cli(*_review_args(run.path, snap.source_id, ["a" * k for k in range(901, 911)]))
    assert fine.status == 0, fine.err
    assert len(fine.json()["record"]["hits"]) == 10 * MAX_CANDIDATES


def test_the_agents_review_tool_refuses_it_naming_the_guard_and_the_terms(run: Run) -> None:
    from publisher.mcp.tools import ToolProblem, Workspace, run_document_review

    snap, _ = run.store.put(make_record(text=HOSTILE_TEXT))
    with pytest.raises(ToolProblem) as refusal:
        run_document_review(Workspace(run.path, run_dir=run.path), snap.source_id, CLAIM, HOSTILE_TERMS)
    assert refusal.value.field == "terms"
    assert str(refusal.value).split(":")[0] == f"C-CLAIM {Guard.REVIEW_INCOMPLETE.value}"
    assert "\n" not in str(refusal.value)
    assert not any((run.path / "reviews").glob("*.json"))


def test_ordinary_reviews_stay_far_within_the_budget(cli: Cli, run: Run, corpus_dir: Path) -> None:
    # A real article with the hundred words it uses most (each found up to 200 times), and the
    # same words spelt with a doubled space where the text has one.
    text = sorted((corpus_dir / "evidence-inference" / "texts").glob("PMC*.txt"))[0].read_text(encoding="utf-8")
    snap, _ = run.store.put(make_record(text=text))
    words = [w for w, _ in Counter(text.split()).most_common(100)]
    budget = Budget(reviews.REVIEW_BUDGET)
    mapped = normalize_map(text)
    pairs = [" ".join(text.split()[i : i + 2]) for i in range(0, 400, 4)]
    for term in [*words, *("  ".join(p.split()) for p in pairs)]:
        _, stopped = search_term(text, term, mapped=mapped, budget=budget)
        assert not stopped
    assert reviews.REVIEW_BUDGET - budget.left < reviews.REVIEW_BUDGET // 10
    out = cli(*_review_args(run.path, snap.source_id, words))
    assert out.status == 0, out.err
    assert len(out.json()["record"]["hits"]) > 1000


def test_a_shared_budget_bounds_occurrences_that_are_never_checked() -> None:
    # Every normalised occurrence of 'ifi' starts inside what one ligature produced: it is never
    # checked against a raw slice, and such occurrences cost nothing before, however many.
    text = "\ufb01" * 50_000
    mapped = normalize_map(text)
    unbounded, stopped = search_term(text, "ifi", mapped=mapped)
    assert unbounded == [] and not stopped
    budget = Budget(30_000)
    found, stopped = search_term(text, "ifi", mapped=mapped, budget=budget)
    assert found == [] and stopped and budget.left <= 0
    assert budget.left > -OCCURRENCE_COST
    # One budget for several searches: what the first spent, the second cannot. Each occurrence
    # costs OCCURRENCE_COST and the check of its four raw code points.
    both = [locate_module.Occurrence("normalized", 0, 4), locate_module.Occurrence("normalized", 5, 9)]
    shared = Budget(3 * (OCCURRENCE_COST + CHECK_OVERHEAD + 4))
    assert search_term("a  b a  b", "a b", budget=shared) == (both, False)
    assert search_term("a  b a  b", "a b", budget=shared) == (both[:1], True)
    # A verbatim occurrence is not normalised again (it normalises to the term by definition): it
    # costs OCCURRENCE_COST when found exactly and again when found normalised, nothing more.
    verbatim = Budget(4 * OCCURRENCE_COST)
    assert search_term("a b a b", "a b", budget=verbatim) == (
        [locate_module.Occurrence("exact", 0, 3), locate_module.Occurrence("exact", 4, 7)],
        False,
    )
    assert verbatim.left == 0
    # Normalising a code point outside ASCII again is dearer, and costs more.
    assert check_cost("a b") == CHECK_OVERHEAD + 3 and check_cost("a\u00a0b") == CHECK_OVERHEAD + 2 + NON_ASCII_COST


@pytest.fixture
def cw(tmp_path: Path, corpus_dir: Path) -> ClaimsWiki:
    return claims_wiki(tmp_path / "wiki", corpus_dir)


def test_a_stored_review_over_the_budget_is_not_counted_by_the_build(
    cli: Cli, cw: ClaimsWiki, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A review written as the tool without a budget would have done (remembering
    # the normal form of each distinct slice keeps this setup short), then checked by the build
    # with the budget.
    sid = cw.rb.source("https://example.org/repetitive", HOSTILE_TEXT, surface=whole_text(True))
    # 20,000 hits, each with the sentence around it (a window, in a text with no sentence end),
    # make a record past the size a record may be: allowed here, for writing and reading alike.
    monkeypatch.setattr(records_module, "MAX_RECORD_BYTES", 1 << 30)
    setup = pytest.MonkeyPatch()
    setup.setattr(reviews, "REVIEW_BUDGET", 10**12)
    setup.setattr(locate_module, "normalize", _remembering(normalize))
    written = cli(*_review_args(cw.rb.run.path, sid, HOSTILE_TERMS))
    assert written.status == 0, written.err
    rid = written.json()["review_id"]
    record = written.json()["record"]
    assert record["protocol_complete"] is True and len(record["hits"]) == 100 * MAX_CANDIDATES
    assert {h["match"] for h in record["hits"]} == {"normalized"}
    setup.undo()

    # The build re-executes the stored review within the budget: it stops, so the review grounds
    # nothing (and a review with hits grounds NS only once each hit is adjudicated anyway).
    wiki = check_wiki(cw.wiki, policy=policy_of(cw.wiki))
    assert wiki.ok, [(f.code, f.field, f.detail) for f in wiki.findings]
    review = read_record(cw.rb.run, rid, ReviewRecord)
    ev = next(ev for ev in wiki.runs if ev.run.path == cw.rb.run.path)
    problem = admission.review_grounds(ev, rid, review, review.claim_hash, keys=wiki.policy.trusted_keys)
    assert problem is not None and problem.guard is Guard.REVIEW_INCOMPLETE
    # Admission refuses it too: the same guard.
    refused(assess_json(cli, cw, "ns1", CLAIM, "NS", "--review", rid), Guard.REVIEW_INCOMPLETE.value)


def test_every_review_of_one_snapshot_shares_one_normalisation(run: Run, monkeypatch: pytest.MonkeyPatch) -> None:
    # Every stored review is executed again at every build: the normalisation pass (seconds for a
    # large text outside ASCII) is paid once per snapshot text, not once per review.
    built: list[int] = []
    real = locate_module.normalize_map

    def counting(text: str, *, fold_case: bool = False) -> locate_module.Normalized:
        if len(text) > 100:  # a snapshot's text, not a term
            built.append(len(text))
        return real(text, fold_case=fold_case)

    monkeypatch.setattr(locate_module, "normalize_map", counting)
    text = "\ufb01ne\u00a0caf\u00e9 adverse events " * 400 + "once per process"
    snap, _ = run.store.put(make_record(text=text))
    first = reviews.build_review(run, snap.source_id, CLAIM, ["adverse", "e\u0301v"], keys=run_keys(run))
    again = [
        reviews.build_review(run, snap.source_id, CLAIM, ["adverse", "e\u0301v"], keys=run_keys(run)) for _ in range(3)
    ]
    assert built == [len(text)]
    assert all(r.model_copy(update={"created_at": first.created_at}) == first for r in again)
    assert {h.match for h in first.hits} == {"exact"} and len(first.hits) == MAX_CANDIDATES
    # Other texts are normalised once each; the least recently used is let go past the bound.
    others = [f"other text {i} " * 50 for i in range(locate_module.MAX_REMEMBERED)]
    for other in others:
        locate_module.normal_form(other)
        locate_module.normal_form(other)
    assert built == [len(text), *map(len, others)]
    reviews.build_review(run, snap.source_id, CLAIM, ["adverse"], keys=run_keys(run))
    assert built == [len(text), *map(len, others), len(text)]
    # And past the bound in code points, all but the most recent text are let go.
    monkeypatch.setattr(locate_module, "REMEMBERED_CODE_POINTS", len(text))
    newest = "the newest text " * 50
    locate_module.normal_form(newest)
    locate_module.normal_form(newest)
    locate_module.normal_form(text)
    assert built[-3:] == [len(text), len(newest), len(text)]
