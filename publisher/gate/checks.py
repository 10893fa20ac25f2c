"""What the pipeline reports about a run (:class:`RunCheck`), the collector every check reports
through, and the two checks that read stored files: the stored result (``C-ASSEMBLER``) and the
event log (``C-EVENT-LOG``)."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError

from ..kernel import _fs
from ..kernel.canonical import StrictJSONError, loads_written, same_json
from ..kernel.findings import Finding
from ..kernel.models import first_error
from ..kernel.reasons import Reason
from ..kernel.text import one_line
from ..runs import Run
from .inputs import RunInputs, changed_inputs, inputs_digest
from .result import Result

if TYPE_CHECKING:
    from .assemble import Assembly

__all__ = [
    "ASSEMBLER",
    "EVENT_LOG",
    "RunCheck",
    "Collector",
    "read_stored",
    "result_sources",
    "check_assembler",
    "check_log",
]

ASSEMBLER = "C-ASSEMBLER"
EVENT_LOG = "C-EVENT-LOG"


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
    checks: list[dict[str, Any]] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)
    verdict: str = "Failed"
    exit_status: int = 1
    written: Path | None = None

    def status(self, check_id: str) -> str:
        """``pass``, ``warn`` or ``fail`` of one check."""
        return str(next(c["status"] for c in self.checks if c["check_id"] == check_id))

    def check(self, check_id: str) -> dict[str, Any]:
        """One check's entry of the report."""
        return next(c for c in self.checks if c["check_id"] == check_id)

    def failed(self, check_id: str) -> bool:
        """Whether that check failed."""
        return self.status(check_id) == "fail"

    @property
    def result(self) -> dict[str, Any]:
        """The result assembling the run now produces (what ``result.json`` must hold)."""
        return self.assembly.result

    def refusals(self) -> list[Finding]:
        """Why this run's evidence may not be published now (CONTRACT section 10); empty if it may.

        Publication needs ``result.json`` to be exactly what assembling the run now produces
        (stale, edited or absent all refuse, whatever the gate), a gate verdict other than
        ``fail``, an evidence set that is not empty, and no failed check.
        """
        out = [f for f in self.findings if f.severity == "fail"]
        if self.status(ASSEMBLER) == "warn":
            roots = [f for f in self.findings if f.check == ASSEMBLER and f.severity == "warn"]
            out += [replace(f, severity="fail") for f in roots]
            # What the stored result calls fresh and is not now is why it cannot be published:
            # shown under the stored result's root, never as causes of their own.
            root_key = roots[0].key if roots else None
            out += [
                replace(f, severity="fail", cause=f.cause or root_key)
                for f in self.findings
                if f.check == "C-FRESH-FETCH" and f.severity == "warn"
            ]
        counts = self.result["counts"]
        if (
            self.assembly.verdict == "fail"
            and counts["unresolved"]
            and not any(f.check in ("C-GATE", "C-FRESH-FETCH") for f in out)
        ):
            detail = f"gate verdict fail: {counts['unresolved']} of {counts['artifacts_seen']} artifacts unresolved"
            root = self._root("C-GATE", "outputs/result.json", detail)
            out.append(root)
            gate = [f for f in self.findings if f.check == "C-GATE" and f.severity == "warn"]
            out += [replace(f, severity="fail", cause=f.cause or root.key) for f in gate]
        if not self.result["accepted"]:  # the empty-set finding of the assembly is only ever a warning
            detail = "no accepted artifact: an empty evidence set is not a pass"
            empty = self._root("C-GATE", "outputs/result.json", detail, Reason.NO_SPANS)
            # A stored result that is not the assembly now is the root: its fix comes first.
            assembler = next((f.key for f in out if f.check == ASSEMBLER and f.cause is None), None)
            out.append(replace(empty, cause=assembler) if assembler is not None else empty)
        return out

    def _root(self, check: str, file: str, detail: str, reason: Reason | None = None) -> Finding:
        return Finding(reason, self.file(file), detail, check=check, run=self.label)

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
            "checks": self.checks,
            "findings": [_finding_entry(f, self.label) for f in self.findings],
            "result": {
                "present": self.stored is not None or self.stored_problem is not None,
                "inputs_hash": self.stored["inputs_hash"] if self.stored else None,
                "inputs_hash_now": result["inputs_hash"],
                "gate_verdict": self.stored["gate"]["verdict"] if self.stored else None,
            },
        }


def _finding_entry(f: Finding, label: str) -> dict[str, Any]:
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


class Collector:
    """Collects one run's checks and findings; names files relative to the run's label."""

    def __init__(self, rc: RunCheck) -> None:
        self.rc = rc

    def gated(self) -> str:
        """``warn`` with the gate off, ``fail`` with it on."""
        return "fail" if self.rc.gate else "warn"

    def add(self, check_id: str, status: str, detail: str) -> None:
        self.rc.checks.append({"check_id": check_id, "status": status, "detail": one_line(detail, 500)})

    def find(
        self, check: str, reason: Reason | None, file: str, detail: str, *, in_wiki: bool = False, **facts: Any
    ) -> Finding:
        """Record a finding on ``file`` of the run (``in_wiki``: a path relative to the wiki root,
        such as a stored PDF under ``assets/papers/``)."""
        where = file if in_wiki else self.rc.file(file)
        finding = Finding(reason, where, one_line(detail), check=check, run=self.rc.label, **facts)
        self.rc.findings.append(finding)
        return finding

    def from_assembly(self, check: str, entry: dict[str, Any], severity: str, cause: str | None = None) -> None:
        """A finding of the assembly (a ``diagnostics.unresolved[]`` entry) under ``check``."""
        self.find(
            check,
            Reason(entry["reason_code"]),
            entry.get("record") or "outputs/result.json",
            entry["detail"],
            artifact_id=entry["artifact_id"],
            field=entry["field"],
            source_id=entry.get("source_id"),
            severity=severity,
            cause=cause,
        )


def read_stored(run: Run) -> tuple[dict[str, Any] | None, Result | None, str | None]:
    """The stored, schema-valid ``result.json`` (as JSON and as a model), or None and why (None,
    None, None when absent)."""
    try:
        data = _fs.read_regular(run.result_path, follow_symlinks=False)
    except FileNotFoundError:
        return None, None, None
    except OSError as exc:
        return None, None, f"cannot be read ({exc.strerror or exc})"
    try:
        raw = loads_written(data)
    except (StrictJSONError, ValueError) as exc:
        return None, None, f"is not strict JSON ({one_line(exc, 120)})"
    try:
        model = Result.model_validate(raw)
    except ValidationError as exc:
        return None, None, f"is not a valid result ({exc.error_count()} problem(s); first {first_error(exc, 'result')})"
    return raw, model, None


def result_sources(result: dict[str, Any]) -> list[str]:
    """Every source id a stored result names (accepted artifacts, their claims, ``sources[]``)."""
    ids: dict[str, None] = {}
    for entry in result["accepted"]:
        for source_id in entry["source_ids"]:
            ids[source_id] = None
        for claim in entry["claims"]:
            ids[claim["source_id"]] = None
    for entry in result["sources"]:
        ids[entry["source_id"]] = None
    return list(ids)


def _without_time(result: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in result.items() if k != "generated_at"}


def _differences(recorded: dict[str, Any], fresh: dict[str, Any]) -> list[str]:
    keys = sorted((set(recorded) | set(fresh)) - {"generated_at"})
    return [k for k in keys if not same_json(recorded.get(k), fresh.get(k))]


def _keys(result: dict[str, Any]) -> set[str]:
    policy = result.get("policy")
    return set(policy["trusted_keys"]) if isinstance(policy, dict) else set()


def _policy_changed(stored: dict[str, Any], fresh: dict[str, Any], label: str) -> str:
    """One line: the trusted keys changed since assembly, and what fixes it."""
    then, now = _keys(stored), _keys(fresh)
    run = label or "RUN"
    unsigned = [s["source_id"][:12] for s in fresh["sources"] if s["status"] == "ok" and not s["fresh"]]
    change = f"{len(now - then)} key(s) trusted, {len(then - now)} no longer" if then else "the wiki now trusts keys"
    detail = f"result.json predates the wiki's trusted keys ({change})"
    if unsigned:
        return (
            f"{detail}; {len(unsigned)} source(s) lack a fetch signed by them: fetch them again "
            f"(publisher source fetch signs), then 'publisher assemble --run-dir {run}'"
        )
    return f"{detail}; run 'publisher assemble --run-dir {run}'"


def check_assembler(
    out: Collector, stored: dict[str, Any] | None, problem: str | None, assembly: Assembly
) -> str | None:
    """C-ASSEMBLER: the stored result is what assembling the run now produces. Returns the root key.

    Edited (fail): the stored inputs list does not hash to the stored ``inputs_hash``, or the
    inputs now are the stored ones yet the result differs. Stale (gated): inputs changed since
    assembly, named one by one. Absent (gated). The stored digest is a hint for the message,
    never a reason to pass.
    """
    fix = f"run 'publisher assemble --run-dir {out.rc.run_shown}'"
    fresh = assembly.result
    file = "outputs/result.json"
    if problem is not None:
        root = out.find(ASSEMBLER, Reason.SCHEMA_ERROR, file, f"result.json {problem}; {fix}")
        out.add(ASSEMBLER, "fail", f"result.json {problem}")
        return root.key
    if stored is None:
        root = out.find(ASSEMBLER, None, file, f"result.json is absent; {fix}", severity=out.gated())
        out.add(ASSEMBLER, out.gated(), f"result.json is absent ({fix})")
        return root.key
    if same_json(_without_time(stored), _without_time(fresh)):
        out.add(ASSEMBLER, "pass", "result.json equals assembling its inputs now")
        return None
    if not same_json(stored.get("policy"), fresh.get("policy")):
        root = out.find(ASSEMBLER, None, file, _policy_changed(stored, fresh, out.rc.run_shown), severity=out.gated())
        out.add(ASSEMBLER, out.gated(), "result.json was assembled under other trusted keys")
        return root.key
    then = stored.get("inputs")
    differing = ", ".join(_differences(stored, fresh))
    if then is None and differing == "inputs":
        detail = f"result.json has no inputs list (written by an older version); {fix}"
        root = out.find(ASSEMBLER, None, file, detail, severity=out.gated())
        out.add(ASSEMBLER, out.gated(), detail)
        return root.key
    if isinstance(then, list) and inputs_digest(then) != stored["inputs_hash"]:
        why = "its inputs list does not hash to its inputs_hash"
    elif stored["inputs_hash"] == fresh["inputs_hash"] or then == fresh["inputs"]:
        why = f"{differing} differ(s) from assembling the same inputs now"
    else:
        changed = changed_inputs(then, fresh["inputs"]) if isinstance(then, list) else []
        named = "; ".join(changed[:5]) + (f"; and {len(changed) - 5} more" if len(changed) > 5 else "")
        because = f"inputs changed since assembly ({named})" if named else "the run's inputs changed since assembly"
        detail = f"result.json is stale: {because}; {fix}"
        root = out.find(ASSEMBLER, None, file, detail, severity=out.gated())
        out.add(ASSEMBLER, out.gated(), detail)
        return root.key
    detail = f"result.json was edited: {why}; {fix}"
    root = out.find(ASSEMBLER, None, file, detail)
    out.add(ASSEMBLER, "fail", detail)
    return root.key


def check_log(out: Collector, inputs: RunInputs, stored: dict[str, Any] | None) -> str | None:
    """C-EVENT-LOG: a regular file, chain intact, no torn line, the stored prefix unchanged.

    Returns the key of the root finding under which broken-log consequences are grouped. Line
    endings converted to CRLF (a checkout or an editor) break every line's digest: that is named
    once, as the cause, with the fix, instead of as one broken link per line.
    """
    log = inputs.log
    file = "events.jsonl"
    if inputs.log_problem is not None:
        root = out.find(EVENT_LOG, None, file, inputs.log_problem)
        out.add(EVENT_LOG, "fail", inputs.log_problem)
        return root.key
    root_key: str | None = None
    problems: list[str] = []
    if log.crlf:
        detail = (
            f"{log.crlf} line(s) end in CRLF: line endings were converted (a checkout or an editor), so no "
            "digest of the chain verifies; restore the file byte for byte (git: mark '*.jsonl -text' in "
            ".gitattributes and check it out again)"
        )
        root_key = out.find(EVENT_LOG, None, file, detail).key
        problems.append(f"{log.crlf} CRLF line ending(s)")
    for item in log.findings:
        finding = out.find(EVENT_LOG, None, file, item.detail, line=item.line, cause=root_key)
        root_key = root_key or finding.key
        problems.append(f"line {item.line}: {item.detail}")
    if log.torn:
        line = len(log.digests) + 1
        finding = out.find(EVENT_LOG, None, file, f"line {line} is torn (no trailing newline)", line=line)
        root_key = root_key or finding.key
        problems.append(f"line {line} is torn")
    if stored is not None:
        count, head = stored["log"]["events"], stored["log"]["head"]
        if count > len(log.digests):
            detail = f"result.json read {count} log lines; only {len(log.digests)} remain"
        elif count and log.head_at(count) != head:
            detail = f"line {count} no longer hashes to result.json's log.head"
        elif not count and head is not None:
            detail = "result.json records a head for an empty log"
        else:
            detail = ""
        if detail:
            finding = out.find(EVENT_LOG, None, file, detail, line=count or None, cause=root_key)
            root_key = root_key or finding.key
            problems.append(detail)
    if problems:
        out.add(EVENT_LOG, "fail", "; ".join(problems))
    else:
        out.add(EVENT_LOG, "pass", f"{len(log.digests)} lines, chain intact")
    return root_key
