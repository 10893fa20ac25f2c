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

import os
from pathlib import Path
from typing import Any

from ..kernel import _fs
from ..kernel.canonical import dumps_written, format_ts, utc_now
from ..kernel.errors import UsageError
from ..parallel import CheckedSnapshots, fewer_collections
from ..runs import Run
from .assemble import Assembly, assemble, declare, limited_log
from .checks import CHECK_IDS
from .checks.assembler import (
    ASSEMBLER,
    check_assembler,
    parse_stored,
    read_stored_bytes,
    result_sources,
    stored_written_as,
    valid_result,
)
from .checks.collect import Collector
from .checks.eventlog import check_log, seals_of
from .checks.freshfetch import check_fresh
from .checks.gate import check_gate
from .checks.report import check_report
from .checks.runcheck import RunCheck
from .checks.snapshot import check_snapshots
from .checks.span import check_spans
from .inputs import RunInputs, RunOptions, gate_setting
from .resultshape import ResultView
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


_SPECULATE = True
"""Assemble first and compare the stored result's bytes with the assembly, reading it only when
they differ; tests switch it off to compare with reading it first on the same runs."""


class Prepared:
    """The stored result of a run (or why it is unusable): read, parsed and validated when first
    asked for, or proved equal to an assembly without ever being parsed.

    A stored result is almost always exactly its run's assembly (apart from the time), and parsing
    and validating a large one costs more than assembling it. So :func:`check_run` assembles first
    and compares the file with the assembly written in the stored layout, block by block as it is
    read (:func:`stored_written_as`); only when they differ (or something asks earlier) is the file
    read whole, parsed strictly and validated (:func:`parse_stored`), the snapshots and claims it
    names declared to the reader, exactly as if it had been read first. Nothing of the file is
    held in between: a large run's records and assembly are never held beside it.
    """

    def __init__(self, run: Run, reader: CheckedSnapshots) -> None:
        self._run = run
        self._reader = reader
        self._problem: str | None = None
        self._stored: dict[str, Any] | None = None
        self._model: ResultView | None = None
        self._matched: dict[str, Any] | None = None
        # Absent: nothing to read (a file written since is not read). Anything else there, even
        # what cannot be read, is read when asked for (which says why).
        self._settled = _absent(run.result_path)

    @property
    def settled(self) -> bool:
        """Whether what the file holds is known (read, or proved equal to an assembly, or absent)."""
        return self._settled

    @property
    def stored(self) -> dict[str, Any] | None:
        """The stored result as read (for C-ASSEMBLER's exact comparison with the assembly now)."""
        self.settle()
        return self._stored

    @property
    def problem(self) -> str | None:
        """Why the stored result is unusable (unreadable, not strict JSON, not a valid result)."""
        self.settle()
        return self._problem

    @property
    def model(self) -> ResultView | None:
        """The same result as the model holds it (validated when read; a
        :class:`~publisher.gate.resultshape.ResultView`): what the other checks read. None
        exactly when ``stored`` is."""
        self.settle()
        return self._model

    def settle(self) -> None:
        """Read, parse and validate the stored file now (once), and declare to the reader the
        snapshots and claims the result names."""
        if self._settled:
            return
        self._settled = True
        self._matched = None
        data, self._problem = read_stored_bytes(self._run)
        if data is None:  # absent or unreadable: nothing to parse
            return
        self._stored, self._model, self._problem = parse_stored(data)
        del data  # the bytes are not held beside the value and its model
        model = self._model
        for source_id in result_sources(model) if model else []:
            self._reader.want(source_id)
        for entry in model.accepted if model else ():
            for claim in entry.claims:
                self._reader.want(claim.source_id, [(claim.start, claim.end)])

    def written_as(self, result: dict[str, Any]) -> dict[str, Any] | None:
        """The stored result, adopted as read, when the file not read yet is exactly ``result``
        written with the stored time; else None (the file is read as usual when asked for).
        :meth:`matches`, then :meth:`adopt`."""
        candidate = self.matches(result)
        return None if candidate is None else self.adopt(candidate)

    def matches(self, result: dict[str, Any]) -> dict[str, Any] | None:
        """``result`` with the stored time when the file not read yet is exactly that written
        (:func:`stored_written_as`: compared byte for byte, never held whole); else None. What
        the result names need not be declared: it is the assembly's."""
        if self._settled:
            return None
        self._matched = stored_written_as(self._run, result)
        return self._matched

    def adopt(self, candidate: dict[str, Any]) -> dict[str, Any] | None:
        """Adopt the value :meth:`matches` proved the file holds, validated from it
        (:func:`valid_result`: the hand check, else the model), so adopting it reads exactly what
        :func:`parse_stored` would (an assembly holds JSON values only, no tuple or enum member,
        so validating it is validating the parsed file). A result that is not valid settles as
        reading the file would (the same problem, for the same value), never from a file read
        again; then None."""
        if candidate is not self._matched or self._settled:
            raise ValueError("adopt() takes what matches() returned, once")
        self._matched = None
        self._settled = True
        model, problem = valid_result(candidate)
        if model is None:
            self._problem = problem
            return None
        self._stored, self._model, self._problem = candidate, model, None
        return candidate


def _absent(path: Path) -> bool:
    try:
        os.lstat(path)
    except FileNotFoundError:
        return True
    except OSError:
        pass
    return False


def prepare_stored(run: Run, reader: CheckedSnapshots) -> Prepared:
    """The stored result, read, parsed, validated and declared to ``reader`` when first asked for
    (:class:`Prepared`), or never, when :func:`check_run` finds the file equal to its assembly. The
    first half of :func:`prepare`, which needs nothing but the run. Without :data:`_SPECULATE`, the
    result is read and declared at once."""
    prepared = Prepared(run, reader)
    if not _SPECULATE:
        prepared.settle()
    return prepared


def prepare(inputs: RunInputs, reader: CheckedSnapshots, stored: Prepared | None = None) -> Prepared:
    """Read the stored result (unless ``stored`` is :func:`prepare_stored`'s answer) and declare to
    ``reader`` every snapshot and span the checks of :func:`check_run` will ask for, so that one
    parallel pass (of this run or of a whole wiki) verifies them all.

    The event log's fetches name snapshots too: those of the lines the stored result read when it
    has been read, else of the whole log (what the assembly reads when the stored result is it)."""
    prepared = stored if stored is not None else prepare_stored(inputs.run, reader)
    result = prepared.stored if prepared.settled else None
    log = limited_log(inputs.log, result["log"]["events"] if result else None)
    declare(reader, inputs.records, inputs.footnotes or [], fetched_urls(log))
    return prepared


class Loaded:
    """A run its caller has read already: its inputs, the reader they were declared to
    (:func:`prepare`), and its stored result. The wiki check declares every run's snapshots to one
    parallel pass first, then checks each run with what it loaded.

    ``drop_records``: the caller reads the agent records no more once the run is checked (the wiki
    check): they are let go as soon as the assembly is final, before the stored result's model is
    made, so the two are never held together. A plain slotted class (a dataclass compiles its
    methods at import, which every ``verify`` paid); nothing compares or copies these."""

    __slots__ = ("drop_records", "inputs", "prepared", "reader")

    def __init__(
        self, inputs: RunInputs, reader: CheckedSnapshots, prepared: Prepared, drop_records: bool = False
    ) -> None:
        self.inputs, self.reader, self.prepared, self.drop_records = inputs, reader, prepared, drop_records


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
    with fewer_collections():  # a burst of long-lived objects, in a worker process too
        return _check_run(run, options, gate=gate, label=label, loaded=loaded)


def _check_run(
    run: Run,
    options: RunOptions | None,
    *,
    gate: bool | None,
    label: str,
    loaded: Loaded | None,
) -> RunCheck:
    """:func:`check_run`, under the caller's collection policy."""
    if loaded is None:
        if options is None:
            raise UsageError("a run is checked with its options (the trusted keys) or the inputs already loaded")
        inputs = options.load(run)
        reader = options.reader(run, inputs)
        prepared = prepare(inputs, reader)
    else:
        inputs, reader, prepared = loaded.inputs, loaded.reader, loaded.prepared
    enabled, flag = gate_setting(gate, inputs.config)
    # Re-assemble with the gate the result was assembled with, so that a result assembled with
    # --gate compares equal; the gate here only folds the verdict. Read only the log lines the
    # result read: lines appended since neither stale nor disturb it (C-EVENT-LOG checks them).
    # A stored result not read yet is taken to be the assembly now with this check's switch (a
    # run assembled with --gate is verified with --gate) and the whole log: what an unusable
    # stored result assembles with too; unless its bytes prove it, it is read and the run
    # assembled again if it asks otherwise.
    written = False
    if prepared.settled:
        assembly = _assemble_as(inputs, reader, prepared.model, gate)
    else:
        speculated = _assembly_args(inputs, None, gate)
        assembly = _assemble_as(inputs, reader, None, gate)  # declared by prepare()
        candidate = prepared.matches(assembly.result)
        if candidate is not None and loaded is not None and loaded.drop_records and not gate:
            # The file is this assembly's: it is final whatever the validation says (a result
            # that is not valid assembles again only with the --gate switch, see _assembly_args).
            inputs.records = []
        written = candidate is not None and prepared.adopt(candidate) is not None
        if not written:
            prepared.settle()
            reader.load()  # what the stored result names, in one pass
            if _assembly_args(inputs, prepared.model, gate) != speculated:
                assembly = _assemble_as(inputs, reader, prepared.model, gate)
    if loaded is not None and loaded.drop_records:
        inputs.records = []  # the assembly is final: no check after it reads them
    stored, stored_problem, model = prepared.stored, prepared.problem, prepared.model
    rc = RunCheck(run, label, inputs, enabled, flag, assembly, stored, stored_problem)
    out = Collector(rc)
    seals = seals_of(inputs)
    log_root = check_log(out, inputs, model, seals)
    snapshot_roots = check_snapshots(out, reader, model, seals)
    assembler_root = check_assembler(out, stored, stored_problem, assembly, written=written)
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


def _assembly_args(inputs: RunInputs, model: ResultView | None, gate: bool | None) -> tuple[bool, int | None]:
    """The gate and log limit a run is assembled with for its check, as they act: the stored
    result's (when valid), else the switch and the whole log (None)."""
    assemble_gate = (model.gate.flag == "--gate") if model is not None else bool(gate)
    limit = model.log.events if model is not None else None
    if limit is not None and limit >= len(inputs.log.digests):
        limit = None  # the whole log either way (limited_log)
    return assemble_gate, limit


def _assemble_as(inputs: RunInputs, reader: CheckedSnapshots, model: ResultView | None, gate: bool | None) -> Assembly:
    """The assembly a check compares with the stored result (see :func:`_assembly_args`)."""
    assemble_gate, log_limit = _assembly_args(inputs, model, gate)
    return assemble(inputs, reader, gate=assemble_gate, log_limit=log_limit, declared=True)  # by prepare()


def write_verification(rc: RunCheck) -> Path:
    """Write the report atomically, with the time it was made, to ``outputs/verification.json``, or
    to ``outputs/publisher-verification.json`` when another verifier's file (upstream's) is there:
    that one is an input of the assembly and is never overwritten (see :mod:`.verdicts`)."""
    report = rc.report
    report["generated_at"] = format_ts(utc_now())
    path = verification_target(rc.run)
    _fs.own_folder(path.parent)
    _fs.write_atomic(path, dumps_written(report))
    rc.written = path
    return path


def verify_run(run: Run, options: RunOptions, *, gate: bool | None = None, write: bool = True) -> RunCheck:
    """:func:`check_run`, then ``outputs/verification.json`` when ``write``."""
    rc = check_run(run, options, gate=gate)
    if write:
        write_verification(rc)
    return rc
