"""The quote locator: exact, normalised and fragment candidates mapped to raw code-point offsets.

Real articles from the shared corpus (skipped when ``../shared`` is absent), hand-made texts for
what the corpus lacks (non-BMP characters, ligatures, fullwidth forms), and hypothesis properties:
every candidate's raw slice normalises to the normalised quote.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from _policy import options_of
from conftest import CliResult, make_record
from hypothesis import example, given, settings
from hypothesis import strategies as st

from publisher.kernel import locate as locate_module
from publisher.kernel.findings import Located, LocateOutcome
from publisher.kernel.locate import (
    Candidate,
    Normalized,
    find_term,
    locate,
    nearest,
    normalize,
    normalize_map,
    split_fragments,
)
from publisher.kernel.spans import MAX_SPAN
from publisher.runs import Run

Cli = Callable[..., CliResult]


# -- the corpus -------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def spans(corpus_dir: Path) -> list[dict[str, Any]]:
    base = corpus_dir / "evidence-inference"
    rows = [json.loads(line) for line in (base / "spans.jsonl").read_text().splitlines() if line.strip()]
    for row in rows:
        row["text"] = (base / "texts" / f"PMC{row['pmcid']}.txt").read_text(encoding="utf-8")
    return rows


def _first(rows: list[dict[str, Any]], test: Callable[[dict[str, Any]], bool]) -> dict[str, Any]:
    found = next((row for row in rows if test(row)), None)
    if found is None:
        pytest.fail("the corpus holds no annotated span of the kind this test needs")
    return found


def _only(candidates: list[Candidate]) -> Candidate:
    assert len(candidates) == 1, candidates
    return candidates[0]


def test_an_annotated_excerpt_is_found_exactly(spans: list[dict[str, Any]]) -> None:
    for row in spans[:60]:
        found = locate(row["text"], row["excerpt"])
        assert found and all(c.kind == "exact" for c in found)
        assert (row["start"], row["end"]) in {(c.start, c.end) for c in found}


def test_whitespace_only_difference_is_normalized(spans: list[dict[str, Any]]) -> None:
    row = _first(
        spans, lambda r: "\n" in r["excerpt"] and r["excerpt"] == r["excerpt"].strip() and len(r["excerpt"]) < 400
    )
    quote = " ".join(row["excerpt"].split())  # the line breaks an agent flattened
    assert quote != row["excerpt"]
    hit = _only(locate(row["text"], quote))
    assert (hit.kind, hit.start, hit.end) == ("normalized", row["start"], row["end"])
    # doubled spaces too
    doubled = _only(locate(row["text"], quote.replace(" ", "  ")))
    assert (doubled.start, doubled.end) == (row["start"], row["end"])


def test_typographic_minus_and_dashes_are_folded(spans: list[dict[str, Any]]) -> None:
    row = _first(spans, lambda r: "\u2212" in r["excerpt"] and len(r["excerpt"]) < 400)
    quote = row["excerpt"].replace("\u2212", "-")  # the agent typed hyphen-minus
    hit = _only(locate(row["text"], quote))
    assert (hit.kind, hit.start, hit.end) == ("normalized", row["start"], row["end"])
    assert row["text"][hit.start : hit.end] == row["excerpt"]  # the raw passage, minus signs and all


def test_typographic_quotation_marks_are_folded(spans: list[dict[str, Any]]) -> None:
    row = _first(spans, lambda r: any(q in r["text"] for q in "\u201c\u2019"))
    text = row["text"]
    at = min(i for i in (text.find("\u201c"), text.find("\u2019")) if i >= 0)
    raw = text[max(0, at - 30) : at + 30]
    quote = raw.translate(str.maketrans({"\u201c": '"', "\u201d": '"', "\u2019": "'", "\u2018": "'"})).strip()
    found = locate(text, quote)
    assert found and all(c.kind == "normalized" for c in found)
    assert any(text[c.start : c.end] == raw.strip() for c in found)


def test_an_ellipsis_gives_ordered_fragments(spans: list[dict[str, Any]]) -> None:
    row = _first(spans, lambda r: 150 < len(r["excerpt"]) < 1000 and r["text"].count(r["excerpt"]) == 1)
    excerpt = row["excerpt"]
    head, tail = excerpt[:50], excerpt[-50:]
    for mark in (" … ", " ... ", " [...] "):
        hit = _only(locate(row["text"], head + mark + tail))
        assert (hit.kind, hit.start, hit.end) == ("fragments", row["start"], row["end"])
        assert [row["text"][f.start : f.end] for f in hit.fragments] == [head.strip(), tail.strip()]
        assert hit.as_json()["fragments"] == [{"start": f.start, "end": f.end} for f in hit.fragments]


def test_fragments_out_of_order_are_not_found(spans: list[dict[str, Any]]) -> None:
    row = _first(spans, lambda r: 150 < len(r["excerpt"]) < 1000 and r["text"].count(r["excerpt"]) == 1)
    excerpt = row["excerpt"]
    head, tail = excerpt[:50], excerpt[-50:]
    swapped = locate(row["text"], tail + " … " + head)
    assert all(c.start != row["start"] for c in swapped)


def test_a_repeated_quote_gives_every_candidate(spans: list[dict[str, Any]]) -> None:
    row = _first(spans, lambda r: len(r["excerpt"]) > 60 and r["text"].count(r["excerpt"]) > 1)
    text, excerpt = row["text"], row["excerpt"]
    found = locate(text, excerpt)
    assert len(found) == text.count(excerpt) >= 2
    assert all(c.kind == "exact" and text[c.start : c.end] == excerpt for c in found)
    assert (row["start"], row["end"]) in {(c.start, c.end) for c in found}
    assert nearest(found, row["start"] + 3, row["end"] + 3) == next(c for c in found if c.start == row["start"])


def test_a_fabricated_sentence_is_found_nowhere(spans: list[dict[str, Any]]) -> None:
    row = spans[0]
    fabricated = "The intervention cured every participant within two days (p < 0.0001)."
    assert locate(row["text"], fabricated) == []
    assert locate(row["text"], "The intervention cured … every participant within two days") == []
    assert find_term(row["text"], fabricated) == []


def test_non_bmp_characters_count_as_one_code_point(spans: list[dict[str, Any]]) -> None:
    row = _first(spans, lambda r: " p = " in r["excerpt"] and r["text"].count(r["excerpt"]) == 1)
    # The same article with mathematical italic letters (outside the BMP) before and inside the span.
    text = "\U0001d4d0\U0001f600 " + row["text"].replace(
        row["excerpt"], row["excerpt"].replace(" p = ", " \U0001d45d = ")
    )
    raw = row["excerpt"].replace(" p = ", " \U0001d45d = ")
    start = text.index(raw)
    assert start == row["start"] + 3  # three code points before, however many UTF-16 units
    hit = _only(locate(text, row["excerpt"]))  # NFKC folds U+1D45D to "p"
    assert (hit.kind, hit.start, hit.end) == ("normalized", start, start + len(raw))
    assert text[hit.start : hit.end] == raw
    exact = _only(locate(text, raw))
    assert (exact.kind, exact.start, exact.end) == ("exact", start, start + len(raw))


# -- hand-made texts ----------------------------------------------------------------------------


def test_a_ligature_is_never_cut() -> None:
    text = "the \ufb01nal result and the final answer"
    found = locate(text, "final")
    assert [(c.kind, text[c.start : c.end]) for c in found] == [("exact", "final")]
    normalized = locate(text, "\ufb01nal result")
    assert [(c.kind, c.start, c.end) for c in normalized] == [("exact", 4, 15)]
    # "inal result" would start inside the ligature: no raw slice reads that way, so no candidate
    assert locate(text, "inal result") == []
    assert [(c.kind, c.start, c.end) for c in locate(text, "fi" + "nal result")] == [("normalized", 4, 15)]


def test_fullwidth_forms_and_combining_marks_map_back() -> None:
    text = "Ｐ＝０．０４ and cafe\u0301 cr\u00e8me"
    hit = _only(locate(text, "P=0.04"))
    assert (hit.kind, text[hit.start : hit.end]) == ("normalized", "Ｐ＝０．０４")
    hit = _only(locate(text, "caf\u00e9 cr\u00e8me"))
    assert text[hit.start : hit.end] == "cafe\u0301 cr\u00e8me"
    assert locate(text, "caf") and all(text[c.start : c.end] == "caf" for c in locate(text, "caf"))


def test_find_term_reports_exact_and_normalized_occurrences() -> None:
    text = "SMD \u22120.41 here, SMD -0.41 there; smd -0.41 lower."
    hits = find_term(text, "SMD -0.41")
    assert [(h.kind, text[h.start : h.end]) for h in hits] == [
        ("normalized", "SMD \u22120.41"),
        ("exact", "SMD -0.41"),
    ]
    folded = find_term(text, "SMD -0.41", fold_case=True)
    assert [h.kind for h in folded] == ["normalized", "exact", "exact"]
    assert find_term(text, "   ") == [] and find_term(text, "absent") == []
    assert len(find_term("a a a a", "a", limit=2)) == 2


def test_normalize_folds_and_collapses() -> None:
    assert normalize("\u201cA\u201d \u2014  b\u00a0\u2013\tc\u2026") == '"A" - b - c...'
    assert split_fragments("one \u2026 two [...] three...") == ["one", "two", "three"]
    mapped = normalize_map("a \u00a0\n b")
    assert mapped.text == "a b" and mapped.raw_range(0, 3) == (0, 6)


def test_fragments_farther_apart_than_a_span_are_not_a_candidate() -> None:
    text = "alpha beta " + "x" * MAX_SPAN + " gamma delta"
    assert locate(text, "alpha beta … gamma delta") == []
    near = "alpha beta " + "x" * 100 + " gamma delta"
    hit = _only(locate(near, "alpha beta … gamma delta"))
    assert (hit.kind, hit.start, hit.end) == ("fragments", 0, len(near))


def test_of_chains_ending_together_the_tightest_is_kept() -> None:
    text = "A1 said. A1 said. Then B2 ended."
    hit = _only(locate(text, "A1 said … B2 ended"))
    assert hit.start == text.rindex("A1") and hit.end == len(text) - 1


def _counting_bisect(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Count the chain steps of the fragments tier (each one bisect)."""
    import bisect

    from publisher.kernel import locate as module

    calls = [0]

    def counted(*args: Any) -> int:
        calls[0] += 1
        return bisect.bisect_left(*args)

    monkeypatch.setattr(module, "bisect_left", counted)
    return calls


def test_fragment_chains_stop_once_the_first_candidates_are_known(monkeypatch: pytest.MonkeyPatch) -> None:
    # A quote of many short parts over a long text: a chain from every occurrence of the first
    # part would cost (occurrences x parts) steps, minutes for a hostile quote over a long snapshot.
    from publisher.kernel.locate import MAX_CANDIDATES

    text = "e " * 20_000
    parts = 20
    calls = _counting_bisect(monkeypatch)
    found = locate(text, " ... ".join(["e"] * parts))
    assert len(found) == MAX_CANDIDATES and all(c.kind == "fragments" for c in found)
    assert [c.start for c in found] == [2 * i for i in range(MAX_CANDIDATES)]
    assert calls[0] <= (MAX_CANDIDATES + 1) * (parts - 1)


def test_a_quote_of_too_many_fragments_is_not_chained(monkeypatch: pytest.MonkeyPatch) -> None:
    from publisher.kernel.locate import MAX_FRAGMENTS

    calls = _counting_bisect(monkeypatch)
    text = "e " * 5_000
    assert locate(text, " ... ".join(["e"] * (MAX_FRAGMENTS + 1))) == []
    assert calls[0] == 0
    assert _only(locate("a b c d", "a ... d")).kind == "fragments"
    assert len(locate(text, " ... ".join(["e"] * MAX_FRAGMENTS))) > 0


def test_nothing_is_located_for_an_empty_quote() -> None:
    assert locate("some text", "") == [] and locate("some text", " \n ") == []
    assert nearest([], 0, 1) is None


# -- properties ---------------------------------------------------------------------------------

ALPHABET = st.sampled_from(
    [
        *"ab c.",
        *("\u201c", "\u201d", "\u2019", "\u2013", "\u2014", "\u2212", "\u00a0", "\n", "\t", "\u2026"),
        *("\ufb01", "\uff21", "e\u0301", "\u00e9", "\U0001d45d", "\U0001f600", "\u1100\u1161", "\u00a8", "\u2002"),
    ]
)
texts = st.lists(ALPHABET, min_size=1, max_size=60).map("".join)


@settings(max_examples=300, deadline=None)
@given(texts, st.data())
def test_every_candidate_slice_normalises_to_the_quote(text: str, data: st.DataObject) -> None:
    start = data.draw(st.integers(0, len(text) - 1))
    end = data.draw(st.integers(start + 1, len(text)))
    norm = normalize_map(text).text
    a = data.draw(st.integers(0, len(norm)))
    b = data.draw(st.integers(a, len(norm)))
    choices = [text[start:end], normalize(text[start:end]), " ".join(text[start:end].split()), norm[a:b]]
    quote = data.draw(st.sampled_from(choices))  # the last may start or end inside a raw character's normal form
    found = locate(text, quote)
    if quote.strip() and quote in text:
        assert found and all(c.kind == "exact" for c in found)
    for c in found:
        assert 0 <= c.start < c.end <= len(text)
        if c.kind == "exact":
            assert text[c.start : c.end] == quote
        elif c.kind == "normalized":
            assert normalize(text[c.start : c.end]) == normalize(quote)
        else:
            parts = split_fragments(quote)
            assert [normalize(text[f.start : f.end]) for f in c.fragments] == parts
            assert c.start == c.fragments[0].start and c.end == c.fragments[-1].end


@settings(max_examples=300, deadline=None)
@given(texts)
def test_a_normalised_slice_of_a_plain_text_is_always_found(text: str) -> None:
    """Text without ellipses: any whitespace-trimmed slice whose ends are whole clusters is found back."""
    mapped = normalize_map(text)
    norm = mapped.text
    for i in range(len(norm)):
        for j in range(i + 1, len(norm) + 1):
            needle = norm[i:j]
            raw = mapped.raw_range(i, j)
            if raw is None or needle != needle.strip(" ") or "..." in needle or not needle:
                continue
            if normalize(text[raw[0] : raw[1]]) != needle:
                continue
            got = {(h.start, h.end) for h in find_term(text, needle, limit=10_000)}
            assert raw in got


@settings(max_examples=200, deadline=None)
@given(texts, st.lists(ALPHABET, max_size=8).map("".join))
def test_find_term_occurrences_normalise_to_the_term(text: str, term: str) -> None:
    for hit in find_term(text, term):
        piece = text[hit.start : hit.end]
        assert piece == term if hit.kind == "exact" else normalize(piece) == normalize(term)


def _normalize_map_by_character(text: str, fold_case: bool) -> Normalized:
    """The position map built one character (or cluster) at a time: what ``normalize_map`` must
    equal, whatever shortcut it takes through runs of ASCII."""
    out: list[str] = []
    starts: list[int] = []
    ends: list[int] = []
    i = 0
    while i < len(text):
        ch = text[i]
        if ch.isascii() and (i + 1 == len(text) or text[i + 1].isascii()):
            j, piece = i + 1, (ch.lower() if fold_case else ch)
        else:
            j = locate_module._cluster_end(text, i)
            piece = locate_module._fold(text[i:j], fold_case)
        for c in piece:
            if c.isspace():
                if out and out[-1] == " ":
                    ends[-1] = j
                    continue
                c = " "
            out.append(c)
            starts.append(i)
            ends.append(j)
        i = j
    return Normalized("".join(out), tuple(starts), tuple(ends))


ASCII_AND_MORE = st.sampled_from(
    [
        *"aB c.-",
        *"\t\n\r\x0b\x0c\x1c\x1f\x00",
        "  ",
        "The  trial\tran\r\n",  # with others, long runs of ASCII (taken a stretch at a time)
        "a" * 17,  # ... ending where a combining mark may follow
        " " + "x" * 16,  # ... starting with white space that may go on a run before it
        *("\u0301", "\u00a0", "\ufb01", "\u201c", "\u1161", "\u2002"),
    ]
)


@settings(max_examples=400, deadline=None)
@given(st.lists(ASCII_AND_MORE, max_size=80).map("".join), st.booleans())
@example("a" * 17 + "\u0301", False)  # a long ASCII run whose last character takes a mark
@example("\u00a0 " + "x" * 16 + "\u2002\t\t" + "A" * 20, True)  # runs that go on from before
def test_normalize_map_through_ascii_runs_equals_it_character_by_character(text: str, fold_case: bool) -> None:
    assert normalize_map(text, fold_case=fold_case) == _normalize_map_by_character(text, fold_case)


def test_normalize_map_of_long_plain_runs_equals_it_character_by_character() -> None:
    text = ("The  trial\t\n randomised 120 children.\x1c" * 300) + "e\u0301 \u00a0 x" + "a" * 5000 + "  "
    for fold_case in (False, True):
        assert normalize_map(text, fold_case=fold_case) == _normalize_map_by_character(text, fold_case)


# -- the command ---------------------------------------------------------------------------------

TEXT = "Results. The \u201ctrial\u201d  randomised 120\nchildren \u2014 aged 8\u201312. The \u201ctrial\u201d ended."


def _locate(cli: Cli, run: Run, source_id: str, quote: str, *more: str) -> CliResult:
    return cli("source", "locate", "--run-dir", run.path, "--source-id", source_id, "--quote", quote, *more)


START, END = TEXT.index("\u201ctrial"), TEXT.index("children") + len("children")


def _source(run: Run, text: str = TEXT) -> str:
    snap, _ = run.store.put(make_record(text=text))
    return snap.source_id


def test_source_locate_json(run: Run, cli: Cli) -> None:
    sid = _source(run)
    events = run.events_path.read_bytes()
    res = _locate(cli, run, sid, '"trial" randomised 120 children', "--json")
    assert res.status == 0, res.err
    data = res.json()
    assert data == {
        "source_id": sid,
        "quote": '"trial" randomised 120 children',
        "candidates": [{"kind": "normalized", "start": START, "end": END}],
    }
    assert TEXT[START:END] == "\u201ctrial\u201d  randomised 120\nchildren"
    res = _locate(cli, run, sid, 'The "trial"', "--json")
    assert [c["start"] for c in res.json()["candidates"]] == [TEXT.index("The"), TEXT.rindex("The")]
    res = _locate(cli, run, sid, "The \u2026 aged 8-12", "--json")
    frag = res.json()["candidates"]
    assert [c["kind"] for c in frag] == ["fragments"] and len(frag[0]["fragments"]) == 2
    assert run.events_path.read_bytes() == events  # locating logs nothing


def test_source_locate_human_and_nothing_found(run: Run, cli: Cli) -> None:
    sid = _source(run)
    res = _locate(cli, run, sid, "randomised 120 children")
    assert res.status == 0 and f"#{TEXT.index('randomised')}-{END}" in res.out and "normalized" in res.out
    res = _locate(cli, run, sid, "never said", "--json")
    assert res.status == 1 and res.json()["candidates"] == []


@pytest.mark.parametrize("source_id", ["../../etc/passwd", "src-" + "A" * 64, "src-123", ""])
def test_source_locate_refuses_a_malformed_id_as_usage(run: Run, cli: Cli, source_id: str) -> None:
    res = cli("source", "locate", "--run-dir", run.path, "--source-id", source_id, "--quote", "x")
    assert res.status == 2 and len(res.err_lines) == 1 and "Traceback" not in res.err


def test_source_locate_refuses_empty_and_huge_quotes(run: Run, cli: Cli) -> None:
    sid = _source(run)
    for quote in ("", "   ", "x" * (2 * MAX_SPAN + 1)):
        res = _locate(cli, run, sid, quote)
        assert res.status == 2 and len(res.err_lines) == 1


def test_source_locate_of_an_unknown_or_tampered_snapshot_fails_closed(run: Run, cli: Cli) -> None:
    res = cli("source", "locate", "--run-dir", run.path, "--source-id", "src-" + "0" * 64, "--quote", "x", "--json")
    assert res.status == 1 and res.json()["error"]["reason_code"] == "UNKNOWN_SOURCE" and len(res.err_lines) == 1
    sid = _source(run)
    path = run.store.path_for(sid)
    path.chmod(0o644)
    path.write_text(path.read_text().replace("randomised", "randomized"))
    res = _locate(cli, run, sid, "randomised", "--json")
    assert res.status == 1 and res.json()["error"]["reason_code"] == "SNAPSHOT_HASH_MISMATCH"


def test_source_spans_finds_normalized_occurrences(run: Run, cli: Cli) -> None:
    sid = _source(run)
    res = cli("source", "spans", "--run-dir", run.path, "--source-id", sid, "--query", 'The "trial"', "--json")
    assert res.status == 0
    matches = res.json()["matches"]
    assert [TEXT[m["start"] : m["end"]] for m in matches] == ["The \u201ctrial\u201d", "The \u201ctrial\u201d"]
    assert set(matches[0]) == {"start", "end", "window_start", "window_end", "window"}  # section 11's shape


# -- the gate names the nearest candidate --------------------------------------------------------


def _mismatches(assembly: Any) -> list[dict[str, Any]]:
    return [f for f in assembly.findings if f.code == "EXCERPT_MISMATCH"]


def test_excerpt_mismatch_names_the_nearest_candidate(tmp_path: Path) -> None:
    from _gate_helpers import make_run

    from publisher.gate.assemble import assemble_run

    fx = make_run(tmp_path, report=False)
    record = fx.extraction(0)
    quoted = record["outcomes"][0]["spans"][0]
    start, end = quoted["start"], quoted["end"]
    quoted.update(start=start + 1, end=end + 1)  # shifted by one, its quote kept
    fx.put_extraction(0, record)
    (finding,) = _mismatches(assemble_run(fx.run, options_of(fx.run)))
    assert finding.field == "outcomes[0].spans[0]" and len(finding.detail) <= 300
    assert finding.located == Located(LocateOutcome.LOCATED, "exact", start, end, 1)
    assert finding.to_dict()["located"] == {
        "outcome": "LOCATED",
        "kind": "exact",
        "start": start,
        "end": end,
        "candidates": 1,
    }
    # the agent's quote with its white space flattened and one line break doubled
    quoted.update(start=start, end=end, text="  ".join(quoted["text"].split()) + " ")
    fx.put_extraction(0, record)
    (finding,) = _mismatches(assemble_run(fx.run, options_of(fx.run)))
    assert finding.located == Located(LocateOutcome.LOCATED, "normalized", start, end, 1)
    assert len(finding.detail) <= 300
    quoted.update(text="Words that appear in no article at all, invented for this test.")
    fx.put_extraction(0, record)
    (finding,) = _mismatches(assemble_run(fx.run, options_of(fx.run)))
    assert finding.located == Located(LocateOutcome.NOWHERE)


def test_a_report_footnote_mismatch_names_the_candidate(tmp_path: Path) -> None:
    from _gate_helpers import make_run

    from publisher.gate.assemble import assemble_run
    from publisher.kernel.refs import format_ref

    fx = make_run(tmp_path)
    article = fx.articles[0]
    span = article.spans[0]
    good = format_ref(article.source_id, span["start"], span["end"], span["excerpt"])
    words = span["excerpt"].split()
    elided = " ".join(words[:4]) + " \u2026 " + " ".join(words[-4:])
    bad = format_ref(article.source_id, span["start"], span["end"], elided)
    fx.report.write_text(fx.report.read_text().replace(good, bad))
    (finding,) = _mismatches(assemble_run(fx.run, options_of(fx.run)))
    assert finding.artifact_id == "report:a0" and len(finding.detail) <= 300
    assert finding.located is not None and finding.located.outcome is LocateOutcome.LOCATED
    assert finding.located.kind == "fragments"
    assert (finding.located.start, finding.located.end) == (span["start"], span["end"])


def test_locating_mismatches_is_bounded_per_assembly(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from _gate_helpers import make_run

    from publisher.gate import artifacts
    from publisher.gate.assemble import assemble_run

    fx = make_run(tmp_path, report=False)
    record = fx.extraction(0)
    quoted = record["outcomes"][0]["spans"][0]
    quoted.update(start=quoted["start"] + 1, end=quoted["end"] + 1)
    fx.put_extraction(0, record)
    monkeypatch.setattr(artifacts, "MAX_LOCATED", 0)
    (finding,) = _mismatches(assemble_run(fx.run, options_of(fx.run)))
    assert finding.located == Located(LocateOutcome.OVER_LIMIT)
