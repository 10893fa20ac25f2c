"""Human CLI output never passes terminal control sequences through; ``--json`` stays exact."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from publisher.runs import Run

HOSTILE = "Plain start. \x1b[2J\x1b]0;pwned\x07 \x9b31m red \r overwritten \u202eevil\u202c \x08 end.\n"
_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def _registered(run: Run, tmp_path: Path, cli: Any, title: str = "a title") -> str:
    text_file = tmp_path / "page.txt"
    text_file.write_text(HOSTILE, encoding="utf-8")
    outcome = cli(
        "source", "register", "--run-dir", run.path, "--url", "https://example.org/\x1b[31m",
        "--text-file", text_file, "--title", title, "--json",
    )  # fmt: skip
    assert outcome.status == 0, outcome.err
    return str(json.loads(outcome.out)["source_id"])


def test_source_read_neutralises_escapes_and_json_is_exact(run: Run, tmp_path: Path, cli: Any) -> None:
    sid = _registered(run, tmp_path, cli)
    human = cli("source", "read", "--run-dir", run.path, "--source-id", sid)
    assert human.status == 0 and not _CONTROL.search(human.out), repr(human.out)
    assert "\\x1b[2J" in human.out and "\\u202e" in human.out
    exact = cli("source", "read", "--run-dir", run.path, "--source-id", sid, "--json")
    assert json.loads(exact.out)["text"] == HOSTILE


def test_titles_urls_and_errors_are_terminal_safe(run: Run, tmp_path: Path, cli: Any) -> None:
    sid = _registered(run, tmp_path, cli, title="Title \x1b]8;;http://evil\x07link\x1b]8;;\x07")
    for argv in (
        ("source", "spans", "--run-dir", run.path, "--source-id", sid, "--query", "red"),
        ("source", "read", "--run-dir", run.path, "--source-id", sid, "--start", "0", "--end", "40"),
        ("source", "read", "--run-dir", run.path, "--source-id", "src-\x1b[31m" + "0" * 60),
    ):
        outcome = cli(*argv)
        assert not _CONTROL.search(outcome.out + outcome.err.replace("\n", "")), (argv, outcome.out, outcome.err)


def test_a_refusal_shows_every_finding_then_one_error_line(capsys: Any) -> None:
    """Promote, check and export print a refusal the same way: each finding on its own line (its
    code first), then one ``error:`` line, control characters shown as escapes."""
    from publisher.cli._common import refusal_lines
    from publisher.kernel.findings import Finding
    from publisher.kernel.reasons import Reason

    findings = [
        Finding(Reason.EXCERPT_MISMATCH, "concepts/a.md", "re-slice differs \x1b[2J"),
        Finding(Reason.UNKNOWN_SOURCE, "concepts/b.md", "no such snapshot"),
    ]
    refusal_lines(findings, "refused \x1b]0;pwned\x07")
    lines = capsys.readouterr().err.splitlines()
    assert lines and not any(_CONTROL.search(line) for line in lines)
    heads = [line.split()[1] for line in lines if not line.startswith("publisher:  ")]
    assert heads == [f.code for f in findings] + ["error:"]
    assert lines[-1].startswith("publisher: error: ") and "\\x1b]0;pwned" in lines[-1]
