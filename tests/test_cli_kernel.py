"""The ``run``, ``source`` and ``schema`` commands: output shapes, exit statuses, one-line errors."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from conftest import CliResult, minimal_pdf

from publisher.kernel.eventlog import read_log
from publisher.kernel.models import EventType
from publisher.runs import Run

Cli = Callable[..., CliResult]
URL = "https://example.org/cli"
TEXT = "Intro \U0001f600.\r\nThe CDI-2 score fell (SMD -0.41) at 12 weeks.\nThe CDI-2 score rose later."


def _assert_one_line_error(result: CliResult, status: int, code: str | None = None) -> None:
    assert result.status == status, (result.status, result.err)
    assert len(result.err_lines) == 1, result.err
    assert "Traceback" not in result.err
    assert result.err_lines[0].startswith("publisher")
    if code is not None:
        assert code in result.err_lines[0]


def _register(cli: Cli, run_dir: Path, tmp_path: Path, text: str = TEXT, *extra: str) -> CliResult:
    path = tmp_path / "text.txt"
    path.write_bytes(text.encode("utf-8"))
    return cli("source", "register", "--run-dir", run_dir, "--url", URL, "--text-file", path, *extra)


@pytest.fixture
def run_dir(cli: Cli, tmp_path: Path) -> Path:
    path = tmp_path / "runs" / "r"
    result = cli("run", "init", path, "--slug", "r")
    assert result.status == 0, result.err
    return path


@pytest.fixture
def source_id(cli: Cli, run_dir: Path, tmp_path: Path) -> str:
    result = _register(cli, run_dir, tmp_path, TEXT, "--json")
    assert result.status == 0, result.err
    sid: str = result.json()["source_id"]
    return sid


# --- run init --------------------------------------------------------------------------------


def test_run_init_human_and_json(cli: Cli, tmp_path: Path) -> None:
    human = cli("run", "init", tmp_path / "a", "--slug", "a")
    assert human.status == 0 and "a" in human.out and human.err == ""
    result = cli("run", "init", tmp_path / "b", "--slug", "b", "--gate", "--json")
    assert result.status == 0
    data = result.json()
    assert data["run_slug"] == "b" and data["gate"] is True and data["created_at"].endswith("Z")
    assert Run.open(tmp_path / "b").load_config().gates.evidence_kernel is True


def test_run_init_records_the_question(cli: Cli, tmp_path: Path) -> None:
    question = "Does morning light shorten sleep-onset latency in shift workers? (adults, RCTs)"
    data = cli("run", "init", tmp_path / "q", "--slug", "q", "--question", f"  {question} ", "--json").json()
    assert data["question"] == question
    config = json.loads((tmp_path / "q" / "config.json").read_text(encoding="utf-8"))
    assert config["question"] == question and config["run_slug"] == "q"
    human = cli("run", "init", tmp_path / "h", "--slug", "h", "--question", question)
    assert human.status == 0 and question in human.out


@pytest.mark.parametrize("question", ["", "   ", "two\nlines", "bell\x07", "x" * 501])
def test_run_init_refuses_a_bad_question(cli: Cli, tmp_path: Path, question: str) -> None:
    _assert_one_line_error(cli("run", "init", tmp_path / "q", "--slug", "q", "--question", question), 2)
    assert not (tmp_path / "q" / "config.json").exists()


def test_run_init_refuses_an_existing_run(cli: Cli, run_dir: Path) -> None:
    before = (run_dir / "config.json").read_bytes()
    _assert_one_line_error(cli("run", "init", run_dir, "--slug", "again"), 2)
    assert (run_dir / "config.json").read_bytes() == before


@pytest.mark.parametrize("slug", ["bad slug", "../x", "", "-x"])
def test_run_init_bad_slug(cli: Cli, tmp_path: Path, slug: str) -> None:
    _assert_one_line_error(cli("run", "init", tmp_path / "r", "--slug", slug), 2)
    assert not (tmp_path / "r" / "config.json").exists()


def test_usage_errors_are_one_line_exit_2(cli: Cli, run_dir: Path) -> None:
    _assert_one_line_error(cli("run", "init"), 2)
    _assert_one_line_error(cli("source", "read", "--run-dir", run_dir), 2)
    _assert_one_line_error(cli("source", "read", "--run-dir", run_dir, "--source-id", "x", "--start", "one"), 2)
    _assert_one_line_error(cli("no-such-command"), 2)
    _assert_one_line_error(cli("source", "read", "--run-dir", run_dir.parent / "nope", "--source-id", "x"), 2)


# --- register --------------------------------------------------------------------------------


def test_register_human_output(cli: Cli, run_dir: Path, tmp_path: Path) -> None:
    result = _register(cli, run_dir, tmp_path)
    assert result.status == 0 and result.err == ""
    (event,) = read_log(run_dir / "events.jsonl").events
    assert event.source_id is not None and not event.fresh
    assert event.source_id in result.out and event.event_id in result.out  # the facts, by their ids


def test_register_json_and_what_lands_on_disk(cli: Cli, run_dir: Path, tmp_path: Path) -> None:
    result = _register(cli, run_dir, tmp_path, TEXT, "--json", "--pmid", "42", "--access", "abstract")
    assert result.status == 0
    data = result.json()
    assert data["created"] is True and data["fresh"] is False and data["event_id"] == "ev-0001"
    assert data["chars"] == len(TEXT) and data["access"] == "abstract" and data["paper"]["pmid"] == "42"
    snap = Run(run_dir).store.read(data["source_id"])
    assert snap.text == TEXT
    (event,) = read_log(run_dir / "events.jsonl").events
    assert event.type is EventType.REGISTER and not event.fresh
    again = _register(cli, run_dir, tmp_path, TEXT, "--json")
    assert again.json()["created"] is False and again.json()["event_id"] == "ev-0002"


@pytest.mark.parametrize(
    "extra",
    [("--access", "everything"), ("--origin", "nowhere"), ("--pmid", "abc"), ("--pmcid", "PMCxyz")],
)
def test_failed_register_writes_nothing(cli: Cli, run_dir: Path, tmp_path: Path, extra: tuple[str, str]) -> None:
    _assert_one_line_error(_register(cli, run_dir, tmp_path, TEXT, *extra), 2)
    assert os.listdir(run_dir / "sources") == []
    assert (run_dir / "events.jsonl").read_bytes() == b""


def test_register_with_invalid_utf8_or_missing_file(cli: Cli, run_dir: Path, tmp_path: Path) -> None:
    bad = tmp_path / "bad.txt"
    bad.write_bytes(b"\xff\xfe latin junk \xe9")
    for path in (bad, tmp_path / "missing.txt"):
        result = cli("source", "register", "--run-dir", run_dir, "--url", URL, "--text-file", path)
        _assert_one_line_error(result, 2)
    assert os.listdir(run_dir / "sources") == []
    assert (run_dir / "events.jsonl").read_bytes() == b""


def test_register_on_a_torn_log_is_refused_exit_1(cli: Cli, run_dir: Path, tmp_path: Path) -> None:
    (run_dir / "events.jsonl").write_bytes(b'{"torn":')
    _assert_one_line_error(_register(cli, run_dir, tmp_path), 1)
    assert os.listdir(run_dir / "sources") == []
    assert (run_dir / "events.jsonl").read_bytes() == b'{"torn":'


# --- read ------------------------------------------------------------------------------------


def test_read_json_shape(cli: Cli, run_dir: Path, source_id: str) -> None:
    start = TEXT.index("CDI-2")
    result = cli("source", "read", "--run-dir", run_dir, "--source-id", source_id, "--start", start, "--end", start + 5)
    assert result.status == 0 and "CDI-2" in result.out
    result = cli(
        "source", "read", "--run-dir", run_dir, "--source-id", source_id, "--start", start, "--end", start + 5, "--json"
    )
    assert result.status == 0
    assert result.json() == {"source_id": source_id, "start": start, "end": start + 5, "text": "CDI-2"}
    whole = cli("source", "read", "--run-dir", run_dir, "--source-id", source_id, "--json").json()
    assert whole["text"] == TEXT and whole["start"] == 0 and whole["end"] == len(TEXT)
    kinds = [e.type for e in read_log(run_dir / "events.jsonl").events]
    assert kinds == [EventType.REGISTER, EventType.READ, EventType.READ, EventType.READ]


def test_read_of_a_tampered_snapshot_exits_1(cli: Cli, run_dir: Path, source_id: str) -> None:
    path = Run(run_dir).store.path_for(source_id)
    path.chmod(0o644)
    path.write_bytes(path.read_bytes().replace(b"-0.41", b"-0.14"))
    result = cli("source", "read", "--run-dir", run_dir, "--source-id", source_id, "--json")
    _assert_one_line_error(result, 1, "SNAPSHOT_HASH_MISMATCH")
    error = json.loads(result.out)["error"]  # --json: the error as JSON on stdout too
    assert error["reason_code"] == "SNAPSHOT_HASH_MISMATCH" and error["exit_status"] == 1


def test_read_of_unknown_and_malformed_ids(cli: Cli, run_dir: Path) -> None:
    result = cli("source", "read", "--run-dir", run_dir, "--source-id", "src-" + "0" * 64)
    _assert_one_line_error(result, 1, "UNKNOWN_SOURCE")
    result = cli("source", "read", "--run-dir", run_dir, "--source-id", "src-../../config")
    _assert_one_line_error(result, 2)  # a malformed id is a usage error, refused before any file is read


def test_read_bad_window_is_a_usage_error(cli: Cli, run_dir: Path, source_id: str) -> None:
    result = cli("source", "read", "--run-dir", run_dir, "--source-id", source_id, "--start", 5, "--end", 2)
    _assert_one_line_error(result, 2)


def test_read_past_the_end_is_clamped_with_a_note(cli: Cli, run_dir: Path, source_id: str) -> None:
    args = ("source", "read", "--run-dir", run_dir, "--source-id", source_id, "--start", 7, "--end", 10_000)
    data = cli(*args, "--json").json()
    assert data["start"] == 7 and data["end"] == len(TEXT) and data["text"] == TEXT[7:]
    assert "clamped" in data["note"] and str(len(TEXT)) in data["note"]
    human = cli(*args)
    assert human.status == 0 and "note:" in human.out.splitlines()[0] and human.err == ""
    kinds = [e.type for e in read_log(run_dir / "events.jsonl").events]
    assert kinds == [EventType.REGISTER, EventType.READ, EventType.READ]


# --- spans -----------------------------------------------------------------------------------


def test_spans_json_shape(cli: Cli, run_dir: Path, source_id: str) -> None:
    result = cli("source", "spans", "--run-dir", run_dir, "--source-id", source_id, "--query", "CDI-2", "--json")
    assert result.status == 0
    data = result.json()
    assert set(data) == {"source_id", "query", "matches"}
    assert data["source_id"] == source_id and data["query"] == "CDI-2"
    assert len(data["matches"]) == 2
    for match in data["matches"]:
        assert set(match) == {"start", "end", "window_start", "window_end", "window"}
        assert TEXT[match["start"] : match["end"]] == "CDI-2"
        assert TEXT[match["window_start"] : match["window_end"]] == match["window"]


def test_spans_human_output(cli: Cli, run_dir: Path, source_id: str) -> None:
    result = cli("source", "spans", "--run-dir", run_dir, "--source-id", source_id, "--query", "SMD")
    assert result.status == 0
    start = TEXT.index("SMD")
    assert f"{start}-{start + 3}" in result.out


def test_spans_on_a_tampered_snapshot_exits_1(cli: Cli, run_dir: Path, source_id: str) -> None:
    path = Run(run_dir).store.path_for(source_id)
    path.chmod(0o644)
    path.write_bytes(path.read_bytes()[:-20])
    result = cli("source", "spans", "--run-dir", run_dir, "--source-id", source_id, "--query", "SMD", "--json")
    _assert_one_line_error(result, 1, "SNAPSHOT_HASH_MISMATCH")


# --- local -----------------------------------------------------------------------------------


def test_local_pdf(cli: Cli, run_dir: Path, tmp_path: Path) -> None:
    wiki = tmp_path / "wiki"
    wiki.mkdir()
    pdf = tmp_path / "paper.pdf"
    pdf.write_bytes(minimal_pdf(["A local trial report", "Page two"]))
    result = cli("source", "local", "--run-dir", run_dir, "--file", pdf, "--wiki", wiki, "--json")
    assert result.status == 0, result.err
    data = result.json()
    assert data["fresh"] is True and data["origin"] == "user-supplied-pdf" and data["pages"] == 2
    snap = Run(run_dir).store.read(data["source_id"])
    assert snap.asset is not None and (wiki / snap.asset.path).read_bytes() == pdf.read_bytes()
    (event,) = read_log(run_dir / "events.jsonl").events
    assert event.type is EventType.LOCAL_PDF and event.fresh


def test_local_with_a_non_pdf_stores_nothing_and_logs_the_attempt(cli: Cli, run_dir: Path, tmp_path: Path) -> None:
    wiki = tmp_path / "wiki"
    wiki.mkdir()
    fake = tmp_path / "fake.pdf"
    fake.write_bytes(b"not a pdf")
    result = cli("source", "local", "--run-dir", run_dir, "--file", fake, "--wiki", wiki)
    _assert_one_line_error(result, 2)
    assert os.listdir(run_dir / "sources") == []
    # The attempt is logged (never fresh, no source), so the log audits every acquisition.
    [line] = (run_dir / "events.jsonl").read_text().splitlines()
    event = json.loads(line)
    assert event["type"] == "fetch_failed" and event["source_id"] is None and event["fresh"] is False


# --- schema and entry points ----------------------------------------------------------------


def _refs(node: Any) -> list[str]:
    if isinstance(node, dict):
        found = [node["$ref"]] if isinstance(node.get("$ref"), str) else []
        return found + [r for v in node.values() for r in _refs(v)]
    if isinstance(node, list):
        return [r for v in node for r in _refs(v)]
    return []


def _check_schema(schema: dict[str, Any]) -> None:
    assert schema.get("type") == "object" and isinstance(schema.get("properties"), dict)
    defs = schema.get("$defs", {})
    for ref in _refs(schema):
        assert ref.startswith("#/$defs/") and ref[len("#/$defs/") :] in defs, ref


def test_schema_prints_valid_json_schemas(cli: Cli) -> None:
    result = cli("schema", "--all")
    assert result.status == 0
    schemas = result.json()
    assert {"snapshot", "event", "span", "config"} <= set(schemas)
    for schema in schemas.values():
        _check_schema(schema)
    one = cli("schema", "snapshot")
    assert one.status == 0
    snapshot = one.json()
    _check_schema(snapshot)
    assert {"source_id", "content_hash", "text", "record_hash"} <= set(snapshot["properties"])
    _assert_one_line_error(cli("schema", "nonsense"), 2)


def test_python_dash_m_help_and_version() -> None:
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])}
    for argv in (["--help"], ["source", "--help"], ["run", "init", "--help"]):
        done = subprocess.run(
            [sys.executable, "-m", "publisher", *argv], capture_output=True, text=True, timeout=60, env=env
        )
        assert done.returncode == 0, done.stderr
        assert "usage" in done.stdout.lower()
    done = subprocess.run([sys.executable, "-m", "publisher", "--version"], capture_output=True, text=True, env=env)
    assert done.returncode == 0 and done.stdout.startswith("publisher ")


def test_internal_errors_are_one_line(cli: Cli, run_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import publisher.acquire.reading

    def explode(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("boom\nsecond line")

    monkeypatch.delenv("PUBLISHER_DEBUG", raising=False)
    monkeypatch.setattr(publisher.acquire.reading, "read_window", explode)
    result = cli("source", "read", "--run-dir", run_dir, "--source-id", "src-" + "0" * 64)
    _assert_one_line_error(result, 2)


def test_json_output_is_parseable_with_non_ascii(cli: Cli, run_dir: Path, source_id: str) -> None:
    result = cli("source", "read", "--run-dir", run_dir, "--source-id", source_id, "--json")
    assert json.loads(result.out)["text"] == TEXT
