"""The closed set of reason codes (CONTRACT section 8).

Every rejection the product makes names exactly one of these codes. The set is closed: code that
needs a new failure mode maps it onto one of these, never invents a string on the spot.
"""

from __future__ import annotations

from enum import StrEnum

__all__ = ["Reason", "describe"]


class Reason(StrEnum):
    """A closed reason code; its value is the code as written to disk."""

    UNKNOWN_SOURCE = "UNKNOWN_SOURCE"
    SNAPSHOT_HASH_MISMATCH = "SNAPSHOT_HASH_MISMATCH"
    SPAN_OUT_OF_RANGE = "SPAN_OUT_OF_RANGE"
    SPAN_TOO_LONG = "SPAN_TOO_LONG"
    EXCERPT_MISMATCH = "EXCERPT_MISMATCH"
    NO_SPANS = "NO_SPANS"
    URL_NOT_RETRIEVED = "URL_NOT_RETRIEVED"
    NO_FRESH_FETCH = "NO_FRESH_FETCH"
    UNSUPPORTED_VERDICT = "UNSUPPORTED_VERDICT"
    SOURCE_OUTSIDE_ACCEPTED = "SOURCE_OUTSIDE_ACCEPTED"
    NO_PAPER_ID = "NO_PAPER_ID"
    ASSET_HASH_MISMATCH = "ASSET_HASH_MISMATCH"
    ACCESS_MISMATCH = "ACCESS_MISMATCH"
    SCHEMA_ERROR = "SCHEMA_ERROR"


_DESCRIPTIONS: dict[Reason, str] = {
    Reason.UNKNOWN_SOURCE: "a span names a source_id with no snapshot",
    Reason.SNAPSHOT_HASH_MISMATCH: "a recomputed digest differs from the stored one or the file name",
    Reason.SPAN_OUT_OF_RANGE: "start < 0, start >= end, or end > len(text)",
    Reason.SPAN_TOO_LONG: "end - start > 2000",
    Reason.EXCERPT_MISMATCH: "an agent-written excerpt differs from text[start:end]",
    Reason.NO_SPANS: "a record that owes spans carries none",
    Reason.URL_NOT_RETRIEVED: "a URL cited in an artifact has no snapshot retrieved in this run",
    Reason.NO_FRESH_FETCH: "a source backing an artifact has no fresh retrieval in this run",
    Reason.UNSUPPORTED_VERDICT: "an independent checker lists the artifact as unsupported",
    Reason.SOURCE_OUTSIDE_ACCEPTED: "a report claim cites a source outside accepted evidence",
    Reason.NO_PAPER_ID: "a literature claim's snapshot has no paper id or contradicts its evidence_id",
    Reason.ASSET_HASH_MISMATCH: "a user-supplied PDF is missing or no longer hashes to asset.sha256",
    Reason.ACCESS_MISMATCH: "a span states an access level other than its snapshot's",
    Reason.SCHEMA_ERROR: "a record is not valid against its schema",
}


def describe(reason: Reason | str) -> str:
    """One-line description of a reason code."""
    return _DESCRIPTIONS[Reason(reason)]
