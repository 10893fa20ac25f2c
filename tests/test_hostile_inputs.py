"""Hostile and merely unusual inputs: each test pins a bug that such an input once exposed.

Every attack goes through the real command line (``publisher.cli.main``) or the real preflight,
and asserts exit statuses and reason codes, never message wording.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from _gate_helpers import RunFixture, make_run, read_json, write_json
from _policy import policy_of
from _scaling import grows_linearly
from _wiki_helpers import edit_json, make_wiki, sample_run, tree_digest
from conftest import CliResult

from publisher.gate.reportmd import parse_report
from publisher.kernel.assets import AssetChecker
from publisher.kernel.errors import IntegrityError
from publisher.kernel.store import build_record, verify_record
from publisher.wiki.check import check_wiki as run_preflight
from publisher.wiki.concepts import evidence_footnotes, parse_concept
from publisher.wiki.promote import PromotionRefused, promote

REPO = Path(__file__).resolve().parents[1]
FAKE_ID = "src-" + "a" * 64


def _assemble(cli: Callable[..., CliResult], fx: RunFixture) -> tuple[int, dict]:
    outcome = cli("assemble", "--run-dir", fx.run.path, "--json")
    assert "Traceback" not in outcome.err
    return outcome.status, read_json(fx.run.result_path)


def _findings(result: dict) -> list[tuple[str, str, str]]:
    return [(u["artifact_id"], u["field"], u["reason_code"]) for u in result["diagnostics"]["unresolved"]]


# ---------------------------------------------------------------------------------------------
# report.md: line separators that str.splitlines() honours but Markdown does not


@pytest.mark.parametrize("separator", ["\u2028", "\u2029", "\x0c", "\x0b", "\x85", "\x1c"])
def test_report_line_separator_does_not_hide_a_claim(separator: str) -> None:
    text = f'Intro{separator}text.\nA claim.[^a]\n\n[^a]: {FAKE_ID}#0-5 "fabricated"\n'
    (note,) = parse_report(text)
    assert note.kind == "report_claim"
    assert [(r.source_id, r.start, r.end, r.quoted) for r in note.refs] == [(FAKE_ID, 0, 5, "fabricated")]


def test_report_claim_after_a_line_separator_is_checked_and_never_rendered(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    fx = make_run(tmp_path, 1)
    article = fx.articles[0]
    fx.report.write_text(
        "# Findings\u2028and more.\n\nThe drug cured everyone.[^x]\n\n"
        f'[^x]: {article.source_id}#0-5 "FABRICATED QUOTE"\n',
        encoding="utf-8",
    )
    _, result = _assemble(cli, fx)
    assert ("report:x", "spans[0]", "EXCERPT_MISMATCH") in _findings(result)
    rendered = cli("render", "--run-dir", fx.run.path, "--json")
    assert rendered.status == 1 and rendered.json()["error"]["reason_code"] == "EXCERPT_MISMATCH"
    assert not fx.run.report_html.exists()


# ---------------------------------------------------------------------------------------------
# concept files: evidence footnotes the parser would skip but MkDocs would still render


@pytest.mark.parametrize(
    "body",
    [
        f'Claim.[^a]\n\n> [^a]: {FAKE_ID}#0-5 "fabricated"\n',
        f'Claim.[^a]\n\n- [^a]: {FAKE_ID}#0-5 "fabricated"\n',
        f'Claim.[^a]\n\n1. item\n\n    > [^a]: {FAKE_ID}#0-5 "fabricated"\n',
    ],
    ids=["blockquote", "list", "nested"],
)
def test_concept_reference_outside_a_top_level_definition_is_an_error(body: str) -> None:
    notes = evidence_footnotes(body)
    assert notes and all(n.error is not None for n in notes)


def test_concept_reference_inside_a_code_fence_is_just_code() -> None:
    body = f'Example:\n\n```\n[^a]: {FAKE_ID}#0-5 "example"\n```\n'
    assert evidence_footnotes(body) == ()


def test_concept_with_a_bare_carriage_return_is_refused() -> None:
    text = f'---\nschema_version: 1\ntitle: T\nconcept: t\n---\nClaim.[^a]\r\r[^a]: {FAKE_ID}#0-5 "x"\n'
    with pytest.raises(IntegrityError) as info:
        parse_concept(text)
    assert info.value.reason is not None and info.value.reason.value == "SCHEMA_ERROR"


def test_concept_with_crlf_line_endings_is_still_read() -> None:
    text = f'---\r\nschema_version: 1\r\ntitle: T\r\nconcept: t\r\n---\r\nClaim.[^a]\r\n\r\n[^a]: {FAKE_ID}#0-5 "x"\r\n'
    (note,) = parse_concept(text).footnotes
    assert note.error is None and note.refs[0].quoted == "x"


def test_blockquoted_evidence_footnote_fails_the_preflight(tmp_path: Path) -> None:
    wiki = make_wiki(tmp_path / "wiki")
    rb = sample_run(wiki)
    promote(rb.run.path, wiki, policy=policy_of(wiki))
    path = wiki / "concepts" / "alpha.md"
    text = path.read_text(encoding="utf-8")
    forged = f'\nAlso.[^evil]\n\n> [^evil]: {next(iter(rb.texts))}#0-5 "forged quote"\n'
    path.write_text(text + forged, encoding="utf-8")
    pre = run_preflight(wiki, policy=policy_of(wiki))
    assert "SCHEMA_ERROR" in pre.counts_by_reason()


# ---------------------------------------------------------------------------------------------
# workspace records that are not regular files


def _fifo_safe_assemble(run_dir: Path) -> subprocess.CompletedProcess[str]:
    """Assemble in a child process, so that a reader blocking on a FIFO fails the test instead of hanging it."""
    return subprocess.run(
        [sys.executable, "-m", "publisher", "assemble", "--run-dir", str(run_dir), "--json"],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=REPO,
    )


@pytest.mark.parametrize("kind", ["folder", "fifo", "symlink-outside", "dangling-symlink", "symlink-device"])
def test_record_name_that_is_not_a_regular_file_is_a_schema_error(
    tmp_path: Path, cli: Callable[..., CliResult], kind: str
) -> None:
    fx = make_run(tmp_path, 1)
    target = fx.run.extractions_dir / "x.json"
    if kind == "folder":
        target.mkdir()
    elif kind == "fifo":
        os.mkfifo(target)
    elif kind == "symlink-outside":
        outside = tmp_path / "outside.json"
        outside.write_bytes(fx.extractions[0].read_bytes())
        fx.extractions[0].unlink()
        fx.extractions[0].symlink_to(outside)
        target = fx.extractions[0]
    elif kind == "dangling-symlink":
        target.symlink_to(tmp_path / "nowhere.json")
    else:
        target.symlink_to("/dev/zero")
    outcome = _fifo_safe_assemble(fx.run.path)
    assert outcome.returncode == 0, outcome.stderr  # gate off: warn
    result = read_json(fx.run.result_path)
    name = f"workspace/extractions/{target.name}"
    bad = [u for u in result["diagnostics"]["unresolved"] if u["record"] == name]
    assert [u["reason_code"] for u in bad] == ["SCHEMA_ERROR"]
    assert result["gate"]["verdict"] == "warn"


def test_non_json_files_in_workspace_are_ignored(tmp_path: Path, cli: Callable[..., CliResult]) -> None:
    fx = make_run(tmp_path, 1)
    (fx.run.extractions_dir / "notes.txt").write_text("not a record", encoding="utf-8")
    (fx.run.extractions_dir / ".hidden.json").write_text("{", encoding="utf-8")
    status, result = _assemble(cli, fx)
    assert status == 0 and result["gate"]["verdict"] == "pass"


@pytest.mark.parametrize("where", ["workspace/verifier.json", "outputs/report.md", "corpus.jsonl"])
@pytest.mark.parametrize("kind", ["fifo", "folder"])
def test_input_file_that_is_a_fifo_or_folder_is_a_usage_error(tmp_path: Path, where: str, kind: str) -> None:
    fx = make_run(tmp_path, 1)
    path = fx.run.path / where
    if path.exists():
        path.unlink()
    os.mkfifo(path) if kind == "fifo" else path.mkdir()
    before = tree_digest(fx.run.path / "outputs")
    outcome = _fifo_safe_assemble(fx.run.path)
    assert outcome.returncode == 2
    lines = [line for line in outcome.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and "Traceback" not in outcome.stderr
    assert json.loads(outcome.stdout)["error"]["reason_code"] == "SCHEMA_ERROR"
    assert tree_digest(fx.run.path / "outputs") == before


# ---------------------------------------------------------------------------------------------
# snapshots whose asset path holds a NUL


def test_asset_path_with_a_nul_is_missing_not_a_crash(tmp_path: Path) -> None:
    record = build_record(
        url="file:///x.pdf",
        text="abc",
        title=None,
        retrieved_at="2026-01-01T00:00:00Z",
        access="web",
        origin="user-supplied-pdf",
        paper=None,
        asset={"path": "assets/a\x00b.pdf", "sha256": "0" * 64, "bytes": 3},
    )
    snap = verify_record(record, record["source_id"])
    assert AssetChecker(tmp_path).check(snap) is not None


# ---------------------------------------------------------------------------------------------
# promotion with the gate on: the verdict is what the counts say, not what is written


def test_gate_on_result_edited_to_pass_is_refused(tmp_path: Path) -> None:
    wiki = make_wiki(tmp_path / "wiki")
    rb = sample_run(wiki)
    rb.unresolved()
    rb.assemble(gate=True)

    def claim_pass(result: dict[str, Any]) -> None:
        result["gate"]["verdict"] = "pass"
        result["counts"]["unresolved"] = 0
        result["diagnostics"]["unresolved"] = []

    edit_json(rb.run.result_path, claim_pass)
    with pytest.raises(PromotionRefused) as info:
        promote(rb.run.path, wiki, policy=policy_of(wiki))
    assert {"C-ASSEMBLER", "C-GATE"} <= {f.code for f in info.value.findings}
    assert not (wiki / "concepts" / "alpha.md").exists()


def test_gate_turned_on_in_config_refuses_a_warn_result_with_unresolved(tmp_path: Path) -> None:
    wiki = make_wiki(tmp_path / "wiki")
    rb = sample_run(wiki)
    rb.unresolved()
    assert rb.assemble()["gate"]["verdict"] == "warn"
    edit_json(rb.run.config_path, lambda d: d["gates"].__setitem__("evidence_kernel", True))
    with pytest.raises(PromotionRefused) as info:
        promote(rb.run.path, wiki, policy=policy_of(wiki))
    assert "C-ASSEMBLER" in {f.code for f in info.value.findings}
    assert not (wiki / "concepts" / "alpha.md").exists()


def test_other_runs_config_with_odd_gates_does_not_crash_promotion(tmp_path: Path) -> None:
    wiki = make_wiki(tmp_path / "wiki")
    rb = sample_run(wiki)
    promote(rb.run.path, wiki, policy=policy_of(wiki))
    other = sample_run(wiki, "beta")
    config = json.loads(rb.run.config_path.read_text(encoding="utf-8"))
    config["gates"] = ["evidence_kernel"]
    write_json(rb.run.config_path, config)
    # alpha is named by the concept beta is promoted into; its odd config crashes nothing, and a
    # run that cannot be assembled now is never published: the promotion is refused, naming it.
    with pytest.raises(PromotionRefused) as info:
        promote(other.run.path, wiki, concept="alpha", check=True, policy=policy_of(wiki))
    assert [(f.code, f.file) for f in info.value.findings] == [("SCHEMA_ERROR", "runs/alpha/config.json")]


# ---------------------------------------------------------------------------------------------
# result.json and config.json that are FIFOs or folders; report links to non-ASCII URLs


def test_verify_with_a_fifo_for_result_json_does_not_block(tmp_path: Path) -> None:
    fx = make_run(tmp_path, 1)
    os.mkfifo(fx.run.result_path)
    outcome = subprocess.run(
        [sys.executable, "-m", "publisher", "verify", "--run-dir", str(fx.run.path), "--json"],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=REPO,
    )
    assert outcome.returncode == 1, outcome.stderr
    report = json.loads(outcome.stdout)
    assert {c["check_id"]: c["status"] for c in report["checks"]}["C-ASSEMBLER"] == "fail"


def test_build_with_a_fifo_for_config_json_does_not_block(tmp_path: Path) -> None:
    wiki = make_wiki(tmp_path / "wiki")
    rb = sample_run(wiki)
    rb.run.config_path.unlink()
    os.mkfifo(rb.run.config_path)
    outcome = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "-q", "-f", str(wiki / "mkdocs.yml")],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=wiki,
    )
    assert outcome.returncode != 0
    assert not (wiki / "site").exists()


def test_result_json_that_is_a_folder_is_one_line_exit_2(tmp_path: Path, cli: Callable[..., CliResult]) -> None:
    fx = make_run(tmp_path, 1)
    fx.run.result_path.mkdir()
    outcome = cli("assemble", "--run-dir", fx.run.path)
    assert outcome.status == 2 and len(outcome.err_lines) == 1
    assert "internal error" not in outcome.err and "Traceback" not in outcome.err
    assert fx.run.result_path.is_dir() and not list(fx.run.result_path.iterdir())


@pytest.mark.parametrize(
    "url",
    [
        "https://de.wikipedia.org/wiki/Caf\u00e9_au_lait",
        "https://doi.org/10.1002/(SICI)1097-0258(19980430)17:8<857::AID-SIM777>3.0.CO;2-E",
    ],
)
def test_report_link_to_a_fetched_non_ascii_url_is_retrieved(
    tmp_path: Path, cli: Callable[..., CliResult], url: str
) -> None:
    fx = make_run(tmp_path, 1)
    article = fx.articles[0]
    ref = read_json(fx.extractions[0])["spans"][0]
    snap = fx.add_snapshot(article.text[ref["start"] : ref["end"]] + " (web copy)", url=url)
    # the web copy must back an accepted record too, or the claim is outside accepted evidence
    record = read_json(fx.extractions[0])
    record["spans"].append({"source_id": snap.source_id, "start": 0, "end": 5})
    record["evidence_id"] = "web:copy"
    write_json(fx.run.extractions_dir / "web.json", record)
    written = url.replace("<", "%3C").replace(">", "%3E")
    fx.report.write_text(f"# R\n\nSee the web copy.[^w]\n\n[^w]: [copy]({written})\n", encoding="utf-8")
    _, result = _assemble(cli, fx)
    assert [f for f in _findings(result) if f[0] == "report:w"] == []
    assert "report:w" in {a["artifact_id"] for a in result["accepted"]}


def _footnoted(n: int) -> str:
    text = "\n".join(f"Claim {i}.[^n{i}]" for i in range(n)) + "\n\n"
    return text + "\n".join(f'[^n{i}]: {FAKE_ID}#{i}-{i + 5} "x\\"y"' for i in range(n)) + "\n"


def test_thousands_of_footnotes_in_one_paragraph_parse_in_linear_time() -> None:
    n = 3000
    notes = parse_report(_footnoted(2 * n))
    assert len(notes) == 2 * n and notes[-1].claim == f"Claim {2 * n - 1}." and notes[-1].refs[0].quoted == 'x"y'
    # Looking for each claim sentence from the paragraph's start again would be quadratic.
    small, double = _footnoted(n), _footnoted(2 * n)
    grows_linearly(lambda: parse_report(small), lambda: parse_report(double))
