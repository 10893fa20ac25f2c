"""The pydantic-free check of agent records (``publisher.gate.recordshape``) is never more lenient
than the models, and a record read without the models is the record the models give: the same
spans, warnings, findings, data (key order included) and URLs."""

from __future__ import annotations

import ast
import copy
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from _gate_helpers import make_run, read_json
from _upstream_helpers import TRIAL, upstream_run
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_shapes import _paths, _replaced

from publisher.gate import records as records_module
from publisher.gate import recordshape
from publisher.gate.records import AgentRecord, read_record
from publisher.gate.recordschema import Appraisal, Domain, Extraction, Outcome
from publisher.gate.recordshape import SPAN_FIELDS, SpanView, record_shape
from publisher.kernel.models import Span
from publisher.kernel.reasons import Reason

ROOT = Path(__file__).resolve().parents[1]
SRC = "src-" + "a" * 64
MODELS = {"extraction": Extraction, "appraisal": Appraisal}


def _span(start: int, **fields: Any) -> dict[str, Any]:
    return {"source_id": SRC, "start": start, "end": start + 5, **fields}


def _seeds() -> list[tuple[str, dict[str, Any]]]:
    """Valid records of the shapes agents and this product's fixtures write, and the model's edges:
    integer ``pmid`` and numbers, empty lists, unknown fields, legacy quotes, a blank id."""
    full_span = _span(3, claim="c", evidence_id="pmid:1", access="full_text", text="t", excerpt="e", note=1)
    return [
        ("extraction", {"evidence_id": "pmid:1"}),
        (
            "extraction",
            {
                "schema_version": 1,
                "pmid": 123,
                "evidence_id": "pmid:1",
                "design": "RCT",
                "n_total": 0,
                "n_arms": [2, 3],
                "population": "",
                "intervention": "i",
                "comparator": "c",
                "outcomes": [
                    {
                        "name": "o",
                        "effect": 1,
                        "ci_low": -0.5,
                        "ci_high": 2.5e-7,
                        "p_value": 0,
                        "direction": "unclear",
                        "spans": [_span(20, remark="r")],
                        "extra": {"a": [1]},
                    },
                    {"name": "p", "effect": -0.0},
                    {},
                ],
                "funding": None,
                "coi": "none",
                "limitations": "l",
                "evidence_basis": "abstract_only",
                "extractor_notes": "n",
                "spans": [full_span, _span(0)],
                "quotes": [{"text": "x"}],
                "zzz": None,
                "aaa": {"b": "https://example.org/x"},
            },
        ),
        (
            "extraction",
            {
                "evidence_id": "  ",
                "n_arms": [],
                "spans": [],
                "quotes": [{"text": "abc", "source_id": SRC, "start": 1, "end": 4}, 3],
                "outcomes": [],
            },
        ),
        ("extraction", {"evidence_id": "pmid:1", "design": "d", "spans": None, "outcomes": None, "pmid": "7"}),
        ("extraction", {"evidence_id": "pmid:1", "outcomes": [{"p_value": 0.05, "spans": []}], "spans": [_span(1)]}),
        ("appraisal", {"evidence_id": "pmid:2", "tool": "RoB2", "grade": {"k": [1, {"x": None}], "j": 2.5}, "a": 1}),
        (
            "appraisal",
            {
                "schema_version": 1,
                "pmid": 9,
                "evidence_id": "pmid:2",
                "tool": "none",
                "domains": [
                    {"domain": "d", "judgement": " Unclear ", "rationale": "r", "more": 2, "spans": []},
                    {"domain": "e", "judgement": "low", "spans": [_span(3, claim="c")]},
                    {"judgement": "high"},
                    {},
                ],
                "overall_judgement": "low",
                "grade": None,
                "evidence_basis": "fulltext",
            },
        ),
        ("appraisal", {"evidence_id": "pmid:2", "domains": None, "tool": "AMSTAR-2"}),
    ]


def _fixture_records(tmp_path: Path) -> list[tuple[str, Any]]:
    """Every record the test runs and the repository's example run write."""
    out: list[tuple[str, Any]] = []
    (tmp_path / "gate").mkdir()
    (tmp_path / "up").mkdir()
    fixture = make_run(tmp_path / "gate", 2)
    out += [("extraction", read_json(p)) for p in fixture.extractions]
    out += [("appraisal", read_json(p)) for p in fixture.appraisals]
    upstream = upstream_run(tmp_path / "up")
    path = upstream.extraction([upstream.span(SRC, TRIAL[:30]), upstream.span(SRC, TRIAL[5:20], access="full_text")])
    out.append(("extraction", read_json(path)))
    workspace = ROOT / "runs" / "example" / "workspace"
    for kind, folder in (("extraction", "extractions"), ("appraisal", "appraisals")):
        out += [(kind, read_json(p)) for p in sorted((workspace / folder).glob("*.json"))]
    return out


def _model_accepts(kind: str, raw: Any) -> bool:
    try:
        MODELS[kind].model_validate(copy.deepcopy(raw))
    except ValueError:
        return False
    return True


def _by_model(kind: str, data: bytes, monkeypatch: pytest.MonkeyPatch) -> AgentRecord:
    """The record as the model path reads it (the hand check made to decline)."""
    with monkeypatch.context() as patch:
        patch.setattr(records_module, "record_shape", lambda kind, raw: False)
        return read_record(kind, "workspace/x/r.json", data)  # type: ignore[arg-type]


def _everything(record: AgentRecord) -> dict[str, Any]:
    """Every attribute of a record read, its spans and findings spelled out, data as JSON text
    (so that key order counts)."""
    return {
        "kind": record.kind,
        "record": record.record,
        "digest": record.digest,
        "evidence_id": record.evidence_id,
        "artifact_id": record.artifact_id,
        "spans": [(e.field, *(getattr(e.span, n) for n in SPAN_FIELDS)) for e in record.spans],
        "quotes": [(q.field, q.source_id, q.start, q.end, q.text) for q in record.quotes],
        "findings": [(f.reason, f.field, f.detail) for f in record.findings],
        "finding_values": record.findings,
        "warnings": record.warnings,
        "data": json.dumps(record.data),
        "data_value": record.data,
        "urls": record.urls,
    }


def _assert_alike(kind: str, raw: Any, monkeypatch: pytest.MonkeyPatch, ensure_ascii: bool = True) -> AgentRecord:
    data = json.dumps(raw, ensure_ascii=ensure_ascii).encode()
    fast = read_record(kind, "workspace/x/r.json", data)  # type: ignore[arg-type]
    slow = _by_model(kind, data, monkeypatch)
    assert _everything(fast) == _everything(slow), raw
    return fast


# --- the hand lists are the models' own -------------------------------------------------------


def test_the_field_lists_are_the_models_fields_in_order() -> None:
    assert recordshape.SPAN_FIELDS == tuple(Span.model_fields)
    assert recordshape.OUTCOME_FIELDS == tuple(Outcome.model_fields)
    assert recordshape.DOMAIN_FIELDS == tuple(Domain.model_fields)
    assert recordshape.EXTRACTION_FIELDS == tuple(Extraction.model_fields)
    assert recordshape.APPRAISAL_FIELDS == tuple(Appraisal.model_fields)
    assert recordshape.OUTCOME_DATA == tuple(n for n in Outcome.model_fields if n != "spans")
    assert recordshape.DOMAIN_DATA == tuple(n for n in Domain.model_fields if n != "spans")
    drop = ("spans", "quotes", "outcomes")
    assert recordshape.EXTRACTION_DATA == tuple(n for n in Extraction.model_fields if n not in drop)
    assert recordshape.APPRAISAL_DATA == tuple(n for n in Appraisal.model_fields if n != "domains")
    assert set(recordshape.NARRATIVE_FIELDS) <= set(Extraction.model_fields)
    assert set(recordshape.NUMERIC_OUTCOME_FIELDS) <= set(Outcome.model_fields)
    assert SpanView.__slots__ == SPAN_FIELDS


# --- every written record is taken (else the fast path would never be used) -------------------


@pytest.mark.parametrize("index", range(len(_seeds())))
def test_every_seed_record_is_taken_and_read_as_the_model_reads_it(index: int, monkeypatch: pytest.MonkeyPatch) -> None:
    kind, raw = _seeds()[index]
    assert _model_accepts(kind, raw) and record_shape(kind, raw)  # type: ignore[arg-type]
    record = _assert_alike(kind, raw, monkeypatch)
    assert all(type(e.span) is SpanView for e in record.spans)


def test_every_record_the_fixtures_and_the_example_write_is_taken(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    found = _fixture_records(tmp_path)
    assert {kind for kind, _ in found} == {"extraction", "appraisal"} and len(found) >= 6
    for kind, raw in found:
        assert record_shape(kind, raw), raw  # type: ignore[arg-type]
        _assert_alike(kind, raw, monkeypatch, ensure_ascii=False)


def test_a_read_record_carries_what_the_rules_owe(monkeypatch: pytest.MonkeyPatch) -> None:
    """The fast path's findings are the model path's rules: a blank id, spans owed by stated
    fields and numbers, by a judgement other than unclear, and a record with no span at all."""
    seeds = dict(enumerate(_seeds()))
    blank = _assert_alike(*seeds[2], monkeypatch)
    assert [(f.reason, f.field) for f in blank.findings] == [
        (Reason.SCHEMA_ERROR, "evidence_id"),
        (Reason.NO_SPANS, "spans"),
    ]
    stated = _assert_alike(*seeds[3], monkeypatch)
    assert [(f.reason, f.field) for f in stated.findings] == [(Reason.NO_SPANS, "spans")]
    outcome = _assert_alike(*seeds[4], monkeypatch)
    assert [(f.reason, f.field) for f in outcome.findings] == [(Reason.NO_SPANS, "outcomes[0].spans")]
    domains = _assert_alike(*seeds[6], monkeypatch)
    assert [(f.reason, f.field) for f in domains.findings] == [(Reason.NO_SPANS, "domains[2].spans")]


# --- never more lenient than the model, and the same record either way ------------------------

_LEAVES = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-3, max_value=2**70),
    st.sampled_from([2**53, 2**53 + 1, -(2**53) - 1, 10**30]),
    st.floats(allow_nan=False, allow_infinity=False),
    st.sampled_from(["", " ", "unclear", "Unclear ", "low", "RoB2", "none", "fulltext", "abstract_only"]),
    st.sampled_from(["favors_intervention", "null_effect", SRC, "pmid:1", "https://example.org/a", "x\\y"]),
    st.text(max_size=8),
)
_VALUES = st.recursive(
    _LEAVES,
    lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(st.text(max_size=6), inner, max_size=3)),
    max_leaves=6,
)
_KEYS = st.one_of(
    st.sampled_from(
        [*recordshape.EXTRACTION_FIELDS, *recordshape.APPRAISAL_FIELDS, *recordshape.OUTCOME_FIELDS, "judgement"]
    ),
    st.sampled_from([*SPAN_FIELDS, "domain", "_x", "__dict__", "model_config", ""]),
    st.text(max_size=10),
)


def _changed(value: Any, data: st.DataObject) -> Any:
    """One change at a place of ``value`` (see :func:`_paths`): the key or item dropped or its
    value replaced by any JSON value, a key added beside it, the item repeated, or its list
    reversed."""
    places = _paths(value)
    if not places:
        return data.draw(_VALUES)
    path = data.draw(st.sampled_from(places))
    value = copy.deepcopy(value)
    parent = value
    for key in path[:-1]:
        parent = parent[key]
    last = path[-1]
    action = data.draw(st.sampled_from(["drop", "replace", "add", "repeat", "reverse"]))
    if action == "drop":
        del parent[last]
    elif action == "add" and isinstance(parent, dict):
        parent[data.draw(_KEYS)] = data.draw(_VALUES)
    elif action == "repeat" and isinstance(parent, list):
        parent.append(copy.deepcopy(parent[last]))
    elif action == "reverse" and isinstance(parent, list):
        parent.reverse()
    else:
        parent[last] = data.draw(_VALUES)
    return value


@settings(max_examples=500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(index=st.integers(0, len(_seeds()) - 1), data=st.data(), rounds=st.integers(1, 3), ascii_=st.booleans())
def test_a_changed_record_is_taken_only_where_the_model_takes_it_and_reads_alike(
    index: int, data: st.DataObject, rounds: int, ascii_: bool
) -> None:
    kind, raw = _seeds()[index]
    for _ in range(rounds):
        raw = _changed(raw, data)
    if record_shape(kind, raw):  # type: ignore[arg-type]
        assert _model_accepts(kind, raw), raw
    with pytest.MonkeyPatch.context() as monkeypatch:
        _assert_alike(kind, raw, monkeypatch, ensure_ascii=ascii_)


_ODD = [None, True, False, 0, -1, 2, 1.5, 2**53 + 1, "", "x", "unclear", SRC, [], [1], ["x"], [{}], {}, {"a": 1}]


def test_any_odd_value_anywhere_is_taken_only_where_the_model_takes_it() -> None:
    """Every place of every seed, each replaced by each of a set of odd JSON values: the hand
    check never raises, and takes nothing the model refuses."""
    tried = taken = 0
    for kind, raw in _seeds():
        for path in _paths(raw):
            for new in _ODD:
                changed = _replaced(raw, path, new)
                if record_shape(kind, changed):  # type: ignore[arg-type]
                    assert _model_accepts(kind, changed), (path, new)
                    taken += 1
                tried += 1
    assert tried > 1000 and taken > 100


@pytest.mark.parametrize("grade", [{"\ud800": "x"}, {"k\udfff\u00e9": 1}, {"a": {"\ud800": 1}}, {"a": [{"\udc00": 1}]}])
def test_a_grade_key_holding_a_lone_surrogate_goes_to_the_model(
    grade: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A lone surrogate (JSON ``"\\ud800"``, which the strict reader lets through) in a grade's key:
    the model's JSON dump spells a top key otherwise (U+FFFD per byte) and fails on a deeper one,
    so the hand check leaves the record to the model, and a top key reads as the model reads it."""
    raw = {"evidence_id": "pmid:1", "grade": grade}
    assert _model_accepts("appraisal", raw)
    assert not record_shape("appraisal", raw)
    if all(type(v) is not dict and type(v) is not list for v in grade.values()):
        _assert_alike("appraisal", raw, monkeypatch)


_SPAN = {"source_id": "s", "start": 0, "end": 1}


@pytest.mark.parametrize(
    ("kind", "raw", "refused"),
    [
        ("extraction", {"evidence_id": "e", "\ud800": 1}, True),
        ("extraction", {"evidence_id": "e", "outcomes": [{"a\udfff": 1}]}, True),
        ("appraisal", {"evidence_id": "e", "domains": [{"\udc00": 1}]}, True),
        ("extraction", {"evidence_id": "e", "spans": [_SPAN | {"\ud800": 1}]}, False),
        ("extraction", {"evidence_id": "e", "x": {"\ud800": 1}}, False),
        ("extraction", {"evidence_id": "e", "quotes": [{"\ud800": 1}]}, False),
        ("extraction", {"evidence_id": "e", "outcomes": [{"x": {"\ud800": 1}}]}, False),
    ],
)
def test_an_unknown_field_named_with_a_lone_surrogate_reads_as_the_model_reads_it(
    kind: str, raw: dict[str, Any], refused: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An unknown field whose name holds a lone surrogate (JSON ``"\\ud800"``): the model refuses
    one in a record, an outcome or a domain (``string_unicode``), so the hand check leaves those
    to it; deeper (or in a span, whose unknown fields the model ignores) the record reads alike."""
    assert _model_accepts(kind, raw) is not refused
    if refused:
        assert not record_shape(kind, raw)  # type: ignore[arg-type]
    _assert_alike(kind, raw, monkeypatch)


# --- each rule of the models, broken on its own -----------------------------------------------

_BROKEN_EXTRACTION: list[dict[str, Any]] = [
    {"evidence_id": None},
    {"evidence_id": 1},
    {"schema_version": True},
    {"schema_version": 1.0},
    {"schema_version": "1"},
    {"pmid": True},
    {"pmid": 1.5},
    {"pmid": ["1"]},
    {"design": 1},
    {"population": True},
    {"extractor_notes": []},
    {"n_total": True},
    {"n_total": 3.0},
    {"n_total": "3"},
    {"n_arms": "2"},
    {"n_arms": [True]},
    {"n_arms": [2.0]},
    {"n_arms": {"a": 2}},
    {"evidence_basis": "full"},
    {"evidence_basis": 1},
    {"outcomes": {"name": "o"}},
    {"outcomes": [1]},
    {"outcomes": [{"name": 1}]},
    {"outcomes": [{"effect": True}]},
    {"outcomes": [{"effect": "0.5"}]},
    {"outcomes": [{"p_value": 10**400}]},
    {"outcomes": [{"direction": "up"}]},
    {"outcomes": [{"direction": 1}]},
    {"outcomes": [{"spans": {}}]},
    {"outcomes": [{"spans": [{"source_id": SRC, "start": 0}]}]},
    {"spans": "x"},
    {"spans": [1]},
    {"spans": [{"start": 0, "end": 1}]},
    {"spans": [{"source_id": 1, "start": 0, "end": 1}]},
    {"spans": [{"source_id": SRC, "start": True, "end": 1}]},
    {"spans": [{"source_id": SRC, "start": 0, "end": 1.0}]},
    {"spans": [{"source_id": SRC, "start": "0", "end": 1}]},
    {"spans": [_span(0, claim=1)]},
    {"spans": [_span(0, evidence_id=True)]},
    {"spans": [_span(0, access=[])]},
    {"spans": [_span(0, text=1.5)]},
    {"spans": [_span(0, excerpt={})]},
    {"quotes": {}},
    {"quotes": "x"},
]
_BROKEN_APPRAISAL: list[dict[str, Any]] = [
    {"evidence_id": False},
    {"tool": "RoB3"},
    {"tool": 2},
    {"domains": {}},
    {"domains": ["d"]},
    {"domains": [{"domain": 1}]},
    {"domains": [{"judgement": True}]},
    {"domains": [{"rationale": []}]},
    {"domains": [{"spans": [{"source_id": SRC, "end": 1}]}]},
    {"overall_judgement": 1},
    {"grade": []},
    {"grade": "A"},
    {"evidence_basis": "abstract"},
    {"pmid": False},
]


@pytest.mark.parametrize(
    ("kind", "change"),
    [("extraction", c) for c in _BROKEN_EXTRACTION] + [("appraisal", c) for c in _BROKEN_APPRAISAL],
)
def test_each_rule_of_the_models_is_one_of_the_hand_check(kind: str, change: dict[str, Any]) -> None:
    base = dict(_seeds()[1][1] if kind == "extraction" else _seeds()[6][1])
    assert record_shape(kind, base)  # type: ignore[arg-type]
    broken = base | change
    assert not _model_accepts(kind, broken), change
    assert not record_shape(kind, broken), change  # type: ignore[arg-type]


def test_a_missing_evidence_id_and_a_record_that_is_no_object_are_refused() -> None:
    for kind in ("extraction", "appraisal"):
        assert not record_shape(kind, {"schema_version": 1})  # type: ignore[arg-type]
        assert not record_shape(kind, [{"evidence_id": "x"}])  # type: ignore[arg-type]
    assert not record_shape("other", {"evidence_id": "x"})  # type: ignore[arg-type]


# --- reading a record does without the models -------------------------------------------------


def test_reading_a_record_the_hand_check_takes_loads_no_record_model() -> None:
    """In a fresh interpreter, reading a well-formed record loads neither the validation library
    nor the record models, and the reader module names neither outside its type hints."""
    code = (
        "import sys\n"
        "import publisher.gate.recordshape\n"
        "assert 'pydantic' not in sys.modules\n"
        "from publisher.gate.records import read_record\n"
        "data = open(sys.argv[1], 'rb').read()\n"
        "record = read_record('appraisal', 'r.json', data)\n"
        "assert record.data and record.spans and not record.findings, record.findings\n"
        "assert 'publisher.gate.recordschema' not in sys.modules\n"
        "assert 'pydantic' not in sys.modules, 'pydantic'\n"
    )
    path = ROOT / "runs" / "example" / "workspace" / "appraisals" / "dawn-rob2.json"
    done = subprocess.run([sys.executable, "-c", code, str(path)], capture_output=True, text=True, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    tree = ast.parse((ROOT / "publisher" / "gate" / "records.py").read_text(encoding="utf-8"))
    imported = [
        node.module or "" if isinstance(node, ast.ImportFrom) else alias.name
        for node in tree.body
        if isinstance(node, ast.Import | ast.ImportFrom)
        for alias in node.names
    ]
    assert imported and not [m for m in imported if m.startswith("pydantic") or m in ("recordschema", "kernel.models")]
