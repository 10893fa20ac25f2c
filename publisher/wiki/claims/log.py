"""The wiki's ``assessments.jsonl``: every assessment attempt, admitted or rejected, hash-chained.

One canonical JSON object a line, chained by ``prev`` exactly like ``events.jsonl`` (the kernel's
:func:`~publisher.kernel.eventlog.append_chained` writes both, under the same lock and torn-line
rules), signed when a key is given. An admitted entry is the historical fact the claim in front
matter must equal; a rejected one stays visible with the guard that failed. With trusted keys
listed in ``mkdocs.yml``, every entry must carry a valid signature by one of them.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, StrictBool, StrictStr, ValidationError

from ...kernel.canonical import canonical_bytes, format_ts, loads_strict, utc_now
from ...kernel.errors import UsageError
from ...kernel.eventlog import LogState, append_chained, read_chain
from ...kernel.models import (
    Offset,
    PrefixedDigest,
    SchemaVersion,
    Signature,
    SignedLine,
    SourceId,
    Timestamp,
    enum_from_str,
    first_error,
    list_as_tuple,
)
from ...kernel.trust import KeyRing, Role, Signer, line_signature_problem, sign_line
from ..concepts import EpistemicStatus
from .model import Guard

__all__ = [
    "ASSESSMENTS_FILE",
    "SIGNED_FOR",
    "BoundRef",
    "BoundEvidence",
    "BoundReview",
    "BoundMissingness",
    "Bound",
    "Assessment",
    "append_assessment",
    "read_assessments",
    "signature_problem",
]

ASSESSMENTS_FILE = "assessments.jsonl"
"""The log's name, at the wiki root."""

SIGNED_FOR = "assessments"
"""What an assessment's ``sig.run`` names: the wiki's assessment log (not a run)."""

_FROZEN = ConfigDict(frozen=True, extra="forbid", strict=True, defer_build=True)


class BoundRef(BaseModel):
    """One span an evidence label quoted when assessed, with the snapshot seal it had then."""

    model_config = _FROZEN
    run: StrictStr
    source_id: SourceId
    start: Offset
    end: Offset
    record_hash: PrefixedDigest | None


class BoundEvidence(BaseModel):
    """An evidence label and the exact spans it resolved to."""

    model_config = _FROZEN
    label: StrictStr
    refs: Annotated[tuple[BoundRef, ...], BeforeValidator(list_as_tuple)]


class BoundReview(BaseModel):
    """The review an NS rests on: where it is and the surface it covered."""

    model_config = _FROZEN
    run: StrictStr
    source_id: SourceId
    surface_manifest_hash: PrefixedDigest | None


class BoundMissingness(BaseModel):
    """The missingness record an NE rests on: where it is and what it records."""

    model_config = _FROZEN
    run: StrictStr
    kind: StrictStr


class Bound(BaseModel):
    """Exactly the ids an admitted assessment rests on; provenance now is recomputed from these."""

    model_config = _FROZEN
    evidence: Annotated[tuple[BoundEvidence, ...], BeforeValidator(list_as_tuple)] = ()
    review: BoundReview | None = None
    missingness: BoundMissingness | None = None


class Assessment(SignedLine):
    """One line of ``assessments.jsonl``: an attempt and its outcome (CONTRACT section 14)."""

    model_config = _FROZEN
    schema_version: SchemaVersion
    assessment_id: Annotated[StrictStr, Field(pattern=r"^as-[0-9]{4,}$")]
    prev: PrefixedDigest | None
    at: Timestamp
    concept: StrictStr
    claim_id: StrictStr
    statement: StrictStr
    claim_hash: PrefixedDigest
    status: Annotated[EpistemicStatus, enum_from_str(EpistemicStatus)]
    conditions: Annotated[tuple[StrictStr, ...], BeforeValidator(list_as_tuple)]
    evidence: Annotated[tuple[StrictStr, ...], BeforeValidator(list_as_tuple)]
    review: StrictStr | None
    missingness: StrictStr | None
    admitted: StrictBool
    guard: Annotated[Guard, enum_from_str(Guard)] | None
    detail: Annotated[StrictStr, Field(max_length=300)] | None
    bound: Bound | None
    sig: Signature | None = None

    @property
    def number(self) -> int:
        """The counter in ``assessment_id``."""
        return int(self.assessment_id[3:])


def _parse(line: bytes) -> Assessment:
    return Assessment.model_validate(loads_strict(line))


def append_assessment(wiki_root: Path, fields: dict[str, Any], signer: Signer | None = None) -> Assessment:
    """Append one attempt (``fields``: everything but id, prev, at and sig); returns the entry."""

    def make(number: int, prev: str | None) -> tuple[Assessment, bytes]:
        try:
            entry = Assessment.model_validate(
                {
                    **fields,
                    "schema_version": 1,
                    "assessment_id": f"as-{number:04d}",
                    "prev": prev,
                    "at": format_ts(utc_now()),
                }
            )
            if signer is not None:
                entry = sign_line(entry, signer, signed_for=SIGNED_FOR)
        except ValidationError as exc:
            raise UsageError(f"refused to log an invalid assessment: {first_error(exc)}") from exc
        return entry, canonical_bytes(entry.wire()) + b"\n"

    return append_chained(Path(wiki_root) / ASSESSMENTS_FILE, make, _parse, what="assessment")


def read_assessments(wiki_root: Path) -> LogState[Assessment]:
    """Read and check the whole log (chain, order, torn line); a missing log reads as empty."""
    return read_chain(Path(wiki_root) / ASSESSMENTS_FILE, _parse, lambda a: a.assessment_id, ASSESSMENTS_FILE)


def signature_problem(entry: Assessment, ring: KeyRing) -> str | None:
    """Why ``entry`` is not signed for the assessment log by a key of ``ring`` trusted for
    ``assess`` (:func:`~publisher.kernel.trust.line_signature_problem`), or None."""
    return line_signature_problem(
        entry, entry.assessment_id, ring, signed_for=SIGNED_FOR, role=Role.ASSESS, log="the assessment log"
    )
