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

from ...kernel.errors import UsageError
from ..concepts import ConceptClaim, EpistemicStatus

__all__ = [
    "STATUS_CODES",
    "EVIDENCE_STATUSES",
    "ID_RE",
    "normalise_statement",
    "claim_hash",
    "parse_status",
    "status_code",
    "ConceptClaim",
    "EpistemicStatus",
]

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
