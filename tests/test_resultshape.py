"""The pydantic-free check of a stored result (``publisher.gate.resultshape``) is never more
lenient than the ``Result`` model, takes every result the product writes, and its views hold
what the model holds: the same values, types, enums, tuples and dumps, key order included."""

from __future__ import annotations

import ast
import copy
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from enum import Enum
from pathlib import Path
from typing import Any

import pytest
from _gate_helpers import make_run, make_upstream_run
from _policy import options_of
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import BaseModel
from test_shapes import _ODD as _SHAPES_ODD
from test_shapes import _mutate, _paths, _replaced

from publisher.gate import pipeline
from publisher.gate.assemble import assemble_run, dump_result
from publisher.gate.checks import assembler
from publisher.gate.checks.assembler import parse_stored, valid_result
from publisher.gate.result import Result
from publisher.gate.resultshape import ResultView, accepted_shape, accepted_views, result_shape, result_view
from publisher.kernel.canonical import loads_written
from publisher.kernel.reasons import Reason

ROOT = Path(__file__).resolve().parents[1]
HEX = "b" * 64
ASSET = {"path": "assets/papers/x.pdf", "sha256": HEX, "bytes": 3}


def _assembled(fx: Any, gate: bool | None = None) -> dict[str, Any]:
    """The result ``assemble`` writes for ``fx``'s run, parsed back from the bytes it writes."""
    assembly = assemble_run(fx.run, options_of(fx.run), gate=gate, write=False)
    return loads_written(dump_result(assembly.result))  # type: ignore[no-any-return]


def _written(root: Path) -> dict[str, dict[str, Any]]:
    """Results of every shape the product writes: the gate off, on by its switch or by the run's
    config; unresolved artifacts; warnings; an upstream-layout run; a trusted-key policy (empty
    or not); a source's PDF asset; an older result without ``inputs``."""
    out: dict[str, dict[str, Any]] = {}
    for name in ("plain", "config", "unresolved", "upstream", "one"):
        (root / name).mkdir()
    fx = make_run(root / "plain", articles=2)
    out["plain"] = _assembled(fx)
    out["switch"] = _assembled(fx, gate=True)
    out["config"] = _assembled(make_run(root / "config", articles=1, gate=True))
    broken = make_run(root / "unresolved", articles=2, report=False)
    record = broken.extraction(0)
    record["spans"][0]["access"] = "web"
    record["notes_beyond"] = "an unknown field"
    broken.put_extraction(0, record)
    record = broken.extraction(1)
    record["spans"][0]["end"] = 10**9
    broken.put_extraction(1, record)
    out["unresolved"] = _assembled(broken, gate=True)
    out["unresolved-off"] = _assembled(broken)
    out["upstream"] = _assembled(make_upstream_run(root / "upstream", articles=2))
    one = make_run(root / "one", articles=1, report=False, appraisals=False)
    out["small"] = _assembled(one)
    out["signed"] = out["plain"] | {"policy": {"trusted_keys": [HEX, "a" * 64]}}
    out["signed-none"] = out["plain"] | {"policy": {"trusted_keys": []}}
    asset = copy.deepcopy(out["plain"])
    asset["sources"][0]["asset"] = ASSET
    out["asset"] = asset
    out["older"] = {k: v for k, v in out["plain"].items() if k != "inputs"}
    return out


@pytest.fixture(scope="module")
def written(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, Any]]:
    return _written(tmp_path_factory.mktemp("results"))


def _model_accepts(raw: Any) -> bool:
    try:
        Result.model_validate(raw)
    except ValueError:
        return False
    return True


# --- the views hold what the model holds ------------------------------------------------------


def _layout(value: Any) -> Any:
    """A dump with its key order and every value's exact type made visible (a Reason key and its
    string compare equal; a tuple and a list do not say which they are in ``==`` of dumps)."""
    if type(value) is dict:
        return ("dict", [(_layout(k), _layout(v)) for k, v in value.items()])
    if type(value) in (list, tuple):
        return (type(value).__name__, [_layout(v) for v in value])
    return (type(value).__name__, value)


def _same(view: Any, model: Any, where: str = "result") -> None:
    """``view`` holds what ``model`` holds: every field, recursively, with the same types."""
    assert isinstance(model, BaseModel), where
    fields = list(type(model).model_fields)
    assert list(view.model_dump()) == fields, where
    for name in fields:
        held, wanted = getattr(view, name), getattr(model, name)
        _same_value(held, wanted, f"{where}.{name}")
    for mode in ("python", "json"):
        assert _layout(view.model_dump(mode=mode)) == _layout(model.model_dump(mode=mode)), (where, mode)


def _same_value(held: Any, wanted: Any, where: str) -> None:
    if isinstance(wanted, BaseModel):
        if type(wanted).__module__ == "publisher.gate.result":
            _same(held, wanted, where)
            assert held == wanted, where
        else:  # a kernel record (Paper, Asset), held as its kernel view
            assert _layout(held.model_dump()) == _layout(wanted.model_dump()), where
            for name in type(wanted).model_fields:
                assert getattr(held, name) == getattr(wanted, name), f"{where}.{name}"
        return
    assert type(held) is type(wanted), (where, type(held), type(wanted))
    if isinstance(wanted, tuple | list):
        assert len(held) == len(wanted), where
        for index, (a, b) in enumerate(zip(held, wanted, strict=True)):
            _same_value(a, b, f"{where}[{index}]")
    elif isinstance(wanted, dict):
        assert _layout(held) == _layout(wanted), where
    elif isinstance(wanted, Enum):
        assert held is wanted, where
    else:
        assert held == wanted, where


def _view_and_model(raw: dict[str, Any]) -> tuple[ResultView, Result]:
    assert result_shape(raw)
    return ResultView(copy.deepcopy(raw)), Result.model_validate(copy.deepcopy(raw))


# --- every written result is taken without the model -------------------------------------------


def test_every_result_the_product_writes_is_taken_without_the_model(written: dict[str, dict[str, Any]]) -> None:
    seen = set()
    for name, raw in written.items():
        assert _model_accepts(raw), name
        assert result_shape(raw), name
        view, model = _view_and_model(raw)
        _same(view, model, name)
        assert view == model and view == ResultView(copy.deepcopy(raw)), name
        seen |= {
            ("unresolved", bool(raw["diagnostics"]["unresolved"])),
            ("warnings", bool(raw["diagnostics"]["warnings"])),
            ("flag", raw["gate"]["flag"]),
            ("policy", raw.get("policy") is not None),
            ("asset", any(s["asset"] is not None for s in raw["sources"])),
        }
    assert {("unresolved", True), ("warnings", True), ("policy", True), ("asset", True)} <= seen
    assert {("flag", None), ("flag", "--gate"), ("flag", "gates.evidence_kernel")} <= seen
    assert written["unresolved"]["diagnostics"]["counts_by_reason"]  # Reason keys, held as members
    assert all(isinstance(k, Reason) for k in ResultView(written["unresolved"]).diagnostics.counts_by_reason)


def test_a_stored_result_reads_as_the_view_the_model_path_gives(
    written: dict[str, dict[str, Any]], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The model path (a result the hand check is unsure of) gives the same view, as the
    hand-checked path does: one type for every consumer."""
    data = dump_result(written["unresolved"])
    raw, fast, problem = parse_stored(data)
    assert problem is None and isinstance(fast, ResultView)
    monkeypatch.setattr(assembler, "result_shape", lambda raw: False)
    raw_again, slow, problem = parse_stored(data)
    assert problem is None and isinstance(slow, ResultView) and raw_again == raw
    assert _layout(fast.model_dump()) == _layout(slow.model_dump())
    _same(slow, Result.model_validate(raw), "model path")


# --- never more lenient than the model ------------------------------------------------------------


@settings(max_examples=400, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(data=st.data(), rounds=st.integers(1, 3))
def test_a_result_the_hand_check_takes_is_one_the_model_takes_and_holds_alike(
    written: dict[str, dict[str, Any]], data: st.DataObject, rounds: int
) -> None:
    raw = copy.deepcopy(written[data.draw(st.sampled_from(sorted(written)))])
    for _ in range(rounds):
        raw = _mutate(raw, data)
    if result_shape(raw):
        assert _model_accepts(copy.deepcopy(raw)), raw
        view, model = _view_and_model(raw)
        _same(view, model)


_ODD = [*_SHAPES_ODD, {"pmid": 1}]
"""The odd values of the kernel's checks (lone surrogates among them), and a paper with a number."""


def test_any_odd_value_anywhere_is_never_taken_where_the_model_refuses_it(written: dict[str, dict[str, Any]]) -> None:
    """Every place of a written result (one artifact, unresolved entries and warnings), each
    replaced by each of a set of odd JSON values: the hand check never raises, and takes nothing
    the model refuses."""
    tried = taken = 0
    for name in ("small", "unresolved"):
        raw = written[name]
        for path in _paths(raw):
            if (len(path) > 2 and path[0] in ("config", "inputs")) or "data" in path[:-1]:
                continue  # any JSON value at all is taken there, by both
            for new in _ODD:
                changed = _replaced(raw, path, new)
                if result_shape(changed):
                    taken += 1
                    assert _model_accepts(copy.deepcopy(changed)), (path, new)
                tried += 1
    assert tried > 1000 and taken


_RULES: list[tuple[str, tuple[Any, ...], Any]] = [
    ("schema_version", ("schema_version",), 2),
    ("schema_version a bool", ("schema_version",), True),
    ("run_slug", ("run_slug",), "Not A Slug!"),
    ("generated_at", ("generated_at",), "2026-13-01T00:00:00Z"),
    ("config", ("config",), []),
    ("gate.enabled", ("gate", "enabled"), 1),
    ("gate.verdict", ("gate", "verdict"), "ok"),
    ("gate.flag", ("gate", "flag"), "--other"),
    ("counts", ("counts", "accepted"), -1),
    ("counts a bool", ("counts", "sources"), True),
    ("accepted.kind", ("accepted", 0, "kind"), "note"),
    ("accepted.source_ids", ("accepted", 0, "source_ids"), ["src-ABC"]),
    ("accepted.paper", ("accepted", 0, "paper"), {"pmid": 1}),
    ("accepted.access", ("accepted", 0, "access"), "full"),
    ("accepted.fresh", ("accepted", 0, "fresh"), None),
    ("accepted.data", ("accepted", 0, "data"), []),
    ("accepted.claims", ("accepted", 0, "claims"), {}),
    ("claim.start", ("accepted", 0, "claims", 0, "start"), -1),
    ("claim.end", ("accepted", 0, "claims", 0, "end"), 1.0),
    ("claim.source_id", ("accepted", 0, "claims", 0, "source_id"), "src-" + "A" * 64),
    ("claim.access", ("accepted", 0, "claims", 0, "access"), None),
    ("claim.page", ("accepted", 0, "claims", 0, "page"), "1"),
    ("claim.excerpt", ("accepted", 0, "claims", 0, "excerpt"), None),
    ("quote.fresh", ("accepted", 0, "quotes", 0, "fresh"), 0),
    ("quote.url", ("accepted", 0, "quotes", 0, "url"), 5),
    ("unresolved.reason_code", ("diagnostics", "unresolved", 0, "reason_code"), "NOT_A_CODE"),
    ("unresolved.detail", ("diagnostics", "unresolved", 0, "detail"), "x" * 301),
    ("unresolved.kind", ("diagnostics", "unresolved", 0, "kind"), "note"),
    ("unresolved.source_id", ("diagnostics", "unresolved", 0, "source_id"), 3),
    ("counts_by_reason key", ("diagnostics", "counts_by_reason"), {"NOT_A_CODE": 1}),
    ("counts_by_reason zero", ("diagnostics", "counts_by_reason"), {"SPAN_OUT_OF_RANGE": 0}),
    ("warning.detail", ("diagnostics", "warnings", 0, "detail"), "x" * 301),
    ("unresolved.detail surrogate", ("diagnostics", "unresolved", 0, "detail"), "a\ud800"),
    ("warning.detail surrogate", ("diagnostics", "warnings", 0, "detail"), "\udfff"),
    ("warning.field", ("diagnostics", "warnings", 0, "field"), None),
    ("source.status", ("sources", 0, "status"), "gone"),
    ("source.retrieved_at", ("sources", 0, "retrieved_at"), "yesterday"),
    ("source.access", ("sources", 0, "access"), "FULL_TEXT"),
    ("source.asset", ("sources", 0, "asset"), {**ASSET, "path": "../x.pdf"}),
    ("source.asset digest", ("sources", 0, "asset"), {**ASSET, "sha256": "B" * 64}),
    ("source.content_hash", ("sources", 0, "content_hash"), "sha256:" + "C" * 64),
    ("source.sealed", ("sources", 0, "sealed"), None),
    ("source.chars", ("sources", 0, "chars"), "12"),
    ("source.fresh_detail", ("sources", 0, "fresh_detail"), None),
    ("log.events", ("log", "events"), -1),
    ("log.head", ("log", "head"), "sha256:x"),
    ("inputs", ("inputs",), [1]),
    ("inputs not a list", ("inputs",), "x"),
    ("inputs_hash", ("inputs_hash",), None),
    ("policy", ("policy",), {"trusted_keys": ["A" * 64]}),
    ("policy extra", ("policy",), {"trusted_keys": [], "more": 1}),
    ("policy not an object", ("policy",), []),
]


@pytest.mark.parametrize(("rule", "path", "value"), _RULES, ids=[r[0] for r in _RULES])
def test_each_rule_of_the_model_is_one_of_the_hand_check(
    written: dict[str, dict[str, Any]], rule: str, path: tuple[Any, ...], value: Any
) -> None:
    raw = _replaced(written["unresolved"], path, value)
    assert not _model_accepts(copy.deepcopy(raw)), rule
    assert not result_shape(raw), rule
    view, problem = valid_result(raw)
    assert view is None and problem is not None and problem.startswith("is not a valid result")


@pytest.mark.parametrize(
    ("path", "value"),
    [
        (("accepted", 0, "data", "\ud800"), 1),
        (("accepted", 0, "data", "x"), {"\udfff": 1}),
        (("config", "a\ud800"), 1),
        (("config", "q"), [{"\ud800": 1}]),
        (("inputs",), [[{"\udc00": 1}]]),
    ],
)
def test_a_free_form_key_holding_a_lone_surrogate_goes_to_the_model(
    written: dict[str, dict[str, Any]], path: tuple[Any, ...], value: Any
) -> None:
    """A key with a lone surrogate (JSON ``"\\ud800"``, which the strict reader lets through) in
    a free-form object (``data``, ``config``, ``inputs``): the model's JSON dump spells a top one
    as U+FFFD per byte and fails on a deeper one, where the view would keep it; the hand check
    leaves such a result to the model."""
    raw = copy.deepcopy(written["unresolved"])
    node = raw
    for step in path[:-1]:
        node = node[step]
    node[path[-1]] = value
    assert _model_accepts(copy.deepcopy(raw))
    assert not result_shape(raw)
    try:
        dumped = Result.model_validate(copy.deepcopy(raw)).model_dump(mode="json")
    except UnicodeEncodeError:
        return
    assert dumped != ResultView(raw).model_dump(mode="json")


@pytest.mark.parametrize(
    "where",
    [
        (),
        ("gate",),
        ("counts",),
        ("accepted", 0),
        ("accepted", 0, "claims", 0),
        ("accepted", 0, "quotes", 0),
        ("diagnostics",),
        ("diagnostics", "unresolved", 0),
        ("diagnostics", "warnings", 0),
        ("sources", 0),
        ("log",),
    ],
)
def test_a_missing_or_unknown_key_is_refused(written: dict[str, dict[str, Any]], where: tuple[Any, ...]) -> None:
    raw = copy.deepcopy(written["unresolved"])
    place = raw
    for key in where:
        place = place[key]
    place["beyond"] = 1
    assert not _model_accepts(copy.deepcopy(raw)) and not result_shape(raw)
    first = next(iter(place))
    renamed = copy.deepcopy(raw)  # as many keys as the model's fields, one of them unknown
    spot = renamed
    for key in where:
        spot = spot[key]
    spot.pop(first)
    assert not _model_accepts(copy.deepcopy(renamed)) and not result_shape(renamed)
    del place["beyond"]
    place.pop(first)
    assert not _model_accepts(copy.deepcopy(raw)) and not result_shape(raw)


def test_the_views_list_the_models_fields_in_the_models_order(written: dict[str, dict[str, Any]]) -> None:
    view = ResultView(written["unresolved"])
    parts: Iterator[tuple[Any, type[BaseModel]]] = iter(
        [
            (view, Result),
            (view.gate, Result.model_fields["gate"].annotation),  # type: ignore[list-item]
            (view.counts, Result.model_fields["counts"].annotation),  # type: ignore[list-item]
            (view.diagnostics, Result.model_fields["diagnostics"].annotation),  # type: ignore[list-item]
            (view.log, Result.model_fields["log"].annotation),  # type: ignore[list-item]
        ]
    )
    for held, model in parts:
        assert held._fields == tuple(model.model_fields), model


# --- a check of a clean run loads no validation library --------------------------------------------


_PROBE = (
    "import sys\n"
    "sys.argv = ['publisher', 'verify', '--gate', '--json', '--run-dir', sys.argv[1]]\n"
    "from publisher.cli import entry\n"
    "try:\n"
    "    entry()\n"
    "finally:\n"
    "    print('LOADED', sorted(m for m in sys.modules if m in ('pydantic', 'pydantic_core')"
    " or m.startswith(('publisher.kernel.models', 'publisher.gate.re'))), file=sys.stderr)\n"
)


def _verify_loads(run: Path) -> tuple[int, str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("COV")}
    done = subprocess.run([sys.executable, "-c", _PROBE, str(run)], capture_output=True, text=True, env=env, cwd=ROOT)
    return done.returncode, done.stdout, done.stderr.rsplit("LOADED ", 1)[-1].strip()


@pytest.mark.parametrize("layout", ["ours", "upstream"])
@pytest.mark.parametrize("stored", ["as-written", "re-spaced"])
def test_verifying_a_clean_run_loads_no_validation_library(tmp_path: Path, layout: str, stored: str) -> None:
    """``publisher verify --gate`` of a clean run reads its stored result without pydantic: when
    the file is the assembly's bytes (adopted) and when it is the same result spaced otherwise
    (read whole, then checked by hand). Structural (the modules loaded), no timing."""
    fx = make_run(tmp_path, 2, gate=True) if layout == "ours" else make_upstream_run(tmp_path, 2)
    assemble_run(fx.run, options_of(fx.run), gate=True)
    if stored == "re-spaced":
        path = fx.run.result_path
        path.chmod(0o644)
        path.write_text(json.dumps(json.loads(path.read_bytes()), indent=1), encoding="utf-8")
    status, out, loaded = _verify_loads(fx.run.path)
    assert status == 0, out
    assert json.loads(out)["verdict"] in ("Verified", "Inconclusive")
    checks = {c["check_id"]: c["status"] for c in json.loads(out)["checks"]}
    assert checks["C-ASSEMBLER"] == "pass", checks
    modules = set(ast.literal_eval(loaded))
    assert "publisher.gate.resultshape" in modules, modules
    assert not modules & {"pydantic", "pydantic_core", "publisher.kernel.models", "publisher.gate.result"}, modules


def test_an_odd_stored_result_still_loads_the_model_which_words_the_refusal(tmp_path: Path) -> None:
    """The hand check never refuses: a result it is unsure of goes to the model, which says why."""
    fx = make_run(tmp_path, 1)
    assemble_run(fx.run, options_of(fx.run))
    path = fx.run.result_path
    path.chmod(0o644)
    path.write_text(path.read_text(encoding="utf-8").replace('"schema_version": 1', '"schema_version": true'))
    status, out, loaded = _verify_loads(fx.run.path)
    assert status == 1
    found = [f for f in json.loads(out)["findings"] if f["check_id"] == "C-ASSEMBLER"]
    assert [f["reason_code"] for f in found] == ["SCHEMA_ERROR"], found
    assert "publisher.gate.result" in loaded and "'pydantic'" in loaded, loaded


def test_a_stored_result_is_read_as_its_view_without_the_model(written: dict[str, dict[str, Any]]) -> None:
    """Reading a stored result goes through the hand check: the result's models are not even
    asked for (a subprocess that refuses to import their module)."""
    data = dump_result(written["unresolved"])
    probe = (
        "import sys, importlib.abc\n"
        "class Refuse(importlib.abc.MetaPathFinder):\n"
        "    def find_spec(self, name, path, target=None):\n"
        "        if name == 'publisher.gate.result':\n"
        "            raise ImportError(name)\n"
        "sys.meta_path.insert(0, Refuse())\n"
        "from publisher.gate.checks.assembler import parse_stored, valid_result\n"
        "raw, view, problem = parse_stored(sys.stdin.buffer.read())\n"
        "assert problem is None and view is not None, problem\n"
        "assert valid_result(raw)[0] is not None\n"
        "print(type(view).__name__, len(view.accepted), view.diagnostics.unresolved[0].reason_code.value)\n"
    )
    done = subprocess.run([sys.executable, "-c", probe], input=data, capture_output=True, cwd=ROOT)
    assert done.returncode == 0, done.stderr.decode()
    assert done.stdout.decode().startswith("ResultView "), done.stdout


def test_adopting_a_matched_assembly_builds_no_model(
    written: dict[str, dict[str, Any]], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A stored file equal to the assembly is adopted as the view the hand check takes."""
    fx = make_run(tmp_path, articles=1)
    assemble_run(fx.run, options_of(fx.run))

    def refuse(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("the result's model was built")

    monkeypatch.setattr(Result, "model_validate", refuse)
    rc = pipeline.check_run(fx.run, options_of(fx.run))
    assert rc.status("C-ASSEMBLER") == "pass" and rc.verdict == "Verified"


# --- a result's accepted artifacts on their own (the wiki's evidence) --------------------------------


def _accepted_model(raw: Any) -> tuple[Any, ...] | None:
    from pydantic import TypeAdapter, ValidationError

    from publisher.gate.result import AcceptedArtifact

    try:
        return TypeAdapter(tuple[AcceptedArtifact, ...]).validate_python(raw)
    except ValidationError:
        return None


def test_every_written_accepted_list_is_taken_and_held_as_the_model_holds_it(
    written: dict[str, dict[str, Any]],
) -> None:
    for name, raw in written.items():
        accepted = raw["accepted"]
        assert accepted_shape(accepted), name
        models = _accepted_model(copy.deepcopy(accepted))
        assert models is not None
        _same_value(accepted_views(accepted), models, name)
        assert result_view(raw) == Result.model_validate(raw)


@settings(max_examples=300, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(data=st.data(), rounds=st.integers(1, 3))
def test_accepted_artifacts_the_hand_check_takes_are_the_models(
    written: dict[str, dict[str, Any]], data: st.DataObject, rounds: int
) -> None:
    raw = copy.deepcopy(written[data.draw(st.sampled_from(sorted(written)))]["accepted"])
    for _ in range(rounds):
        raw = _mutate(raw, data)
    if accepted_shape(raw):
        models = _accepted_model(copy.deepcopy(raw))
        assert models is not None, raw
        _same_value(accepted_views(raw), models, "accepted")


def test_what_the_model_refuses_is_refused_by_the_views_constructors_as_by_the_model(
    written: dict[str, dict[str, Any]],
) -> None:
    from pydantic import ValidationError

    bad = _replaced(written["small"], ("accepted", 0, "claims", 0, "start"), -1)
    assert not accepted_shape(bad["accepted"]) and not result_shape(bad)
    with pytest.raises(ValidationError):
        result_view(bad)
    with pytest.raises(ValidationError):
        accepted_views(bad["accepted"])
    odd = _replaced(written["small"], ("accepted", 0, "claims", 0, "page"), None)
    assert accepted_views(odd["accepted"])[0].claims[0].page is None
