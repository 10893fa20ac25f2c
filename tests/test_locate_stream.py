"""A long text is searched a block at a time, with the same answer as a search of its whole normal form.

Above :data:`~publisher.kernel.locate.STREAM_ABOVE` code points, :func:`search_term` normalises the
text a :data:`~publisher.kernel.locate.BLOCK` at a time (a whole text's position map costs some 80
bytes a code point). The tests shrink both so that small generated texts are cut in many places,
and compare every answer with the whole-text search: the same occurrences, of the same kinds, in
the same order, including occurrences across a cut, inside white-space runs, ligatures and
combining marks. The normal forms of the pieces put end to end are the whole text's, map included.
"""

from __future__ import annotations

import unicodedata

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from publisher.kernel import locate as locate_module
from publisher.kernel.locate import Normalized, normalize_map, search_term

ALPHABET = st.sampled_from(
    [*"ab c.\n\t-", "\u00a0", "\u2013", "\u201c", "\u201d", "\ufb01", "e\u0301", "\u0301", "Ж", "中", "ß", "K"]
)


@pytest.fixture
def tiny_blocks(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(locate_module, "STREAM_ABOVE", 0)
    monkeypatch.setattr(locate_module, "BLOCK", 5)


def _pieces(text: str, block: int, fold_case: bool) -> list[tuple[int, int]]:
    bounds: list[tuple[int, int]] = []
    lo = 0
    while lo < len(text):
        hi = locate_module._cut_at(text, min(len(text), lo + block))
        bounds.append((lo, hi))
        lo = hi
    return bounds


@settings(max_examples=300, deadline=None)
@given(st.lists(ALPHABET, max_size=80).map("".join), st.integers(1, 9), st.booleans())
def test_pieces_put_end_to_end_are_the_whole_normal_form(text: str, block: int, fold_case: bool) -> None:
    parts = [normalize_map(text, fold_case=fold_case, lo=lo, hi=hi) for lo, hi in _pieces(text, block, fold_case)]
    joined = Normalized(
        "".join(p.text for p in parts),
        tuple(i for p in parts for i in p.starts),
        tuple(i for p in parts for i in p.ends),
    )
    assert joined == normalize_map(text, fold_case=fold_case)
    # The quick pass without a map gives the same normal form, piece by piece.
    for (lo, hi), part in zip(_pieces(text, block, fold_case), parts, strict=True):
        assert locate_module._normal_text(text, lo, hi, fold_case) == part.text


@settings(max_examples=300, deadline=None)
@given(
    st.lists(ALPHABET, max_size=120).map("".join),
    st.lists(ALPHABET, min_size=1, max_size=6).map("".join),
    st.booleans(),
)
def test_streamed_search_finds_what_the_whole_search_finds(text: str, term: str, fold_case: bool) -> None:
    whole = search_term(text, term, fold_case=fold_case, limit=1000, mapped=normalize_map(text, fold_case=fold_case))
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(locate_module, "STREAM_ABOVE", 0)
        patch.setattr(locate_module, "BLOCK", 7)
        streamed = search_term(text, term, fold_case=fold_case, limit=1000)
    assert streamed == whole


def test_an_occurrence_across_a_cut_is_found_once(tiny_blocks: None) -> None:
    text = "xxxx quality of\u00a0 life yyyy quality  of life."
    hits, stopped = search_term(text, "quality of life", limit=10)
    assert not stopped
    assert [(h.kind, text[h.start : h.end]) for h in hits] == [
        ("normalized", "quality of\u00a0 life"),
        ("normalized", "quality  of life"),
    ]


def test_a_streamed_search_keeps_its_limit_and_budget(tiny_blocks: None) -> None:
    text = "a\u00a0b " * 50
    hits, stopped = search_term(text, "a b", limit=3)
    assert len(hits) == 3 and not stopped
    hits, stopped = search_term(text, "a b", limit=1000, budget=20)
    assert stopped and 0 < len(hits) < 50


@settings(max_examples=300, deadline=None)
@given(st.lists(ALPHABET, min_size=1, max_size=120).map("".join), st.data(), st.integers(1, 6))
def test_streamed_search_of_a_piece_of_the_text_itself(text: str, data: st.DataObject, block: int) -> None:
    """Terms taken from the text (so they occur), over blocks that white space shrinks to one space."""
    start = data.draw(st.integers(0, len(text) - 1))
    term = text[start : data.draw(st.integers(start + 1, min(len(text), start + 40)))]
    whole = search_term(text, term, limit=1000, mapped=normalize_map(text))
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(locate_module, "STREAM_ABOVE", 0)
        patch.setattr(locate_module, "BLOCK", block)
        assert search_term(text, term, limit=1000) == whole


def test_a_verbatim_occurrence_inside_a_cluster_never_stands_for_a_normalised_one(tiny_blocks: None) -> None:
    """A block is left unmapped only when its normal form holds no more occurrences than its
    verbatim ones: "cafe" before a combining accent is verbatim yet normalises to "café", so the
    fullwidth "ｃａｆｅ" beside it must still be found."""
    text = "xx cafe\u0301 ｃａｆｅ yy"
    whole = search_term(text, "cafe", limit=10, mapped=normalize_map(text))
    assert search_term(text, "cafe", limit=10) == whole
    assert [(h.kind, text[h.start : h.end]) for h in whole[0]] == [("exact", "cafe"), ("normalized", "ｃａｆｅ")]


WIDE_ALPHABET = st.sampled_from(
    [
        *"ab ?.\n\t-",
        "\x1c",
        "\x1f",
        "\r",
        "\x0b",
        "   ",
        "\x85",
        "\u2029",
        "\u00a0",
        "\u1680",
        "\u2028",
        "\u3000",
        "\u2009",
        "\u0301",
        "\u0340",
        "\u0344",
        "\u0f73",
        "\u0f71",
        "\u1100",
        "\u1161",
        "\u11a8",
        "\uac00",
        "\ufb01",
        "\uff21",
        "\u2460",
        "\u00bd",
        "\u0130",
        "\u03c2",
        "\u1e9b",
        "\u0323",
        "\u201c",
        "\u2013",
        "ß",
        "\ud800",
    ]
)


@settings(max_examples=500, deadline=None)
@given(st.lists(WIDE_ALPHABET, max_size=60).map("".join), st.booleans())
def test_the_quick_normal_form_is_the_mapped_one(text: str, fold_case: bool) -> None:
    # NFKC is taken only over the runs outside ASCII (each with the ASCII character before it):
    # combining marks after ASCII bases, conjoining jamo, marks that reorder, question marks of the
    # text itself (the codec's mark for a run), lone surrogates and every kind of white space.
    assert locate_module._normal_text(text, 0, len(text), fold_case) == normalize_map(text, fold_case=fold_case).text


def test_runs_outside_ascii_normalise_as_the_map_cuts_them() -> None:
    # A mark composes with its ASCII base; marks out of canonical order are cut into clusters as the
    # map cuts them (b, then the two marks reordered: not the NFKC of the whole, which composes b).
    text = "cafe\u0301? \ufb01x e\u0323\u0301 \u1100\u1161\u11a8? b\u0301\u0323"
    assert locate_module._nfkc_of_runs(text) == normalize_map(text).text
    reordered = "b\u0301\u0323"
    assert locate_module._nfkc_of_runs(reordered) == "b\u0323\u0301" != unicodedata.normalize("NFKC", reordered)


def test_the_white_space_nfkc_leaves_outside_ascii_is_known() -> None:
    # The quick collapse of white-space runs looks only for ASCII white space unless one of these is
    # in the piece: every other white space outside ASCII is a space once normalised (and case folded).
    left = set()
    for code in range(0x110000):
        normal = unicodedata.normalize("NFKC", chr(code))
        left.update(c for c in normal + normal.casefold() if c.isspace() and not c.isascii())
    assert left == set(locate_module._WIDE_SPACES)
    assert set(locate_module._NARROW_SPACES) == {c for c in map(chr, range(128)) if c.isspace()} - {" "}


@pytest.mark.parametrize(
    "text",
    ["", " ", "   ", "a", " a ", "\t a \n\n b\r", "a  b   c    ", "\x1c\x1d a\u2028b", "x\u00a0\u2009 y", "\u3000"],
)
def test_white_space_runs_become_one_space(text: str) -> None:
    assert locate_module._normal_text(text, 0, len(text), False) == normalize_map(text).text
