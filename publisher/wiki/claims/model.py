"""Claim identity and statuses (CONTRACT section 14): what a claim is, before any guard.

A claim's identity is its statement's digest after representation normalisation only: Unicode
NFC and whitespace runs collapsed to one space, trimmed. Two statements that differ only in how
they are written (a decomposed accent, a doubled space, a line break) are one claim; two that
differ in a single word are two. Meaning is never normalised.
"""

from __future__ import annotations

import hashlib
import re
import unicodedata
from enum import StrEnum
from typing import Any

from ...kernel.checkids import CheckId
from ...kernel.errors import PublisherError, UsageError
from ...kernel.lookalike import invisible, read_key
from ..concepts import ConceptClaim, EpistemicStatus
from ..works import url_identity, work_keys

__all__ = [
    "CHECK",
    "Guard",
    "ClaimRefusal",
    "STATUS_CODES",
    "EVIDENCE_STATUSES",
    "ID_RE",
    "normalise_statement",
    "claim_hash",
    "conflict_key",
    "parse_status",
    "status_code",
    "url_identity",
    "work_keys",
    "ConceptClaim",
    "EpistemicStatus",
]

CHECK = CheckId.CLAIM
"""The check id every claim guard reports under."""


class Guard(StrEnum):
    """The closed set of claim guards; a refusal names the one that failed (docs/claims.md)."""

    EVIDENCE_REQUIRED = "EVIDENCE_REQUIRED"
    """S, P or C without an evidence label."""
    EVIDENCE_UNRESOLVED = "EVIDENCE_UNRESOLVED"
    """A label that is not a verified excerpt of an accepted artifact in a current result."""
    EVIDENCE_NOT_ALLOWED = "EVIDENCE_NOT_ALLOWED"
    """NS or NE citing evidence labels (they rest on a review or a missingness record)."""
    CONDITIONS_REQUIRED = "CONDITIONS_REQUIRED"
    """P without a non-empty condition."""
    CONDITIONS_NOT_ALLOWED = "CONDITIONS_NOT_ALLOWED"
    """Conditions on a status other than P."""
    REVIEW_REQUIRED = "REVIEW_REQUIRED"
    """NS without a review, or a review on another status."""
    REVIEW_UNRESOLVED = "REVIEW_UNRESOLVED"
    """A review id that names no verifying review record of the wiki's runs."""
    REVIEW_OTHER_CLAIM = "REVIEW_OTHER_CLAIM"
    """A review of another claim (claim_hash differs)."""
    REVIEW_INCOMPLETE = "REVIEW_INCOMPLETE"
    """A review that is not protocol-complete over a complete surface."""
    REVIEW_UNADJUDICATED = "REVIEW_UNADJUDICATED"
    """A review that found hits, not every one of them adjudicated "does not support" (signed)."""
    MISSINGNESS_REQUIRED = "MISSINGNESS_REQUIRED"
    """NE without a missingness record, or one on another status."""
    MISSINGNESS_UNRESOLVED = "MISSINGNESS_UNRESOLVED"
    """A missingness id that names no verifying record of the wiki's runs."""
    MISSINGNESS_OTHER_CLAIM = "MISSINGNESS_OTHER_CLAIM"
    """A missingness record of another claim."""
    NOTHING_MISSING = "NOTHING_MISSING"
    """``publisher missing`` asked for a record the trusted facts do not support."""
    CLAIM_CONFLICT = "CLAIM_CONFLICT"
    """Another claim of the concept has the id or the statement."""
    ASSESSMENT_MISSING = "ASSESSMENT_MISSING"
    """A claim in front matter without an admitted assessment entry."""
    ASSESSMENT_MISMATCH = "ASSESSMENT_MISMATCH"
    """Front matter that differs from the assessment entry that admitted it."""
    ASSESSMENT_LOG = "ASSESSMENT_LOG"
    """assessments.jsonl is torn, edited or its signature does not verify."""


class ClaimRefusal(PublisherError):
    """A claim command refused: the guard that failed, one line of cause and fix (exit status 1)."""

    exit_status = 1

    def __init__(self, guard: Guard, message: str, **context: Any) -> None:
        context.setdefault("check", CHECK)
        context.setdefault("field", guard.value)  # as the wiki check's claim findings name the guard
        super().__init__(message, guard=guard.value, **context)
        self.guard = guard

    def one_line(self) -> str:
        """``C-CLAIM GUARD: message``."""
        return f"{CHECK} {self.guard.value}: {' '.join(self.message.split())}"


STATUS_CODES: dict[str, EpistemicStatus] = {
    "S": EpistemicStatus.SUPPORTED,
    "P": EpistemicStatus.PARTIALLY_SUPPORTED,
    "NS": EpistemicStatus.NOT_SUPPORTED,
    "C": EpistemicStatus.CONTRADICTED,
    "NE": EpistemicStatus.NON_EVALUABLE,
}
"""The short names of the statuses (S, P, NS, C, NE)."""

EVIDENCE_STATUSES = frozenset(
    {EpistemicStatus.SUPPORTED, EpistemicStatus.PARTIALLY_SUPPORTED, EpistemicStatus.CONTRADICTED}
)
"""Statuses that rest on verified excerpts (S, P, C)."""

ID_RE = {"review": re.compile(r"rev-[0-9a-f]{64}"), "missingness": re.compile(r"mis-[0-9a-f]{64}")}
"""The syntax of review and missingness record ids, checked before any file is opened."""


def normalise_statement(statement: str) -> str:
    """``statement`` in NFC with whitespace runs collapsed to one space and trimmed."""
    return " ".join(unicodedata.normalize("NFC", statement).split())


def claim_hash(statement: str) -> str:
    """``"sha256:"`` + the digest of the normalised statement's UTF-8: the claim's identity."""
    return "sha256:" + hashlib.sha256(normalise_statement(statement).encode("utf-8")).hexdigest()


def conflict_key(statement: str) -> str:
    """What two statements of one concept must differ in to be two claims (``CLAIM_CONFLICT``).

    Looser than :func:`claim_hash` on purpose, and never an identity: the statement as people
    read it (:func:`publisher.kernel.lookalike.read_key`: invisible characters dropped, NFKC,
    case folded, then the Unicode confusable skeleton), white space collapsed, so that a
    zero-width space, a bidi control, a full-width, Cyrillic, Greek or mathematical letter, or
    capitals cannot make a second status for what reads as the same statement.
    """
    visible = "".join(ch for ch in statement if not invisible(ch))
    return " ".join(read_key(visible).split())


def parse_status(value: str) -> EpistemicStatus:
    """A status from its name (``supported``) or short code (``S``); else a usage error."""
    if value in STATUS_CODES:
        return STATUS_CODES[value]
    try:
        return EpistemicStatus(value)
    except ValueError:
        names = ", ".join(f"{code} ({status.value})" for code, status in STATUS_CODES.items())
        raise UsageError(f"--status {value[:40]!r} is not one of: {names}") from None


def status_code(status: EpistemicStatus) -> str:
    """The short code (S, P, NS, C, NE) of a status."""
    return next(code for code, known in STATUS_CODES.items() if known is status)
