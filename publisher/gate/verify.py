"""The verifier: numbered checks over a run and its ``result.json`` -> ``outputs/verification.json``.

The run is re-assembled in memory (nothing written), sharing one snapshot reader with the
checks: the spans ``result.json`` claims are declared to it before the assembly, so every
snapshot is read and verified once, in one parallel pass, keeping excerpts and never texts.
The checks (CONTRACT section 9):

1. ``C-SNAPSHOT`` - every snapshot referenced by the run's records and report or by
   ``result.json`` exists, parses and recomputes all its digests. Codes: ``UNKNOWN_SOURCE``,
   ``SNAPSHOT_HASH_MISMATCH``. Fails whatever the gate: tampering is never a warning.
2. ``C-SPAN`` - every span of the run and every claim of ``result.json`` is in range, at most
   2000 code points, and its excerpt equals the re-slice. Codes: ``SPAN_OUT_OF_RANGE``,
   ``SPAN_TOO_LONG``, ``EXCERPT_MISMATCH`` (fail), ``NO_SPANS`` (warn with the gate off).
3. ``C-FRESH-FETCH`` - every source behind an accepted artifact is fresh now. Codes:
   ``NO_FRESH_FETCH``, ``ASSET_HASH_MISMATCH``. Warn with the gate off, fail with it on.
4. ``C-ASSEMBLER`` - ``result.json`` exists and is schema-valid; when the inputs still hash to
   its ``inputs_hash`` it equals the re-assembly apart from ``generated_at`` (a difference is an
   edited result: fail whatever the gate); when they do not, it is stale. Absent or stale: warn
   with the gate off, fail with it on. Code: ``SCHEMA_ERROR`` for an unreadable result.
5. ``C-EVENT-LOG`` - the log's chain is intact, no line is torn, and its first ``log.events``
   lines end in ``log.head``. Fails whatever the gate.
6. ``C-GATE`` (ext) - the assembler gate over the current inputs: every artifact accepted and
   the evidence set not empty. Carries every other reason code of the re-assembly
   (``NO_PAPER_ID``, ``SOURCE_OUTSIDE_ACCEPTED``, ...). Warn with the gate off, fail with it on.

The verdict folds the checks: Failed if any fails, else Inconclusive if any warns, else Verified.
Exit status 0 for Verified, 1 for Failed, and for Inconclusive 0 with the gate off, 1 with it on.
"""

from __future__ import annotations

import json
from concurrent.futures import Executor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from ..kernel import _fs
from ..kernel.canonical import StrictJSONError, canonical_bytes, format_ts, loads_strict, utc_now
from ..kernel.errors import PublisherError, UsageError
from ..kernel.models import first_error
from ..kernel.reasons import Reason
from ..kernel.spans import check_range
from ..parallel import CheckedSnapshots, ProgressFn, SnapshotCheck
from ..runs import Run, find_wiki_root
from .assemble import Assembly, assemble_run, gate_setting
from .freshness import Freshness
from .result import Result

__all__ = ["Verification", "verify_run", "CHECK_IDS", "VERDICTS"]

CHECK_IDS = ("C-SNAPSHOT", "C-SPAN", "C-FRESH-FETCH", "C-ASSEMBLER", "C-EVENT-LOG", "C-GATE")
VERDICTS = ("Verified", "Inconclusive", "Failed")

_SNAPSHOT_CODES = {Reason.UNKNOWN_SOURCE.value, Reason.SNAPSHOT_HASH_MISMATCH.value}
_SPAN_CODES = {Reason.SPAN_OUT_OF_RANGE.value, Reason.SPAN_TOO_LONG.value, Reason.EXCERPT_MISMATCH.value}
_FRESH_CODES = {Reason.NO_FRESH_FETCH.value, Reason.ASSET_HASH_MISMATCH.value}


def _line(text: str, limit: int = 300) -> str:
    flat = " ".join(str(text).split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


@dataclass
class Verification:
    """The outcome of one verification; ``report`` is exactly what ``verification.json`` holds."""

    report: dict[str, Any]
    verdict: str
    exit_status: int
    assembly: Assembly
    result: dict[str, Any] | None
    written: Path | None = None

    def check(self, check_id: str) -> dict[str, Any]:
        """One check's entry of the report."""
        return next(c for c in self.report["checks"] if c["check_id"] == check_id)

    def failed(self, check_id: str) -> bool:
        """Whether that check failed."""
        return bool(self.check(check_id)["status"] == "fail")


@dataclass
class _Checks:
    gate: bool
    checks: list[dict[str, Any]] = field(default_factory=list)
    findings: list[dict[str, Any]] = field(default_factory=list)

    def find(self, check_id: str, reason: str, detail: str, **where: Any) -> None:
        self.findings.append(
            {
                "check_id": check_id,
                "reason_code": reason,
                "artifact_id": where.get("artifact_id"),
                "field": where.get("field"),
                "source_id": where.get("source_id"),
                "detail": _line(detail),
            }
        )

    def add(self, check_id: str, status: str, detail: str) -> None:
        self.checks.append({"check_id": check_id, "status": status, "detail": _line(detail, 500)})

    def gated(self) -> str:
        """``warn`` with the gate off, ``fail`` with it on."""
        return "fail" if self.gate else "warn"


def _read_result(run: Run) -> tuple[dict[str, Any] | None, str | None]:
    """The parsed, schema-valid result, or None and why (None, None when absent)."""
    try:
        data = _fs.read_regular(run.result_path)
    except FileNotFoundError:
        return None, None
    except OSError as exc:
        return None, f"cannot be read ({exc.strerror or exc})"
    try:
        raw = loads_strict(data)
    except (StrictJSONError, ValueError) as exc:
        return None, f"is not strict JSON ({_line(str(exc), 120)})"
    try:
        Result.model_validate(raw)
    except ValidationError as exc:
        return None, f"is not a valid result ({exc.error_count()} problem(s); first {first_error(exc, 'result')})"
    return raw, None


def _result_sources(result: dict[str, Any]) -> list[str]:
    ids: dict[str, None] = {}
    for entry in result["accepted"]:
        for source_id in entry["source_ids"]:
            ids[source_id] = None
        for claim in entry["claims"]:
            ids[claim["source_id"]] = None
    for entry in result["sources"]:
        ids[entry["source_id"]] = None
    return list(ids)


def _without_time(result: dict[str, Any]) -> bytes:
    return canonical_bytes({k: v for k, v in result.items() if k != "generated_at"})


def _differences(recorded: dict[str, Any], fresh: dict[str, Any]) -> list[str]:
    keys = sorted((set(recorded) | set(fresh)) - {"generated_at"})
    return [k for k in keys if canonical_bytes(recorded.get(k)) != canonical_bytes(fresh.get(k))]


def verify_run(
    run: Run,
    *,
    gate: bool | None = None,
    wiki_root: Path | None = None,
    write: bool = True,
    executor: Executor | None = None,
    workers: int | None = None,
    progress: ProgressFn | None = None,
    reader: CheckedSnapshots | None = None,
) -> Verification:
    """Run every check; writes ``outputs/verification.json`` atomically when ``write``.

    ``executor``, ``workers`` and ``progress`` go to :func:`publisher.batch.verify_many`.
    ``reader`` (over ``run.sources_dir``) may hold checks already made in this command, such as
    the build preflight's; snapshots and spans it lacks are verified as usual.
    """
    config = run.load_config()
    enabled, flag = gate_setting(gate, config)
    result, result_problem = _read_result(run)
    # Re-assemble with the gate the result was assembled with, so that a result assembled with
    # --gate compares equal; the verifier's own gate only folds the verdict below.
    assemble_gate = (result["gate"]["flag"] == "--gate") if result is not None else gate
    # Read only the log lines the result read: lines appended since (a later fetch or read)
    # neither stale nor disturb it. C-EVENT-LOG below checks that those lines are unchanged.
    log_limit = result["log"]["events"] if result is not None else None
    if reader is None:
        root = wiki_root if wiki_root is not None else find_wiki_root(run.path)
        reader = CheckedSnapshots(
            run.sources_dir, executor=executor, workers=workers, progress=progress, assets_root=root
        )
    elif Path(reader.folder) != Path(run.sources_dir):
        raise UsageError(f"snapshot reader of {reader.folder} given to verify {run.sources_dir}")
    for source_id in _result_sources(result) if result else []:
        reader.want(source_id)
    for entry in result["accepted"] if result else []:
        for claim in entry["claims"]:
            reader.want(claim["source_id"], [(claim["start"], claim["end"])])
    assembly = assemble_run(
        run, gate=assemble_gate, wiki_root=wiki_root, write=False, reader=reader, log_limit=log_limit
    )
    fresh_result = assembly.result
    out = _Checks(gate=enabled)

    # C-SNAPSHOT: UNKNOWN_SOURCE, SNAPSHOT_HASH_MISMATCH
    wanted = list(dict.fromkeys([*assembly.referenced, *(_result_sources(result) if result else [])]))
    unsealed = 0
    bad = 0
    for source_id in wanted:
        try:
            snap = reader.get(source_id)
        except PublisherError as exc:
            bad += 1
            code = (exc.reason or Reason.SNAPSHOT_HASH_MISMATCH).value
            out.find("C-SNAPSHOT", code, exc.one_line(), source_id=source_id)
            continue
        unsealed += 0 if snap.sealed else 1
    sealed_note = f"; {unsealed} with metadata unsealed (no record_hash)" if unsealed else ""
    out.add(
        "C-SNAPSHOT",
        "fail" if bad else "pass",
        f"{len(wanted) - bad} of {len(wanted)} referenced snapshots verified{sealed_note}",
    )

    # C-SPAN: SPAN_OUT_OF_RANGE, SPAN_TOO_LONG, EXCERPT_MISMATCH (fail); NO_SPANS (gated)
    span_bad = 0
    no_spans = 0
    for finding in assembly.findings:
        where = {k: finding[k] for k in ("artifact_id", "field", "source_id")}
        if finding["reason_code"] in _SPAN_CODES:
            span_bad += 1
            out.find("C-SPAN", finding["reason_code"], finding["detail"], **where)
        elif finding["reason_code"] == Reason.NO_SPANS.value:
            no_spans += 1
            out.find("C-SPAN", finding["reason_code"], finding["detail"], **where)
    claims_checked = 0
    for entry in result["accepted"] if result else []:
        for index, claim in enumerate(entry["claims"]):
            try:
                snap = reader.get(claim["source_id"])
            except PublisherError:
                continue  # reported by C-SNAPSHOT
            claims_checked += 1
            where = {"artifact_id": entry["artifact_id"], "field": f"claims[{index}]", "source_id": claim["source_id"]}
            span = f"{claim['source_id']}#{claim['start']}-{claim['end']}"
            reason = check_range(claim["start"], claim["end"], snap.text_length)
            if reason is not None:
                span_bad += 1
                out.find("C-SPAN", reason.value, f"result.json claim {span} on a text of {snap.text_length}", **where)
            elif reader.span(claim["source_id"], claim["start"], claim["end"]).excerpt != claim["excerpt"]:
                span_bad += 1
                out.find("C-SPAN", Reason.EXCERPT_MISMATCH.value, f"result.json excerpt differs from {span}", **where)
    spans_note = f"{fresh_result['counts']['spans_checked']} spans and {claims_checked} result claims re-sliced"
    if span_bad:
        out.add("C-SPAN", "fail", f"{span_bad} bad span(s); {spans_note}")
    elif no_spans:
        out.add("C-SPAN", out.gated(), f"{no_spans} record(s) without the spans they owe; {spans_note}")
    else:
        out.add("C-SPAN", "pass", spans_note)

    # C-FRESH-FETCH: NO_FRESH_FETCH, ASSET_HASH_MISMATCH
    behind: dict[str, str] = {}
    for entry in (result or fresh_result)["accepted"]:
        for source_id in entry["source_ids"]:
            behind.setdefault(source_id, entry["artifact_id"])
    stale_sources = 0
    for source_id, artifact_id in behind.items():
        try:
            snap = reader.get(source_id)
        except PublisherError:
            continue  # reported by C-SNAPSHOT
        fresh = assembly.freshness.get(source_id) or _freshness(assembly, snap)
        if not fresh.fresh:
            stale_sources += 1
            code = (fresh.reason or Reason.NO_FRESH_FETCH).value
            out.find("C-FRESH-FETCH", code, fresh.detail, artifact_id=artifact_id, source_id=source_id)
    if stale_sources:
        out.add(
            "C-FRESH-FETCH",
            out.gated(),
            f"{stale_sources} of {len(behind)} sources behind accepted artifacts not fresh",
        )
    else:
        out.add("C-FRESH-FETCH", "pass", f"{len(behind)} sources behind accepted artifacts fresh")

    # C-ASSEMBLER: SCHEMA_ERROR for an unreadable result; edited (fail) / absent or stale (gated)
    if result_problem is not None:
        out.find("C-ASSEMBLER", Reason.SCHEMA_ERROR.value, f"result.json {result_problem}")
        out.add("C-ASSEMBLER", "fail", f"result.json {result_problem}")
    elif result is None:
        out.add("C-ASSEMBLER", out.gated(), "result.json is absent (run 'publisher assemble')")
    elif result["inputs_hash"] != fresh_result["inputs_hash"]:
        out.add("C-ASSEMBLER", out.gated(), "result.json is stale: the run's inputs changed since assembly")
    elif _without_time(result) != _without_time(fresh_result):
        keys = ", ".join(_differences(result, fresh_result))
        out.add("C-ASSEMBLER", "fail", f"result.json was edited: {keys} differ(s) from assembling the same inputs now")
    else:
        out.add("C-ASSEMBLER", "pass", "result.json equals assembling its inputs now")

    # C-EVENT-LOG (no reason code of its own: a broken log is reported line by line)
    log = assembly.full_log
    problems = [f"line {f.line}: {f.problem}" for f in log.findings]
    if log.torn:
        problems.append(f"line {len(log.digests) + 1} is torn")
    if result is not None:
        count, head = result["log"]["events"], result["log"]["head"]
        if count > len(log.digests):
            problems.append(f"result.json read {count} log lines; only {len(log.digests)} remain")
        elif log.head_at(count) != head:
            problems.append(f"line {count} no longer hashes to result.json's log.head")
    if problems:
        out.add("C-EVENT-LOG", "fail", "; ".join(problems))
    else:
        out.add("C-EVENT-LOG", "pass", f"{len(log.digests)} lines, chain intact")

    # C-GATE (ext): every other reason code of the re-assembly; an empty evidence set
    shown = _SNAPSHOT_CODES | _SPAN_CODES | {Reason.NO_SPANS.value}
    other = [f for f in assembly.findings if f["reason_code"] not in shown]
    for finding in other:
        where = {k: finding[k] for k in ("artifact_id", "field", "source_id")}
        out.find("C-GATE", finding["reason_code"], finding["detail"], **where)
    counts = fresh_result["counts"]
    if counts["unresolved"]:
        out.add("C-GATE", out.gated(), f"{counts['unresolved']} of {counts['artifacts_seen']} artifacts unresolved")
    elif not counts["accepted"]:
        out.add("C-GATE", out.gated(), "no accepted artifact: an empty evidence set is not a pass")
    else:
        out.add("C-GATE", "pass", f"all {counts['accepted']} artifacts accepted")

    statuses = {c["status"] for c in out.checks}
    verdict = "Failed" if "fail" in statuses else "Inconclusive" if "warn" in statuses else "Verified"
    exit_status = 1 if verdict == "Failed" or (verdict == "Inconclusive" and enabled) else 0
    report: dict[str, Any] = {
        "schema_version": 1,
        "run_slug": fresh_result["run_slug"],
        "generated_at": format_ts(utc_now()),
        "gate": {"enabled": enabled, "flag": flag},
        "verdict": verdict,
        "exit_status": exit_status,
        "checks": out.checks,
        "findings": out.findings,
        "result": {
            "present": result is not None or result_problem is not None,
            "inputs_hash": result["inputs_hash"] if result else None,
            "inputs_hash_now": fresh_result["inputs_hash"],
            "gate_verdict": result["gate"]["verdict"] if result else None,
        },
    }
    verification = Verification(report, verdict, exit_status, assembly, result)
    if write:
        run.outputs_dir.mkdir(parents=True, exist_ok=True)
        _fs.write_atomic(run.verification_path, (json.dumps(report, ensure_ascii=False, indent=2) + "\n").encode())
        verification.written = run.verification_path
    return verification


def _freshness(assembly: Assembly, snap: SnapshotCheck) -> Freshness:
    """Freshness of a source the re-assembly did not reference (only named by result.json)."""
    config_created = assembly.result["config"].get("created_at")
    fresh = assembly.provenance.freshness(snap, assembly.log.events, config_created, assembly.assets)
    assembly.freshness[snap.source_id] = fresh
    return fresh
