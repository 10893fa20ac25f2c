"""The pydantic-free checks of snapshot records and event lines (``publisher.kernel.shapes``) are
never more lenient than the models, and the reads and appends built on them give what the
model-based ones give: the same views, the same refusals, the same log lines."""

from __future__ import annotations

import copy
import json
import os
import pickle
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from _views_helpers import assert_same
from conftest import make_record
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from publisher.kernel.canonical import canonical_bytes, format_ts, parse_ts
from publisher.kernel.errors import PublisherError, UsageError
from publisher.kernel.eventlog import append_event, append_read, read_log
from publisher.kernel.models import Event, RunConfig, Snapshot
from publisher.kernel.reasons import Reason
from publisher.kernel.shapes import ConfigView, SnapshotView, config_shape, event_shape, snapshot_shape
from publisher.kernel.snapshots import check_snapshot, packed_check, unpacked
from publisher.kernel.store import SnapshotStore, build_record, read_snapshot, read_view
from publisher.kernel.vocab import EventType
from publisher.runs import Run

ROOT = Path(__file__).resolve().parents[1]
SRC = "src-" + "a" * 64
HEX = "b" * 64
DIGEST = "sha256:" + "c" * 64


def _surface(kind: str = "PAGE_INDEXED_TEXT", expected: list[int] | None = None, extracted: list[int] = ()) -> dict:
    extracted = list(extracted)
    declared = expected is not None
    missing = sorted(set(expected or ()) - set(extracted)) if declared else []
    unexpected = sorted(set(extracted) - set(expected or ())) if declared else []
    return {
        "type": kind,
        "expected_pages": expected,
        "extracted_pages": extracted,
        "missing_pages": missing,
        "unexpected_pages": unexpected,
        "complete": declared and not missing,
        "excluded_modalities": ["IMAGES", "TABLE_STRUCTURE"],
        "method": "pdf text layer",
    }


def _identity(paper: dict[str, str | None], title: str | None) -> dict[str, Any]:
    out: dict[str, Any] = {k: {"value": v, "basis": "document", "via": "the text"} for k, v in paper.items() if v}
    if title is not None:
        out["title"] = {"value": title, "basis": "asserted", "via": "--title"}
    return out


def _records() -> list[dict[str, Any]]:
    """Valid records of every shape the product writes: maps, a PDF's asset and surface, an
    identity, a revision, an abstract, no paper."""
    text = "Background. The trial randomised 120 children.\nResults: SMD -0.41."
    paper = {"pmid": "12345678", "doi": "10.1000/example", "pmcid": None}
    return [
        make_record(),
        make_record(paper={}, title=None, access="web", origin="web"),
        make_record(
            sections=[{"title": "Background", "start": 0, "end": 11}, {"title": "Results", "start": 48, "end": 66}],
            pages=[{"page": 1, "start": 0, "end": 40}, {"page": 2, "start": 40, "end": 66}],
            asset={"path": "assets/papers/a.pdf", "sha256": HEX, "bytes": 1234},
            identity=_identity({"pmid": "12345678", "doi": "10.1000/example", "pmcid": "PMC123"}, "A trial"),
        ),
        build_record(
            url="urn:pdf:" + HEX,
            text=text,
            title="T",
            retrieved_at="2026-01-02T03:04:05.25Z",
            access="abstract",
            origin="user-supplied-pdf",
            paper=paper,
            surface=_surface(expected=[1, 2, 3], extracted=[1, 2]),
            identity=_identity(paper, "T"),
            supersedes=SRC,
        ),
        build_record(
            url="https://example.org/x",
            text="",
            title=None,
            retrieved_at="2026-01-02T03:04:05Z",
            access="full_text",
            origin="pmc",
            paper=None,
            surface=_surface("WHOLE_TEXT"),
        ),
        build_record(
            url="https://example.org/y",
            text=text,
            title=None,
            retrieved_at="2026-01-02T03:04:05Z",
            access="preprint",
            origin="oa-pdf",
            paper=None,
            surface=_surface(expected=[1], extracted=[1, 2]),
        ),
    ]


def _events() -> list[dict[str, Any]]:
    """Valid event lines of every kind: a read, a register, a signed fetch with its receipt, a
    surface and a Merkle root, a failed fetch, an upstream line without ``prev``."""
    receipt = {
        "requested_url": "http://a/x", "final_url": "https://a/x", "redirects": ["http://a/x"], "status": 200,
        "media_type": "text/html", "raw_sha256": HEX, "raw_bytes": 12, "extractor": "html",
    }  # fmt: skip
    base = {
        "schema_version": 1, "event_id": "ev-0001", "type": "read", "source_id": SRC, "url": "https://a/x",
        "at": "2026-01-02T03:04:05Z", "fresh": False, "sha256": HEX, "actor": "main", "detail": "window 0-5 of 9",
        "prev": DIGEST,
    }  # fmt: skip
    fetch = base | {
        "type": "fetch", "fresh": True, "event_id": "ev-12345", "record_hash": DIGEST, "receipt": receipt,
        "sig": {"alg": "ed25519", "key_id": HEX, "run": "r@2026-01-01T00:00:00Z", "value": "c2ln"},
        "merkle_root": DIGEST, "merkle_size": 3, "surface": _surface(expected=[1, 2], extracted=[1, 2]) | {
            "manifest_hash": DIGEST}, "supersedes": SRC,
    }  # fmt: skip
    failed = base | {
        "type": "fetch_failed", "source_id": None, "sha256": None, "detail": None,
        "receipt": receipt | {"final_url": None, "redirects": None, "status": None, "media_type": None,
                              "raw_sha256": None, "raw_bytes": None, "extractor": None},
    }  # fmt: skip
    upstream = {k: v for k, v in base.items() if k != "prev"} | {"type": "register", "detail": None}
    return [base, fetch, failed, upstream, base | {"detail": "x" * 300, "actor": "worker-1"}]


def _model_accepts(model: type[Snapshot] | type[Event] | type[RunConfig], raw: Any) -> bool:
    try:
        model.model_validate(raw)
    except ValueError:
        return False
    return True


# --- every written shape is taken by the fast check (else it would never be used) --------------


@pytest.mark.parametrize("index", range(6))
def test_every_record_the_product_writes_is_taken_without_the_model(index: int) -> None:
    raw = json.loads(canonical_bytes(_records()[index]))
    assert _model_accepts(Snapshot, raw)
    assert snapshot_shape(raw)


@pytest.mark.parametrize("index", range(5))
def test_every_event_shape_is_taken_without_the_model(index: int) -> None:
    raw = json.loads(canonical_bytes(_events()[index]))
    assert _model_accepts(Event, raw)
    assert event_shape(raw)


# --- never more lenient than the model: mutations of valid values ------------------------------

_LEAVES = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-3, max_value=2**70),
    st.floats(allow_nan=False, allow_infinity=False),
    st.sampled_from(["", "..", "/etc/x", "a\\..\\b", SRC, HEX, DIGEST, "ev-0001", "ev-٠٠٠١", "2026-01-02T03:04:05Z"]),
    st.sampled_from(["2026-13-02T03:04:05Z", "2026-01-02 03:04:05Z", "full_text", "abstract", "fetch_failed"]),
    st.sampled_from(["WHOLE_TEXT", "PAGE_INDEXED_TEXT", "document", "asserted", "x" * 201, "sha256:" + "C" * 64]),
    st.text(max_size=8),
)
_VALUES = st.recursive(
    _LEAVES,
    lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(st.text(max_size=6), inner, max_size=3)),
    max_leaves=6,
)


def _mutate(value: Any, data: st.DataObject, depth: int = 0) -> Any:
    """One mutation somewhere in ``value``: a key removed or added, an item replaced, removed,
    duplicated or reordered, or a leaf replaced by any JSON value."""
    if isinstance(value, dict) and value and (depth == 0 or data.draw(st.booleans())):
        key = data.draw(st.sampled_from(sorted(value)))
        action = data.draw(st.sampled_from(["descend", "drop", "replace", "add"]))
        if action == "descend" and isinstance(value[key], dict | list):
            return value | {key: _mutate(value[key], data, depth + 1)}
        if action == "drop":
            return {k: v for k, v in value.items() if k != key}
        if action == "add":
            return value | {data.draw(st.text(max_size=12)): data.draw(_VALUES)}
        return value | {key: data.draw(_VALUES)}
    if isinstance(value, list) and value:
        i = data.draw(st.integers(0, len(value) - 1))
        action = data.draw(st.sampled_from(["descend", "drop", "replace", "repeat", "reverse"]))
        if action == "descend" and isinstance(value[i], dict | list):
            return [*value[:i], _mutate(value[i], data, depth + 1), *value[i + 1 :]]
        if action == "drop":
            return value[:i] + value[i + 1 :]
        if action == "repeat":
            return [*value, value[i]]
        if action == "reverse":
            return value[::-1]
        return [*value[:i], data.draw(_VALUES), *value[i + 1 :]]
    return data.draw(_VALUES)


@settings(max_examples=600, suppress_health_check=[HealthCheck.too_slow])
@given(index=st.integers(0, 5), data=st.data(), rounds=st.integers(1, 3))
def test_a_record_the_fast_check_takes_is_one_the_model_takes(index: int, data: st.DataObject, rounds: int) -> None:
    raw = json.loads(canonical_bytes(_records()[index]))
    for _ in range(rounds):
        raw = _mutate(raw, data)
    if snapshot_shape(raw):
        assert _model_accepts(Snapshot, copy.deepcopy(raw)), raw


@settings(max_examples=600, suppress_health_check=[HealthCheck.too_slow])
@given(index=st.integers(0, 4), data=st.data(), rounds=st.integers(1, 3))
def test_an_event_the_fast_check_takes_is_one_the_model_takes(index: int, data: st.DataObject, rounds: int) -> None:
    raw = json.loads(canonical_bytes(_events()[index]))
    for _ in range(rounds):
        raw = _mutate(raw, data)
    if event_shape(raw):
        assert _model_accepts(Event, copy.deepcopy(raw)), raw


_ODD = [
    None,
    True,
    False,
    0,
    -1,
    2,
    1.5,
    "",
    "x",
    "\ud800",
    "a\udfff",
    SRC,
    [],
    [1],
    ["x"],
    [{}],
    {},
    {"a": 1},
    {"value": "x"},
]
"""Odd values; a lone surrogate (JSON ``"\\ud800"``, which the strict reader lets through) is one a
limited string of the models refuses and a plain one takes."""


def _paths(value: Any, here: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every place in a JSON value: each key of each object and each item of each list."""
    out: list[tuple[Any, ...]] = [here] if here else []
    items = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else ()
    for key, inner in items:
        out += _paths(inner, (*here, key))
    return out


def _replaced(value: Any, path: tuple[Any, ...], new: Any) -> Any:
    value = copy.deepcopy(value)
    place = value
    for key in path[:-1]:
        place = place[key]
    place[path[-1]] = new
    return value


@pytest.mark.parametrize(
    ("check", "model", "values"),
    [(snapshot_shape, Snapshot, _records), (event_shape, Event, _events)],
    ids=["snapshot", "event"],
)
def test_any_odd_value_anywhere_is_never_taken_where_the_model_refuses_it(
    check: Any, model: type[Snapshot] | type[Event], values: Any
) -> None:
    """Every place of every written shape, each replaced by each of a set of odd JSON values:
    the hand check never raises, and takes nothing the model refuses."""
    tried = 0
    for value in values():
        raw = json.loads(canonical_bytes(value))
        for path in _paths(raw):
            for new in _ODD:
                changed = _replaced(raw, path, new)
                if check(changed):
                    assert _model_accepts(model, copy.deepcopy(changed)), (path, new)
                tried += 1
    assert tried > 1000


_CONFIG = {
    "schema_version": 1,
    "run_slug": "a-run",
    "created_at": "2026-01-02T03:04:05Z",
    "gates": {"evidence_kernel": True, "other": [1]},
    "question": "Does it work?",
}


@settings(max_examples=300)
@given(data=st.data(), rounds=st.integers(1, 3))
@example(data=None, rounds=0)
def test_a_config_the_fast_check_takes_is_one_the_model_takes(data: st.DataObject | None, rounds: int) -> None:
    raw = copy.deepcopy(_CONFIG)
    assert config_shape(raw) and _model_accepts(RunConfig, raw)
    for _ in range(rounds):
        assert data is not None
        raw = _mutate(raw, data)
    if config_shape(raw):
        assert _model_accepts(RunConfig, copy.deepcopy(raw)), raw


@pytest.mark.parametrize(
    "change",
    [
        {"\ud800": 1},
        {"gates": {"evidence_kernel": True, "a\udfff": 1}},
        {"question": {"\ud800": 1}},
        {"question": [{"x": {"\udc00": "y"}}]},
    ],
)
def test_a_config_key_holding_a_lone_surrogate_goes_to_the_model(change: dict[str, Any]) -> None:
    """A key with a lone surrogate (JSON ``"\\ud800"``, which the strict reader lets through): the
    model refuses one among the config's or the gates' fields, and its JSON dump fails on a
    deeper one (the view would hold it), so the hand check leaves every such config to the model."""
    raw = copy.deepcopy(_CONFIG) | change
    assert not config_shape(raw)
    try:
        dumped = RunConfig.model_validate(copy.deepcopy(raw)).model_dump(mode="json")
    except (ValueError, UnicodeEncodeError):
        return
    assert dumped != ConfigView(raw).model_dump(mode="json")


@pytest.mark.parametrize(
    "config",
    [
        _CONFIG,
        {"schema_version": 1},
        _CONFIG | {"created_at": None, "run_slug": None},
        _CONFIG | {"run_slug": "../x"},
        _CONFIG | {"created_at": "yesterday"},
        _CONFIG | {"gates": {"evidence_kernel": "yes"}},
        _CONFIG | {"schema_version": 2},
        [1],
    ],
)
def test_a_runs_creation_time_is_read_as_the_model_reads_it(tmp_path: Path, config: Any) -> None:
    (tmp_path / "config.json").write_bytes(canonical_bytes(config))
    run = Run.open(tmp_path)
    outcomes = []
    for read in (run.created_at, lambda: run.load_config().created_at):
        try:
            outcomes.append(("read", read()))
        except PublisherError as exc:
            outcomes.append((type(exc).__name__, exc.reason, exc.one_line()))
    assert outcomes[0] == outcomes[1]


@pytest.mark.parametrize(
    "change",
    [
        {"schema_version": True},
        {"schema_version": 1.0},
        {"access": "Full_text"},
        {"retrieved_at": "2026-02-30T03:04:05Z"},
        {"supersedes": "self"},
        {"surface": _surface(expected=[1, 2], extracted=[1]) | {"complete": True, "manifest_hash": DIGEST}},
        {"surface": _surface(expected=[1, 2], extracted=[1, 2]) | {"complete": False, "manifest_hash": DIGEST}},
        {"surface": _surface(expected=[1, 2], extracted=[1, 2]) | {"manifest_hash": DIGEST}, "access": "abstract"},
        {"surface": _surface(expected=[1, 2], extracted=[1, 2, 2]) | {"manifest_hash": DIGEST}},
        {"surface": _surface(expected=[2, 1], extracted=[1, 2]) | {"manifest_hash": DIGEST}},
        {"surface": _surface("WHOLE_TEXT", extracted=[1]) | {"manifest_hash": DIGEST}},
        {"identity": {"pmid": {"value": "999", "basis": "document", "via": "x"}}},
        {"identity": {"title": {"value": "Other", "basis": "asserted", "via": "x"}}},
        {"asset": {"path": "a/../b.pdf", "sha256": HEX, "bytes": 1}},
        {"asset": {"path": "a.pdf", "sha256": HEX, "bytes": False}},
        {"sections": [{"title": "x", "start": -1, "end": 2}]},
        {"pages": [{"page": 1, "start": 0, "end": 2, "extra": 1}]},
        {"merkle_size": -1},
        {"surface": _surface() | {"manifest_hash": DIGEST, "type": ["WHOLE_TEXT"]}},
        {"access": ["full_text"]},
        {"identity": {"pmid": {"value": "1", "basis": {"document": 1}, "via": "x"}}},
        {
            "identity": _identity({"pmid": "12345678", "doi": "10.1000/example", "pmcid": "PMC123"}, "A trial")
            | {"doi": {"value": "10.1000/example", "basis": "document", "via": "\ud800"}}
        },
        {"surface": _surface() | {"manifest_hash": DIGEST, "method": "\udfff"}},
    ],
)
def test_each_rule_of_the_model_is_one_of_the_fast_check(change: dict[str, Any]) -> None:
    """Each rule broken on its own: the model refuses, and so does the fast check (it would
    otherwise pass a record the model refuses)."""
    raw = json.loads(canonical_bytes(_records()[0]))
    if change.get("supersedes") == "self":
        change = {"supersedes": raw["source_id"]}
    raw |= change
    assert not _model_accepts(Snapshot, raw)
    assert not snapshot_shape(raw)


@pytest.mark.parametrize(
    ("index", "change"),
    [
        (2, {"source_id": SRC}),
        (2, {"fresh": True}),
        (0, {"sha256": None}),
        (0, {"source_id": None}),
        (0, {"detail": "x" * 301}),
        (0, {"detail": "a\ud800"}),
        (0, {"surface": _surface() | {"manifest_hash": DIGEST, "method": "pdf\udc00"}}),
        (0, {"event_id": "ev-12"}),
        (0, {"fresh": 0}),
        (0, {"type": "Read"}),
        (1, {"receipt": _events()[1]["receipt"] | {"status": True}}),
        (1, {"sig": _events()[1]["sig"] | {"key_id": "k"}}),
    ],
)
def test_each_rule_of_the_event_model_is_one_of_the_fast_check(index: int, change: dict[str, Any]) -> None:
    raw = json.loads(canonical_bytes(_events()[index])) | change
    assert not _model_accepts(Event, raw)
    assert not event_shape(raw)


# --- reads: the view of the fast path is the model's record, refusals are the model's ------------


def _store_with(tmp_path: Path, record: dict[str, Any]) -> tuple[SnapshotStore, str]:
    store = SnapshotStore(tmp_path / "sources")
    snap, _ = store.put(record)
    return store, snap.source_id


@pytest.mark.parametrize("index", range(6))
def test_a_view_holds_the_models_values(tmp_path: Path, index: int) -> None:
    store, sid = _store_with(tmp_path, _records()[index])
    view, snap = store.read_view(sid), store.read(sid)
    assert isinstance(view, SnapshotView)
    for name in ("source_id", "url", "title", "content_hash", "retrieved_at", "access", "origin", "text", "supersedes"):
        assert getattr(view, name) == getattr(snap, name), name
    for mine, theirs in ((view.sections, snap.sections), (view.pages, snap.pages)):
        assert (mine is None) == (theirs is None)
        assert [(t.start, t.end) for t in mine or ()] == [(t.start, t.end) for t in theirs or ()]
    assert [s.title for s in view.sections or ()] == [s.title for s in snap.sections or ()]
    assert [p.page for p in view.pages or ()] == [p.page for p in snap.pages or ()]
    assert view.record == snap.model_dump(mode="json", exclude_unset=True)


def _tampered(raw: dict[str, Any], how: str) -> bytes:
    raw = copy.deepcopy(raw)
    if how == "text":
        raw["text"] += "!"
    elif how == "title":
        raw["title"] = "Another"
    elif how == "float":
        raw["merkle_size"] = 1.0
    elif how == "extra":
        raw["note"] = "x"
    elif how == "type":
        raw["url"] = 7
    elif how == "surface":
        raw["surface"]["method"] = "changed"
    elif how == "section":
        raw["sections"] = [{"title": "x", "start": 0, "end": 10**6}]
    elif how == "merkle":
        raw["merkle_root"] = DIGEST
    elif how == "spaced":
        return json.dumps(raw, indent=1).encode()
    elif how == "not json":
        return b"{"
    elif how == "array":
        return b"[]"
    return canonical_bytes(raw) + b"\n"


@pytest.mark.parametrize(
    "how", ["text", "title", "float", "extra", "type", "surface", "section", "merkle", "spaced", "not json", "array"]
)
def test_a_tampered_record_is_refused_by_the_view_exactly_as_by_the_model(tmp_path: Path, how: str) -> None:
    store, sid = _store_with(tmp_path, _records()[3])
    path = store.path_for(sid)
    raw = json.loads(path.read_bytes())
    path.chmod(0o644)
    path.write_bytes(_tampered(raw, how))
    outcomes = []
    for read in (read_snapshot, read_view):
        try:
            got = read(store.folder, sid)
        except PublisherError as exc:
            outcomes.append((type(exc), exc.reason, exc.one_line()))
        else:
            outcomes.append(("read", got.source_id, got.text))
    assert outcomes[0] == outcomes[1]
    if how == "spaced":  # a record re-indented by an editor is still the same record
        assert outcomes[0][0] == "read"
    else:
        assert outcomes[0][0] is not None and outcomes[0][0] != "read"


def test_a_missing_or_misnamed_snapshot_is_refused_alike(tmp_path: Path) -> None:
    store, _ = _store_with(tmp_path, _records()[0])
    for sid in (SRC, "src-x", "../etc/passwd"):
        outcomes = []
        for read in (read_snapshot, read_view):
            with pytest.raises(PublisherError) as info:
                read(store.folder, sid)
            outcomes.append((type(info.value), info.value.reason, info.value.one_line()))
        assert outcomes[0] == outcomes[1]


# --- appends: the plain read line is the model's line ----------------------------------------------


_TEXT = st.text(st.characters(codec="utf-8"), max_size=40)


@settings(max_examples=150, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(url=_TEXT, actor=_TEXT, detail=st.one_of(st.none(), st.text(max_size=320)), lines=st.integers(0, 2))
@example(url="https://a/x", actor="main", detail="a\nb\u2028c", lines=1)
def test_a_read_line_is_the_line_the_model_writes(
    tmp_path_factory: pytest.TempPathFactory, url: str, actor: str, detail: str | None, lines: int
) -> None:
    folder = tmp_path_factory.mktemp("logs")
    at = parse_ts("2026-03-04T05:06:07Z")
    written: list[bytes] = []
    for name, log in (("model", folder / "a.jsonl"), ("plain", folder / "b.jsonl")):
        for _ in range(lines):
            append_event(log, type=EventType.REGISTER, source_id=SRC, url="u", fresh=False, sha256=HEX, at=at)
        kw = {"source_id": SRC, "url": url, "sha256": HEX, "actor": actor, "detail": detail, "at": at}
        try:
            if name == "model":
                append_event(log, type=EventType.READ, fresh=False, **kw)  # type: ignore[arg-type]
            else:
                append_read(log, **kw)  # type: ignore[arg-type]
        except UsageError as exc:
            written.append(exc.one_line().encode())
        else:
            written.append(log.read_bytes())
    assert written[0] == written[1]
    if not written[0].startswith(b"refused"):
        assert read_log(folder / "b.jsonl").intact


def test_an_invalid_read_is_refused_as_the_model_refuses_it_and_nothing_is_written(tmp_path: Path) -> None:
    refusals = []
    for name in ("model", "plain"):
        log = tmp_path / f"{name}.jsonl"
        kw = {"source_id": "src-short", "url": "u", "sha256": HEX}
        with pytest.raises(UsageError) as info:
            if name == "model":
                append_event(log, type=EventType.READ, fresh=False, **kw)  # type: ignore[arg-type]
            else:
                append_read(log, **kw)
        refusals.append(info.value.one_line())
        assert not log.exists() or log.read_bytes() == b""
    assert refusals[0] == refusals[1]


@pytest.mark.parametrize("index", range(5))
def test_an_append_after_any_kind_of_line_chains_to_it(tmp_path: Path, index: int) -> None:
    """The place of the next line is read from the last line without the model, for every kind."""
    log = tmp_path / "events.jsonl"
    last = _events()[index] | {"event_id": "ev-0007"}
    log.write_bytes(canonical_bytes(last) + b"\n")
    line = append_read(log, source_id=SRC, url="u", sha256=HEX, at=parse_ts("2026-03-04T05:06:07Z"))
    assert line["event_id"] == "ev-0008"
    assert line["prev"] == "sha256:" + __import__("hashlib").sha256(canonical_bytes(last)).hexdigest()
    assert line["at"] == format_ts(parse_ts("2026-03-04T05:06:07Z"))


# --- the read-only commands start without the validation library -------------------------------


@pytest.mark.parametrize(
    "args",
    [
        ["read", "--start", "0", "--end", "20"],
        ["spans", "--query", "the"],
        ["spans", "--sentence", "--query", "the"],
        ["locate", "--quote", "the trial"],
        ["revisions"],
    ],
)
def test_a_read_only_source_command_loads_no_validation_library(tmp_path: Path, args: list[str]) -> None:
    """What makes an agent's read as fast as the interpreter's start: no pydantic, no MkDocs.
    Checked structurally, by the modules a command loaded (no timing)."""
    run = tmp_path / "runs" / "one"
    init = [sys.executable, "-m", "publisher", "run", "init", str(run), "--slug", "shapes"]
    subprocess.run(init, check=True, capture_output=True)
    store = SnapshotStore(run / "sources")
    snap, _ = store.put(_records()[2])
    probe = (
        "import sys\n"
        "sys.argv = ['publisher', 'source', *sys.argv[1:]]\n"
        "from publisher.cli import entry\n"
        "try:\n"
        "    entry()\n"
        "finally:\n"
        "    bad = sorted(m for m in ('pydantic', 'pydantic_core', 'mkdocs', 'jinja2', 'markdown_it', 'yaml')"
        " if m in sys.modules)\n"
        "    print('LOADED', bad, file=sys.stderr)\n"
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith("COV")}
    done = subprocess.run(
        [sys.executable, "-c", probe, *args, "--run-dir", str(run), "--source-id", snap.source_id]
        if args != ["revisions"]
        else [sys.executable, "-c", probe, "revisions", "--wiki", str(tmp_path), snap.source_id],
        capture_output=True,
        text=True,
        env=env,
        cwd=ROOT,
    )
    assert done.returncode in (0, 1), done.stderr
    assert "LOADED []" in done.stderr, done.stderr
    if args[0] == "read":
        assert read_log(run / "events.jsonl").events[-1].type is EventType.READ
    if args[0] == "revisions":
        assert snap.source_id in done.stdout and "1 revision(s)" in done.stdout, done.stdout


# --- snapshot checks: made from the view, the same as from the model -------------------------------


@pytest.mark.parametrize("index", range(6))
def test_a_packed_check_is_the_check_the_model_gives(tmp_path: Path, index: int) -> None:
    # The pool's workers check snapshots through the view and send plain values: once unpickled
    # (or unpacked, where no pickling happens) the check holds views of the model's metadata,
    # equal to the models field by field and in every model_dump.
    store, sid = _store_with(tmp_path, _records()[index])
    snap = store.read(sid)
    n = len(snap.text)
    task = (os.fspath(store.folder), sid, ((0, min(5, n)), (n, n + 3), (-1, 2)))
    packed = packed_check(task, os.fspath(tmp_path))
    check = pickle.loads(pickle.dumps(packed))
    assert check == packed.unpack() == unpacked(packed) == check_snapshot(task, os.fspath(tmp_path))
    assert check.ok and check.detail == ("sealed" if snap.sealed else "metadata unsealed")
    for name in ("url", "title", "retrieved_at", "content_hash", "record_hash"):
        assert getattr(check, name) == getattr(snap, name), name
    for made in (check, pickle.loads(pickle.dumps(check))):
        for name in ("paper", "asset", "surface", "identity"):
            assert_same(getattr(made, name), getattr(snap, name))
    assert (check.supersedes, check.sealed) == (snap.supersedes, snap.sealed)
    assert (check.access, check.origin, check.text_length) == (snap.access.value, snap.origin.value, n)
    spans = [(s.start, s.end, s.excerpt, s.reason) for s in check.spans]
    assert spans[0] == (0, min(5, n), snap.text[: min(5, n)], None) or n == 0
    assert [reason for *_, reason in spans[1:]] == [Reason.SPAN_OUT_OF_RANGE, Reason.SPAN_OUT_OF_RANGE]


@pytest.mark.parametrize("how", ["title", "missing"])
def test_a_packed_check_fails_as_the_models_read_fails(tmp_path: Path, how: str) -> None:
    store, sid = _store_with(tmp_path, _records()[2])
    path = store.path_for(sid)
    if how == "missing":
        path.unlink()
    else:
        raw = json.loads(path.read_bytes())
        raw["title"] = "Another trial"
        path.chmod(0o644)
        path.write_bytes(canonical_bytes(raw) + b"\n")
    with pytest.raises(PublisherError) as info:
        read_snapshot(store.folder, sid)
    check = pickle.loads(pickle.dumps(packed_check((os.fspath(store.folder), sid, ((0, 1),)))))
    assert not check.ok and check.spans == ()
    assert (check.reason, check.detail) == (info.value.reason, info.value.one_line())
