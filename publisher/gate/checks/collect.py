"""The collector every check of a run reports through: statuses and findings, named relative to
the run's label, never raised one at a time."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from ...kernel.checkids import CheckId
from ...kernel.findings import Finding, Severity
from ...kernel.reasons import Reason
from ...kernel.text import one_line
from .runcheck import CheckStatus, RunCheck, Status

__all__ = ["Collector"]


class Collector:
    """Collects one run's checks and findings; names files relative to the run's label."""

    def __init__(self, rc: RunCheck) -> None:
        self.rc = rc

    def gated(self) -> Severity:
        """``warn`` with the gate off, ``fail`` with it on."""
        return "fail" if self.rc.gate else "warn"

    def add(self, check_id: CheckId, status: Status, detail: str, counts: dict[str, int] | None = None) -> None:
        """Record the outcome of one check (its detail cut to one line, what it counted as ``counts``)."""
        self.rc.checks.append(CheckStatus(check_id, status, one_line(detail, 500), dict(counts or {})))

    def find(
        self, check: CheckId, reason: Reason | None, file: str, detail: str, *, in_wiki: bool = False, **facts: Any
    ) -> Finding:
        """Record a finding on ``file`` of the run (``in_wiki``: a path relative to the wiki root,
        such as a stored PDF under ``assets/papers/``)."""
        where = file if in_wiki else self.rc.file(file)
        finding = Finding(reason, where, one_line(detail), check=check, run=self.rc.label, **facts)
        self.rc.findings.append(finding)
        return finding

    def from_assembly(self, check: CheckId, finding: Finding, severity: Severity, cause: str | None = None) -> None:
        """A finding of the assembly (against one artifact), reported under ``check``."""
        self.rc.findings.append(
            replace(
                finding,
                file=self.rc.file(finding.file),
                check=check,
                run=self.rc.label,
                severity=severity,
                cause=cause,
            )
        )
