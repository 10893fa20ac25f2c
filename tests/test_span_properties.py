"""Span arithmetic against Python slicing, astral characters included (hypothesis)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from publisher.kernel.reasons import Reason
from publisher.kernel.spans import MAX_SPAN, check_range, slice_span

texts = st.text(alphabet=st.characters(codec="utf-8"), max_size=300) | st.text(
    alphabet=st.sampled_from("a\u00e9\u4e2d\U0001f600\U00010348\r\n\u200d"), max_size=300
)
offsets = st.integers(min_value=-5, max_value=320)


@given(texts, offsets, offsets)
def test_check_range_agrees_with_the_contract(text: str, start: int, end: int) -> None:
    reason = check_range(start, end, len(text))
    if start < 0 or start >= end or end > len(text):
        assert reason is Reason.SPAN_OUT_OF_RANGE
    elif end - start > MAX_SPAN:
        assert reason is Reason.SPAN_TOO_LONG
    else:
        assert reason is None


@given(texts, offsets, offsets)
def test_slice_span_is_python_slicing_of_code_points(text: str, start: int, end: int) -> None:
    piece, reason = slice_span(text, start, end)
    assert reason is check_range(start, end, len(text))
    if reason is None:
        assert piece == text[start:end]
        assert piece is not None and len(piece) == end - start
        assert text[:start] + piece + text[end:] == text
    else:
        assert piece is None


@given(st.integers(min_value=0, max_value=5000), st.integers(min_value=1, max_value=5000))
def test_length_limit_is_exact(start: int, length: int) -> None:
    reason = check_range(start, start + length, 20000)
    assert (reason is Reason.SPAN_TOO_LONG) == (length > MAX_SPAN)


@given(st.lists(st.sampled_from(["\U0001f600", "a", "\u00e9", "\U00010348"]), min_size=1, max_size=50), st.data())
def test_astral_characters_count_as_one_code_point(chars: list[str], data: st.DataObject) -> None:
    text = "".join(chars)
    start = data.draw(st.integers(min_value=0, max_value=len(chars) - 1))
    end = data.draw(st.integers(min_value=start + 1, max_value=len(chars)))
    assert slice_span(text, start, end) == ("".join(chars[start:end]), None)
    assert len(text.encode("utf-16-le")) // 2 >= len(text)
