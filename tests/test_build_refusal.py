"""How the evidence build refuses (:mod:`publisher.site.build.refusal`): one error per phase that
carries every finding, worded by the one formatter of findings, and one machine line per finding
that reads back into the same finding."""

from __future__ import annotations

import logging

import pytest
from _wiki_helpers import logged_findings

from publisher.kernel.findings import Finding, grouped_lines, summary
from publisher.kernel.reasons import Reason
from publisher.site.build.refusal import (
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
    check="C-PROSE",
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
