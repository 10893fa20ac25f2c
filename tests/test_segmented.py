"""A long snapshot read a piece at a time answers every search, selection, sentence and window as
the whole text does, and is refused with the same reason codes as the whole read.

The thresholds (file size, piece size, search block, look-around) are forced tiny, so that short
generated texts cross every seam: a term across two pieces or two blocks, an escape or a UTF-8
sequence at a cut, a white-space run longer than a block.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from conftest import make_record
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from publisher.acquire import reading, select
from publisher.kernel import locate, segmented, sentences, store
from publisher.kernel.canonical import canonical_bytes
from publisher.kernel.errors import IntegrityError
from publisher.kernel.locate import search_term
from publisher.kernel.reasons import Reason
from publisher.kernel.segmented import SegmentedText, decode_piece, piece_ends
from publisher.kernel.sentences import Sentences
from publisher.kernel.store import SnapshotStore, read_searchable, read_view
from publisher.runs import Run, init_run

# What makes a text hard to cut, decode, normalise and case-fold: white space of every kind,
# combining marks (one that reorders), ligatures, typographic marks, case pairs that fold to more
# or other code points, JSON escapes and control characters, astral code points.
ALPHABET = [
    *"ab AB.\n",
    "\n\n",
    "\t",
    "\r",
    "\f",
    "\u00a0",
    "\u3000",
    "\u0301",
    "\u0f71",
    "\u0f72",
    "ﬁ",
    "ß",
    "İ",
    "ı",
    "ſ",
    "\u212a",
    "é",
    "e\u0301",
    "\u201c",
    "\u201d",
    "\u2014",
    "…",
    '"',
    "\\",
    "\x00",
    "\x1f",
    "\x7f",
    "\U0001f600",
    "[12]",
    "1. ",
    "e.g. ",
]
texts = st.lists(st.sampled_from(ALPHABET), max_size=120).map("".join)
TERMS = ["a", "ab", "a b", " ", "A", "ss", "ß", "i", "fi", "e", "é", '"', "\\", "b.", "a\u00a0b", "—", "-", "…"]


@pytest.fixture
def tiny(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every threshold forced tiny: any file is segmented, in pieces of a few bytes."""
    monkeypatch.setattr(store, "SEGMENT_ABOVE", 0)
    monkeypatch.setattr(segmented, "PIECE_BYTES", 5)
    monkeypatch.setattr(locate, "BLOCK", 4)
    monkeypatch.setattr(locate, "_CUT_LOOK", 2)
    monkeypatch.setattr(sentences, "_LOOK", 3)
    monkeypatch.setattr(sentences, "_SPAN", 7)


def _segmented(text: str, size: int = 5) -> SegmentedText:
    """``text`` as a segmented text over its canonical JSON spelling, in pieces of about ``size`` bytes."""
    data = canonical_bytes(text)
    lo, hi = 1, len(data) - 1
    offsets, starts = [lo], [0]
    for end in piece_ends(data, lo, hi, size):
        offsets.append(end)
        starts.append(starts[-1] + len(decode_piece(data[offsets[-2] : end])))
    return SegmentedText(data, offsets, starts)


@settings(max_examples=300, deadline=None)
@given(texts, st.integers(1, 9), st.data())
def test_slices_indexes_and_finds_are_the_strings(text: str, size: int, data: st.DataObject) -> None:
    seg = _segmented(text, size)
    assert len(seg) == len(text) and seg[:] == text
    n = len(text)
    for _ in range(5):
        lo, hi = data.draw(st.integers(-2, n + 2)), data.draw(st.integers(-2, n + 2))
        assert seg[lo:hi] == text[lo:hi]
        if n:
            i = data.draw(st.integers(-n, n - 1))
            assert seg[i] == text[i]
        sub = data.draw(st.sampled_from([*TERMS, text[max(0, lo) : max(0, lo) + 3], ""]))
        start, end = data.draw(st.integers(0, n + 1)), data.draw(st.one_of(st.none(), st.integers(0, n + 1)))
        assert seg.find(sub, start, end) == text.find(sub, start, end)


def test_pieces_are_cut_outside_escapes_and_utf8_sequences() -> None:
    text = '\\"\n' * 50 + "\u00e9\U0001f600" * 50 + "\\u0041" * 20
    for size in range(1, 12):
        seg = _segmented(text, size)
        assert seg[:] == text
        assert "".join(piece for _, piece in seg.pieces()) == text


@pytest.mark.parametrize("spelt", [b"\\u0041", b"\\/", b"a\x01", b"\\ud800", b"\xff", b'a"b', b"\\"])
def test_a_piece_must_be_the_canonical_spelling(spelt: bytes) -> None:
    with pytest.raises(ValueError):
        decode_piece(spelt)


def _put(root: Path, text: str, **fields: Any) -> tuple[SnapshotStore, str]:
    st_ = SnapshotStore(root)
    snap, _ = st_.put(make_record(text=text, **fields))
    return st_, snap.source_id


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(texts, st.booleans())
def test_the_segmented_read_is_the_whole_read(tmp_path: Path, tiny: None, text: str, mapped: bool) -> None:
    folder = tmp_path / f"s{abs(hash((text, mapped)))}"
    sections = [{"title": "all", "start": 0, "end": len(text)}] if mapped else None
    pages = [{"page": 1, "start": 0, "end": len(text)}] if mapped else None
    _, sid = _put(folder, text, sections=sections, pages=pages)
    view, got = read_searchable(folder, sid)
    whole = read_view(folder, sid)
    assert isinstance(got, SegmentedText) and got[:] == whole.text
    for name in ("source_id", "url", "title", "content_hash", "access", "origin"):
        assert getattr(view, name) == getattr(whole, name)
    assert {**view.record, "text": whole.text} == whole.record


def test_a_small_file_is_read_whole(tmp_path: Path) -> None:
    _, sid = _put(tmp_path, "a short text")
    view, text = read_searchable(tmp_path, sid)
    assert type(text) is str and text == view.text == read_view(tmp_path, sid).text


def _outcome(fn: Any) -> Any:
    try:
        view = fn()
    except IntegrityError as exc:
        return exc.reason
    text = view[1] if isinstance(view, tuple) else view.text
    return text[:]


def _tampered(tmp_path: Path, change: Any) -> tuple[Path, str]:
    text = 'The trial "randomised" 120 children.\nResults\\ SMD \u22120.41 \u00e9' * 5
    folder = tmp_path / "t"
    st_, sid = _put(folder, text)
    path = st_.path_for(sid)
    data = path.read_bytes()
    path.chmod(0o644)
    path.write_bytes(change(data))
    return folder, sid


TAMPERS = {
    "a flipped byte in the text": lambda d: d.replace(b"randomised", b"randomized", 1),
    "a flipped byte in the head": lambda d: d.replace(b'"access":"full_text"', b'"access":"full_texT"', 1),
    "a needless escape": lambda d: d.replace(b"The trial", b"\\u0054he trial", 1),
    "a needless escape in the head": lambda d: d.replace(b'"title":"A trial"', b'"title":"\\u0041 trial"', 1),
    "a truncated file": lambda d: d[: len(d) // 2],
    "the text cut short": lambda d: d.replace(b"120 children.", b"", 1),
    "a seal changed": lambda d: d.replace(b'"record_hash":"sha256:', b'"record_hash":"sha256:0', 1)[:-1],
    "a raw control character": lambda d: d.replace(b"\\n", b"\n", 1),
    "the text's key doubled": lambda d: d.replace(b',"text":"', b',"text":"x","text":"', 1),
    "a space after a comma": lambda d: d.replace(b',"title":', b', "title":', 1),
    "a section past the text": lambda d: d,
}


@pytest.mark.parametrize("name", sorted(TAMPERS))
def test_a_tampered_file_gets_the_whole_reads_answer(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str
) -> None:
    folder, sid = _tampered(tmp_path, TAMPERS[name])
    whole = _outcome(lambda: read_view(folder, sid))
    monkeypatch.setattr(store, "SEGMENT_ABOVE", 0)
    monkeypatch.setattr(segmented, "PIECE_BYTES", 7)
    assert _outcome(lambda: read_searchable(folder, sid)) == whole
    if name.startswith(("a flipped", "a truncated", "the text cut", "a seal", "the text's key")):
        assert whole == Reason.SNAPSHOT_HASH_MISMATCH


def test_a_section_past_the_text_is_refused_as_the_whole_read_refuses(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    record = make_record(text="short text", sections=[{"title": "s", "start": 0, "end": 10}])
    record["sections"][0]["end"] = 11
    record["record_hash"] = store.record_hash_for({k: v for k, v in record.items() if k != "record_hash"})
    folder = tmp_path / "s"
    folder.mkdir()
    (folder / f"{record['source_id']}.json").write_bytes(canonical_bytes(record) + b"\n")
    whole = _outcome(lambda: read_view(folder, record["source_id"]))
    monkeypatch.setattr(store, "SEGMENT_ABOVE", 0)
    assert whole == Reason.SNAPSHOT_HASH_MISMATCH
    assert _outcome(lambda: read_searchable(folder, record["source_id"])) == whole


def _answers(found: tuple[list[locate.Occurrence], bool]) -> list[tuple[str, int, int]]:
    return [(hit.kind, hit.start, hit.end) for hit in found[0]]


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(texts, st.data(), st.booleans(), st.integers(1, 300))
def test_term_search_finds_what_the_whole_text_gives(
    tiny: None, text: str, data: st.DataObject, fold_case: bool, limit: int
) -> None:
    at = data.draw(st.integers(0, len(text)))
    term = data.draw(st.sampled_from([*TERMS, text[at : at + data.draw(st.integers(1, 12))] or "a"]))
    seg = _segmented(text, 5)
    whole = search_term(text, term, fold_case=fold_case, limit=limit)
    assert _answers(search_term(seg, term, fold_case=fold_case, limit=limit)) == _answers(whole)
    assert not whole[1]


def test_a_white_space_run_longer_than_blocks_and_pieces(tiny: None) -> None:
    text = "x" * 9 + "a" + " \u00a0\t" * 40 + "b" + "a\n\n\nb" + "a" + "\u3000" * 30 + "b"
    seg = _segmented(text, 5)
    whole = search_term(text, "a b")
    assert len(whole[0]) == 3
    assert _answers(search_term(seg, "a b")) == _answers(whole)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(texts, st.booleans(), st.data())
def test_sentences_are_the_whole_texts(tiny: None, text: str, wrapped: bool, data: st.DataObject) -> None:
    seg = _segmented(text, 5)
    whole, far = Sentences(text, wrapped=wrapped), Sentences(seg, wrapped=wrapped)
    assert list(far) == list(whole)
    n = len(text)
    for _ in range(6):
        start, end = data.draw(st.integers(-1, n + 1)), data.draw(st.integers(-1, n + 1))
        assert far.covering(start, end) == whole.covering(start, end)


def test_the_median_line_of_a_long_text(tiny: None) -> None:
    for text in [
        "",
        "\n\n",
        "a",
        "ab\ncd\n\nxyz\n  \nq",
        "a\nbb\nccc\ndddd",
        "a\n \t \n   \n   \nbb",
        "one line" * 9 + "\n" + "x",
    ]:
        assert sentences._far_median(_segmented(text, 3)) == sentences._median_line(text)


ARTICLE = (
    "Background\n\nDepression is common (Smith et al. 2020). We ran a \u201ctrial\u201d, e.g. in schools.\n\n"
    "Results\n\nThe CDI-2 score fell (SMD \u22120.41, p < .001; Fig. 2). The CDI-2  score rose later [12]. "
    'It was 0.05 lower.\f1. Next page \\ with a "quote"\nand a wrapped line. The CDI-2\u00a0score again.'
)


@pytest.fixture
def article_run(tmp_path: Path) -> tuple[Run, str]:
    run = init_run(tmp_path / "run", "seg-run")
    n = len(ARTICLE)
    record = make_record(
        text=ARTICLE,
        sections=[{"title": "Background", "start": 0, "end": 60}, {"title": "Results", "start": 60, "end": n}],
        pages=[{"page": 1, "start": 0, "end": 200}, {"page": 2, "start": 200, "end": n}],
    )
    snap, _ = run.store.put(record)
    return run, snap.source_id


SELECTIONS: list[dict[str, Any]] = [
    {"query": "CDI-2 score"},
    {"query": "cdi-2 SCORE", "ignore_case": True},
    {"query": '"trial"', "sentence": True},
    {"query": "score", "sentence": True, "context": 5},
    {"from_text": "Depression", "to_text": "schools"},
    {"from_text": "The CDI-2", "to_text": "lower", "sentence": True},
    {"query": "CDI-2 score", "limit": 1},
]


@pytest.mark.parametrize("kwargs", SELECTIONS)
def test_selections_windows_and_find_spans_are_the_whole_texts(
    article_run: tuple[Run, str], monkeypatch: pytest.MonkeyPatch, kwargs: dict[str, Any]
) -> None:
    run, sid = article_run

    def answers() -> list[str]:
        return [
            json.dumps(select.select_spans(run, sid, **kwargs), sort_keys=True),
            json.dumps(reading.find_spans(run, sid, kwargs.get("query") or "CDI-2 score"), sort_keys=True),
            json.dumps(reading.read_window(run, sid, 10, 90, log=False), sort_keys=True),
            json.dumps(reading.read_window(run, sid, 200, 10_000, log=False), sort_keys=True),
        ]

    whole = answers()
    monkeypatch.setattr(store, "SEGMENT_ABOVE", 0)
    monkeypatch.setattr(segmented, "PIECE_BYTES", 5)
    monkeypatch.setattr(locate, "BLOCK", 4)
    monkeypatch.setattr(sentences, "_LOOK", 3)
    assert isinstance(run.store.read_searchable(sid)[1], SegmentedText)
    assert answers() == whole


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(texts, st.data(), st.booleans(), st.sampled_from([None, 3, 20, 200]), st.booleans())
def test_terms_searched_together_are_each_searched_alone(
    tiny: None, text: str, data: st.DataObject, fold_case: bool, budget: int | None, far: bool
) -> None:
    terms = data.draw(st.lists(st.sampled_from([*TERMS, text[:4] or "a", text[-7:] or "b"]), min_size=1, max_size=3))
    searched = _segmented(text, 5) if far else text
    together = locate.search_terms(searched, terms, fold_case=fold_case, budget=budget)
    alone = [search_term(searched, term, fold_case=fold_case, budget=budget) for term in terms]
    assert [(_answers(found), found[1]) for found in together] == [(_answers(found), found[1]) for found in alone]


def test_a_short_term_beside_a_long_one_keeps_the_blocks_the_long_one_reaches_into(tiny: None) -> None:
    text = "xx" + "c\u00a0d\u00a0e\u00a0f " * 3
    for searched in (text, _segmented(text, 5)):
        short, long = locate.search_terms(searched, ["x", "c d e f"])
        assert [hit.kind for hit in long[0]] == ["normalized"] * 3
        assert (short, long) == (search_term(searched, "x"), search_term(searched, "c d e f"))


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(texts, st.data(), st.booleans(), st.sampled_from([1, 3, 10, 30, 100]), st.integers(1, 50))
def test_a_budget_stops_the_segmented_search_with_genuine_occurrences(
    tiny: None, text: str, data: st.DataObject, fold_case: bool, budget: int, limit: int
) -> None:
    at = data.draw(st.integers(0, len(text)))
    term = data.draw(st.sampled_from([*TERMS, text[at : at + 3] or "a"]))
    full = _answers(search_term(text, term, fold_case=fold_case, limit=len(text) + 1))
    found, stopped = search_term(_segmented(text, 5), term, fold_case=fold_case, limit=limit, budget=budget)
    assert set(_answers((found, stopped))) <= set(full)  # genuine, whatever the budget
    if not stopped:
        assert _answers((found, stopped)) == full[:limit]  # and all of them when it did not stop
