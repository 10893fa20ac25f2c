"""Searches over hostile text stop at a work budget, and say so: never "nothing found" unfinished.

The quote locator's normalised and fragments tiers, the term search behind ``source spans`` and the
agents' ``find_spans``, and a case-insensitive search can each be made to do far more work than
their answer shows: a term that lands inside every ligature (every occurrence fails the re-check,
none counts towards the limit), a quote of 32 one-word fragments over a text of that word, a long
case-insensitive term that almost matches everywhere. Each input below took seconds to tens of
seconds before; now the search stops at its budget (``Budget``, counted in work, never seconds),
a command or tool that stopped having found nothing refuses in one line, one that found some
marks its answer ``truncated``, and a diagnostic names no candidate. The tests assert on those
outcomes, never on time.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from _policy import options_of
from conftest import CliResult, make_record
from hypothesis import given, settings
from hypothesis import strategies as st

from publisher.kernel import locate as locate_module
from publisher.kernel.findings import Located, LocateOutcome
from publisher.kernel.locate import (
    LOCATE_BUDGET,
    MAX_CANDIDATES,
    Budget,
    locate,
    normalize,
    search_quote,
    search_term,
)
from publisher.runs import Run

Cli = Callable[..., CliResult]

WORDS_TEXT = "a " * 30_000
"""One one-letter word, 30,000 times."""
FRAGMENTS_QUOTE = " ... ".join(" ".join(["a"] * k) for k in range(1, 33))
"""32 parts (one word, two, ... 32) split at ellipses: every part occurs at every word, and each
occurrence is checked by normalising its raw slice again (about seven seconds without a budget)."""

LIGATURES = "\ufb01" * 100_000
"""The ``fi`` ligature 100,000 times: its normal form is ``fifi...``."""
INSIDE = "i" + "fi" * 999
"""A 1,999-code-point term found, after normalisation, at every ligature but always starting inside
what one ligature produced: no occurrence has a raw slice, none counts towards a limit, and each
is a fresh search of the whole term (two seconds to find nothing without a budget)."""

SPACED = "x\u00a0" * 1300
"""A word and a no-break space, 1,300 times."""
SPACED_QUOTE = " ".join(["x"] * 1000)
"""1,000 words with plain spaces: found only after normalisation, at every word, and each of the
occurrences is checked by normalising 2,000 raw code points, half of them no-break spaces."""


def _source(run: Run, text: str) -> str:
    snap, _ = run.store.put(make_record(text=text))
    return snap.source_id


def _refused(out: CliResult, source_id: str, field: str) -> None:
    """A search refused for stopping at its budget: one line, exit 2, the option named."""
    assert out.status == 2 and len(out.err_lines) == 1 and "Traceback" not in out.err, out.err
    error = out.json()["error"]
    assert error["exit_status"] == 2 and error["reason_code"] is None
    assert error["source_id"] == source_id and error["field"] == field


# -- the kernel ---------------------------------------------------------------------------------


def test_a_quote_of_many_fragments_found_everywhere_stops_at_the_budget() -> None:
    budget = Budget(LOCATE_BUDGET)
    found, stopped = search_quote(WORDS_TEXT, FRAGMENTS_QUOTE, budget=budget)
    assert (found, stopped) == ([], True)  # stopped: the empty list means "not known"
    assert -100 < budget.left <= 0  # stopped at the step that spent it (each costs under 100 here)
    # An ordinary fragments quote is located as without a budget, within a small one.
    text = "The trial randomised 120 children to zinc or placebo; 12 withdrew before the end."
    quote = "randomised 120 children \u2026 12 withdrew"
    budget = Budget(2_000)
    found, stopped = search_quote(text, quote, budget=budget)
    assert not stopped and found == locate(text, quote) and [c.kind for c in found] == ["fragments"]
    assert 0 < budget.left < 2_000


def test_chaining_fragments_is_paid_for() -> None:
    # Every 'a' but the last few is too far from the one 'b' for a span: each chain is tried and
    # thrown away. A budget that pays for finding the parts but not for those chains stops.
    text, quote = "a " * 20_000 + "b", "a \u2026 b"
    found, stopped = search_quote(text, quote, budget=LOCATE_BUDGET)
    assert not stopped and found and {c.kind for c in found} == {"fragments"}
    # The same parts the other way round: found alike, but no chain to try past the first.
    parts = Budget(LOCATE_BUDGET)
    assert search_quote(text, "b \u2026 a", budget=parts) == ([], False)
    assert search_quote(text, quote, budget=LOCATE_BUDGET - parts.left + 1000) == ([], True)


def test_occurrences_that_never_count_towards_the_limit_are_paid_for() -> None:
    mapped = locate_module.normal_form(LIGATURES)
    assert search_term(LIGATURES, INSIDE, mapped=mapped, budget=LOCATE_BUDGET) == ([], True)
    assert search_quote(LIGATURES, INSIDE, mapped=mapped, budget=LOCATE_BUDGET) == ([], True)


def test_a_search_that_stops_keeps_what_it_found_and_says_so() -> None:
    found, stopped = search_quote(SPACED, SPACED_QUOTE, budget=LOCATE_BUDGET)
    assert stopped and 0 < len(found) < MAX_CANDIDATES
    assert {c.kind for c in found} == {"normalized"}
    assert all(normalize(SPACED[c.start : c.end]) == SPACED_QUOTE for c in found)
    assert [c.start for c in found] == list(range(0, 2 * len(found), 2))  # the first ones, in order
    # Without a budget: every one of the first MAX_CANDIDATES.
    assert len(locate(SPACED, SPACED_QUOTE)) == MAX_CANDIDATES


def test_verbatim_occurrences_of_a_long_term_are_paid_for() -> None:
    # Finding the next occurrence of a long term starts over with the whole term: every position of
    # 200,000 would take seconds where a caller asks for all of them.
    text, term = "a" * 200_000, "a" * 2000
    hits, stopped = search_term(text, term, limit=len(text) + 1, budget=LOCATE_BUDGET)
    assert stopped and 0 < len(hits) < len(text) - len(term)
    assert all(h.kind == "exact" and text[h.start : h.end] == term for h in hits)


def _ignorecase(text: str, term: str) -> list[tuple[int, int]]:
    """What the case-insensitive search found before it was made linear: every overlapping
    ``re.IGNORECASE`` match of the term."""
    pattern = re.compile(re.escape(term), re.IGNORECASE)
    out, pos = [], 0
    while (m := pattern.search(text, pos)) is not None:
        out.append((m.start(), m.end()))
        pos = m.start() + 1
    return out


CASED = "aAsSkK\u017f\u212a\u00df\u1e9e\u0131\u0130iI\u03c3\u03c2\u03a3\u00b5\u03bc\u0345\u03b9\u1fbe\ufb01 ."


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=CASED, max_size=40), st.text(alphabet=CASED, min_size=1, max_size=4))
def test_a_case_insensitive_search_finds_what_the_regular_expression_finds(text: str, term: str) -> None:
    if not term.strip():
        return
    found, _ = search_term(text, term, fold_case=True, limit=len(text) + 1)
    exact = [(o.start, o.end) for o in found if o.kind == "exact"]
    assert exact == _ignorecase(text, term)


def test_the_case_key_is_never_finer_than_the_regular_expression() -> None:
    # Any two code points one case-insensitive regular expression takes for each other share a key
    # (else the linear search would miss a match): over the BMP's letters, each with its cases.
    key = locate_module._case_key
    for cp in [*range(0x0, 0x3000), *range(0xA640, 0xA800), *range(0xFB00, 0xFF80), 0x10400, 0x1E900]:
        c = chr(cp)
        for other in {c.lower(), c.upper(), c.casefold(), c.swapcase(), c.title()}:
            if len(other) == 1 and re.fullmatch(re.escape(c), other, re.IGNORECASE):
                assert key(c) == key(other), (hex(cp), other)


def test_a_long_case_insensitive_term_is_searched_in_linear_time() -> None:
    # Scanning with the regular expression was the text's length times the term's (seconds here);
    # the key search finds no candidate at all.
    assert search_term("a" * 300_000, "A" * 1999 + "B", fold_case=True, budget=LOCATE_BUDGET) == ([], False)
    # Where the key is coarser than the regular expression (sharp s and s), every failed
    # confirmation is paid for.
    hits, stopped = search_term("\u00df" * 200_000, "s" * 500, fold_case=True, budget=LOCATE_BUDGET)
    assert (hits, stopped) == ([], True)


# -- the commands -------------------------------------------------------------------------------


def test_source_locate_refuses_a_search_that_stopped_with_nothing_found(run: Run, cli: Cli) -> None:
    sid = _source(run, WORDS_TEXT)
    out = cli("source", "locate", "--run-dir", run.path, "--source-id", sid, "--quote", FRAGMENTS_QUOTE, "--json")
    assert out.status == 2 and "candidates" not in out.json()  # refused: never exit 1, "nothing found"
    _refused(out, sid, "quote")


def test_source_locate_marks_a_search_that_stopped_after_finding_some(run: Run, cli: Cli) -> None:
    sid = _source(run, SPACED)
    out = cli("source", "locate", "--run-dir", run.path, "--source-id", sid, "--quote", SPACED_QUOTE, "--json")
    assert out.status == 0, out.err
    found = out.json()
    assert found["truncated"] is True and 0 < len(found["candidates"]) < MAX_CANDIDATES
    # An ordinary quote: the contract's shape, no truncated key.
    fine = cli("source", "locate", "--run-dir", run.path, "--source-id", sid, "--quote", "x x x", "--json")
    assert fine.status == 0 and set(fine.json()) == {"source_id", "quote", "candidates"}


def test_source_spans_refuses_a_search_that_stopped_with_nothing_found(run: Run, cli: Cli) -> None:
    sid = _source(run, LIGATURES)
    base: list[Any] = ["source", "spans", "--run-dir", run.path, "--source-id", sid, "--query", INSIDE]
    _refused(cli(*base, "--json"), sid, "query")
    _refused(cli(*base, "--sentence", "--json"), sid, "query")
    ranged: list[Any] = ["source", "spans", "--run-dir", run.path, "--source-id", sid, "--from", INSIDE]
    _refused(cli(*ranged, "--to", "fi", "--json"), sid, "from_text")
    # An ordinary query over the same snapshot: its matches, not truncated.
    fine = cli("source", "spans", "--run-dir", run.path, "--source-id", sid, "--query", "\ufb01\ufb01", "--json")
    assert fine.status == 0 and len(fine.json()["matches"]) == MAX_CANDIDATES and "truncated" not in fine.json()


def test_source_spans_marks_a_search_that_stopped_after_finding_some(run: Run, cli: Cli) -> None:
    sid = _source(run, SPACED * 2)
    out = cli("source", "spans", "--run-dir", run.path, "--source-id", sid, "--query", SPACED_QUOTE, "--json")
    assert out.status == 0, out.err
    found = out.json()
    assert found["truncated"] is True and 0 < len(found["matches"]) < MAX_CANDIDATES


# -- the agents' tools --------------------------------------------------------------------------


def test_the_tools_refuse_or_mark_a_search_that_stopped(run: Run) -> None:
    from publisher.kernel.reasons import Reason
    from publisher.mcp.tools import ToolProblem, Workspace, check_span, find_spans, locate_quote

    ws = Workspace(run.path, run_dir=run.path)
    words, spaced, ligatures = _source(run, WORDS_TEXT), _source(run, SPACED), _source(run, LIGATURES)
    with pytest.raises(ToolProblem) as refusal:
        locate_quote(ws, words, FRAGMENTS_QUOTE)
    assert refusal.value.reason is None and "\n" not in str(refusal.value)
    with pytest.raises(ToolProblem):
        find_spans(ws, ligatures, query=INSIDE)
    marked = locate_quote(ws, spaced, SPACED_QUOTE)
    assert marked["truncated"] is True and 0 < len(marked["candidates"]) < MAX_CANDIDATES
    # A diagnostic that runs out names no candidate (not even one of those it found before it
    # stopped: a nearer one may lie past them); the verdict stands.
    for sid, quote in ((words, FRAGMENTS_QUOTE), (spaced, SPACED_QUOTE)):
        checked = check_span(ws, sid, 1, 4, quote=quote)
        assert checked["ok"] is False
        (finding,) = checked["findings"]
        assert finding["reason_code"] == Reason.EXCERPT_MISMATCH.value and finding["nearest_candidate"] is None
        assert finding["truncated"] is True  # told apart from a quote found nowhere
    # An ordinary mismatch still names its candidate; one found nowhere says it finished.
    checked = check_span(ws, words, 0, 3, quote="a  a")
    assert checked["findings"][0]["nearest_candidate"] == {"kind": "normalized", "start": 0, "end": 3}
    (nowhere,) = check_span(ws, words, 0, 3, quote="no such words")["findings"]
    assert nowhere["nearest_candidate"] is None and "truncated" not in nowhere


# -- the gate's diagnostics ---------------------------------------------------------------------


def test_an_excerpt_mismatch_whose_search_runs_out_names_no_candidate(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from _gate_helpers import make_run

    from publisher.gate.assemble import assemble_run
    from publisher.kernel import locate

    fx = make_run(tmp_path, report=False)
    record = fx.extraction(0)
    quoted = record["outcomes"][0]["spans"][0]
    start, end = quoted["start"], quoted["end"]
    quoted.update(text="  ".join(quoted["text"].split()) + " ")  # found only after normalisation
    fx.put_extraction(0, record)
    (finding,) = [f for f in assemble_run(fx.run, options_of(fx.run)).findings if f.code == "EXCERPT_MISMATCH"]
    assert finding.located == Located(LocateOutcome.LOCATED, "normalized", start, end, 1)
    # The same mismatch once the assembly's search budget cannot pay for it: the same finding,
    # with no candidate named.
    monkeypatch.setattr(locate, "LOCATE_BUDGET", 0)  # read where the first mismatch is located
    (finding,) = [f for f in assemble_run(fx.run, options_of(fx.run)).findings if f.code == "EXCERPT_MISMATCH"]
    assert finding.field == "outcomes[0].spans[0]" and finding.located == Located(LocateOutcome.BUDGET)
    assert finding.to_dict()["located"]["outcome"] == "BUDGET"


def test_a_rejected_citation_whose_search_runs_out_names_no_candidate(
    run: Run, monkeypatch: pytest.MonkeyPatch
) -> None:
    from publisher.gate import citations

    snap, _ = run.store.put(make_record(text=WORDS_TEXT))
    candidates, outcome = citations._Locator()(snap, FRAGMENTS_QUOTE)
    assert candidates == () and outcome is LocateOutcome.BUDGET
    # An ordinary rejected citation is located; one budget is shared by the whole import.
    locator = citations._Locator()
    candidates, outcome = locator(snap, "a  a")
    assert [c.kind for c in candidates] == ["normalized"] * MAX_CANDIDATES and outcome is LocateOutcome.LOCATED
    # A budget that stops the search after its first candidate: none is named (a nearer one may lie
    # past it).
    monkeypatch.setattr(citations, "LOCATE_BUDGET", 1)
    candidates, outcome = citations._Locator()(snap, "a  a")
    assert candidates == () and outcome is LocateOutcome.BUDGET


def test_the_normal_forms_kept_are_safe_under_threads() -> None:
    """The tool server runs its tools on worker threads: concurrent searches of many texts, with
    the kept forms let go now and then, never fail and never answer for another text."""
    import sys
    import threading

    texts = [f"text {i} caf\u00e9 " * (20 + i) for i in range(12)]
    errors: list[str] = []

    def work(k: int) -> None:
        try:
            for j in range(200):
                text = texts[(j * 7 + k) % len(texts)]
                if locate_module.normal_form(text).text != locate_module.normalize_map(text).text:
                    errors.append(f"another text's normal form for text {(j * 7 + k) % len(texts)}")
                if j % 97 == 0:
                    locate_module.forget_normal_forms()
        except Exception as exc:  # any failure in a thread is the finding
            errors.append(repr(exc))

    switch = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # switch threads as often as possible
    try:
        threads = [threading.Thread(target=work, args=(k,)) for k in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    finally:
        sys.setswitchinterval(switch)
    assert errors == [] and len(locate_module._remembered) <= locate_module.MAX_REMEMBERED


def test_the_normal_forms_kept_are_bounded_by_their_own_length(monkeypatch: pytest.MonkeyPatch) -> None:
    """One raw code point can normalise to eighteen (U+FDFA): the bound counts the normal forms
    kept, not the raw texts, so a short text with a long normal form cannot hold its memory."""
    monkeypatch.setattr(locate_module, "REMEMBERED_CODE_POINTS", 100_000)
    locate_module.forget_normal_forms()
    expanding = "\ufdfa" * 10_000  # 10,000 raw code points, 180,000 normalised
    assert len(locate_module.normal_form(expanding).text) > 100_000
    locate_module.normal_form("a short text " * 10)  # the newest: the older long form goes
    assert [text for text, _ in locate_module._remembered] == ["a short text " * 10]
    locate_module.forget_normal_forms()


def test_a_range_whose_to_search_stopped_counts_no_unknown_as_skipped(
    run: Run, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A --from/--to selection whose --to search stopped at its budget short of its --from search
    (five --to texts for each --from): an occurrence of --from whose --to may lie where the search
    did not reach is not known to be too far, so it is not counted in ``skipped`` (the result says
    ``truncated``)."""
    from publisher.acquire import select as select_module

    sid = _source(run, ("begin " + "end. " * 5 + "filler ") * 150)
    whole = select_module.select_spans(run, sid, from_text="begin", to_text="end.")
    assert whole["skipped"] == 0 and not whole["truncated"] and len(whole["matches"]) == 150
    monkeypatch.setattr(select_module, "SEARCH_BUDGET", 200)  # each search stops after some 65 occurrences
    cut = select_module.select_spans(run, sid, from_text="begin", to_text="end.")
    assert cut["truncated"] is True and 0 < len(cut["matches"]) < 20
    assert cut["skipped"] == 0
    # An occurrence too far from every --to found before the frontier is still counted.
    sid = _source(run, "begin " + "x" * 3000 + " " + "begin middle end. " * 100)
    cut = select_module.select_spans(run, sid, from_text="begin", to_text="end.")
    assert cut["truncated"] is True and cut["skipped"] == 1
