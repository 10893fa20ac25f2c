"""The one verification pipeline over a run: every numbered check of CONTRACT section 9, once.

``publisher verify``, ``promote``, ``publisher check`` and the build hook all call
:func:`check_run` and get the same :class:`~publisher.kernel.findings.Finding` values; they only
differ in what they do with them. The run is re-assembled in memory (nothing written) from its
inputs now, sharing one snapshot reader with the checks, and the stored ``result.json`` is
compared with that assembly: nothing stored is taken on trust.

The checks and the codes they carry:

1. ``C-SNAPSHOT`` - every snapshot referenced by the run's records and report or by
   ``result.json`` exists, parses and recomputes all its digests (``UNKNOWN_SOURCE``,
   ``SNAPSHOT_HASH_MISMATCH``). One root finding per snapshot; the artifacts citing it are its
   consequences. Fails whatever the gate: tampering is never a warning.
2. ``C-SPAN`` - every span of the run and every claim of ``result.json`` is in range, at most 2000
   code points, and its excerpt equals the re-slice (``SPAN_OUT_OF_RANGE``, ``SPAN_TOO_LONG``,
   ``EXCERPT_MISMATCH``: fail); records without the spans they owe (``NO_SPANS``: gated).
3. ``C-FRESH-FETCH`` - every source behind an accepted artifact is fresh now, and every artifact
   the assembly leaves unresolved for want of a fresh fetch is reported here, never as "fresh"
   (``NO_FRESH_FETCH``, ``ASSET_HASH_MISMATCH``): gated.
4. ``C-ASSEMBLER`` - ``result.json`` exists, is schema-valid and equals the assembly apart from
   ``generated_at``. A difference is *edited* (fail) when the stored inputs list does not hash to
   the stored ``inputs_hash`` or still equals the inputs now, and *stale* (gated) otherwise, naming
   the inputs that changed. Absent: gated.
5. ``C-EVENT-LOG`` - the log is a regular file, its chain is intact, no line is torn, and its first
   ``log.events`` lines end in ``log.head``. Fails whatever the gate. Freshness voided by a broken
   log is grouped under it.
6. ``C-GATE`` - the assembler gate over the inputs now: every artifact accepted and the evidence
   set not empty; carries every reason code of the assembly no other check carries. Gated.
7. ``C-CITE-RESOLVE`` - every citation of the report names accepted evidence
   (``SOURCE_OUTSIDE_ACCEPTED``); a report cites something. Gated.
8. ``C-FULLTEXT`` - a record stating a full-text basis is not backed by abstracts alone
   (``ACCESS_MISMATCH`` on ``evidence_basis``: gated); a report claim backed only by abstracts is
   labelled as such (fails whatever the gate).
9. ``C-HYPOTHESIS-WALL`` - no finding wording inside the report's hypothesis section, no hypothesis
   or certainty wording outside it. Fails whatever the gate.

10. ``C-PROSE`` - the report's prose quotes only through spans: a blockquote or long quotation
   is located in the run's snapshots and must be cited through the span that covers it (else
   the offsets to cite, or ``EXCERPT_MISMATCH`` for an unverified quotation); no span reference
   or verified badge in prose (``EXCERPT_MISMATCH``). Fails whatever the gate.

Checks 7-10 live in :mod:`.reportchecks` and :mod:`.reportprose`.

"Gated" is warn with the gate off and fail with it on. The verdict folds the checks: Failed if any
fails, else Inconclusive if any warns, else Verified.
"""

from __future__ import annotations

import json
from concurrent.futures import Executor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..acquire.signing import KeyRing
from ..kernel import _fs
from ..kernel.canonical import format_ts, utc_now
from ..kernel.errors import IntegrityError
from ..kernel.reasons import Reason
from ..parallel import CheckedSnapshots, ProgressFn
from ..runs import Run
from .artifacts import LOG_NOT_INTACT
from .assemble import assemble, declare, limited_log
from .checks import Collector, RunCheck, check_assembler, check_log, read_stored, result_sources
from .inputs import RunInputs, gate_setting, load_inputs
from .reportchecks import check_report, report_check_of
from .result import Result
from .urls import fetched_urls
from .verdicts import verification_target

__all__ = [
    "RunCheck",
    "Prepared",
    "prepare_stored",
    "prepare",
    "check_run",
    "verify_run",
    "write_verification",
    "CHECK_IDS",
    "VERDICTS",
]

CHECK_IDS = (
    "C-SNAPSHOT",
    "C-SPAN",
    "C-FRESH-FETCH",
    "C-ASSEMBLER",
    "C-EVENT-LOG",
    "C-GATE",
    "C-CITE-RESOLVE",
    "C-FULLTEXT",
    "C-HYPOTHESIS-WALL",
    "C-PROSE",
)
VERDICTS = ("Verified", "Inconclusive", "Failed")

_SNAPSHOT_CODES = {Reason.UNKNOWN_SOURCE, Reason.SNAPSHOT_HASH_MISMATCH, Reason.ASSET_HASH_MISMATCH}
_SPAN_CODES = {Reason.SPAN_OUT_OF_RANGE, Reason.SPAN_TOO_LONG, Reason.EXCERPT_MISMATCH}


@dataclass(frozen=True)
class Prepared:
    """The stored result of a run (or why it is unusable), read once when its snapshots were declared."""

    stored: dict[str, Any] | None
    problem: str | None
    model: Result | None = None
    """The stored result as a model (validated when read), when it is usable."""


def prepare_stored(run: Run, reader: CheckedSnapshots) -> Prepared:
    """Read the stored result and declare to ``reader`` the snapshots and claims it names.

    The first half of :func:`prepare`, which needs nothing but the run: the wiki check hands these
    snapshots to the workers before it reads the run's records.
    """
    stored, model, problem = read_stored(run)
    for source_id in result_sources(stored) if stored else []:
        reader.want(source_id)
    for entry in stored["accepted"] if stored else []:
        for claim in entry["claims"]:
            reader.want(claim["source_id"], [(claim["start"], claim["end"])])
    return Prepared(stored, problem, model)


def prepare(inputs: RunInputs, reader: CheckedSnapshots, stored: Prepared | None = None) -> Prepared:
    """Read the stored result (unless ``stored`` is :func:`prepare_stored`'s answer) and declare to
    ``reader`` every snapshot and span the checks of :func:`check_run` will ask for, so that one
    parallel pass (of this run or of a whole wiki) verifies them all."""
    prepared = stored if stored is not None else prepare_stored(inputs.run, reader)
    result = prepared.stored
    log = limited_log(inputs.log, result["log"]["events"] if result else None)
    declare(reader, inputs.records, inputs.footnotes or [], fetched_urls(log))
    return prepared


def check_run(
    run: Run,
    *,
    gate: bool | None = None,
    wiki_root: Path | None = None,
    label: str = "",
    inputs: RunInputs | None = None,
    reader: CheckedSnapshots | None = None,
    prepared: Prepared | None = None,
    executor: Executor | None = None,
    workers: int | None = None,
    progress: ProgressFn | None = None,
    trusted_keys: KeyRing | None = None,
) -> RunCheck:
    """Run every check of a run against a fresh in-memory assembly; writes nothing.

    ``inputs``, ``reader`` and ``prepared`` may come from a caller that loaded them already (the
    wiki check declares every run's snapshots to one parallel pass first, see :func:`prepare`). Raises
    :class:`~publisher.kernel.errors.UsageError` when the run cannot be read at all (no or a
    malformed config, an unreadable report). ``trusted_keys``: the wiki's policy (see
    :func:`.inputs.load_inputs`).
    """
    inputs = inputs if inputs is not None else load_inputs(run, wiki_root=wiki_root, trusted_keys=trusted_keys)
    enabled, flag = gate_setting(gate, inputs.config)
    if reader is None:
        reader = CheckedSnapshots(
            run.sources_dir, executor=executor, workers=workers, progress=progress, assets_root=inputs.wiki_root
        )
    prepared = prepared if prepared is not None else prepare(inputs, reader)
    stored, stored_problem = prepared.stored, prepared.problem
    # Re-assemble with the gate the result was assembled with, so that a result assembled with
    # --gate compares equal; the gate here only folds the verdict. Read only the log lines the
    # result read: lines appended since neither stale nor disturb it (C-EVENT-LOG checks them).
    assemble_gate = (stored["gate"]["flag"] == "--gate") if stored is not None else gate
    log_limit = stored["log"]["events"] if stored is not None else None
    assembly = assemble(inputs, reader, gate=assemble_gate, log_limit=log_limit, declared=True)  # by prepare()
    rc = RunCheck(run, label, inputs, enabled, flag, assembly, stored, stored_problem)
    out = Collector(rc)
    log_root = check_log(out, inputs, stored)
    snapshot_roots = _check_snapshots(out, reader, stored)
    assembler_root = check_assembler(out, stored, stored_problem, assembly)
    _check_spans(out, reader, stored, assembler_root)
    _check_fresh(out, reader, stored, log_root, snapshot_roots)
    _check_gate(out, snapshot_roots, log_root)
    check_report(out)
    # Checks are reported in their numbered order whatever order they ran in.
    rc.checks.sort(key=lambda c: CHECK_IDS.index(c["check_id"]) if c["check_id"] in CHECK_IDS else len(CHECK_IDS))
    statuses = {c["status"] for c in rc.checks}
    rc.verdict = "Failed" if "fail" in statuses else "Inconclusive" if "warn" in statuses else "Verified"
    rc.exit_status = 1 if rc.verdict == "Failed" or (rc.verdict == "Inconclusive" and enabled) else 0
    return rc


def _check_snapshots(out: Collector, reader: CheckedSnapshots, stored: dict[str, Any] | None) -> dict[str, str]:
    """C-SNAPSHOT: one root finding per snapshot that does not verify; returns source id -> root key."""
    assembly = out.rc.assembly
    wanted = list(dict.fromkeys([*assembly.referenced, *(result_sources(stored) if stored else [])]))
    roots: dict[str, str] = {}
    unsealed = 0
    for source_id in wanted:
        try:
            snap = reader.get(source_id)
        except IntegrityError as exc:
            reason = exc.reason or Reason.SNAPSHOT_HASH_MISMATCH
            root = out.find("C-SNAPSHOT", reason, f"sources/{source_id}.json", exc.message, source_id=source_id)
            roots[source_id] = root.key
            continue
        unsealed += 0 if snap.sealed else 1
        problem = assembly.assets.check(snap)
        if problem is not None:
            # The stored PDF behind a snapshot is one of its digests: tampering, whatever the gate.
            # The PDF lies in the wiki's library (<wiki>/assets/papers/), not in the run.
            asset = snap.asset is not None
            where = snap.asset.path if snap.asset is not None else f"sources/{source_id}.json"
            root = out.find(
                "C-SNAPSHOT", Reason.ASSET_HASH_MISMATCH, where, problem, in_wiki=asset, source_id=source_id
            )
            roots[source_id] = root.key
    note = f"; {unsealed} with metadata unsealed (no record_hash)" if unsealed else ""
    bad = len(roots)
    if assembly.wiki_root is None and any(f.reason is Reason.ASSET_HASH_MISMATCH for f in out.rc.findings):
        note += "; no wiki root found for the stored PDFs (pass --wiki)"
    out.add(
        "C-SNAPSHOT",
        "fail" if bad else "pass",
        f"{len(wanted) - bad} of {len(wanted)} referenced snapshots verified{note}",
    )
    for entry in assembly.findings:
        if Reason(entry["reason_code"]) in _SNAPSHOT_CODES:
            out.from_assembly("C-SNAPSHOT", entry, "fail", roots.get(entry.get("source_id") or ""))
    return roots


def _check_spans(
    out: Collector, reader: CheckedSnapshots, stored: dict[str, Any] | None, assembler_root: str | None
) -> None:
    """C-SPAN: the run's spans (from the assembly) and the claims ``result.json`` stores."""
    assembly = out.rc.assembly
    bad = no_spans = 0
    for entry in assembly.findings:
        reason = Reason(entry["reason_code"])
        if reason in _SPAN_CODES:
            bad += 1
            out.from_assembly("C-SPAN", entry, "fail")
        elif reason is Reason.NO_SPANS:
            no_spans += 1
            out.from_assembly("C-SPAN", entry, out.gated())
    claims_checked = 0
    for entry in stored["accepted"] if stored else []:
        for index, claim in enumerate(entry["claims"]):
            sid, start, end = claim["source_id"], claim["start"], claim["end"]
            try:
                reader.get(sid)
            except IntegrityError:
                continue  # reported by C-SNAPSHOT
            claims_checked += 1
            span = reader.span(sid, start, end)
            if span.excerpt is None or span.excerpt != claim["excerpt"]:
                bad += 1
                reason = span.reason or Reason.EXCERPT_MISMATCH
                out.find(
                    "C-SPAN",
                    reason,
                    "outputs/result.json",
                    f"result.json claim {sid}#{start}-{end} is not the re-slice",
                    artifact_id=entry["artifact_id"],
                    field=f"claims[{index}]",
                    source_id=sid,
                    start=start,
                    end=end,
                    cause=assembler_root,
                )
    note = f"{assembly.result['counts']['spans_checked']} spans and {claims_checked} result claims re-sliced"
    if bad:
        out.add("C-SPAN", "fail", f"{bad} bad span(s); {note}")
    elif no_spans:
        out.add("C-SPAN", out.gated(), f"{no_spans} record(s) without the spans they owe; {note}")
    else:
        out.add("C-SPAN", "pass", note)


def _check_fresh(
    out: Collector,
    reader: CheckedSnapshots,
    stored: dict[str, Any] | None,
    log_root: str | None,
    snapshot_roots: dict[str, str],
) -> None:
    """C-FRESH-FETCH: every source behind an accepted artifact (stored or assembled now) is fresh."""
    assembly = out.rc.assembly
    behind: dict[str, str] = {}
    for entry in (stored or assembly.result)["accepted"]:
        for source_id in entry["source_ids"]:
            behind.setdefault(source_id, entry["artifact_id"])
    not_fresh: dict[str, str] = {}  # source id -> key of its root finding
    for source_id, artifact_id in behind.items():
        try:
            snap = reader.get(source_id)
        except IntegrityError:
            continue  # reported by C-SNAPSHOT
        fresh = assembly.freshness.get(source_id)
        if fresh is None:
            created = assembly.result["config"].get("created_at")
            fresh = assembly.provenance.freshness(snap, assembly.log.events, created, assembly.assets)
        if not fresh.fresh:
            # A log that is broken or unreadable is the root of every freshness it no longer proves.
            cause = log_root or snapshot_roots.get(source_id)
            found = out.find(
                "C-FRESH-FETCH",
                fresh.reason or Reason.NO_FRESH_FETCH,
                "events.jsonl",
                fresh.detail,
                artifact_id=artifact_id,
                source_id=source_id,
                severity=out.gated(),
                cause=cause,
            )
            not_fresh[source_id] = cause or found.key
    # Artifacts the assembly now leaves unresolved for want of a fresh fetch are reported here,
    # under the check they fail, not under C-GATE: this check never says "fresh" of them.
    cited = set(behind)
    for entry in assembly.findings:
        if Reason(entry["reason_code"]) is not Reason.NO_FRESH_FETCH:
            continue
        source_id = entry.get("source_id") or ""
        cited.add(source_id)
        cause = log_root or not_fresh.get(source_id)
        if cause is None:
            key = out.rc.file("events.jsonl")
            out.from_assembly("C-FRESH-FETCH", entry, out.gated())
            not_fresh[source_id] = out.rc.findings[-1].key if out.rc.findings else key
        else:
            out.from_assembly("C-FRESH-FETCH", entry, out.gated(), cause)
    if not_fresh:
        named = ", ".join(f"{sid[:16]}…" for sid in list(not_fresh)[:3]) + (" …" if len(not_fresh) > 3 else "")
        out.add("C-FRESH-FETCH", out.gated(), f"{len(not_fresh)} of {len(cited)} cited sources not fresh: {named}")
    else:
        out.add("C-FRESH-FETCH", "pass", f"{len(behind)} sources behind accepted artifacts fresh")


def _check_gate(out: Collector, snapshot_roots: dict[str, str], log_root: str | None) -> None:
    """C-GATE: every other reason code of the assembly; an empty evidence set."""
    assembly = out.rc.assembly
    shown = _SNAPSHOT_CODES | _SPAN_CODES | {Reason.NO_SPANS, Reason.NO_FRESH_FETCH}
    for entry in assembly.findings:
        if Reason(entry["reason_code"]) in shown or report_check_of(entry) is not None:
            continue
        cause = log_root if entry["detail"].startswith(LOG_NOT_INTACT) else None
        out.from_assembly("C-GATE", entry, out.gated(), cause)
    counts = assembly.result["counts"]
    if counts["unresolved"]:
        out.add("C-GATE", out.gated(), f"{counts['unresolved']} of {counts['artifacts_seen']} artifacts unresolved")
    elif not counts["accepted"]:
        out.find(
            "C-GATE",
            Reason.NO_SPANS,
            "outputs/result.json",
            "no accepted artifact: an empty evidence set is not a pass",
            severity=out.gated(),
        )
        out.add("C-GATE", out.gated(), "no accepted artifact: an empty evidence set is not a pass")
    else:
        out.add("C-GATE", "pass", f"all {counts['accepted']} artifacts accepted")


def write_verification(rc: RunCheck) -> Path:
    """Write the report atomically, with the time it was made, to ``outputs/verification.json``, or
    to ``outputs/publisher-verification.json`` when another verifier's file (upstream's) is there:
    that one is an input of the assembly and is never overwritten (see :mod:`.verdicts`)."""
    report = rc.report
    report["generated_at"] = format_ts(utc_now())
    path = verification_target(rc.run)
    path.parent.mkdir(parents=True, exist_ok=True)
    _fs.write_atomic(path, (json.dumps(report, ensure_ascii=False, indent=2) + "\n").encode("utf-8"))
    rc.written = path
    return path


def verify_run(run: Run, *, write: bool = True, **options: Any) -> RunCheck:
    """:func:`check_run` (same options), then ``outputs/verification.json`` when ``write``."""
    rc = check_run(run, **options)
    if write:
        write_verification(rc)
    return rc
