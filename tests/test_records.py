"""Agent records read into spans, warnings and findings: the same whichever way a span is validated."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from publisher.gate.records import read_record
from publisher.gate.recordshape import SPAN_FIELDS
from publisher.kernel.reasons import Reason

SID = "src-" + "a" * 64


def _span(start: int, *extra: str, **fields: Any) -> dict[str, Any]:
    item: dict[str, Any] = {"source_id": SID, "start": start, "end": start + 5, **fields}
    for name in extra:
        item[name] = "x"
    return item


def _extraction(**fields: Any) -> dict[str, Any]:
    return {
        "schema_version": 1,
        "evidence_id": "pmid:1",
        "design": "trial",
        "spans": [_span(0, "note"), _span(10), {"start": "bad"}],
        "outcomes": [{"name": "o", "effect": 0.5, "spans": [_span(20, "remark")]}, {"name": "p"}],
        **fields,
    }


def _read(kind: str, value: dict[str, Any]) -> Any:
    return read_record(kind, f"workspace/{kind}s/r.json", json.dumps(value).encode())  # type: ignore[arg-type]


def _spans_and_warnings(record: Any) -> tuple[list[tuple[str, Any]], list[tuple[str, str]]]:
    """The spans (field and every attribute: a model's span or its view) and the span warnings."""
    return [(e.field, tuple(getattr(e.span, n) for n in SPAN_FIELDS)) for e in record.spans], [
        w for w in record.warnings if ".spans[" in w[0] or w[0].startswith("spans[")
    ]


def test_a_malformed_span_is_a_finding_and_the_rest_are_kept() -> None:
    record = _read("extraction", _extraction())
    assert {f.reason for f in record.findings} == {Reason.SCHEMA_ERROR}
    assert [f.field for f in record.findings] == ["spans[2].source_id", "spans[2].start", "spans[2].end"]
    assert [e.field for e in record.spans] == ["spans[0]", "spans[1]", "outcomes[0].spans[0]"]


def test_spans_are_the_same_whether_the_record_passes_its_schema_or_not() -> None:
    """A valid record takes its spans as views (or from the validated model); an invalid one
    validates each span alone. Both give the same spans at the same paths, and the same warnings."""
    good = _extraction(spans=[_span(0, "note"), _span(10)])
    valid = _read("extraction", good)
    assert valid.findings == [] and valid.data
    broken = _read("extraction", {**good, "design": 42})  # the record fails; its spans do not
    assert [f.field for f in broken.findings] == ["design"] and not broken.data
    assert _spans_and_warnings(valid) == _spans_and_warnings(broken)
    assert ("spans[0].note", "unknown span field 'note' ignored") in valid.warnings
    assert ("outcomes[0].spans[0].remark", "unknown span field 'remark' ignored") in valid.warnings


_spans = st.lists(
    st.builds(_span, st.integers(0, 100), st.sampled_from(["", "note"])).map(
        lambda s: {k: v for k, v in s.items() if k != ""}
    ),
    max_size=3,
)


@settings(max_examples=60, deadline=None)
@given(_spans, _spans, st.sampled_from(["low", "high", "unclear"]))
def test_appraisal_spans_agree_both_ways(
    top: list[dict[str, Any]], inner: list[dict[str, Any]], judgement: str
) -> None:
    value = {
        "schema_version": 1,
        "evidence_id": "pmid:2",
        "tool": "RoB2",
        "domains": [{"domain": "d1", "judgement": judgement, "spans": top}, {"domain": "d2", "spans": inner}],
    }
    valid = _read("appraisal", value)
    broken = _read("appraisal", {**value, "tool": ["not", "a", "string"]})
    assert valid.data and [f.field for f in broken.findings] == ["tool"] and not broken.data
    assert _spans_and_warnings(valid) == _spans_and_warnings(broken)


@pytest.mark.parametrize("kind", ["extraction", "appraisal"])
def test_a_record_that_is_not_an_object_keeps_no_span(kind: str) -> None:
    record = read_record(kind, "r.json", b"[1, 2]")  # type: ignore[arg-type]
    assert record.spans == [] and [f.reason for f in record.findings] == [Reason.SCHEMA_ERROR]


def test_a_number_too_large_for_a_double_is_a_schema_error() -> None:
    """``1e999`` would parse as infinity, which no result can hold: the record is refused whole."""
    data = json.dumps(_extraction()).replace('"effect": 0.5', '"effect": 1e999').encode()
    assert b"1e999" in data
    record = read_record("extraction", "workspace/extractions/r.json", data)
    assert [(f.reason, f.field) for f in record.findings] == [(Reason.SCHEMA_ERROR, "record")]
    assert record.spans == [] and not record.data


@pytest.mark.parametrize(
    "spelled",
    ["https://evil.example/x", "https:\\/\\/evil.example/x", "https\\u003a//evil.example/x"],
    ids=["plain", "escaped-slashes", "escaped-colon"],
)
def test_a_url_is_found_however_the_json_spells_it(spelled: str) -> None:
    """A record's URLs are collected from its parsed strings; the walk is skipped only for bytes
    that cannot hold one, so an escaped spelling is still found, with its field."""
    data = ('{"evidence_id": "pmid:1", "population": "see ' + spelled + '", "spans": []}').encode()
    record = read_record("extraction", "workspace/extractions/r.json", data)
    assert record.urls == [("population", "https://evil.example/x")]


def test_a_record_without_urls_has_none_and_a_duplicate_key_is_still_refused() -> None:
    record = read_record("extraction", "workspace/extractions/r.json", b'{"evidence_id": "pmid:1", "n_total": 3}')
    assert record.urls == []
    data = b'{"evidence_id": "pmid:1", "n_arms": [1], "n_arms": [2]}'
    twice = read_record("extraction", "workspace/extractions/r.json", data)
    assert [(f.reason, f.field) for f in twice.findings] == [(Reason.SCHEMA_ERROR, "record")]


def _data_by_dumping_each(model: Any) -> dict[str, Any]:
    """A record's ``data`` as each validated object dumped whole and filtered (the plain way)."""

    def known(item: Any, drop: tuple[str, ...]) -> dict[str, Any]:
        dumped = item.model_dump(mode="json")
        return {k: dumped[k] for k in type(item).model_fields if k not in drop}

    from publisher.gate.recordschema import Extraction

    if isinstance(model, Extraction):
        out = known(model, ("spans", "quotes", "outcomes"))
        out["outcomes"] = [known(o, ("spans",)) for o in model.outcomes or ()]
    else:
        out = known(model, ("domains",))
        out["domains"] = [known(d, ("spans",)) for d in model.domains or ()]
    return out


_RECORDS: list[tuple[str, dict[str, Any]]] = [
    ("extraction", {"evidence_id": "pmid:1"}),
    ("extraction", _extraction(spans=[_span(0, "note")], pmid=123, extra_top={"a": [1, 2.5]})),
    ("extraction", _extraction(spans=[_span(0)], outcomes=None, quotes=[{"text": "x"}], n_arms=[2, 3])),
    ("extraction", _extraction(spans=[_span(0)], outcomes=[], extractor_notes="n", evidence_basis="fulltext")),
    (
        "extraction",
        _extraction(
            spans=[_span(0)],
            outcomes=[{"name": "o", "effect": -0.0, "ci_low": 1e-7, "direction": "unclear", "zzz": 1, "spans": []}],
        ),
    ),
    ("appraisal", {"evidence_id": "pmid:2", "tool": "RoB2", "grade": {"k": [1, {"x": None}]}, "aaa": 1}),
    (
        "appraisal",
        {
            "evidence_id": "pmid:2",
            "domains": [{"domain": "d", "judgement": "low", "rationale": "r", "more": 2, "spans": [_span(3)]}, {}],
            "overall_judgement": "low",
        },
    ),
    ("appraisal", {"evidence_id": "pmid:2", "domains": None, "pmid": "9"}),
]


@pytest.mark.parametrize("kind,value", _RECORDS)
def test_a_records_data_is_its_schema_fields_in_order(kind: str, value: dict[str, Any]) -> None:
    """One restricted serialization gives exactly what dumping each object and filtering gives:
    the same keys in the same order (the result's bytes depend on it), extras and spans left out."""
    from publisher.gate.recordschema import Appraisal, Extraction

    record = _read(kind, value)
    assert not [f for f in record.findings if f.reason is Reason.SCHEMA_ERROR]
    model = (Extraction if kind == "extraction" else Appraisal).model_validate(value)
    expected = _data_by_dumping_each(model)
    assert list(record.data) == list(expected) and record.data == expected
    assert json.dumps(record.data) == json.dumps(expected)


def test_the_records_read_are_the_json_names_in_name_order(tmp_path: Any) -> None:
    """``x.json`` names are read in name order; hidden names and other suffixes are passed over;
    a folder or a link under a record's name is a SCHEMA_ERROR finding, never followed."""
    from publisher.gate.records import read_records

    ext, app = tmp_path / "extractions", tmp_path / "appraisals"
    ext.mkdir()
    body = json.dumps({"evidence_id": "pmid:1"}).encode()
    for name in ("b.json", "a.json", "a..json", ".hidden.json", ".json", "c.JSON", "d.json.bak", "e.json.", "f"):
        (ext / name).write_bytes(body)
    (ext / "g.json").mkdir()
    (ext / "h.json").symlink_to(ext / "a.json")
    read = read_records(ext, app)
    assert [r.record for r in read] == [
        f"workspace/extractions/{n}" for n in ("a..json", "a.json", "b.json", "g.json", "h.json")
    ]
    assert [(r.record.rsplit("/", 1)[1], [f.reason for f in r.findings]) for r in read if r.evidence_id is None] == [
        ("g.json", [Reason.SCHEMA_ERROR]),
        ("h.json", [Reason.SCHEMA_ERROR]),
    ]
