"""The one verification pipeline over a run: every numbered check of CONTRACT section 9, once.

``publisher verify``, ``promote``, ``publisher check`` and the build hook all call
:func:`check_run` and get the same :class:`~publisher.kernel.findings.Finding` values; they only
differ in what they do with them. The run is re-assembled in memory (nothing written) from its
inputs now, sharing one snapshot reader with the checks, and the stored ``result.json`` is
compared with that assembly: nothing stored is taken on trust.

The checks, one module each, and the reason codes each can emit are listed in
:mod:`publisher.gate.checks`; the publication policy is :mod:`publisher.gate.checks.publication`.

"Gated" is warn with the gate off and fail with it on. The verdict folds the checks: Failed if any
fails, else Inconclusive if any warns, else Verified.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..kernel import _fs
from ..kernel.canonical import format_ts, utc_now
from ..parallel import CheckedSnapshots
from ..runs import Run
from .assemble import assemble, declare, limited_log
from .checks import CHECK_IDS
from .checks.assembler import ASSEMBLER, check_assembler, read_stored, result_sources
from .checks.collect import Collector
from .checks.eventlog import check_log
from .checks.freshfetch import check_fresh
from .checks.gate import check_gate
from .checks.report import check_report
from .checks.runcheck import RunCheck
from .checks.snapshot import check_snapshots
from .checks.span import check_spans
from .inputs import RunInputs, RunOptions, gate_setting
from .result import Result
from .urls import fetched_urls
from .verdicts import verification_target

__all__ = [
    "Prepared",
    "Loaded",
    "prepare_stored",
    "prepare",
    "check_run",
    "verify_run",
    "write_verification",
    "VERDICTS",
]

VERDICTS = ("Verified", "Inconclusive", "Failed")


@dataclass(frozen=True)
class Prepared:
    """The stored result of a run (or why it is unusable), read once when its snapshots were declared."""

    stored: dict[str, Any] | None
    """The stored result as read (for C-ASSEMBLER's exact comparison with the assembly now)."""
    problem: str | None
    model: Result | None
    """The same result as a model (validated when read): what the other checks read. None
    exactly when ``stored`` is."""


def prepare_stored(run: Run, reader: CheckedSnapshots) -> Prepared:
    """Read the stored result and declare to ``reader`` the snapshots and claims it names.

    The first half of :func:`prepare`, which needs nothing but the run: the wiki check hands these
    snapshots to the workers before it reads the run's records.
    """
    stored, model, problem = read_stored(run)
    for source_id in result_sources(model) if model else []:
        reader.want(source_id)
    for entry in model.accepted if model else ():
        for claim in entry.claims:
            reader.want(claim.source_id, [(claim.start, claim.end)])
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


@dataclass(frozen=True)
class Loaded:
    """A run its caller has read already: its inputs, the reader they were declared to
    (:func:`prepare`), and its stored result. The wiki check declares every run's snapshots to one
    parallel pass first, then checks each run with what it loaded."""

    inputs: RunInputs
    reader: CheckedSnapshots
    prepared: Prepared


def check_run(
    run: Run,
    options: RunOptions | None = None,
    *,
    gate: bool | None = None,
    label: str = "",
    loaded: Loaded | None = None,
) -> RunCheck:
    """Run every check of a run against a fresh in-memory assembly; writes nothing.

    ``gate`` is the ``--gate`` switch (None: the run's config decides); ``options`` say where the
    run's wiki is, which keys it trusts and how snapshots are read (:class:`.inputs.RunOptions`);
    ``label`` is how findings name the run's folder (``runs/x`` inside a wiki); ``loaded``: what a
    caller read already (then ``options`` are not used). Raises
    :class:`~publisher.kernel.errors.UsageError` when the run cannot be read at all (no or a
    malformed config, an unreadable report).
    """
    if loaded is None:
        options = options if options is not None else RunOptions()
        inputs = options.load(run)
        reader = options.reader(run, inputs)
        prepared = prepare(inputs, reader)
    else:
        inputs, reader, prepared = loaded.inputs, loaded.reader, loaded.prepared
    enabled, flag = gate_setting(gate, inputs.config)
    stored, stored_problem, model = prepared.stored, prepared.problem, prepared.model
    # Re-assemble with the gate the result was assembled with, so that a result assembled with
    # --gate compares equal; the gate here only folds the verdict. Read only the log lines the
    # result read: lines appended since neither stale nor disturb it (C-EVENT-LOG checks them).
    assemble_gate = (model.gate.flag == "--gate") if model is not None else gate
    log_limit = model.log.events if model is not None else None
    assembly = assemble(inputs, reader, gate=assemble_gate, log_limit=log_limit, declared=True)  # by prepare()
    rc = RunCheck(run, label, inputs, enabled, flag, assembly, stored, stored_problem)
    out = Collector(rc)
    log_root = check_log(out, inputs, model)
    snapshot_roots = check_snapshots(out, reader, model)
    assembler_root = check_assembler(out, stored, stored_problem, assembly)
    if stored is not None and rc.status(ASSEMBLER) == "pass":
        # The stored result is the assembly now apart from its time: keep one copy of it, not two
        # (a wiki check holds every run's check until the site is built).
        rc.stored = {**assembly.result, "generated_at": stored.get("generated_at")}
        rc.stored_is_assembly = True
    check_spans(out, reader, model, assembler_root)
    check_fresh(out, reader, model, log_root, snapshot_roots)
    check_gate(out, snapshot_roots, log_root)
    check_report(out)
    # Checks are reported in their numbered order whatever order they ran in.
    rc.checks.sort(key=lambda c: CHECK_IDS.index(c.check_id) if c.check_id in CHECK_IDS else len(CHECK_IDS))
    statuses = {c.status for c in rc.checks}
    rc.verdict = "Failed" if "fail" in statuses else "Inconclusive" if "warn" in statuses else "Verified"
    rc.exit_status = 1 if rc.verdict == "Failed" or (rc.verdict == "Inconclusive" and enabled) else 0
    return rc


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


def verify_run(
    run: Run, options: RunOptions | None = None, *, gate: bool | None = None, write: bool = True
) -> RunCheck:
    """:func:`check_run`, then ``outputs/verification.json`` when ``write``."""
    rc = check_run(run, options, gate=gate)
    if write:
        write_verification(rc)
    return rc
