"""Frozen, strict kernel records and the span arithmetic they rely on."""

from __future__ import annotations

import json
from typing import Any

import pytest
from conftest import make_record
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from publisher.kernel.models import (
    ACCESS_ORDER,
    Access,
    Event,
    EventType,
    Origin,
    Page,
    RunConfig,
    Section,
    Snapshot,
    Span,
)
from publisher.kernel.reasons import Reason
from publisher.kernel.spans import MAX_SPAN, check_range, locator


def _snapshot_raw(**changes: Any) -> dict[str, Any]:
    raw = make_record(sections=[{"title": "A", "start": 0, "end": 5}], pages=[{"page": 1, "start": 0, "end": 9}])
    raw.update(changes)
    return raw


def _event_raw(**changes: Any) -> dict[str, Any]:
    raw: dict[str, Any] = {
        "schema_version": 1,
        "event_id": "ev-0001",
        "type": "fetch",
        "source_id": "src-" + "a" * 64,
        "url": "https://e.org",
        "at": "2026-01-01T00:00:00Z",
        "fresh": True,
        "sha256": "b" * 64,
        "actor": "main",
        "detail": None,
        "prev": None,
    }
    raw.update(changes)
    return raw


def test_snapshot_accepts_what_json_holds() -> None:
    snap = Snapshot.model_validate(json.loads(json.dumps(_snapshot_raw())))
    assert snap.access is Access.FULL_TEXT and snap.origin is Origin.PMC
    assert isinstance(snap.sections, tuple) and isinstance(snap.sections[0], Section)
    assert isinstance(snap.pages, tuple) and isinstance(snap.pages[0], Page)
    assert snap.sealed


def test_snapshot_is_frozen() -> None:
    snap = Snapshot.model_validate(_snapshot_raw())
    with pytest.raises(ValidationError):
        snap.title = "changed"  # type: ignore[misc]


@pytest.mark.parametrize(
    "changes",
    [
        {"schema_version": 2},
        {"schema_version": True},
        {"schema_version": 1.0},
        {"schema_version": "1"},
        {"access": "full-text"},
        {"access": "Full_Text"},
        {"access": 4},
        {"origin": "arxiv"},
        {"origin": None},
        {"source_id": "src-" + "A" * 64},
        {"source_id": "src-" + "a" * 63},
        {"content_hash": "a" * 64},
        {"content_hash": "sha256:" + "a" * 63},
        {"retrieved_at": "2026-01-01T00:00:00+00:00"},
        {"retrieved_at": "2026-01-01"},
        {"text": None},
        {"text": 3},
        {"title": 3},
        {"url": None},
        {"extra_field": 1},
        {"paper": {"pmid": 12345678, "doi": None, "pmcid": None}},
        {"paper": {"pmid": "1", "isbn": "x"}},
        {"asset": {"path": "/etc/passwd", "sha256": "a" * 64, "bytes": 1}},
        {"asset": {"path": "assets/../../x.pdf", "sha256": "a" * 64, "bytes": 1}},
        {"asset": {"path": "", "sha256": "a" * 64, "bytes": 1}},
        {"asset": {"path": "a.pdf", "sha256": "sha256:" + "a" * 64, "bytes": 1}},
        {"asset": {"path": "a.pdf", "sha256": "a" * 64, "bytes": -1}},
        {"asset": {"path": "a.pdf", "sha256": "a" * 64, "bytes": True}},
        {"sections": [{"title": "A", "start": -1, "end": 5}]},
        {"sections": [{"title": "A", "start": True, "end": 5}]},
        {"sections": [{"title": "A", "start": 0.0, "end": 5}]},
        {"sections": [{"title": "A", "start": "0", "end": 5}]},
        {"sections": {"title": "A", "start": 0, "end": 5}},
        {"pages": [{"page": "1", "start": 0, "end": 5}]},
        {"record_hash": "sha256:xyz"},
    ],
)
def test_snapshot_refuses_bad_fields(changes: dict[str, Any]) -> None:
    with pytest.raises(ValidationError):
        Snapshot.model_validate(_snapshot_raw(**changes))


def test_snapshot_without_ext_fields_is_valid_and_unsealed() -> None:
    raw = _snapshot_raw()
    for key in ("sections", "pages", "record_hash"):
        del raw[key]
    snap = Snapshot.model_validate(raw)
    assert snap.sections is None and snap.pages is None and not snap.sealed


@pytest.mark.parametrize("missing", ["title", "paper", "asset", "url", "text", "access"])
def test_snapshot_core_fields_are_required(missing: str) -> None:
    raw = _snapshot_raw()
    del raw[missing]
    with pytest.raises(ValidationError):
        Snapshot.model_validate(raw)


def test_event_validates_and_numbers() -> None:
    event = Event.model_validate(_event_raw(event_id="ev-12345"))
    assert event.number == 12345 and event.type is EventType.FETCH


@pytest.mark.parametrize(
    "changes",
    [
        {"event_id": "ev-001"},
        {"event_id": "ev-00a1"},
        {"event_id": "ev-0001\n"},
        {"type": "cache-hit"},
        {"type": "FETCH"},
        {"fresh": "true"},
        {"fresh": 1},
        {"sha256": "sha256:" + "b" * 64},
        {"detail": "x" * 301},
        {"prev": "b" * 64},
        {"at": "2026-01-01T00:00:00"},
        {"schema_version": True},
        {"unknown": 1},
    ],
)
def test_event_refuses_bad_fields(changes: dict[str, Any]) -> None:
    with pytest.raises(ValidationError):
        Event.model_validate(_event_raw(**changes))


def test_upstream_event_without_prev() -> None:
    raw = _event_raw()
    del raw["prev"]
    assert Event.model_validate(raw).prev is None


def test_access_order_is_weakest_first_and_complete() -> None:
    ranked = sorted(Access, key=ACCESS_ORDER.__getitem__)
    assert [a.value for a in ranked] == ["web", "abstract", "preprint", "guideline", "full_text"]


def test_span_keeps_stated_quotes_and_ignores_extras() -> None:
    span = Span.model_validate({"source_id": "src-x", "start": 1, "end": 2, "text": "a", "excerpt": "b", "note": 1})
    assert (span.text, span.excerpt) == ("a", "b") and not hasattr(span, "note")
    for bad in ({"source_id": "s", "start": "1", "end": 2}, {"source_id": "s", "start": 1.0, "end": 2}, {"start": 1}):
        with pytest.raises(ValidationError):
            Span.model_validate(bad)


def test_run_config_keeps_extras_and_allows_upstream_omissions() -> None:
    config = RunConfig.model_validate({"schema_version": 1, "question": "Does CBT help?"})
    assert config.run_slug is None and config.created_at is None and config.gates.evidence_kernel is False
    assert config.extras() == {"question": "Does CBT help?"}
    for bad in (
        {"schema_version": 1, "created_at": "yesterday"},
        {"schema_version": 1, "gates": {"evidence_kernel": 1}},
    ):
        with pytest.raises(ValidationError):
            RunConfig.model_validate(bad)


def test_json_schemas_are_generated() -> None:
    for model in (Snapshot, Event, Span, RunConfig):
        schema = model.model_json_schema()
        assert schema["type"] == "object" and schema["properties"]
    snapshot = Snapshot.model_json_schema()
    assert snapshot["properties"]["schema_version"]["const"] == 1
    assert set(snapshot["$defs"]["Access"]["enum"]) == {a.value for a in Access}


# --- span arithmetic -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("start", "end", "length", "reason"),
    [
        (0, 1, 1, None),
        (0, 10, 10, None),
        (-1, 3, 10, Reason.SPAN_OUT_OF_RANGE),
        (3, 3, 10, Reason.SPAN_OUT_OF_RANGE),
        (4, 3, 10, Reason.SPAN_OUT_OF_RANGE),
        (0, 11, 10, Reason.SPAN_OUT_OF_RANGE),
        (0, MAX_SPAN, MAX_SPAN, None),
        (0, MAX_SPAN + 1, MAX_SPAN + 1, Reason.SPAN_TOO_LONG),
        (0, 1, 0, Reason.SPAN_OUT_OF_RANGE),
    ],
)
def test_check_range(start: int, end: int, length: int, reason: Reason | None) -> None:
    assert check_range(start, end, length) is reason


def test_locate_innermost_section_and_pages() -> None:
    sections = [Section(title="Methods", start=0, end=100), Section(title="Randomisation", start=10, end=40)]
    assert locator(sections)(5).title == "Methods"  # type: ignore[union-attr]
    assert locator(sections)(10).title == "Randomisation"  # type: ignore[union-attr]
    assert locator(sections)(40).title == "Methods"  # type: ignore[union-attr]
    assert locator(sections)(100) is None
    assert locator(None)(3) is None and locator([])(3) is None
    pages = [Page(page=2, start=50, end=90), Page(page=1, start=0, end=50)]
    assert locator(pages)(49).page == 1  # type: ignore[union-attr]
    assert locator(pages)(50).page == 2  # type: ignore[union-attr]
    assert locator(pages)(95) is None


@settings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 50), st.integers(0, 50)), max_size=8), st.integers(-2, 55))
def test_locate_returns_a_containing_entry_or_none(pairs: list[tuple[int, int]], offset: int) -> None:
    entries = [Section(title=str(i), start=min(a, b), end=max(a, b)) for i, (a, b) in enumerate(pairs)]
    found = locator(entries)(offset)
    containing = [e for e in entries if e.start <= offset < e.end]
    if not containing:
        assert found is None
    else:
        assert found in containing
        assert found.start == max(e.start for e in containing)  # innermost: the latest start
