"""The fast record path: orjson parsing and the seal hashed from canonical bytes.

Both are accelerations only: for every input they must give exactly what the stdlib path gives
(same value, same canonical verdict, same refusals), and the seal must equal ``record_hash_for``.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from publisher.kernel import canonical
from publisher.kernel.canonical import (
    StrictJSONError,
    canonical_bytes,
    loads_record,
    record_hash_for,
    seal_of_canonical,
)
from publisher.kernel.reasons import Reason
from publisher.kernel.store import SnapshotStore, build_record

_text = st.text(alphabet=st.characters(exclude_categories=("Cs",)), max_size=30)
_json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | _text
    | st.floats(allow_nan=False, allow_infinity=False),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(_text, inner, max_size=4),
    max_leaves=20,
)


def _stdlib(data: bytes) -> tuple[str, Any]:
    saved = canonical._FAST
    canonical._FAST = False
    try:
        return _outcome(data)
    finally:
        canonical._FAST = saved


def _outcome(data: bytes) -> tuple[str, Any]:
    try:
        value, was_canonical = loads_record(data)
    except (StrictJSONError, ValueError) as exc:
        return ("refused", type(exc) is StrictJSONError)
    return ("ok", (json.dumps(value, sort_keys=True), was_canonical))


@settings(max_examples=300, deadline=None)
@given(_json_values)
def test_fast_path_agrees_on_canonical_and_other_layouts(value: Any) -> None:
    layouts = [canonical_bytes(value) + b"\n", canonical_bytes(value)]
    layouts.append(json.dumps(value, indent=1, ensure_ascii=False).encode())
    layouts.append(json.dumps(value, sort_keys=True, separators=(",", ":")).encode())
    for data in layouts:
        assert _outcome(data) == _stdlib(data)


@pytest.mark.parametrize(
    "data",
    [
        b'{"a":1,"a":1}',
        b'{"a":1,"a":2}',
        b'{"a":NaN}',
        b'{"a":Infinity}',
        b'{"a":1e-7}',
        b'{"a":1e-07}',
        b'{"a":1.0}',
        b'{"a":-0}',
        b'{"a":18446744073709551616}',
        b'{"a":18446744073709551615}',
        b'{"a":"\\ud800"}',
        b'\xef\xbb\xbf{"a":1}',
        b'{"a":"\xff"}',
        b'{"a":"\\u00e9"}',
        b'{"a":"\x7f\xe2\x80\xa8"}',
        b'{"b":1,"a":2}',
        b'{"a":1}\n',
        b'{"a":1}\n\n',
        b'{"a":1} \n',
        b'{"a":1}\r\n',
        b' {"a":1}\n',
        b'{"a":1}\t',
        b"[" * 5000 + b"]" * 5000,
    ],
)
def test_fast_path_agrees_on_edge_cases(data: bytes) -> None:
    assert _outcome(data) == _stdlib(data)


def test_duplicate_key_is_refused_even_when_values_agree() -> None:
    with pytest.raises(StrictJSONError):
        loads_record(b'{"a":1,"a":1}\n')


def _record(text: str, **extra: Any) -> dict[str, Any]:
    return build_record(
        url="https://example.org/x",
        text=text,
        title="T",
        retrieved_at="2026-01-02T03:04:05Z",
        access="web",
        origin="web",
        paper=None,
        **extra,
    )


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=200).filter(lambda t: not any(0xD800 <= ord(c) <= 0xDFFF for c in t)))
def test_seal_from_bytes_equals_record_hash(text: str) -> None:
    record = _record(text)
    assert seal_of_canonical(canonical_bytes(record), record) == record_hash_for(record)
    assert seal_of_canonical(canonical_bytes(record) + b"\n", record) == record_hash_for(record)
    assert seal_of_canonical(canonical_bytes(record) + b"\n", record, flat=True) == record_hash_for(record)


def test_seal_with_decoy_member_in_text() -> None:
    decoy = '"record_hash":"sha256:' + "0" * 64 + '"'
    record = _record("before " + decoy + " after", sections=[{"title": decoy, "start": 0, "end": 3}])
    assert seal_of_canonical(canonical_bytes(record), record) == record_hash_for(record)
    assert seal_of_canonical(canonical_bytes(record), record, flat=True) == record_hash_for(record)


def test_seal_searches_nested_objects_unless_told_flat() -> None:
    """The member again as a nested object's key: refused unless the caller says there is none."""
    record = _record("x")
    nested = {**record, "aside": {"record_hash": record["record_hash"]}}
    assert seal_of_canonical(canonical_bytes(nested), nested) is None


def test_a_snapshot_with_a_nested_seal_member_is_refused(tmp_path: Any) -> None:
    """What ``flat=True`` relies on when the store reads: no nested object of a snapshot may carry a
    ``record_hash`` member (the shape and the model refuse it), placed before or after the top-level one."""
    store = SnapshotStore(tmp_path)
    for key in ("asset", "surface"):
        record = _record("some text")
        record[key] = {"record_hash": record["record_hash"]}
        path = store.path_for(record["source_id"])
        path.unlink(missing_ok=True)
        path.write_bytes(canonical_bytes(record) + b"\n")
        for read in (store.read, store.read_view):
            with pytest.raises(Exception) as info:
                read(record["source_id"])
            assert getattr(info.value, "reason", None) is Reason.SNAPSHOT_HASH_MISMATCH, key


def test_seal_refuses_what_it_cannot_prove() -> None:
    record = _record("x")
    body = canonical_bytes(record)
    assert seal_of_canonical(body, {k: v for k, v in record.items() if k != "record_hash"}) is None
    assert seal_of_canonical(json.dumps(record).encode(), record) is None
    assert seal_of_canonical(body, {**record, "record_hash": 'sha256:"'}) is None
    assert seal_of_canonical(body + body, record) is None
    only = {"record_hash": "sha256:" + "a" * 64}
    assert seal_of_canonical(canonical_bytes(only), only) == record_hash_for(only)


def test_store_still_catches_a_forged_seal(tmp_path: Any) -> None:
    store = SnapshotStore(tmp_path)
    record = _record("some text")
    record["title"] = "Changed"
    path = store.path_for(record["source_id"])
    path.write_bytes(canonical_bytes(record) + b"\n")
    with pytest.raises(Exception) as info:
        store.read(record["source_id"])
    assert getattr(info.value, "reason", None) is Reason.SNAPSHOT_HASH_MISMATCH
