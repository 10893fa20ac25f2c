"""What the checks of one run report (:class:`RunCheck`), and its ``verification.json`` form.

The checks (one module each in this package) add their statuses and findings to a
:class:`RunCheck` through a :class:`~.collect.Collector`; :mod:`.publication` decides from it
whether the run's evidence may be published. Findings stay :class:`~publisher.kernel.findings.Finding`
values until :attr:`RunCheck.report` writes them in the contract's shape.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from ...kernel.findings import Finding
from ...runs import Run
from ..inputs import RunInputs

if TYPE_CHECKING:
    from ..assemble import Assembly

__all__ = ["RunCheck", "CheckStatus", "Status", "finding_entry"]


Status = Literal["pass", "warn", "fail"]


@dataclass(frozen=True)
class CheckStatus:
    """The outcome of one numbered check: its id, ``pass``, ``warn`` or ``fail``, and one line."""

    check_id: str
    status: Status
    detail: str

    def to_dict(self) -> dict[str, str]:
        """As ``verification.json``'s ``checks[]`` lists it."""
        return {"check_id": self.check_id, "status": self.status, "detail": self.detail}


@dataclass
class RunCheck:
    """Every check of one run: statuses, findings, the assembly they were made against, the verdict."""

    run: Run
    label: str
    """How findings name the run's folder (``runs/x`` inside a wiki, or the path as given)."""
    inputs: RunInputs
    gate: bool
    flag: str | None
    assembly: Assembly
    stored: dict[str, Any] | None
    stored_problem: str | None
    checks: list[CheckStatus] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)
    verdict: str = "Failed"
    exit_status: int = 1
    written: Path | None = None

    def status(self, check_id: str) -> str:
        """``pass``, ``warn`` or ``fail`` of one check."""
        return self.check(check_id).status

    def check(self, check_id: str) -> CheckStatus:
        """One check's outcome."""
        return next(c for c in self.checks if c.check_id == check_id)

    def failed(self, check_id: str) -> bool:
        """Whether that check failed."""
        return self.status(check_id) == "fail"

    @property
    def result(self) -> dict[str, Any]:
        """The result assembling the run now produces (what ``result.json`` must hold)."""
        return self.assembly.result

    @property
    def run_shown(self) -> str:
        """The run as messages name it: its label, else its path inside its wiki, else its folder
        name (never a path of the machine: messages are stored in result and verification files)."""
        if self.label:
            return self.label
        root = self.inputs.wiki_root
        if root is not None:
            try:
                return self.run.path.resolve().relative_to(Path(root).resolve()).as_posix()
            except ValueError:
                pass
        return self.run.path.resolve().name

    def file(self, name: str) -> str:
        """A file of the run as findings name it (under the run's label)."""
        return f"{self.label}/{name}" if self.label else name

    @property
    def report(self) -> dict[str, Any]:
        """What ``verification.json`` holds (apart from ``generated_at``, added when written)."""
        result = self.result
        return {
            "schema_version": 1,
            "run_slug": result["run_slug"],
            "gate": {"enabled": self.gate, "flag": self.flag},
            "verdict": self.verdict,
            "exit_status": self.exit_status,
            "checks": [c.to_dict() for c in self.checks],
            "findings": [finding_entry(f, self.label) for f in self.findings],
            "result": {
                "present": self.stored is not None or self.stored_problem is not None,
                "inputs_hash": self.stored["inputs_hash"] if self.stored else None,
                "inputs_hash_now": result["inputs_hash"],
                "gate_verdict": self.stored["gate"]["verdict"] if self.stored else None,
            },
        }


def finding_entry(f: Finding, label: str) -> dict[str, Any]:
    """One finding as ``verification.json`` lists it (files relative to the run)."""
    prefix = f"{label}/" if label else ""
    return {
        "check_id": f.check,
        "reason_code": f.reason.value if f.reason is not None else None,
        "code": f.code,
        "severity": f.severity,
        "artifact_id": f.artifact_id,
        "field": f.field,
        "source_id": f.source_id,
        "file": f.file.removeprefix(prefix),
        "line": f.line,
        "detail": f.detail,
        "cause": f.cause,
    }
