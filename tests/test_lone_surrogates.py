"""A lone surrogate escape (``"\\ud800"`` with no partner) is refused by the strict JSON reader.

JSON's grammar lets an escape name half of a pair, but the string is not Unicode text: it cannot
be written as UTF-8, hashed or shown. Read leniently, it ended ``assemble`` and ``verify`` with an
internal error wherever a later step encoded the value; refused at the read, it is the reading's
own finding (a record's SCHEMA_ERROR, a broken log line, an unusable config), one line, never a
traceback, and nothing is written for a refused command.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from _gate_helpers import make_run
from conftest import CliResult

from publisher.kernel.canonical import StrictJSONError, loads_record, loads_strict

LONE = [
    b'{"a": "x\\ud800"}',
    b'{"a": "\\udfff y"}',
    b'{"\\ud800": 1}',
    b'{"a": [{"b": ["\\uDBFF"]}]}',
    b'["\\ude00\\ud83d"]',  # a low half before a high one is no pair
    b'["\\ud83d x \\ude00"]',
]
PAIRED = [
    (b'["\\ud83d\\ude00"]', ["\U0001f600"]),
    (b'{"\\ud835\\udc65": "\\ud835\\udc66"}', {"\U0001d465": "\U0001d466"}),
    (b'["\\\\ud800"]', ["\\ud800"]),  # an escaped backslash, then the letters: no surrogate
    (b'["\\u00e9\\u0001"]', ["\u00e9\u0001"]),
]


@pytest.mark.parametrize("data", LONE)
def test_a_lone_surrogate_is_refused_by_the_strict_reader(data: bytes) -> None:
    with pytest.raises(StrictJSONError) as info:
        loads_strict(data)
    assert info.value.kind == "lone_surrogate"
    with pytest.raises(StrictJSONError) as again:
        loads_strict(data.decode("ascii"))
    assert again.value.kind == "lone_surrogate"
    with pytest.raises(StrictJSONError):
        loads_record(data)


@pytest.mark.parametrize(("data", "value"), PAIRED)
def test_paired_escapes_and_escaped_backslashes_read_as_before(data: bytes, value: object) -> None:
    assert loads_strict(data) == value == json.loads(data)


def _escape(text: str, field: str) -> str:
    """``text`` with the JSON string of ``field``'s value replaced by one holding a lone surrogate."""
    data = json.loads(text)
    data[field] = "the trial \udbff enrolled"
    return json.dumps(data)  # ensure_ascii: the surrogate is written as its escape


def test_a_record_with_a_lone_surrogate_is_a_schema_error_not_an_internal_error(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    fixture = make_run(tmp_path, 2)
    record = fixture.extractions[0]
    record.write_text(_escape(record.read_text(encoding="utf-8"), "population"), encoding="utf-8")
    done = cli("assemble", "--run-dir", fixture.run.path)
    assert "internal error" not in done.err, done.err
    result = json.loads(fixture.run.result_path.read_text(encoding="utf-8"))
    name = f"workspace/extractions/{record.name}"
    hits = [e for e in result["diagnostics"]["unresolved"] if e["record"] == name]
    assert hits and {(e["reason_code"], e["field"]) for e in hits} == {("SCHEMA_ERROR", "record")}


def test_an_event_line_with_a_lone_surrogate_is_a_broken_line_not_an_internal_error(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    fixture = make_run(tmp_path, 2)
    log = fixture.run.events_path
    lines = log.read_text(encoding="utf-8").splitlines()
    lines[0] = _escape(lines[0], "detail")
    log.write_text("\n".join(lines) + "\n", encoding="utf-8")
    done = cli("assemble", "--run-dir", fixture.run.path)
    assert "internal error" not in done.err, done.err
    result = json.loads(fixture.run.result_path.read_text(encoding="utf-8"))
    assert result["diagnostics"]["counts_by_reason"].get("NO_FRESH_FETCH", 0) > 0  # a broken log trusts no fetch
    assert result["counts"]["accepted"] == 0


def test_a_config_with_a_lone_surrogate_is_refused_in_one_line_and_nothing_is_written(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    fixture = make_run(tmp_path, 1)
    config = fixture.run.config_path
    data = json.loads(config.read_text(encoding="utf-8"))
    data["question"] = "does \ud800 work?"
    config.write_text(json.dumps(data), encoding="utf-8")
    done = cli("assemble", "--run-dir", fixture.run.path)
    assert done.status == 2 and "internal error" not in done.err
    assert "SCHEMA_ERROR" in done.err and len(done.err_lines) == 1, done.err
    assert not fixture.run.result_path.exists()
