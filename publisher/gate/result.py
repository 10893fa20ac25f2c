"""The shape of ``outputs/result.json`` (CONTRACT section 8), as the assembler writes it.

Strict: a field nobody defined is refused. Readers validate a stored result against
:class:`Result` before comparing it with a fresh assembly.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, StrictBool, StrictInt, StrictStr

from ..kernel.models import Access, Asset, Paper, PrefixedDigest, SourceId, Timestamp
from ..kernel.reasons import Reason
from ..runs import slug_problem

__all__ = [
    "ResultGate",
    "ResultCounts",
    "ResultClaim",
    "ResultQuote",
    "AcceptedArtifact",
    "UnresolvedEntry",
    "WarningEntry",
    "Diagnostics",
    "ResultSource",
    "LogRef",
    "ResultPolicy",
    "Result",
]

_OURS = ConfigDict(frozen=True, extra="forbid", defer_build=True)


class ResultGate(BaseModel):
    """Whether the gate was on, what it decided, and what turned it on."""

    model_config = _OURS
    enabled: StrictBool
    verdict: Literal["pass", "fail", "warn"]
    flag: Literal["--gate", "gates.evidence_kernel"] | None


class ResultCounts(BaseModel):
    """Totals; ``unresolved`` counts artifacts, not findings."""

    model_config = _OURS
    artifacts_seen: Annotated[StrictInt, Field(ge=0)]
    accepted: Annotated[StrictInt, Field(ge=0)]
    unresolved: Annotated[StrictInt, Field(ge=0)]
    spans_checked: Annotated[StrictInt, Field(ge=0)]
    sources: Annotated[StrictInt, Field(ge=0)]


class ResultClaim(BaseModel):
    """One verified span of an accepted artifact; ``excerpt`` is the re-slice."""

    model_config = _OURS
    claim: StrictStr | None
    field: StrictStr
    source_id: SourceId
    start: Annotated[StrictInt, Field(ge=0)]
    end: Annotated[StrictInt, Field(ge=0)]
    access: Access
    excerpt: StrictStr
    section: StrictStr | None
    page: StrictInt | None


class ResultQuote(BaseModel):
    """Upstream's view of one claim: the re-slice (``text``), its source, offsets, url, freshness,
    and the section and page upstream's own quotes carry."""

    model_config = _OURS
    text: StrictStr
    source_id: SourceId
    start: Annotated[StrictInt, Field(ge=0)]
    end: Annotated[StrictInt, Field(ge=0)]
    url: StrictStr | None
    fresh: StrictBool
    section: StrictStr | None
    page: StrictInt | None


class AcceptedArtifact(BaseModel):
    """An artifact that survived every check; url, paper and access come from its snapshots."""

    model_config = _OURS
    artifact_id: StrictStr
    kind: Literal["extraction", "appraisal", "report_claim", "synthesis_claim"]
    evidence_id: StrictStr | None
    record: StrictStr | None
    source_ids: tuple[SourceId, ...]
    paper: Paper | None
    url: StrictStr | None
    access: Access | None
    fresh: StrictBool
    claims: tuple[ResultClaim, ...]
    quotes: tuple[ResultQuote, ...]
    """One per claim, in the same order (derived like ``claims``; read by upstream's consumers)."""
    data: dict[str, Any]


class UnresolvedEntry(BaseModel):
    """One finding against one artifact."""

    model_config = _OURS
    artifact_id: StrictStr
    kind: Literal["extraction", "appraisal", "report_claim", "synthesis_claim"]
    evidence_id: StrictStr | None
    field: StrictStr
    reason_code: Reason
    detail: Annotated[StrictStr, Field(max_length=300)]
    source_id: StrictStr | None
    record: StrictStr | None


class WarningEntry(BaseModel):
    """Something ignored on purpose (an unknown field, discarded quotes); never blocks."""

    model_config = _OURS
    artifact_id: StrictStr | None
    record: StrictStr | None
    field: StrictStr
    detail: Annotated[StrictStr, Field(max_length=300)]


class Diagnostics(BaseModel):
    """Every finding, totals by reason code, and the warnings."""

    model_config = _OURS
    unresolved: tuple[UnresolvedEntry, ...]
    counts_by_reason: dict[Reason, Annotated[StrictInt, Field(ge=1)]]
    warnings: tuple[WarningEntry, ...]


class ResultSource(BaseModel):
    """Metadata of one referenced snapshot (never its text), with the fresh-fetch outcome."""

    model_config = _OURS
    source_id: StrictStr
    status: Literal["ok", "UNKNOWN_SOURCE", "SNAPSHOT_HASH_MISMATCH"]
    url: StrictStr | None
    title: StrictStr | None
    retrieved_at: Timestamp | None
    access: Access | None
    origin: StrictStr | None
    paper: Paper | None
    asset: Asset | None
    content_hash: PrefixedDigest | None
    record_hash: PrefixedDigest | None
    sealed: StrictBool
    chars: StrictInt | None
    fresh: StrictBool
    fresh_event_id: StrictStr | None
    fresh_detail: StrictStr


class LogRef(BaseModel):
    """How much of the event log the assembly read, and the digest of its last line."""

    model_config = _OURS
    events: Annotated[StrictInt, Field(ge=0)]
    head: PrefixedDigest | None


class ResultPolicy(BaseModel):
    """The trust policy the result was assembled under (present only when keys are trusted)."""

    model_config = _OURS
    trusted_keys: tuple[Annotated[StrictStr, Field(pattern=r"^[0-9a-f]{64}$")], ...]


def _check_slug(value: str) -> str:
    problem = slug_problem(value)
    if problem is not None:
        raise ValueError(problem)
    return value


class Result(BaseModel):
    """``outputs/result.json``."""

    model_config = _OURS
    schema_version: Annotated[StrictInt, Field(ge=1, le=1)]
    run_slug: Annotated[StrictStr, AfterValidator(_check_slug)]
    generated_at: Timestamp
    config: dict[str, Any]
    gate: ResultGate
    counts: ResultCounts
    accepted: tuple[AcceptedArtifact, ...]
    diagnostics: Diagnostics
    sources: tuple[ResultSource, ...]
    log: LogRef
    inputs: list[list[Any]] | None = None
    """Every input the assembly read (see :mod:`publisher.gate.inputs`); absent in older results."""
    inputs_hash: PrefixedDigest
    policy: ResultPolicy | None = None
    """The wiki's trusted key ids when the result was assembled (absent: unsigned provenance)."""
