"""A run's check reads its stored result only when the bytes are not exactly its assembly.

:func:`publisher.gate.pipeline.check_run` assembles first and compares the stored file's bytes
with the assembly written in the stored layout; the file is parsed and validated only when they
differ. Every stored result below, hostile or not, is checked both ways (read first, as before,
and compared first) and must give the same report, the same assembly and the same stored result.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from _gate_helpers import RunFixture, make_run, read_json, write_json
from _policy import options_of

from publisher.gate import pipeline
from publisher.gate.assemble import assemble_run, dump_result
from publisher.gate.checks.runcheck import RunCheck
from publisher.gate.pipeline import check_run
from publisher.gate.result import Result
from publisher.kernel.canonical import format_ts, utc_now
from publisher.kernel.eventlog import append_event
from publisher.kernel.store import build_record


@pytest.fixture
def assembled(tmp_path: Path) -> RunFixture:
    fx = make_run(tmp_path, articles=2)
    assemble_run(fx.run, options_of(fx.run))
    return fx


def _check(fx: RunFixture, gate: bool | None, speculate: bool, monkeypatch: pytest.MonkeyPatch) -> RunCheck:
    with monkeypatch.context() as patched:
        patched.setattr(pipeline, "_SPECULATE", speculate)
        return check_run(fx.run, options_of(fx.run), gate=gate)


def _seen(rc: RunCheck) -> dict[str, Any]:
    """What a check decides and keeps, but for the assembly's own time."""
    return {
        "report": rc.report,
        "result": {k: v for k, v in rc.result.items() if k != "generated_at"},
        "stored": rc.stored,
        "problem": rc.stored_problem,
        "verdict": (rc.verdict, rc.exit_status),
        "findings": [(f.check, f.code, f.file, f.field, f.source_id, f.detail) for f in rc.findings],
    }


def _both_ways(fx: RunFixture, monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    """The check of ``fx`` read first and compared first, with the gate off and on: the same."""
    seen = {}
    for gate in (None, True):
        slow = _seen(_check(fx, gate, False, monkeypatch))
        fast = _seen(_check(fx, gate, True, monkeypatch))
        assert fast == slow, f"gate {gate}"
        seen[str(gate)] = fast
    return seen


def _edit_json(edit: Callable[[dict[str, Any]], None]) -> Callable[[RunFixture], None]:
    def apply(fx: RunFixture) -> None:
        result = read_json(fx.run.result_path)
        edit(result)
        write_json(fx.run.result_path, result)

    return apply


def _edit_bytes(edit: Callable[[bytes], bytes]) -> Callable[[RunFixture], None]:
    def apply(fx: RunFixture) -> None:
        fx.run.result_path.write_bytes(edit(fx.run.result_path.read_bytes()))

    return apply


def _excerpt(result: dict[str, Any]) -> None:
    claim = result["accepted"][0]["claims"][0]
    claim["excerpt"] = claim["excerpt"] + "."


def _append_fetch(fx: RunFixture) -> None:
    record = build_record(
        url="https://example.org/later",
        text="fetched after the assembly",
        title=None,
        retrieved_at=format_ts(utc_now()),
        access="web",
        origin="web",
        paper=None,
    )
    snap, _ = fx.run.store.put(record)
    append_event(
        fx.run.events_path,
        type="fetch",
        source_id=snap.source_id,
        url=snap.url,
        fresh=True,
        sha256=snap.content_hash[7:],
    )


def _time_key(data: bytes) -> bytes:
    """The stored time as written, spelled with an escape: the same value, other bytes."""
    return data.replace(b'"generated_at": "2', b'"generated_at": "\\u0032', 1)


STORED: dict[str, Callable[[RunFixture], None]] = {
    "as assembled": lambda fx: None,
    "another valid time": _edit_json(lambda r: r.update(generated_at="1999-01-01T00:00:00Z")),
    "a time that is not one": _edit_json(lambda r: r.update(generated_at="yesterday")),
    "a time spelled with an escape": _edit_bytes(_time_key),
    "no final newline": _edit_bytes(lambda b: b.rstrip(b"\n")),
    "keys sorted": _edit_bytes(
        lambda b: (json.dumps(json.loads(b), indent=2, sort_keys=True, ensure_ascii=False) + "\n").encode()
    ),
    "compact": _edit_bytes(lambda b: json.dumps(json.loads(b), separators=(",", ":")).encode()),
    "ASCII escapes": _edit_bytes(lambda b: json.dumps(json.loads(b), indent=2).encode()),
    "a duplicate key": _edit_bytes(
        lambda b: b.replace(b'{\n  "schema_version": 1,', b'{\n  "schema_version": 1,\n  "schema_version": 1,', 1)
    ),
    "a duplicate time": _edit_bytes(
        lambda b: b.replace(b'\n  "generated_at"', b'\n  "generated_at": "2000-01-01T00:00:00Z",\n  "generated_at"', 1)
    ),
    "NaN": _edit_bytes(lambda b: b.replace(b'"schema_version": 1', b'"schema_version": NaN', 1)),
    "a float version": _edit_bytes(lambda b: b.replace(b'"schema_version": 1', b'"schema_version": 1.0', 1)),
    "a lone surrogate": _edit_bytes(lambda b: b.replace(b'"run_slug": "', b'"run_slug": "\\ud800', 1)),
    "not UTF-8": _edit_bytes(lambda b: b.replace(b'"run_slug": "', b'"run_slug": "\xff', 1)),
    "an unknown field": _edit_json(lambda r: r.update(extra=1)),
    "an edited excerpt": _edit_json(_excerpt),
    "an artifact removed": _edit_json(lambda r: r["accepted"].pop()),
    "an edited inputs hash": _edit_json(lambda r: r.update(inputs_hash="sha256:" + "0" * 64)),
    "not JSON": _edit_bytes(lambda b: b[: len(b) // 2]),
    "empty": _edit_bytes(lambda b: b""),
    "a list": _edit_bytes(lambda b: b"[]\n"),
    "absent": lambda fx: fx.run.result_path.unlink(),
    "a folder": lambda fx: (fx.run.result_path.unlink(), fx.run.result_path.mkdir()) and None,
    "a link": lambda fx: (
        (
            fx.run.result_path.rename(fx.run.path / "elsewhere.json"),
            fx.run.result_path.symlink_to(fx.run.path / "elsewhere.json"),
        )
        and None
    ),
    "log lines appended since": _append_fetch,
    "a record changed since": lambda fx: fx.put_extraction(0, {**fx.extraction(0), "design": "cohort"}),
}


@pytest.mark.parametrize("name", sorted(STORED))
def test_a_stored_result_is_checked_the_same_read_first_or_compared_first(
    assembled: RunFixture, name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    STORED[name](assembled)
    seen = _both_ways(assembled, monkeypatch)
    status = {c["check_id"]: c["status"] for c in seen["None"]["report"]["checks"]}["C-ASSEMBLER"]
    same_value = ("as assembled", "another valid time", "no final newline", "keys sorted", "compact", "ASCII escapes")
    if name in (*same_value, "a time spelled with an escape"):
        assert status == "pass"
    elif name in ("log lines appended since",):
        assert status == "pass"  # the result read the lines before them
    elif name in ("absent", "a record changed since"):
        assert status == "warn"
    else:
        assert status == "fail"


def test_a_result_assembled_with_the_gate_is_compared_with_the_gate(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The assembly first assumes the check's own switch; a result assembled with --gate and
    checked without it is read and the run assembled again with it, so it still equals its
    assembly. Checked with --gate (an agent's ``assemble --gate`` then ``verify --gate``), the
    first assembly is the one: one assembly, and the file is never parsed."""
    fx = make_run(tmp_path, articles=1)
    assemble_run(fx.run, options_of(fx.run), gate=True)
    seen = _both_ways(fx, monkeypatch)
    assert {c["check_id"]: c["status"] for c in seen["None"]["report"]["checks"]}["C-ASSEMBLER"] == "pass"
    assert seen["None"]["result"]["gate"]["flag"] == "--gate"
    assemblies: list[bool | None] = []
    real = pipeline.assemble

    def counted(*args: Any, **kwargs: Any) -> Any:
        assemblies.append(kwargs.get("gate"))
        return real(*args, **kwargs)

    def refuse(data: bytes) -> object:
        raise AssertionError("the stored result was parsed")

    with monkeypatch.context() as patched:
        patched.setattr(pipeline, "assemble", counted)
        patched.setattr(pipeline, "parse_stored", refuse)
        rc = check_run(fx.run, options_of(fx.run), gate=True)
    assert assemblies == [True] and rc.status("C-ASSEMBLER") == "pass" and rc.verdict == "Verified"
    with monkeypatch.context() as patched:
        patched.setattr(pipeline, "assemble", counted)
        check_run(fx.run, options_of(fx.run))
    assert assemblies == [True, False, True]  # without the switch: assumed off, read, assembled with it


def test_a_result_that_is_its_assembly_is_never_parsed(assembled: RunFixture, monkeypatch: pytest.MonkeyPatch) -> None:
    """Equal bytes are adopted without reading the file, and the model the checks read is the
    one reading it would give."""
    stored = read_json(assembled.run.result_path)

    def refuse(data: bytes) -> object:
        raise AssertionError("the stored result was parsed")

    with monkeypatch.context() as patched:
        patched.setattr(pipeline, "parse_stored", refuse)
        rc = check_run(assembled.run, options_of(assembled.run))
    assert rc.status("C-ASSEMBLER") == "pass" and rc.verdict == "Verified"
    assert rc.stored == stored
    reader = pipeline.CheckedSnapshots(assembled.run.sources_dir)
    prepared = pipeline.prepare_stored(assembled.run, reader)
    assert prepared.written_as({**stored, "generated_at": "2000-01-01T00:00:00Z"}) is not None
    assert prepared.model == Result.model_validate(stored)


def _types(value: Any) -> Iterator[type]:
    yield type(value)
    if type(value) is dict:
        for key, item in value.items():
            yield type(key)
            yield from _types(item)
    elif type(value) is list:
        for item in value:
            yield from _types(item)


def test_an_assembly_holds_json_values_only(assembled: RunFixture) -> None:
    """What makes validating the assembly the same as validating the file it equals: no tuple,
    enum member or other type a parsed file cannot hold (pydantic may take them otherwise)."""
    rc = check_run(assembled.run, options_of(assembled.run))
    assert set(_types(rc.result)) <= {dict, list, str, int, float, bool, type(None)}
    assert json.loads(dump_result(rc.result)) == rc.result
