"""``source spans --sentence`` and ``--from/--to``: exact offsets, excerpts, sections and pages."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from conftest import CliResult, make_record
from hypothesis import given, settings
from hypothesis import strategies as st

from publisher.acquire import extract
from publisher.acquire.select import select_spans
from publisher.acquire.sources import _pages, _sections
from publisher.kernel.errors import IntegrityError, UsageError
from publisher.kernel.reasons import Reason
from publisher.kernel.sentences import Sentences
from publisher.kernel.spans import MAX_SPAN
from publisher.kernel.store import build_record
from publisher.runs import Run

Cli = Callable[..., CliResult]
REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared"
JATS = SHARED / "corpus" / "jats" / "ehp-116-1694.nxml"
TEXT = (
    "Background\n\nDepression is common (Smith et al. 2020). We ran a trial, e.g. in schools.\n\n"
    "Results\n\nThe CDI-2 score fell (SMD -0.41, p < .001; Fig. 2). The CDI-2 score rose later [12]. "
    "It was 0.05 lower."
)
SECTIONS = [
    {"title": "Background", "start": 0, "end": TEXT.index("\n\nResults")},
    {"title": "Results", "start": TEXT.index("Results"), "end": len(TEXT)},
]


def _store(run: Run, text: str = TEXT, **fields: Any) -> str:
    record = make_record(text=text, sections=fields.pop("sections", SECTIONS), **fields)
    snap, _ = run.store.put(record)
    return snap.source_id


def _exact(text: str, match: dict[str, Any]) -> None:
    assert text[match["start"] : match["end"]] == match["excerpt"]
    assert text[match["window_start"] : match["window_end"]] == match["window"]
    assert match["window_start"] <= match["start"] < match["end"] <= match["window_end"]


def test_sentence_selection_gives_whole_sentences_with_sections(run: Run) -> None:
    sid = _store(run)
    found = select_spans(run, sid, query="CDI-2", sentence=True)
    assert found["mode"] == "query" and found["sentence"] is True and found["truncated"] is False
    excerpts = [m["excerpt"] for m in found["matches"]]
    assert excerpts == ["The CDI-2 score fell (SMD -0.41, p < .001; Fig. 2).", "The CDI-2 score rose later [12]."]
    for match in found["matches"]:
        _exact(TEXT, match)
        assert match["section"] == "Results" and match["page"] is None
        assert TEXT[match["match_start"] : match["match_end"]] == "CDI-2"
        assert "too_long" not in match
    first = select_spans(run, sid, query="et al", sentence=True)["matches"]
    assert [m["excerpt"] for m in first] == ["Depression is common (Smith et al. 2020)."]
    assert first[0]["section"] == "Background"


def test_two_matches_in_one_sentence_give_one_selection(run: Run) -> None:
    sid = _store(run)
    found = select_spans(run, sid, query="e", sentence=True)
    holding = [(s, e) for s, e in Sentences(TEXT) if "e" in TEXT[s:e]]
    assert [(m["start"], m["end"]) for m in found["matches"]] == holding
    across = select_spans(run, sid, query="later [12]. It", sentence=True)["matches"]
    assert [m["excerpt"] for m in across] == ["The CDI-2 score rose later [12]. It was 0.05 lower."]


def test_from_to_selects_to_the_nearest_following_occurrence(run: Run) -> None:
    sid = _store(run)
    found = select_spans(run, sid, from_text="The CDI-2", to_text="Fig. 2).")
    assert found["mode"] == "range" and found["skipped"] == 1  # the second "The CDI-2" has none after it
    assert [m["excerpt"] for m in found["matches"]] == ["The CDI-2 score fell (SMD -0.41, p < .001; Fig. 2)."]
    match = found["matches"][0]
    _exact(TEXT, match)
    assert (match["from_end"], match["to_start"]) == (match["start"] + len("The CDI-2"), match["end"] - len("Fig. 2)."))
    # The second text must start after the first ends; each occurrence of the first gets its own range.
    both = select_spans(run, sid, from_text="The CDI-2", to_text=".")["matches"]
    assert [m["excerpt"] for m in both] == ["The CDI-2 score fell (SMD -0.", "The CDI-2 score rose later [12]."]
    inside = select_spans(run, sid, from_text="The CDI-2 score", to_text="score")["matches"]
    assert inside[0]["excerpt"].startswith("The CDI-2 score fell") and inside[0]["excerpt"].endswith("CDI-2 score")
    across = select_spans(run, sid, from_text="Depression", to_text="CDI-2")["matches"]
    assert across[0]["section"] == "Background"  # where the selection starts, as result.json derives it
    widened = select_spans(run, sid, from_text="score fell", to_text="-0.41", sentence=True)["matches"]
    assert [m["excerpt"] for m in widened] == ["The CDI-2 score fell (SMD -0.41, p < .001; Fig. 2)."]


def test_from_to_longer_than_a_span_is_skipped(run: Run) -> None:
    text = "Start here. " + "x" * MAX_SPAN + " end here."
    sid = _store(run, text, sections=None)
    found = select_spans(run, sid, from_text="Start", to_text="end here")
    assert found["matches"] == [] and found["skipped"] == 1
    near = select_spans(run, sid, from_text="x" * 10, to_text="end here")
    assert near["matches"] and all(m["end"] - m["start"] <= MAX_SPAN for m in near["matches"])


def test_a_sentence_over_the_span_limit_is_marked_not_cut(run: Run) -> None:
    text = "Short one. A long one: " + "word " * 500 + "end of it."
    sid = _store(run, text, sections=None)
    match = select_spans(run, sid, query="end of", sentence=True)["matches"][0]
    assert match["excerpt"] == text[len("Short one. ") :] and match["too_long"] is True
    assert "--from" in match["note"]


def test_ignore_case_context_and_limit(run: Run) -> None:
    sid = _store(run)
    found = select_spans(run, sid, query="the cdi-2", sentence=True, ignore_case=True, context=0, limit=1)
    assert len(found["matches"]) == 1 and found["truncated"] is True
    assert found["matches"][0]["window"] == found["matches"][0]["excerpt"]


@pytest.mark.parametrize(
    "kwargs",
    [
        {},
        {"query": "x", "from_text": "a", "to_text": "b"},
        {"from_text": "a"},
        {"to_text": "b"},
        {"query": ""},
        {"from_text": "", "to_text": "b"},
        {"query": "x" * (MAX_SPAN + 1)},
        {"query": "x", "context": -1},
    ],
)
def test_bad_selections_are_usage_errors(run: Run, kwargs: dict[str, Any]) -> None:
    sid = _store(run)
    with pytest.raises(UsageError):
        select_spans(run, sid, **kwargs)


def test_selection_reads_a_verified_snapshot_and_logs_nothing(run: Run) -> None:
    sid = _store(run)
    before = run.events_path.read_bytes()
    select_spans(run, sid, query="CDI-2", sentence=True)
    assert run.events_path.read_bytes() == before
    path = run.store.path_for(sid)
    path.chmod(0o644)
    path.write_bytes(path.read_bytes().replace(b"-0.41", b"-0.51"))
    with pytest.raises(IntegrityError) as info:
        select_spans(run, sid, query="CDI-2", sentence=True)
    assert info.value.reason is Reason.SNAPSHOT_HASH_MISMATCH


def test_pdf_sentences_span_wrapped_lines_and_carry_their_page(run: Run) -> None:
    pdf = REPO / "examples" / "sources" / "eoss-practice-statement.pdf"
    doc = extract(pdf.read_bytes(), "application/pdf")
    record = build_record(
        url="urn:sha256:" + "0" * 64, text=doc.text, title=None, retrieved_at="2026-01-02T03:04:05Z",
        access="guideline", origin="user-supplied-pdf", paper=None, pages=_pages(doc),
    )  # fmt: skip
    sid = run.store.put(record)[0].source_id
    match = select_spans(run, sid, query="low certainty", sentence=True)["matches"][0]
    assert match["excerpt"].startswith("R1. For shift workers") and "\n" in match["excerpt"]
    assert match["excerpt"].endswith("low certainty of evidence).") and match["page"] == 1
    later = select_spans(run, sid, query="250 µW", sentence=True)["matches"][0]
    assert later["excerpt"].startswith("At 10 000 lux") and later["page"] == 2


# --- the real corpus: every selection is exact ------------------------------------------------


@pytest.fixture(scope="module")
def jats_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Run, str, str]:
    from publisher.runs import init_run

    if not JATS.is_file():
        pytest.skip(f"{JATS} not found")
    run = init_run(tmp_path_factory.mktemp("jats") / "run", "jats")
    doc = extract(JATS.read_bytes(), "application/xml")
    record = make_record(text=doc.text, title=doc.title, paper=doc.paper, sections=_sections(doc))
    return run, run.store.put(record)[0].source_id, doc.text


@settings(max_examples=80, deadline=None)
@given(st.integers(0, 10**9), st.integers(3, 30))
def test_corpus_sentence_selections_are_exact_and_whole(jats_run: tuple[Run, str, str], at: int, size: int) -> None:
    run, sid, text = jats_run
    start = at % (len(text) - size)
    query = text[start : start + size]
    if not query.strip():
        return
    found = select_spans(run, sid, query=query, sentence=True, limit=5)
    assert found["matches"]
    sentences = set(Sentences(text))
    starts, ends = {s for s, _ in sentences}, {e for _, e in sentences}
    for match in found["matches"]:
        _exact(text, match)
        # The match less any white space at its edges (which belongs to no sentence) lies inside.
        inner = text[match["match_start"] : match["match_end"]]
        lo = match["match_start"] + len(inner) - len(inner.lstrip())
        hi = match["match_end"] - len(inner) + len(inner.rstrip())
        assert match["start"] <= lo and hi <= match["end"]
        assert match["start"] in starts and match["end"] in ends  # whole sentences, nothing cut


def test_corpus_funding_sentence_is_selected_whole(jats_run: tuple[Run, str, str]) -> None:
    run, sid, _ = jats_run
    match = select_spans(run, sid, query="West Coast Center", sentence=True)["matches"][0]
    assert match["excerpt"] == (
        "This study was supported by the West Coast Center for Oceans and Human Health (WCCOHH) as part "
        "of the NOAA Oceans and Human Health Initiative."
    )
    assert match["section"] == "Footnotes"


# --- the command line -------------------------------------------------------------------------


@pytest.fixture
def cli_source(cli: Cli, tmp_path: Path) -> tuple[Path, str]:
    run_dir = tmp_path / "r"
    assert cli("run", "init", run_dir, "--slug", "r").status == 0
    return run_dir, _store(Run(run_dir))


def test_cli_sentence_json_and_human(cli: Cli, cli_source: tuple[Path, str]) -> None:
    run_dir, sid = cli_source
    args = ("source", "spans", "--run-dir", run_dir, "--source-id", sid, "--query", "CDI-2", "--sentence")
    data = cli(*args, "--json").json()
    assert data["source_id"] == sid and data["query"] == "CDI-2" and len(data["matches"]) == 2
    for match in data["matches"]:
        assert {"start", "end", "window_start", "window_end", "window"} <= set(match)
        _exact(TEXT, match)
    human = cli(*args)
    assert human.status == 0
    first = data["matches"][0]
    assert f"#{first['start']}-{first['end']}" in human.out and "section 'Results'" in human.out
    assert first["excerpt"] in human.out


def test_cli_from_to_and_no_match(cli: Cli, cli_source: tuple[Path, str]) -> None:
    run_dir, sid = cli_source
    base = ("source", "spans", "--run-dir", run_dir, "--source-id", sid)
    data = cli(*base, "--from", "We ran", "--to", "schools.", "--json").json()
    assert [m["excerpt"] for m in data["matches"]] == ["We ran a trial, e.g. in schools."]
    missing = cli(*base, "--from", "We ran", "--to", "absent", "--json")
    assert missing.status == 1 and missing.json()["matches"] == [] and missing.json()["skipped"] >= 1
    assert cli(*base, "--from", "We ran", "--to", "absent").status == 1  # the same exit status in words


@pytest.mark.parametrize(
    "extra",
    [(), ("--from", "a"), ("--to", "b"), ("--query", "x", "--from", "a", "--to", "b"), ("--query", "", "--sentence")],
)
def test_cli_bad_selections_are_one_line_usage_errors(
    cli: Cli, cli_source: tuple[Path, str], extra: tuple[str, ...]
) -> None:
    run_dir, sid = cli_source
    result = cli("source", "spans", "--run-dir", run_dir, "--source-id", sid, *extra)
    assert result.status == 2 and len(result.err_lines) == 1 and "Traceback" not in result.err


@pytest.mark.parametrize(
    ("text", "term"),
    [
        ("a  b  " * 20000, ("a b " * 500).strip()),  # a long term, found only after normalisation
        (("a" + " " * 1000) * 4000, "a a"),  # a short term whose raw slices are long
    ],
    ids=["long-term", "long-slices"],
)
def test_a_search_over_a_repetitive_text_stops_at_its_budget(
    run: Run, monkeypatch: pytest.MonkeyPatch, text: str, term: str
) -> None:
    """Every normalised occurrence is normalised again from its raw slice (never assumed), which
    costs the slice's length: a search stops once SEARCH_BUDGET raw code points were checked and
    says ``truncated``, instead of holding the caller (an agent's tool call) for minutes."""
    import publisher.kernel.locate as locate_module
    from publisher.acquire.select import SEARCH_BUDGET

    sid = _store(run, text)
    checked: list[int] = []
    real = locate_module.normalize

    def counted(piece: str, *, fold_case: bool = False) -> str:
        checked.append(len(piece))
        return real(piece, fold_case=fold_case)

    monkeypatch.setattr(locate_module, "normalize", counted)
    out = select_spans(run, sid, query=term)
    assert out["truncated"] is True and out["matches"]
    assert sum(checked) <= SEARCH_BUDGET + max(checked) + len(term), "the re-checks stay within the budget"
    snap = run.store.read(sid)
    assert all(snap.text[m["start"] : m["end"]] == m["excerpt"] for m in out["matches"])
    assert all(real(m["excerpt"]) == real(term) for m in out["matches"])


def test_a_search_within_its_budget_is_not_truncated(run: Run) -> None:
    sid = _store(run, "a  b  " * 50)
    out = select_spans(run, sid, query="a b a")
    assert out["truncated"] is False and len(out["matches"]) == 49
