"""``publisher assemble|verify|render`` through ``publisher.cli.main``: exit statuses and output."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from _gate_helpers import RunFixture, make_run, write_json

from publisher.cli import main


def cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    status = main(list(argv))
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def break_access(fx: RunFixture) -> None:
    record = fx.extraction(0)
    record["spans"][0]["access"] = "web"
    fx.put_extraction(0, record)


def test_assemble_verify_render_on_a_valid_run(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    fx = make_run(tmp_path, articles=1)
    run = str(fx.run.path)
    assert cli(capsys, "assemble", "--run-dir", run)[0] == 0
    status, out, _ = cli(capsys, "verify", "--run-dir", run, "--json")
    assert status == 0 and json.loads(out)["verdict"] == "Verified"
    status, out, _ = cli(capsys, "render", "--run-dir", run)
    assert status == 0 and fx.run.report_html.is_file()


def test_assemble_json_prints_the_result(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    fx = make_run(tmp_path, articles=1)
    status, out, _ = cli(capsys, "assemble", "--run-dir", str(fx.run.path), "--json")
    assert status == 0
    assert json.loads(out) == json.loads(fx.run.result_path.read_text())


def test_findings_are_grouped_by_reason_code(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    fx = make_run(tmp_path, articles=1, report=False)
    break_access(fx)
    status, out, _ = cli(capsys, "assemble", "--run-dir", str(fx.run.path))
    assert status == 0
    assert "ACCESS_MISMATCH (1)" in out and "spans[0]" in out and fx.articles[0].source_id in out
    status, out, _ = cli(capsys, "assemble", "--run-dir", str(fx.run.path), "--gate")
    assert status == 1 and "fail" in out


def test_verify_exit_statuses_follow_the_gate(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    fx = make_run(tmp_path, articles=1, report=False)
    break_access(fx)
    run = str(fx.run.path)
    cli(capsys, "assemble", "--run-dir", run)
    status, out, _ = cli(capsys, "verify", "--run-dir", run, "--json")
    report = json.loads(out)
    assert status == 0 and report["verdict"] == "Inconclusive"
    assert {c["check_id"]: c["status"] for c in report["checks"]}["C-GATE"] == "warn"
    assert cli(capsys, "verify", "--run-dir", run, "--gate")[0] == 1


def test_verify_fails_with_exit_1_on_tampering(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    fx = make_run(tmp_path, articles=1)
    run = str(fx.run.path)
    cli(capsys, "assemble", "--run-dir", run)
    path = fx.snapshot_file(0)
    raw = json.loads(path.read_bytes())
    raw["url"] = "https://elsewhere.example/"
    write_json(path, raw)
    status, out, _ = cli(capsys, "verify", "--run-dir", run, "--json")
    findings = json.loads(out)["findings"]
    assert status == 1
    assert ("C-SNAPSHOT", "SNAPSHOT_HASH_MISMATCH") in {(f["check_id"], f["reason_code"]) for f in findings}


def test_render_refusal_is_one_line_exit_1(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    fx = make_run(tmp_path, articles=1)
    path = fx.snapshot_file(0)
    path.chmod(0o644)
    path.unlink()
    status, out, err = cli(capsys, "render", "--run-dir", str(fx.run.path))
    assert status == 1 and out == ""
    assert err.count("\n") == 1 and "Traceback" not in err
    status, out, _ = cli(capsys, "render", "--run-dir", str(fx.run.path), "--json")
    assert status == 1 and json.loads(out)["error"]["reason_code"] == "UNKNOWN_SOURCE"
    assert not fx.run.report_html.exists()


@pytest.mark.parametrize("command", ["assemble", "verify", "render"])
def test_missing_run_is_a_fatal_one_line_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], command: str
) -> None:
    status, out, err = cli(capsys, command, "--run-dir", str(tmp_path / "absent"))
    assert status == 2 and out == ""
    assert err.count("\n") == 1 and "Traceback" not in err


def test_malformed_verifier_file_is_fatal(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    fx = make_run(tmp_path, articles=1)
    fx.run.verifier_path.write_text('{"unsupported": "everything"}')
    status, _, err = cli(capsys, "assemble", "--run-dir", str(fx.run.path))
    assert status == 2 and err.count("\n") == 1
    status, out, _ = cli(capsys, "assemble", "--run-dir", str(fx.run.path), "--json")
    assert status == 2 and json.loads(out)["error"]["reason_code"] == "SCHEMA_ERROR"
    assert not fx.run.result_path.exists()


def test_usage_error_exits_2(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as caught:
        main(["assemble"])
    assert caught.value.code == 2
    capsys.readouterr()
