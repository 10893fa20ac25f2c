"""How the evidence build refuses (:mod:`publisher.site.lifecycle.refusal`): one error per phase that
carries every finding, worded by the one formatter of findings, and one machine line per finding
that reads back into the same finding."""

from __future__ import annotations

import logging

import pytest
from _wiki_helpers import logged_findings

from publisher.kernel.findings import Finding, grouped_lines, summary
from publisher.kernel.reasons import Reason
from publisher.site.lifecycle.refusal import (
    FINDING_LINE,
    EvidenceBuildError,
    finding_json,
    refusal_of,
    refusal_text,
    refuse,
)

HOSTILE = Finding(
    Reason.EXCERPT_MISMATCH,
    "concepts/a b.md",
    "two  spaces,\na newline, a tab\t and “quotes” \x1b[2J",
    label="x y",
    source_id="src-" + "a" * 64,
    start=3,
    end=9,
    line=4,
    check="C-PAGE-PROSE",
    run="runs/alpha",
)
PLAIN = Finding(None, "site", "could not publish the site: [Errno 28] No space left on device", check="C-PUBLISH")


def test_a_finding_line_is_one_token_and_reads_back_as_the_same_finding() -> None:
    line = finding_json(HOSTILE)
    assert line.isascii() and not any(c.isspace() for c in line)
    logged = f"\x1b[34mDEBUG   -\x1b[0m  {FINDING_LINE}{line}\nINFO    -  something else\n"
    assert logged_findings(logged) == [HOSTILE]


def test_refuse_logs_one_line_per_finding_and_carries_them_all(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG, logger="mkdocs.plugins.publisher")
    error = refuse("evidence seal", [HOSTILE, PLAIN])
    assert error.findings == (HOSTILE, PLAIN) and error.phase == "evidence seal"
    assert logged_findings(caplog.text) == [HOSTILE, PLAIN]
    try:
        raise RuntimeError("MkDocs' own abort") from error
    except RuntimeError as outer:
        assert refusal_of(outer) is error
    assert refusal_of(RuntimeError("anything else")) is None


def test_the_text_is_the_one_formatter_of_findings() -> None:
    assert PLAIN.fix is None
    assert refusal_text("evidence publication", [PLAIN]) == f"evidence publication: {PLAIN.one_line()}"
    text = refusal_text("evidence seal", [HOSTILE, PLAIN]).splitlines()
    assert summary([HOSTILE, PLAIN]) in text[0] and text[1:] == grouped_lines([HOSTILE, PLAIN])
    assert str(EvidenceBuildError("evidence seal", [HOSTILE, PLAIN])) == "\n".join(text)


def test_a_refusal_names_at_least_one_finding() -> None:
    with pytest.raises(ValueError):
        EvidenceBuildError("evidence seal", [])


def test_the_command_line_and_the_build_word_the_same_findings_byte_for_byte(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """One formatter: ``publisher check`` and a refused ``mkdocs build`` differ only in framing
    (the CLI's ``publisher: `` prefix and ``error:`` line, the build's phase line and indent)."""
    from dataclasses import replace

    from publisher.cli._common import refusal_lines

    root = Finding(
        Reason.SNAPSHOT_HASH_MISMATCH, "runs/alpha/sources/s.json", "bytes changed", source_id="src-" + "b" * 64
    )
    after = Finding(Reason.EXCERPT_MISMATCH, "concepts/a.md", "re-slice differs", label="1", cause=root.key)
    same = Finding(Reason.EXCERPT_MISMATCH, "concepts/c.md", "bytes changed", label="2", cause=root.key)
    findings = [root, after, same, replace(HOSTILE, detail="two  spaces,\na tab\t and “quotes”"), PLAIN]
    build = refusal_text("evidence check", findings).splitlines()
    refusal_lines(findings, f"wiki check failed: {summary(findings)}")
    cli = capsys.readouterr().err.splitlines()
    assert build[0] == f"evidence check failed: {summary(findings)}; nothing was published"
    assert cli[-1] == f"publisher: error: wiki check failed: {summary(findings)}"
    assert all(line.startswith("  ") for line in build[1:]) and all(line.startswith("publisher: ") for line in cli)
    assert [line[2:] for line in build[1:]] == [line.removeprefix("publisher: ") for line in cli[:-1]]
    assert len(build) == 1 + 2 + 2 + 1 + 1 + 1  # root, its fix and two consequences; HOSTILE (fix); PLAIN
