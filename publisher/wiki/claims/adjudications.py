"""``publisher review adjudicate``: a person's signed decision that a review's hit does not support the claim.

A review that found its terms proves nothing absent by itself: ``not_supported`` rests on it only
when it found no hit, or when a person has looked at every hit, in its sentence, and recorded that
it does not support the claim, with a reason (CONTRACT section 14). Those decisions are lines of a
run's ``reviews/adjudications.jsonl``: one canonical JSON object a line, hash-chained by ``prev``
exactly like ``events.jsonl`` (the kernel's :func:`~publisher.kernel.eventlog.append_chained`
writes it, under the same lock and torn-line rules), each signed for the run it lies in. On a
wiki that trusts keys, only an entry signed by one of them counts, and the command refuses to
write one it cannot sign.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, StrictStr, ValidationError

from ...kernel.canonical import canonical_bytes, format_ts, loads_strict, utc_now
from ...kernel.errors import IntegrityError, UsageError
from ...kernel.eventlog import LogState, append_chained, read_chain
from ...kernel.models import (
    Offset,
    PrefixedDigest,
    SchemaVersion,
    Signature,
    SignedLine,
    Timestamp,
    first_error,
)
from ...kernel.reasons import Reason
from ...kernel.text import one_line
from ...kernel.trust import KeyRing, Role, Signer, line_signature_problem, sign_line
from ...runs import Run
from .model import ID_RE
from .records import REVIEWS_DIR, Hit, ReviewRecord, read_record

__all__ = [
    "ADJUDICATIONS_FILE",
    "DECISION",
    "MAX_REASON",
    "AdjudicatedHit",
    "Adjudication",
    "Adjudicated",
    "adjudications_path",
    "adjudicate",
    "read_adjudications",
    "adjudication_problem",
    "hit_key",
    "valid_adjudications",
]

ADJUDICATIONS_FILE = "adjudications.jsonl"
"""The log's name, inside the run's ``reviews/`` folder."""

DECISION = "does_not_support"
"""The one decision an adjudication records: the hit, read in its sentence, does not support the claim."""

MAX_REASON = 1000
"""Longest reason an adjudication keeps (one line)."""

_FROZEN = ConfigDict(frozen=True, extra="forbid", strict=True, defer_build=True)

HitKey = tuple[str, int, int]
"""A hit as an adjudication names it: (term, start, end)."""


class AdjudicatedHit(BaseModel):
    """The hit an adjudication decides: its term and raw offsets, as the review recorded them."""

    model_config = _FROZEN
    term: StrictStr
    start: Offset
    end: Offset


class Adjudication(SignedLine):
    """One line of ``reviews/adjudications.jsonl`` (CONTRACT section 14)."""

    model_config = _FROZEN
    schema_version: SchemaVersion
    adjudication_id: Annotated[StrictStr, Field(pattern=r"^adj-[0-9]{4,}$")]
    prev: PrefixedDigest | None
    at: Timestamp
    review_id: Annotated[StrictStr, Field(pattern=ID_RE["review"].pattern)]
    hit: AdjudicatedHit
    decision: Literal["does_not_support"]
    reason: Annotated[StrictStr, Field(min_length=1, max_length=MAX_REASON)]
    sig: Signature | None = None

    @property
    def number(self) -> int:
        """The counter in ``adjudication_id``."""
        return int(self.adjudication_id[4:])

    @property
    def key(self) -> tuple[str, HitKey]:
        """(review id, hit key): what this entry decides."""
        return self.review_id, (self.hit.term, self.hit.start, self.hit.end)


@dataclass(frozen=True)
class Adjudicated:
    """What ``publisher review adjudicate`` wrote or found: the entry, and whether it is new."""

    entry: Adjudication
    created: bool


def hit_key(hit: Hit) -> HitKey:
    """A review's hit as an adjudication names it."""
    return hit.term, hit.start, hit.end


def adjudications_path(run: Run) -> Path:
    """Where the run's adjudications are logged."""
    return run.path / REVIEWS_DIR / ADJUDICATIONS_FILE


def _parse(line: bytes) -> Adjudication:
    return Adjudication.model_validate(loads_strict(line))


def read_adjudications(run: Run) -> LogState[Adjudication]:
    """Read and check the run's whole log (chain, order, torn line); a missing log reads as empty."""
    return read_chain(adjudications_path(run), _parse, lambda a: a.adjudication_id, ADJUDICATIONS_FILE)


def adjudication_problem(entry: Adjudication, ring: KeyRing, run: str) -> str | None:
    """Why ``entry`` is not signed for ``run`` (``<slug>@<created_at>``) by a key of ``ring``
    trusted to assess, or None.

    Signed for the run it lies in: a line copied into another run's log does not verify there.
    """
    return line_signature_problem(entry, entry.adjudication_id, ring, signed_for=run, role=Role.ASSESS)


def valid_adjudications(
    run: Run, review_id: str, ring: KeyRing, state: LogState[Adjudication] | None = None
) -> dict[HitKey, Adjudication] | str:
    """The adjudications of ``review_id`` that count, by hit; or why none of the log counts.

    A torn or broken log counts for nothing (an edited line could have turned any decision). With
    trusted keys, only an entry signed by one of them for this run counts; an unsigned wiki counts
    every entry of an intact log, as it does assessments. The first valid entry of a hit is its
    decision.
    """
    if state is None:
        state = read_adjudications(run)
    if not state.intact:
        return f"{run.path.name}/{REVIEWS_DIR}/{ADJUDICATIONS_FILE} has a torn or invalid last line or a broken chain"
    name = run.name() if ring else ""
    out: dict[HitKey, Adjudication] = {}
    for entry in state.events:
        rid, key = entry.key
        if rid != review_id or key in out:
            continue
        if ring and adjudication_problem(entry, ring, name) is not None:
            continue
        out[key] = entry
    return out


def adjudicate(
    run: Run,
    review_id: str,
    hit_number: int,
    reason: str,
    *,
    signer: Signer | None,
    ring: KeyRing,
) -> Adjudicated:
    """Record that hit ``hit_number`` (1-based, in the review's order) does not support its claim.

    ``ring``: the wiki's trusted keys. On a wiki that trusts keys, an adjudication that ``signer``
    cannot sign with one of them is refused before anything is written. A hit already validly
    adjudicated is returned as it is (nothing appended).
    """
    if not isinstance(review_id, str) or not ID_RE["review"].fullmatch(review_id):
        raise UsageError(f"--review {str(review_id)[:80]!r} is not a review id (rev-<64 hex>)")
    flat = one_line(reason, MAX_REASON + 1)
    if not flat:
        raise UsageError("--reason must not be empty: say why the hit does not support the claim")
    if len(flat) > MAX_REASON:
        raise UsageError(f"--reason is longer than {MAX_REASON} characters")
    try:
        review: ReviewRecord = read_record(run, review_id, ReviewRecord)
    except IntegrityError as exc:
        if exc.reason is Reason.UNKNOWN_SOURCE:
            raise UsageError(f"no review {review_id[:20]}… in {run.path.name}; run 'publisher review' first") from exc
        raise
    if not review.hits:
        raise UsageError(f"{review_id[:20]}… found no hit: there is nothing to adjudicate")
    if not 1 <= hit_number <= len(review.hits):
        raise UsageError(f"--hit must be between 1 and {len(review.hits)} (the review's hits, in order)")
    hit = review.hits[hit_number - 1]
    if ring and (signer is None or not ring.has_role(signer.key_id, Role.ASSESS)):
        keys = ", ".join(ring.shown(kid) for kid in ring.ids_for(Role.ASSESS)) or "none"
        raise UsageError(
            f"this wiki trusts signed adjudications only: sign with the private key of {keys} "
            "(--key FILE or $PUBLISHER_SIGNING_KEY); nothing written",
            **ring.key_fact(ring.ids_for(Role.ASSESS)),
        )
    found = valid_adjudications(run, review_id, ring)
    if isinstance(found, str):
        raise UsageError(f"{found}; appends are refused until a person repairs it")
    done = found.get(hit_key(hit))
    if done is not None:
        return Adjudicated(done, False)

    def make(number: int, prev: str | None) -> tuple[Adjudication, bytes]:
        try:
            entry = Adjudication.model_validate(
                {
                    "schema_version": 1,
                    "adjudication_id": f"adj-{number:04d}",
                    "prev": prev,
                    "at": format_ts(utc_now()),
                    "review_id": review_id,
                    "hit": {"term": hit.term, "start": hit.start, "end": hit.end},
                    "decision": DECISION,
                    "reason": flat,
                }
            )
            if signer is not None:
                entry = sign_line(entry, signer, signed_for=run.name())
        except ValidationError as exc:
            raise UsageError(f"refused to log an invalid adjudication: {first_error(exc)}") from exc
        return entry, canonical_bytes(entry.wire()) + b"\n"

    path = adjudications_path(run)
    path.parent.mkdir(exist_ok=True)
    return Adjudicated(append_chained(path, make, _parse, what="adjudication"), True)
