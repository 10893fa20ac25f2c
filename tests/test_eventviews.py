"""Event lines and run configs read without the validation library hold exactly what the models
hold (``publisher.kernel.eventviews``, ``publisher.kernel.shapes.ConfigView``): the same fields,
the same dumps in both modes and in the same order, the same signed bytes, and the same log read
whichever path a line took."""

from __future__ import annotations

import copy
import json
import pickle
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_shapes import _CONFIG, _events, _mutate

from publisher.kernel import eventviews, shapes
from publisher.kernel.canonical import canonical_bytes
from publisher.kernel.eventlog import read_log
from publisher.kernel.eventviews import EventView, signed_payload
from publisher.kernel.models import _OPTIONAL_EXT, Event, Gates, Receipt, RunConfig, Signature
from publisher.kernel.shapes import ConfigView, config_shape, event_shape
from publisher.runs import Run

ROOT = Path(__file__).resolve().parents[1]


def test_the_views_list_the_models_fields_in_the_models_order() -> None:
    assert eventviews.EVENT_FIELDS == tuple(Event.model_fields)
    assert eventviews.RECEIPT_FIELDS == tuple(Receipt.model_fields)
    assert eventviews.SIGNATURE_FIELDS == tuple(Signature.model_fields)
    assert eventviews.OPTIONAL_EXT == _OPTIONAL_EXT
    assert shapes._CONFIG_FIELDS == tuple(RunConfig.model_fields)
    assert tuple(Gates.model_fields) == ("evidence_kernel",)


def _same_event(view: EventView, model: Event) -> None:
    """Every field, dump, line and signed payload of ``view`` is the model's."""
    for mode in ("json", "python"):
        got, want = view.model_dump(mode=mode), model.model_dump(mode=mode)  # type: ignore[arg-type]
        assert got == want and list(got) == list(want), mode
    assert view.wire() == model.wire() and list(view.wire()) == list(model.wire())
    assert canonical_bytes(view.wire()) == canonical_bytes(model.wire())
    assert signed_payload(view) == signed_payload(model)
    assert view.number == model.number
    for name in eventviews.EVENT_FIELDS:
        mine, theirs = getattr(view, name), getattr(model, name)
        if name in ("receipt", "sig", "surface"):
            assert (mine is None) == (theirs is None), name
            if mine is not None:
                assert mine.model_dump(mode="json") == theirs.model_dump(mode="json"), name
                for field in type(theirs).model_fields:
                    assert getattr(mine, field) == getattr(theirs, field), (name, field)
        else:
            assert mine == theirs and type(mine) is type(theirs), name
    assert view == model and model == view
    again = pickle.loads(pickle.dumps(view))
    assert isinstance(again, EventView) and again == view and again.wire() == view.wire()


@pytest.mark.parametrize("index", range(5))
def test_every_written_event_is_held_as_the_model_holds_it(index: int) -> None:
    raw = json.loads(canonical_bytes(_events()[index]))
    assert event_shape(raw)
    _same_event(EventView(copy.deepcopy(raw)), Event.model_validate(copy.deepcopy(raw)))


@settings(max_examples=400, suppress_health_check=[HealthCheck.too_slow])
@given(index=st.integers(0, 4), data=st.data(), rounds=st.integers(1, 2))
def test_any_event_the_hand_check_takes_is_held_as_the_model_holds_it(
    index: int, data: st.DataObject, rounds: int
) -> None:
    raw = json.loads(canonical_bytes(_events()[index]))
    for _ in range(rounds):
        raw = _mutate(raw, data)
    if event_shape(raw):
        _same_event(EventView(copy.deepcopy(raw)), Event.model_validate(copy.deepcopy(raw)))


def _log(tmp_path: Path, lines: list[bytes]) -> Path:
    path = tmp_path / "events.jsonl"
    path.write_bytes(b"".join(line + b"\n" for line in lines))
    return path


def test_a_line_the_hand_check_is_unsure_of_is_read_by_the_model_as_the_same_values(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A line the hand check leaves to the model (here every line: the check made unsure) is
    accepted by the model and held as a view of the model's values, like every other line."""
    from publisher.kernel import eventlog

    lines = [_events()[3], _events()[3] | {"event_id": "ev-0002"}]
    assert all(event_shape(line) for line in lines)
    monkeypatch.setattr(eventlog, "event_shape", lambda raw: False)
    path = _log(tmp_path, [canonical_bytes(line) for line in lines])
    state = read_log(path)
    assert state.findings == [] and len(state.events) == 2
    assert all(isinstance(e, EventView) for e in state.events)
    for event, line in zip(state.events, lines, strict=True):
        _same_event(event, Event.model_validate(line))


def test_an_event_id_of_other_digits_is_a_broken_line(tmp_path: Path) -> None:
    """``ev-١٢٣٤`` is not the contract's counter: the model refuses it, so the log has a finding."""
    base = dict(_events()[3])
    odd = base | {"event_id": "ev-\u0661\u0662\u0663\u0664"}
    assert not event_shape(odd)
    after = base | {"event_id": "ev-0003"}
    state = read_log(_log(tmp_path, [canonical_bytes(line) for line in (base, odd, after)]))
    assert [e.event_id for e in state.events] == ["ev-0001", "ev-0003"] and [f.line for f in state.findings] == [2]


def test_a_line_written_by_another_encoder_is_the_same_event(tmp_path: Path) -> None:
    """The upstream kit writes its log with spaces and its own key order: not canonical, read
    by the strict parser, and still taken by the hand check as the same values."""
    raw = _events()[3]
    spaced = json.dumps(dict(reversed(list(raw.items())))).encode()
    path = _log(tmp_path, [spaced])
    (event,) = read_log(path).events
    _same_event(event, Event.model_validate(raw))


@pytest.mark.parametrize(
    ("line", "why"),
    [
        (b'{"schema_version": 1, "schema_version": 1}', "a key given twice"),
        (b"[1, 2]", "not an object"),
        (b'{"schema_version": 1.0}', "a float"),
    ],
)
def test_a_line_neither_takes_is_a_broken_link_as_before(tmp_path: Path, line: bytes, why: str) -> None:
    good = canonical_bytes(_events()[3])
    state = read_log(_log(tmp_path, [line, good]))
    assert [f.line for f in state.findings] == [1], why
    assert len(state.events) == 1


def test_reading_a_clean_log_and_config_loads_no_validation_library(tmp_path: Path) -> None:
    """The whole point: a run's usual log (canonical or the upstream kit's spacing, signed or
    not, with receipts and surfaces) and its config are read without pydantic."""
    lines = [canonical_bytes(e | {"event_id": f"ev-000{n}", "prev": None}) for n, e in enumerate(_events(), 1)]
    lines[3] = json.dumps(json.loads(lines[3])).encode()
    path = _log(tmp_path, lines)
    (tmp_path / "config.json").write_bytes(canonical_bytes(_CONFIG))
    probe = (
        "import sys\nfrom pathlib import Path\nfrom publisher.kernel.eventlog import read_log\n"
        "from publisher.runs import Run\n"
        f"state = read_log(Path({str(path)!r}))\n"
        f"config = Run.open(Path({str(tmp_path)!r})).load_config()\n"
        "assert len(state.events) == 5 and config.gates.evidence_kernel, state.findings\n"
        "print(sorted(m for m in sys.modules if m.startswith(('pydantic', 'publisher.kernel.models'))))\n"
    )
    out = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]", out.stdout + out.stderr


# --- the run config ------------------------------------------------------------------------------


def _same_config(view: ConfigView, model: RunConfig) -> None:
    for mode in ("json", "python"):
        got, want = view.model_dump(mode=mode), model.model_dump(mode=mode)
        assert got == want and list(got) == list(want), mode
        assert list(got["gates"]) == list(want["gates"])
    assert view.extras() == model.extras() and list(view.extras()) == list(model.extras())
    assert (view.schema_version, view.run_slug, view.created_at) == (
        model.schema_version,
        model.run_slug,
        model.created_at,
    )
    assert view.gates.evidence_kernel is model.gates.evidence_kernel


@settings(max_examples=300)
@given(data=st.data(), rounds=st.integers(0, 3))
def test_any_config_the_hand_check_takes_is_held_as_the_model_holds_it(data: st.DataObject, rounds: int) -> None:
    raw = copy.deepcopy(_CONFIG)
    for _ in range(rounds):
        raw = _mutate(raw, data)
    if config_shape(raw):
        _same_config(ConfigView(copy.deepcopy(raw)), RunConfig.model_validate(copy.deepcopy(raw)))


@pytest.mark.parametrize(
    "config",
    [_CONFIG, {"schema_version": 1}, {"schema_version": 1, "gates": {}}, {"zeta": 1, "schema_version": 1, "a": [2]}],
)
def test_a_loaded_config_is_the_models_config(tmp_path: Path, config: dict[str, Any]) -> None:
    (tmp_path / "config.json").write_bytes(json.dumps(config).encode())
    loaded = Run.open(tmp_path).load_config()
    assert isinstance(loaded, ConfigView) and loaded.created_at == Run.open(tmp_path).created_at()
    _same_config(loaded, RunConfig.model_validate(config))
