"""Canonical JSON, digests and timestamps: the bytes every hash in the product is taken over."""

from __future__ import annotations

import hashlib
import json
import math
import random
from datetime import UTC, datetime, timedelta, timezone
from typing import Any

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from publisher.kernel.canonical import (
    SOURCE_ID_RE,
    StrictJSONError,
    canonical_bytes,
    content_hash_for,
    dumps_written,
    format_ts,
    loads_record,
    loads_strict,
    loads_written,
    parse_ts,
    prefixed,
    record_hash_for,
    same_json,
    sha256_hex,
    source_id_for,
    utc_now,
)
from publisher.kernel.reasons import Reason


def test_canonical_form_is_sorted_compact_utf8() -> None:
    data = canonical_bytes({"b": [1, 2.5, None, True], "a": 'é \U0001f600 "q" \\', "c": {"z": 1, "y": {}}})
    assert data == '{"a":"é \U0001f600 \\"q\\" \\\\","b":[1,2.5,null,true],"c":{"y":{},"z":1}}'.encode()


@pytest.mark.parametrize("value", [float("nan"), float("inf"), float("-inf")])
def test_canonical_refuses_non_finite_numbers(value: float) -> None:
    with pytest.raises(ValueError):
        canonical_bytes({"x": value})


def test_digest_helpers_follow_the_contract() -> None:
    assert sha256_hex(b"abc") == hashlib.sha256(b"abc").hexdigest()
    assert prefixed("ab") == "sha256:ab"
    url, text = "https://e.org/é", "tëxt\x00with nul"
    expected = hashlib.sha256(url.encode() + b"\x00" + text.encode()).hexdigest()
    assert source_id_for(url, text) == "src-" + expected
    assert SOURCE_ID_RE.fullmatch(source_id_for(url, text))
    assert content_hash_for(text) == "sha256:" + hashlib.sha256(text.encode()).hexdigest()


def test_source_id_separates_url_from_text() -> None:
    # Without the NUL separator these two would hash the same bytes.
    assert source_id_for("https://a/b", "c") != source_id_for("https://a/", "bc")


def test_record_hash_ignores_only_record_hash() -> None:
    record = {"a": 1, "b": "x"}
    sealed = {**record, "record_hash": "sha256:" + "0" * 64}
    assert record_hash_for(record) == record_hash_for(sealed)
    assert record_hash_for(record) == prefixed(sha256_hex(canonical_bytes(record)))
    assert record_hash_for({**record, "b": "y"}) != record_hash_for(record)
    assert record_hash_for({**record, "extra": None}) != record_hash_for(record)


# --- strict parsing --------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        '{"a": 1, "a": 1}',
        '{"a": {"b": 1, "b": 2}}',
        '[{"k": 0, "k": 0}]',
        '{"a": NaN}',
        '{"a": Infinity}',
        '{"a": -Infinity}',
        '{"a": 1e999}',
        '{"a": [-2.5E+400]}',
        "[" * 20_000 + "]" * 20_000,
    ],
)
def test_loads_strict_refuses(text: str) -> None:
    with pytest.raises(ValueError):
        loads_strict(text)
    with pytest.raises(ValueError):
        loads_record(text.encode())
    with pytest.raises(ValueError):
        loads_written(text.encode())


def test_a_number_too_large_for_a_double_is_named() -> None:
    # Python's parser would make it infinity, which no canonical encoding can write back.
    with pytest.raises(StrictJSONError) as refused:
        loads_strict('{"effect": 1e999}')
    assert refused.value.kind == "too_large"


@pytest.mark.parametrize(
    "text",
    [
        '{\n  "a": 1,\n  "a": 1\n}\n',  # the layout result.json is written in, with a duplicate
        '{\n  "a": {\n    "b": 1,\n    "b": 1\n  }\n}',
    ],
)
def test_loads_written_refuses_a_duplicate_in_the_written_layout(text: str) -> None:
    with pytest.raises(StrictJSONError) as refused:
        loads_written(text.encode())
    assert refused.value.kind == "duplicate_key"


@pytest.mark.parametrize("data", [b"\xff{}", b"\xef\xbb\xbf{}", '{"a":1}'.encode("utf-16"), b'{"a":"\xed\xa0\x80"}'])
def test_only_utf8_bytes_are_json(data: bytes) -> None:
    with pytest.raises(ValueError):
        loads_strict(data)
    with pytest.raises(ValueError):
        loads_record(data)


def test_loads_record_tells_canonical_from_not() -> None:
    value = {"b": 1, "a": ["é"]}
    assert loads_record(canonical_bytes(value) + b"\n") == (value, True)
    assert loads_record(canonical_bytes(value)) == (value, True)
    assert loads_record(json.dumps(value).encode()) == (value, False)
    assert loads_record(json.dumps(value, ensure_ascii=True, separators=(",", ":")).encode()) == (value, False)


def test_invalid_utf8_is_a_strict_json_error() -> None:
    with pytest.raises(StrictJSONError):
        loads_strict(b'{"a":"\xff"}')


def test_duplicate_key_in_an_otherwise_canonical_file_is_refused() -> None:
    with pytest.raises(StrictJSONError):
        loads_record(b'{"a":1,"a":1,"b":2}\n')


def test_same_json_tells_types_apart() -> None:
    assert same_json({"a": [1, "x"], "b": None}, {"b": None, "a": [1, "x"]})
    assert not same_json({"a": 1}, {"a": 1.0})
    assert not same_json({"a": 1}, {"a": True})
    assert not same_json({"a": 0}, {"a": False})
    assert not same_json([0.0], [-0.0])
    assert not same_json({"a": "1"}, {"a": 1})
    assert not same_json({"a": []}, {"a": {}})
    assert not same_json({"a": None}, {})
    # Past what orjson encodes, the canonical encoder decides.
    assert same_json({"n": 2**70}, {"n": 2**70})
    assert not same_json({"n": 2**70}, {"n": 2**70 + 1})
    assert same_json({1: "x"}, {"1": "x"})  # keys are strings in JSON, as canonical_bytes writes them


# --- property tests --------------------------------------------------------------------------

_keys = st.text(st.characters(exclude_categories=["Cs"]), max_size=8)
_scalars = (
    st.none()
    | st.booleans()
    | st.integers(-(2**63), 2**63)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(st.characters(exclude_categories=["Cs"]), max_size=30)
)
_json = st.recursive(
    _scalars,
    lambda inner: st.lists(inner, max_size=5) | st.dictionaries(_keys, inner, max_size=5),
    max_leaves=30,
)


@settings(max_examples=300, deadline=None)
@given(_json)
def test_canonical_round_trip(value: Any) -> None:
    data = canonical_bytes(value)
    back = loads_strict(data)
    assert back == value
    assert canonical_bytes(back) == data  # re-encoding is a fixed point
    assert loads_record(data + b"\n") == (value, True)


@settings(max_examples=300, deadline=None)
@given(_json, _json)
def test_same_json_is_canonical_equality(a: Any, b: Any) -> None:
    assert same_json(a, b) == (canonical_bytes(a) == canonical_bytes(b))
    assert same_json(a, a) and same_json(a, loads_strict(canonical_bytes(a)))


@settings(max_examples=300, deadline=None)
@given(_json)
def test_loads_written_is_loads_strict(value: Any) -> None:
    for written in (
        json.dumps(value, ensure_ascii=False, indent=2) + "\n",  # how result.json is written
        json.dumps(value, ensure_ascii=False, indent=2),
        json.dumps(value, indent=1),
        json.dumps(value),
    ):
        data = written.encode("utf-8")
        got = loads_written(data)
        assert got == value
        assert canonical_bytes(got) == canonical_bytes(loads_strict(data))


_WRITTEN_LEAVES = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)  # past 64 bits too: the standard encoder's
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.floats(min_value=-1e-3, max_value=1e-3)  # 1e-05 and such, which orjson spells its own way
    | st.sampled_from([math.nan, math.inf, -math.inf, -0.0, 5e-324, 1e16, 1.7976931348623157e308, 1e-07])
    | st.text(alphabet=st.characters(blacklist_categories=("Cs",)))
    | st.sampled_from(list(Reason))  # a str subclass
)
_WRITTEN = st.recursive(
    _WRITTEN_LEAVES,
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.tuples(inner, inner)
        | st.dictionaries(st.text(max_size=8) | st.integers(0, 9), inner, max_size=4)
    ),
    max_leaves=25,
)


def _nested(depth: int) -> Any:
    """Lists nested ``depth`` deep (past orjson's limit of 255: the standard encoder writes it)."""
    value: Any = []
    for _ in range(depth):
        value = [value]
    return value


@settings(max_examples=600, deadline=None)
@given(_WRITTEN | st.text() | st.lists(st.text() | st.integers(-(2**65), 2**65), max_size=6))
@example({"b": 1, "a": [True, None, '\x00\x1f\x7f\\"\u2028'], "é": {"": -(2**63)}, "\U0001f600": 2**64 - 1})
@example(["run", "extraction:x", "src-0", 0, 2**32, "claim \ud800"])
@example({"deep": _nested(300)})
def test_canonical_bytes_is_byte_for_byte_the_standard_compact_json(value: Any) -> None:
    """Where orjson writes the canonical form it writes the standard encoder's bytes, and where
    the standard encoder refuses (NaN, a lone surrogate) the same error is raised."""
    try:
        expected: bytes | type[BaseException] = json.dumps(
            value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False
        ).encode("utf-8")
    except (ValueError, TypeError) as exc:  # UnicodeEncodeError is a ValueError
        expected = type(exc)
    if isinstance(expected, bytes):
        assert canonical_bytes(value) == expected
    else:
        with pytest.raises(expected):
            canonical_bytes(value)


@settings(max_examples=600, deadline=None)
@given(_WRITTEN)
@example({"a": [1e-05, "\x1f\x7f\u2028"], 1: 2**64})
@example({"run": {"n": -(2**63), "m": 2**64 - 1, "t": ("x", None)}})
@example({"p": [1e-05, math.nan, -math.inf, 0.1, [], {}], "q": {"r": [2.5e16, True, None, "é"]}})
def test_dumps_written_is_byte_for_byte_the_standard_indented_json(value: Any) -> None:
    expected = (json.dumps(value, ensure_ascii=False, indent=2) + "\n").encode("utf-8")
    assert dumps_written(value) == expected


@settings(max_examples=100, deadline=None)
@given(st.dictionaries(_keys, _json, min_size=1, max_size=8), st.randoms(use_true_random=False))
def test_record_hash_is_stable_under_key_order(record: dict[str, Any], rnd: random.Random) -> None:
    items = list(record.items())
    rnd.shuffle(items)
    shuffled = dict(items)
    assert record_hash_for(shuffled) == record_hash_for(record)
    assert canonical_bytes(shuffled) == canonical_bytes(record)
    # Any layout of the same record parses (strictly) to the same value.
    assert loads_record(json.dumps(shuffled, indent=1).encode())[0] == record


@settings(max_examples=200, deadline=None)
@given(st.text(st.characters(exclude_categories=["Cs"])), st.text(st.characters(exclude_categories=["Cs"])))
def test_source_id_is_a_function_of_exact_code_points(url: str, text: str) -> None:
    sid = source_id_for(url, text)
    assert SOURCE_ID_RE.fullmatch(sid)
    assert source_id_for(url, text + " ") != sid
    assert source_id_for(url, text) == sid


# --- timestamps ------------------------------------------------------------------------------


def test_format_ts_is_utc_z_whole_seconds() -> None:
    moment = datetime(2026, 9, 8, 14, 7, 44, 999_999, tzinfo=timezone(timedelta(hours=2)))
    assert format_ts(moment) == "2026-09-08T12:07:44Z"
    assert utc_now().microsecond == 0 and utc_now().tzinfo is not None


@pytest.mark.parametrize(
    "value",
    [
        "2026-09-08T12:07:44",
        "2026-09-08T12:07:44+00:00",
        "2026-09-08 12:07:44Z",
        "2026-09-08T12:07Z",
        "2026-9-8T12:07:44Z",
        "2026-09-08T12:07:44z",
        "",
        "2026-13-01T00:00:00Z",
        " 2026-09-08T12:07:44Z",
    ],
)
def test_parse_ts_refuses_other_forms(value: str) -> None:
    with pytest.raises(ValueError):
        parse_ts(value)


def test_parse_ts_compares_instants() -> None:
    assert parse_ts("2026-09-08T12:07:44Z") == datetime(2026, 9, 8, 12, 7, 44, tzinfo=UTC)
    assert parse_ts("2026-09-08T12:07:44.5Z") > parse_ts("2026-09-08T12:07:44Z")
    assert parse_ts("2026-09-08T12:07:44.000Z") == parse_ts("2026-09-08T12:07:44Z")


@settings(max_examples=200, deadline=None)
@given(st.datetimes(min_value=datetime(1, 1, 2), max_value=datetime(9999, 12, 30), timezones=st.just(UTC)))
def test_timestamp_round_trip(moment: datetime) -> None:
    text = format_ts(moment)
    assert parse_ts(text) == moment.replace(microsecond=0)
    assert format_ts(parse_ts(text)) == text


# --- the fast path of strict parsing -----------------------------------------------------------


def _strict_outcome(data: bytes, fast: bool) -> tuple[str, Any]:
    """What :func:`loads_strict` gives for ``data`` on one path: the value with its exact types
    (``1`` and ``1.0`` differ), or the refusal's type, kind and wording."""
    from publisher.kernel import canonical

    saved = canonical._FAST
    canonical._FAST = fast
    try:
        value = loads_strict(data)
    except StrictJSONError as exc:
        return "refused", (type(exc).__name__, exc.kind, str(exc))
    except ValueError as exc:
        return "refused", (type(exc).__name__, None, str(exc))
    finally:
        canonical._FAST = saved
    return "value", (repr(value), _typed(value))


def _typed(value: Any) -> Any:
    if isinstance(value, dict):
        return [(k, _typed(v)) for k, v in value.items()]
    if isinstance(value, list):
        return [_typed(v) for v in value]
    return (type(value).__name__, value)


_HOSTILE_STRICT = [
    b'{"a": 1, "a": 1}',
    b'{"a": 1, "b": {"c": [1, {"d": 2, "d": 3}]}}',
    b'[{"k": "x:y"}, {"k": "z", "k": "w:v"}]',
    b'{"a:b": 1, "a:b": 2}',
    b'{"a": "x", "a": "y:z:w"}',
    b'{"a\\u003a": 1, "a:": 2}',  # one key written two ways
    b'{"a": "\\u003a", "b": 1}',
    b'{"k": 1, "k": "\\u003a"}',  # an escaped colon where the dropped key's was
    b'{"k": {"x": 1}, "k": {"\\u003a": 1}}',
    b'{"\\u0061": 1, "a": 2}',
    b'{"a": "\\ud800"}',
    b'{"a": "\\udc00\\ud800"}',
    b'{"a": 1.5}',
    b'{"a": 1e2}',
    b'{"a": -0.0}',
    b'{"a": 123456789012345678901234567890}',
    b'{"a": -9223372036854775809}',
    b"[18446744073709551615, -9223372036854775808]",
    b'{"a": 1e999}',
    b'{"a": NaN}',
    b'{"a": -Infinity}',
    b"\xef\xbb\xbf{}",
    b'{"a": "\xff"}',
    b'{"a": "\xed\xa0\x80"}',
    b'{"a": "x\x01"}',
    b'{"a": 1,}',
    b'{"a": 1} x',
    b"\x0c{}",
    b"",
    b"   ",
    b"-0",
    b"01",
    b'"\\/"',
    b'{"a" :1 , "b":[ ] }\n',
    b'{"a": {}, "b": {}, "c": {"": ""}, "": 0}',
    b'{"": 1, "": 2}',
    b"[" * 2000 + b"]" * 2000,
    b'{"a":' * 200 + b"1" + b"}" * 200,
    b'{"a":' * 200 + b'{"b": 1, "b": 1}' + b"}" * 200,
    '{"ключ": "значение: ✓", "ключ": 1}'.encode(),
    '{"𝄞": "𝄞:𝄞"}'.encode(),
]


@pytest.mark.parametrize("data", _HOSTILE_STRICT)
def test_strict_parsing_is_the_same_on_the_fast_and_the_stdlib_path(data: bytes) -> None:
    assert _strict_outcome(data, True) == _strict_outcome(data, False)


def test_every_duplicate_key_is_refused_on_the_fast_path_at_any_depth() -> None:
    for data in (
        b'{"a": 1, "a": 1}',
        b'[[{"x": {"y": 1, "y": 1}}]]',
        b'{"k": "x:y", "k": "z"}',
        b'{"k": 1, "k": "\\u003a"}',
    ):
        assert _strict_outcome(data, True)[1][1] == "duplicate_key"


_layout_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(st.sampled_from(list('ab:"\\\n é𝄞')), max_size=6),
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.dictionaries(st.text(st.sampled_from(list("ab:\\é")), max_size=3), inner, max_size=4)
    ),
    max_leaves=20,
)


def _written(value: Any, ascii_only: bool, repeat: int, seen: list[int]) -> str:
    """``value`` as JSON text, the ``repeat``-th object met writing its first member twice."""
    if isinstance(value, dict):
        members = [
            f"{json.dumps(k, ensure_ascii=ascii_only)}: {_written(v, ascii_only, repeat, seen)}"
            for k, v in value.items()
        ]
        seen[0] += 1
        if members and seen[0] == repeat:
            members.append(members[0])
        return "{" + ", ".join(members) + "}"
    if isinstance(value, list):
        return "[" + ", ".join(_written(v, ascii_only, repeat, seen) for v in value) + "]"
    return json.dumps(value, ensure_ascii=ascii_only)


@settings(max_examples=300, deadline=None)
@given(_layout_values, st.integers(min_value=0, max_value=3), st.booleans(), st.integers(min_value=1, max_value=6))
def test_strict_parsing_agrees_on_written_values_and_injected_duplicates(
    value: Any, layout: int, ascii_only: bool, repeat: int
) -> None:
    """Any value, written in any layout (escaped or not), and the same value with one member of
    one object repeated: both paths give the same value or the same refusal."""
    text = (
        json.dumps(value, ensure_ascii=False),
        json.dumps(value, ensure_ascii=True, indent=2),
        json.dumps(value, ensure_ascii=False, indent=1, separators=(",", " : ")),
        canonical_bytes(value).decode("utf-8"),
    )[layout]
    data = text.encode("utf-8")
    assert _strict_outcome(data, True) == _strict_outcome(data, False)
    seen = [0]
    doubled = _written(value, ascii_only, repeat, seen).encode("utf-8")
    fast, slow = _strict_outcome(doubled, True), _strict_outcome(doubled, False)
    assert fast == slow
    if seen[0] >= repeat and doubled != _written(value, ascii_only, 0, [0]).encode("utf-8"):
        assert fast[0] == "refused" and fast[1][1] == "duplicate_key"
