"""Who proposed a run's claims: the agent's own trace, recorded as a signed ``agent_run`` (CONTRACT 17).

``publisher run agent --run-dir RUN --trace FILE`` reads the agent's trace (the model profile it
asked for, the identity the model reported, its prompt and answer, its tools and retrieval set-up)
and appends one ``agent_run`` entry to the run's ``agent_runs.jsonl``: hash-chained and locked like
``events.jsonl`` (:func:`~publisher.kernel.eventlog.append_chained`), signed like an acquisition
(role ``acquire``, naming the run). The entry carries digests only; the texts stay in the run,
content-addressed and write-once, under ``agent/<sha256>``.

Kept apart from ``events.jsonl`` on purpose: an agent run is no acquisition, and recording it
must not change what the run's result was assembled from (its log head).

Two runs that share a model profile and a prompt digest are one class of evidence, not two: the
wiki counts ``independent_runs`` per claim by these classes (:func:`run_classes`).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from pathlib import Path
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, StrictStr, ValidationError

from ..kernel import _fs
from ..kernel.canonical import canonical_bytes, format_ts, loads_strict, utc_now
from ..kernel.errors import PublisherError, UsageError
from ..kernel.eventlog import LogState, append_chained, read_chain
from ..kernel.models import (
    HexDigest,
    PrefixedDigest,
    SchemaVersion,
    Signature,
    SignedLine,
    Timestamp,
    first_error,
)
from ..kernel.trust import KeyRing, Role, Signer, line_signature_problem, sign_line
from ..runs import Run

__all__ = [
    "AGENT_RUNS_FILE",
    "BLOBS_DIR",
    "Trace",
    "AgentRun",
    "read_trace",
    "record_agent_run",
    "read_agent_runs",
    "trusted_agent_runs",
    "run_class",
    "run_classes",
]

AGENT_RUNS_FILE = "agent_runs.jsonl"
"""The run's log of the agents that wrote it."""

BLOBS_DIR = "agent"
"""Where the trace's texts are kept, by SHA-256 of their UTF-8."""

_MAX_TRACE = 16 * 1024 * 1024
_FROZEN = ConfigDict(frozen=True, extra="forbid", strict=True, defer_build=True)
_SHORT = Annotated[StrictStr, Field(min_length=1, max_length=300)]


class Trace(BaseModel):
    """The agent's own account of a run (the file ``--trace`` names)."""

    model_config = _FROZEN
    requested_model_profile: _SHORT
    reported_model_identity: _SHORT | None = None
    prompt: Annotated[StrictStr, Field(min_length=1)]
    answer: Annotated[StrictStr, Field(min_length=1)]
    tools: Any = None
    """The tool configuration, as the agent reported it (any JSON)."""
    retrieval_infrastructure: Any = None
    """The retrieval set-up (search services, indexes, proxies), as the agent reported it (any JSON)."""


class AgentRun(SignedLine):
    """One line of ``agent_runs.jsonl``."""

    model_config = _FROZEN
    schema_version: SchemaVersion
    agent_run_id: Annotated[StrictStr, Field(pattern=r"^ar-[0-9]{4,}$")]
    type: Annotated[StrictStr, Field(pattern=r"^agent_run$")]
    prev: PrefixedDigest | None
    at: Timestamp
    run: StrictStr
    requested_model_profile: _SHORT
    reported_model_identity: _SHORT | None
    prompt_sha256: HexDigest
    answer_sha256: HexDigest
    tools_sha256: HexDigest | None
    retrieval_infrastructure_sha256: HexDigest | None
    sig: Signature | None = None

    @property
    def number(self) -> int:
        """The counter in ``agent_run_id``."""
        return int(self.agent_run_id[3:])


def _parse(line: bytes) -> AgentRun:
    return AgentRun.model_validate(loads_strict(line))


def _keep(run: Run, data: bytes) -> str:
    """Store ``data`` write-once as ``agent/<sha256>``; returns the digest."""
    digest = hashlib.sha256(data).hexdigest()
    path = run.path / BLOBS_DIR / digest
    _fs.own_folder(path.parent)
    if not _fs.create_exclusive(path, data):
        try:
            same = hashlib.sha256(_fs.read_regular(path, follow_symlinks=False)).hexdigest() == digest
        except OSError:
            same = False
        if not same:
            raise UsageError(
                f"{path} exists and does not hold what its name says; restore or remove it", path=str(path)
            )
    return digest


def _text(value: Any) -> bytes | None:
    """A trace field as the bytes kept: a string as its UTF-8, any other JSON canonically."""
    if value is None:
        return None
    return value.encode("utf-8") if isinstance(value, str) else canonical_bytes(value)


def read_trace(path: Path) -> Trace:
    """The trace in ``path`` (JSON); a one-line UsageError naming what is wrong."""
    try:
        data = _fs.read_regular(Path(path), limit=_MAX_TRACE)
    except FileNotFoundError as exc:
        raise UsageError(f"trace {path}: no such file") from exc
    except OSError as exc:
        raise UsageError(f"trace {path}: cannot be read ({exc.strerror or exc})") from exc
    try:
        return Trace.model_validate(json.loads(data))
    except (ValueError, ValidationError) as exc:
        detail = first_error(exc) if isinstance(exc, ValidationError) else "not JSON"
        raise UsageError(f"trace {path}: {detail}") from exc


def record_agent_run(run: Run, trace: Trace, signer: Signer | None) -> AgentRun:
    """Keep the trace's texts in the run and append its signed ``agent_run`` entry."""
    texts = {
        "prompt": _text(trace.prompt),
        "answer": _text(trace.answer),
        "tools": _text(trace.tools),
        "retrieval_infrastructure": _text(trace.retrieval_infrastructure),
    }
    digests = {name: _keep(run, data) if data is not None else None for name, data in texts.items()}
    name = run.name()
    if signer is not None and signer.run != name:
        raise UsageError(f"the signer names run {signer.run!r}, not {name!r}")

    def make(number: int, prev: str | None) -> tuple[AgentRun, bytes]:
        try:
            entry = AgentRun(
                schema_version=1,
                agent_run_id=f"ar-{number:04d}",
                type="agent_run",
                prev=prev,
                at=format_ts(utc_now()),
                run=name,
                requested_model_profile=trace.requested_model_profile,
                reported_model_identity=trace.reported_model_identity,
                prompt_sha256=digests["prompt"] or "",
                answer_sha256=digests["answer"] or "",
                tools_sha256=digests["tools"],
                retrieval_infrastructure_sha256=digests["retrieval_infrastructure"],
            )
            if signer is not None:
                entry = sign_line(entry, signer, signed_for=name)
        except ValidationError as exc:
            raise UsageError(f"refused to log an invalid agent run: {first_error(exc)}") from exc
        return entry, canonical_bytes(entry.wire()) + b"\n"

    return append_chained(run.path / AGENT_RUNS_FILE, make, _parse, what="agent run")


def read_agent_runs(run: Run) -> LogState[AgentRun]:
    """The run's agent log, read and checked (chain, order, torn line); missing reads as empty."""
    return read_chain(run.path / AGENT_RUNS_FILE, _parse, lambda e: e.agent_run_id, AGENT_RUNS_FILE)


def trusted_agent_runs(run: Run, ring: KeyRing) -> list[AgentRun]:
    """The entries that count: none from a log that does not verify; with trusted keys, only those
    signed for this run by a key trusted for ``acquire``."""
    try:
        state = read_agent_runs(run)
    except PublisherError:
        return []
    if not state.intact:
        return []
    out = []
    for entry in state.events:
        if ring and line_signature_problem(entry, entry.agent_run_id, ring, signed_for=entry.run, role=Role.ACQUIRE):
            continue
        out.append(entry)
    return out


def run_class(entry: AgentRun | None, run_slug: str) -> str:
    """The dependence class of a run: its model profile and prompt digest (a run without an agent
    record is a class of its own)."""
    if entry is None:
        return f"run:{run_slug}"
    return f"profile:{entry.requested_model_profile}|prompt:{entry.prompt_sha256}"


def run_classes(runs: Iterable[tuple[str, AgentRun | None]]) -> set[str]:
    """The distinct dependence classes of ``(run slug, its agent record)`` pairs."""
    return {run_class(entry, slug) for slug, entry in runs}
