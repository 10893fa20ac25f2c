"""The verifier's checks, verdicts and exit statuses, attacked through corrupted runs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from _gate_helpers import RunFixture, make_run, read_json, write_json
from _policy import options_of

from publisher.gate.assemble import assemble_run
from publisher.gate.checks import CHECK_IDS
from publisher.gate.pipeline import verify_run
from publisher.gate.result import Result


def statuses(fx: RunFixture, gate: bool | None = None) -> dict[str, str]:
    verification = verify_run(fx.run, options_of(fx.run), gate=gate, write=False)
    return {c["check_id"]: c["status"] for c in verification.report["checks"]}


def finding_codes(fx: RunFixture, check_id: str) -> set[str]:
    report = verify_run(fx.run, options_of(fx.run), write=False).report
    return {f["reason_code"] for f in report["findings"] if f["check_id"] == check_id}


@pytest.fixture
def assembled(tmp_path: Path) -> RunFixture:
    fx = make_run(tmp_path, articles=2)
    assemble_run(fx.run, options_of(fx.run))
    return fx


def test_valid_assembled_run_is_verified(assembled: RunFixture) -> None:
    verification = verify_run(assembled.run, options_of(assembled.run))
    assert verification.verdict == "Verified" and verification.exit_status == 0
    assert [c["check_id"] for c in verification.report["checks"]] == list(CHECK_IDS)
    assert read_json(assembled.run.verification_path)["verdict"] == "Verified"


def test_absent_result_is_inconclusive_then_failed_with_the_gate(tmp_path: Path) -> None:
    fx = make_run(tmp_path, articles=1)
    off = verify_run(fx.run, options_of(fx.run), write=False)
    assert off.check("C-ASSEMBLER").status == "warn"
    assert off.verdict == "Inconclusive" and off.exit_status == 0
    on = verify_run(fx.run, options_of(fx.run), gate=True, write=False)
    assert on.verdict == "Failed" and on.exit_status == 1


def test_hand_edited_excerpt_fails_span_and_assembler(assembled: RunFixture) -> None:
    result = read_json(assembled.run.result_path)
    claim = result["accepted"][0]["claims"][0]
    claim["excerpt"] = claim["excerpt"].replace("0", "1", 1) if "0" in claim["excerpt"] else claim["excerpt"] + "."
    write_json(assembled.run.result_path, result)
    verification = verify_run(assembled.run, options_of(assembled.run), write=False)
    assert verification.failed("C-SPAN") and verification.failed("C-ASSEMBLER")
    assert verification.verdict == "Failed" and verification.exit_status == 1
    assert finding_codes(assembled, "C-SPAN") == {"EXCERPT_MISMATCH"}


def test_removed_accepted_artifact_is_an_edited_result_whatever_the_gate(assembled: RunFixture) -> None:
    result = read_json(assembled.run.result_path)
    result["accepted"].pop(1)
    result["counts"]["accepted"] -= 1
    result["counts"]["artifacts_seen"] -= 1
    write_json(assembled.run.result_path, result)
    Result.model_validate(result)
    for gate in (None, True):
        verification = verify_run(assembled.run, options_of(assembled.run), gate=gate, write=False)
        assert verification.failed("C-ASSEMBLER")
        (edited,) = [f for f in verification.findings if f.check == "C-ASSEMBLER"]
        assert edited.severity == "fail" and "accepted" in (edited.field or "").split(",")
        assert verification.verdict == "Failed"


def test_edited_verdict_is_an_edited_result(tmp_path: Path) -> None:
    fx = make_run(tmp_path, articles=1, report=False)
    record = fx.extraction(0)
    record["spans"][0]["access"] = "abstract"
    fx.put_extraction(0, record)
    assemble_run(fx.run, options_of(fx.run), gate=True)
    result = read_json(fx.run.result_path)
    result["gate"]["verdict"] = "pass"
    write_json(fx.run.result_path, result)
    assert verify_run(fx.run, options_of(fx.run), write=False).failed("C-ASSEMBLER")


def test_result_assembled_with_gate_verifies_without_it(tmp_path: Path) -> None:
    fx = make_run(tmp_path, articles=1)
    assemble_run(fx.run, options_of(fx.run), gate=True)
    assert verify_run(fx.run, options_of(fx.run), write=False).verdict == "Verified"


def test_unreadable_result_fails_the_assembler_check(assembled: RunFixture) -> None:
    assembled.run.result_path.write_text('{"schema_version": 1}')
    assert statuses(assembled)["C-ASSEMBLER"] == "fail"
    assert finding_codes(assembled, "C-ASSEMBLER") == {"SCHEMA_ERROR"}


def test_changed_inputs_make_the_result_stale(assembled: RunFixture) -> None:
    assembled.report.write_text(assembled.report.read_text() + "\nA new paragraph without claims.\n")
    assert statuses(assembled)["C-ASSEMBLER"] == "warn"
    assert statuses(assembled, gate=True)["C-ASSEMBLER"] == "fail"
    verification = verify_run(assembled.run, options_of(assembled.run), write=False)
    assert verification.verdict == "Inconclusive" and verification.exit_status == 0


def _log_lines(fx: RunFixture) -> list[bytes]:
    return fx.run.events_path.read_bytes().splitlines(keepends=True)


def test_deleted_log_line_fails_the_event_log_check(assembled: RunFixture) -> None:
    lines = _log_lines(assembled)
    assembled.run.events_path.write_bytes(b"".join(lines[1:]))
    verification = verify_run(assembled.run, options_of(assembled.run), write=False)
    assert verification.failed("C-EVENT-LOG") and verification.verdict == "Failed"


def test_reordered_log_lines_fail_the_event_log_check(assembled: RunFixture) -> None:
    lines = _log_lines(assembled)
    assembled.run.events_path.write_bytes(b"".join([lines[1], lines[0]]))
    assert statuses(assembled)["C-EVENT-LOG"] == "fail"


def test_truncated_log_fails_against_the_recorded_head(assembled: RunFixture) -> None:
    lines = _log_lines(assembled)
    assembled.run.events_path.write_bytes(lines[0])
    assert statuses(assembled)["C-EVENT-LOG"] == "fail"


@pytest.mark.parametrize(
    ("last", "word"),
    [(b'{"schema_version": 1, "event_id": "ev-0003"', "torn"), (b'{"schema_version": 1}\n', "not a valid event")],
)
def test_torn_or_invalid_last_line_fails_the_event_log_check(assembled: RunFixture, last: bytes, word: str) -> None:
    """A last line cut short (no newline) is called torn; one written whole but invalid is not: no
    interrupted write explains it. Either fails the check, on that line alone."""
    with open(assembled.run.events_path, "ab") as fh:
        fh.write(last)
    verification = verify_run(assembled.run, options_of(assembled.run), write=False)
    assert verification.failed("C-EVENT-LOG")
    lines = len(_log_lines(assembled))
    failing = [f for f in verification.findings if f.severity == "fail"]
    assert [(f.check, f.line) for f in failing] == [("C-EVENT-LOG", lines)]  # the last line, and only it
    (other,) = {"torn", "not a valid event"} - {word}
    assert word in failing[0].detail and other not in failing[0].detail


def test_lines_appended_after_assembly_neither_stale_nor_disturb_the_result(assembled: RunFixture) -> None:
    assembled.add_snapshot("Later page.", url="https://example.org/later")
    verification = verify_run(assembled.run, options_of(assembled.run), write=False)
    assert verification.verdict == "Verified", verification.report["checks"]
    assert verification.report["result"]["inputs_hash"] == verification.report["result"]["inputs_hash_now"]


def test_snapshot_edited_after_assembly_fails_whatever_the_gate(assembled: RunFixture) -> None:
    path = assembled.snapshot_file(1)
    raw = json.loads(path.read_bytes())
    raw["title"] = "A better title"
    write_json(path, raw)
    for gate in (None, True):
        verification = verify_run(assembled.run, options_of(assembled.run), gate=gate, write=False)
        assert verification.failed("C-SNAPSHOT") and verification.verdict == "Failed"
        assert verification.exit_status == 1
    assert finding_codes(assembled, "C-SNAPSHOT") == {"SNAPSHOT_HASH_MISMATCH"}


def test_deleted_snapshot_fails_the_snapshot_check(assembled: RunFixture) -> None:
    path = assembled.snapshot_file(0)
    path.chmod(0o644)
    path.unlink()
    assert finding_codes(assembled, "C-SNAPSHOT") == {"UNKNOWN_SOURCE"}


def test_bad_agent_span_fails_the_span_check_even_with_the_gate_off(tmp_path: Path) -> None:
    fx = make_run(tmp_path, articles=1)
    record = fx.extraction(0)
    record["spans"][0]["end"] = record["spans"][0]["start"] + 2001
    fx.put_extraction(0, record)
    assemble_run(fx.run, options_of(fx.run))
    verification = verify_run(fx.run, options_of(fx.run), write=False)
    assert verification.failed("C-SPAN") and verification.verdict == "Failed"
    assert finding_codes(fx, "C-SPAN") == {"SPAN_TOO_LONG"}


def test_missing_spans_warn_with_the_gate_off_and_fail_with_it_on(tmp_path: Path) -> None:
    fx = make_run(tmp_path, articles=1, report=False)
    record = fx.extraction(0)
    record["spans"] = []
    fx.put_extraction(0, record)
    assemble_run(fx.run, options_of(fx.run))
    assert statuses(fx)["C-SPAN"] == "warn"
    assert statuses(fx, gate=True)["C-SPAN"] == "fail"
    verification = verify_run(fx.run, options_of(fx.run), write=False)
    assert verification.verdict == "Inconclusive" and verification.exit_status == 0
    assert verify_run(fx.run, options_of(fx.run), gate=True, write=False).exit_status == 1


def test_stale_source_behind_accepted_artifact(assembled: RunFixture) -> None:
    config = json.loads(assembled.run.config_path.read_text())
    config["created_at"] = "2999-01-01T00:00:00Z"
    assembled.run.config_path.chmod(0o644)
    assembled.run.config_path.write_text(json.dumps(config))
    assert statuses(assembled)["C-FRESH-FETCH"] == "warn"
    assert statuses(assembled, gate=True)["C-FRESH-FETCH"] == "fail"
    assert finding_codes(assembled, "C-FRESH-FETCH") == {"NO_FRESH_FETCH"}


def test_unresolved_artifacts_surface_in_the_gate_check(tmp_path: Path) -> None:
    fx = make_run(tmp_path, articles=1)
    fx.report.write_text(fx.report.read_text() + "X.[^p]\n\n[^p]: PMID 1.\n")
    assemble_run(fx.run, options_of(fx.run))
    assert statuses(fx) == {
        "C-SNAPSHOT": "pass",
        "C-SPAN": "pass",
        "C-FRESH-FETCH": "pass",
        "C-ASSEMBLER": "pass",
        "C-EVENT-LOG": "pass",
        "C-GATE": "warn",
        "C-CITE-RESOLVE": "warn",
        "C-FULLTEXT": "pass",
        "C-HYPOTHESIS-WALL": "pass",
        "C-PROSE": "pass",
    }
    # an unresolvable citation is reported once, under the check that owns citations
    assert finding_codes(fx, "C-CITE-RESOLVE") == {"SOURCE_OUTSIDE_ACCEPTED"}
    assert finding_codes(fx, "C-GATE") == set()


def test_the_checks_package_names_every_check_and_the_module_it_lives_in() -> None:
    """A newcomer finds each numbered check, its module and its codes in one docstring."""
    import importlib

    import publisher.gate.checks as checks

    doc = checks.__doc__ or ""
    for check_id in CHECK_IDS:
        row = next((line for line in doc.splitlines() if f"``{check_id}``" in line), None)
        assert row is not None, check_id
        module = row.split(":mod:`.")[1].split("`")[0]
        importlib.import_module(f"publisher.gate.checks.{module}")
