"""The pydantic-free views of a snapshot's paper, asset, identity and surface
(``publisher.kernel.views``) hold what the models hold for every record the shape check accepts:
the same fields, the same methods' answers and the same ``model_dump``, key order included;
a snapshot check carries them across processes unchanged."""

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
from _views_helpers import DUMPS, assert_same
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_shapes import _events, _mutate, _records

from publisher.kernel.canonical import canonical_bytes
from publisher.kernel.models import Event, Snapshot
from publisher.kernel.shapes import event_shape, snapshot_shape
from publisher.kernel.snapshots import SnapshotCheck, check_snapshot, packed_check
from publisher.kernel.store import SnapshotStore, build_record
from publisher.kernel.views import AssetView, IdentityView, PaperView, SurfaceView
from publisher.parallel import pool, verify_many

ROOT = Path(__file__).resolve().parents[1]
HEX = "d" * 64
_VIEWS: dict[str, Any] = {"paper": PaperView, "asset": AssetView, "surface": SurfaceView, "identity": IdentityView}


def _assert_views_of(raw: dict[str, Any]) -> None:
    """Each part of an accepted record, as a view, is what the model holds of it."""
    snap = Snapshot.model_validate(copy.deepcopy(raw))
    for name, view in _VIEWS.items():
        part = raw.get(name)
        assert_same(None if part is None else view.of(part), getattr(snap, name))


# --- every record the product writes, and generated ones -------------------------------------------


@pytest.mark.parametrize("index", range(6))
def test_every_written_record_gives_the_models_values(index: int) -> None:
    raw = json.loads(canonical_bytes(_records()[index]))
    assert snapshot_shape(raw)
    _assert_views_of(raw)


_SOME_TEXT = st.text(max_size=12)
_VIA = st.text(min_size=1, max_size=200)
_PAGES = st.lists(st.integers(1, 30), max_size=6, unique=True).map(sorted)


@st.composite
def _paper_and_identity(draw: st.DrawFn, title: str | None) -> tuple[dict[str, Any] | None, dict[str, Any] | None]:
    """A paper of any subset of ids (None or empty ones too) and, perhaps, an identity naming
    exactly its non-empty ids (some absent ids spelt as null) and the record's title."""
    if draw(st.booleans()):
        return None, None
    paper = {k: draw(st.one_of(st.none(), _SOME_TEXT)) for k in ("pmid", "doi", "pmcid") if draw(st.booleans())}
    if title == "" or not draw(st.booleans()):  # an empty title has no entry, so no identity names it
        return paper, None
    basis = st.sampled_from(["document", "registry_url", "asserted"])
    identity: dict[str, Any] = {}
    for kind in ("pmid", "doi", "pmcid"):
        if paper.get(kind):
            identity[kind] = {"value": paper[kind], "basis": draw(basis), "via": draw(_VIA)}
        elif draw(st.booleans()):
            identity[kind] = None
    if title:
        identity["title"] = {"value": title, "basis": draw(basis), "via": draw(_VIA)}
    elif draw(st.booleans()):
        identity["title"] = None
    return paper, dict(draw(st.permutations(list(identity.items()))))


@st.composite
def _surface(draw: st.DrawFn) -> dict[str, Any]:
    """A declared surface of either type, its lists following from each other as the model asks."""
    modalities = draw(st.lists(_SOME_TEXT, max_size=3))
    method = draw(_VIA)
    if draw(st.booleans()):
        return {"type": "WHOLE_TEXT", "expected_pages": None, "extracted_pages": [], "missing_pages": [],
                "unexpected_pages": [], "complete": draw(st.booleans()), "excluded_modalities": modalities,
                "method": method}  # fmt: skip
    expected = draw(st.one_of(st.none(), _PAGES))
    extracted = draw(_PAGES)
    declared = expected is not None
    missing = sorted(set(expected or ()) - set(extracted)) if declared else []
    return {
        "type": "PAGE_INDEXED_TEXT",
        "expected_pages": expected,
        "extracted_pages": extracted,
        "missing_pages": missing,
        "unexpected_pages": sorted(set(extracted) - set(expected or ())) if declared else [],
        "complete": declared and not missing,
        "excluded_modalities": modalities,
        "method": method,
    }


@st.composite
def _record(draw: st.DrawFn) -> dict[str, Any]:
    title = draw(st.one_of(st.none(), st.just(""), _SOME_TEXT))
    paper, identity = draw(_paper_and_identity(title))
    surface = draw(st.one_of(st.none(), _surface()))
    complete = surface is not None and surface["complete"]
    asset = draw(
        st.one_of(
            st.none(),
            st.fixed_dictionaries(
                {
                    "path": st.sampled_from(["assets/papers/a.pdf", "a.pdf", "x\\y.pdf", "p/./q.pdf"]),
                    "sha256": st.sampled_from([HEX, "0123456789abcdef" * 4]),
                    "bytes": st.integers(0, 2**40),
                }
            ),
        )
    )
    return build_record(
        url="https://example.org/" + draw(st.text("abc", max_size=4)),
        text=draw(st.text(max_size=20)),
        title=title,
        retrieved_at="2026-01-02T03:04:05Z",
        access=draw(st.sampled_from(["full_text", "preprint", "web"] if complete else ["abstract", "full_text"])),
        origin=draw(st.sampled_from(["pmc", "user-supplied-pdf", "web"])),
        paper=paper,
        asset=asset,
        surface=surface,
        identity=identity,
    )


@settings(max_examples=300, suppress_health_check=[HealthCheck.too_slow])
@given(record=_record())
def test_a_generated_record_gives_the_models_values(record: dict[str, Any]) -> None:
    raw = json.loads(canonical_bytes(record))
    assert snapshot_shape(raw), raw  # else the generator strays from what the product writes
    _assert_views_of(raw)


@settings(max_examples=600, suppress_health_check=[HealthCheck.too_slow])
@given(index=st.integers(0, 5), data=st.data(), rounds=st.integers(1, 3))
def test_a_mutated_record_the_shape_check_takes_gives_the_models_values(
    index: int, data: st.DataObject, rounds: int
) -> None:
    raw = json.loads(canonical_bytes(_records()[index]))
    for _ in range(rounds):
        raw = _mutate(raw, data)
    if snapshot_shape(raw):
        _assert_views_of(raw)


@pytest.mark.parametrize("index", range(5))
def test_an_event_lines_surface_gives_the_models_values(index: int) -> None:
    raw = json.loads(canonical_bytes(_events()[index]))
    assert event_shape(raw)
    surface = raw.get("surface")
    assert_same(None if surface is None else SurfaceView.of(surface), Event.model_validate(raw).surface)


def test_every_dump_argument_is_tried_on_a_paper_given_in_part() -> None:
    """``exclude_unset`` keeps the keys the JSON held, a null one included, in the model's order."""
    view = PaperView.of({"pmcid": "PMC1", "pmid": None})
    assert view.model_dump(exclude_unset=True) == {"pmid": None, "pmcid": "PMC1"}
    assert list(view.model_dump()) == ["pmid", "doi", "pmcid"]
    assert len(DUMPS) == 8
    assert view == PaperView.of({"pmid": None, "doi": None, "pmcid": "PMC1"}), "which keys were given is not compared"


# --- snapshot checks: in process, pickled and through the pool ------------------------------------


def _stored(folder: Path, records: list[dict[str, Any]]) -> tuple[SnapshotStore, list[str]]:
    store = SnapshotStore(folder / "sources")
    return store, [store.put(record)[0].source_id for record in records]


def _assert_check_holds_the_models(check: SnapshotCheck, snap: Snapshot) -> None:
    assert check.ok, check.detail
    for name in _VIEWS:
        assert_same(getattr(check, name), getattr(snap, name))
    assert check.derived_ids() == snap.derived_ids()


@settings(max_examples=60, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(record=_record())
def test_a_checks_views_are_the_models_in_process_and_pickled(
    tmp_path_factory: pytest.TempPathFactory, record: dict[str, Any]
) -> None:
    store, (sid,) = _stored(tmp_path_factory.mktemp("views"), [record])
    snap = store.read(sid)
    task = (os.fspath(store.folder), sid, ((0, 1),))
    packed = packed_check(task)
    for check in (packed.unpack(), pickle.loads(pickle.dumps(packed)), check_snapshot(task)):
        _assert_check_holds_the_models(check, snap)
        again = pickle.loads(pickle.dumps(check))
        assert again == check
        _assert_check_holds_the_models(again, snap)


def test_a_pools_checks_hold_the_models_values(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Checks made in worker processes arrive holding views equal to the models, field by field."""
    store, ids = _stored(tmp_path, _records())
    requests = [(store.folder, sid, [(0, 3)]) for sid in ids]
    local = {c.source_id: c for c in verify_many(requests, workers=1)}
    monkeypatch.setattr(pool, "IN_PROCESS_BYTES", 0)
    monkeypatch.setattr(pool, "_CHUNK_MAX", 2)
    pooled = {c.source_id: c for c in verify_many(requests, workers=2)}
    assert pooled == local and set(pooled) == set(ids)
    for sid in ids:
        _assert_check_holds_the_models(pooled[sid], store.read(sid))


def test_holding_a_check_loads_no_validation_library(tmp_path: Path) -> None:
    """A check made and unpickled in a fresh interpreter holds its views without pydantic
    (checked by the modules loaded, no timing)."""
    store, ids = _stored(tmp_path, _records()[2:4])
    probe = (
        "import os, pickle, sys\n"
        "from publisher.kernel.snapshots import packed_check\n"
        "for sid in sys.argv[2:]:\n"
        "    check = pickle.loads(pickle.dumps(packed_check((sys.argv[1], sid, ((0, 2),)))))\n"
        "    assert check.ok and check.paper is not None and check.identity is not None, check\n"
        "    check.paper.model_dump(), check.identity.derived_ids()\n"
        "print('LOADED', sorted(m for m in ('pydantic', 'pydantic_core') if m in sys.modules))\n"
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith("COV")}
    done = subprocess.run(
        [sys.executable, "-c", probe, os.fspath(store.folder), *ids], capture_output=True, text=True, env=env, cwd=ROOT
    )
    assert done.returncode == 0, done.stderr
    assert "LOADED []" in done.stdout, done.stdout + done.stderr
