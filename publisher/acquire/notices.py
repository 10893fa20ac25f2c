"""Notices of retraction and correction, asked of a registry and logged (CONTRACT section 18).

``publisher source notices`` asks Crossref's REST API (``<registry>/works/<doi>``, the base URL
configurable so a mirror or a test's loopback server can answer) for every DOI of the wiki, and
appends one signed ``notice`` entry per DOI to the wiki's hash-chained ``notices.jsonl``. The
response's raw bytes are kept write-once under ``notices/raw/<sha256>``, so every entry can be
re-derived and audited. Read from the response, on the work: ``updated-by`` (a notice that updates
it: this is where Crossref carries the Retraction Watch data), ``update-to`` (the work is itself a
notice updating another) and ``relation`` (``is-retracted-by``, ``has-correction``…). Only four
kinds are kept (an allow-list): retraction, correction, expression of concern, withdrawal.

A response that is not a Crossref ``work`` message (a 404, a timeout, a malformed body) writes
nothing for that DOI: neither an entry nor raw bytes. An entry with no update records absence,
which is inconclusive: pages say "no notice found in <registry> on <date>", never "not
retracted". The build reads this log only; it never asks the network.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import Annotated, Any, Literal
from urllib.parse import quote

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, StrictBool, StrictInt, StrictStr, ValidationError

from ..kernel.blobs import put_blob
from ..kernel.canonical import StrictJSONError, canonical_bytes, format_ts, loads_strict, utc_now
from ..kernel.errors import UsageError
from ..kernel.eventlog import LogState, append_chained, read_chain
from ..kernel.ids import IdError, canonical_id
from ..kernel.models import (
    HexDigest,
    PrefixedDigest,
    Signature,
    SignedLine,
    Timestamp,
    enum_from_str,
    first_error,
    list_as_tuple,
)
from ..kernel.trust import KeyRing, Role, Signer, line_signature_problem, sign_line

__all__ = [
    "NOTICES_FILE",
    "NOTICES_RAW",
    "SIGNED_FOR",
    "DEFAULT_REGISTRY",
    "NoticeKind",
    "Update",
    "Notice",
    "Asked",
    "parse_crossref",
    "ask_registry",
    "append_notice",
    "read_notices",
    "notice_signature_problem",
    "wiki_dois",
]

NOTICES_FILE = "notices.jsonl"
"""The wiki's notice log, beside ``assessments.jsonl``."""
NOTICES_RAW = "notices/raw"
"""Where each response's raw bytes are kept, relative to the wiki root."""
SIGNED_FOR = "notices"
"""What a notice's signature names in ``sig.run``: the wiki's notice log, not a run."""
DEFAULT_REGISTRY = "https://api.crossref.org"
_MAX_BODY = 4 * 1024 * 1024


class NoticeKind(StrEnum):
    """The kinds of update notice kept; any other kind a registry names is left out."""

    RETRACTION = "retraction"
    CORRECTION = "correction"
    EXPRESSION_OF_CONCERN = "expression_of_concern"
    WITHDRAWAL = "withdrawal"


_KINDS = {
    "retraction": NoticeKind.RETRACTION,
    "partial_retraction": NoticeKind.RETRACTION,
    "correction": NoticeKind.CORRECTION,
    "erratum": NoticeKind.CORRECTION,
    "corrigendum": NoticeKind.CORRECTION,
    "expression_of_concern": NoticeKind.EXPRESSION_OF_CONCERN,
    "withdrawal": NoticeKind.WITHDRAWAL,
}
_RELATIONS = {
    "is-retracted-by": NoticeKind.RETRACTION,
    "has-retraction": NoticeKind.RETRACTION,
    "is-corrected-by": NoticeKind.CORRECTION,
    "has-correction": NoticeKind.CORRECTION,
    "has-erratum": NoticeKind.CORRECTION,
    "has-expression-of-concern": NoticeKind.EXPRESSION_OF_CONCERN,
    "is-withdrawn-by": NoticeKind.WITHDRAWAL,
}
_FROZEN = ConfigDict(frozen=True, extra="forbid", strict=True, defer_build=True)


class Update(BaseModel):
    """One notice about the work: its kind, the notice's DOI and date, and where it was read."""

    model_config = _FROZEN
    kind: Annotated[NoticeKind, enum_from_str(NoticeKind)]
    relation: Literal["updated-by", "update-to", "relation"]
    doi: StrictStr | None
    date: StrictStr | None
    source: StrictStr | None

    @property
    def about_this_work(self) -> bool:
        """Whether it updates the work asked about (``update-to`` names another work)."""
        return self.relation != "update-to"


class NoticeReceipt(BaseModel):
    """What the registry answered: the address, status, media type and the raw bytes' digest."""

    model_config = _FROZEN
    requested_url: StrictStr
    status: StrictInt
    media_type: StrictStr
    raw_sha256: HexDigest
    raw_bytes: Annotated[StrictInt, Field(ge=0)]


class Notice(SignedLine):
    """One line of ``notices.jsonl``: what the registry said about one DOI, when."""

    model_config = _FROZEN
    schema_version: Annotated[StrictInt, Field(ge=1, le=1)]
    notice_id: Annotated[StrictStr, Field(pattern=r"^nt-[0-9]{4,}$")]
    prev: PrefixedDigest | None
    type: Literal["notice"]
    at: Timestamp
    doi: StrictStr
    registry: StrictStr
    found: StrictBool
    updates: Annotated[tuple[Update, ...], BeforeValidator(list_as_tuple)]
    receipt: NoticeReceipt
    sig: Signature | None = None

    @property
    def number(self) -> int:
        """The counter in ``notice_id``."""
        return int(self.notice_id[3:])

    @property
    def retracted(self) -> bool:
        """Whether a retraction or withdrawal of this work is logged."""
        kinds = (NoticeKind.RETRACTION, NoticeKind.WITHDRAWAL)
        return any(u.kind in kinds and u.about_this_work for u in self.updates)


def _date(item: dict[str, Any]) -> str | None:
    updated = item.get("updated")
    parts = updated.get("date-parts") if isinstance(updated, dict) else None
    first = parts[0] if isinstance(parts, list) and parts and isinstance(parts[0], list) else None
    if not first or not all(type(p) is int for p in first):
        return None
    return "-".join(f"{p:02d}" if i else str(p) for i, p in enumerate(first[:3]))


def _text(value: Any) -> str | None:
    return value.strip()[:300] or None if isinstance(value, str) else None


def parse_crossref(body: bytes) -> list[Update]:
    """The update notices of a Crossref ``work`` response; :class:`ValueError` when the body is
    not one (not JSON, not ``status: ok``, no ``message`` object, a list where one is due)."""
    try:
        data = loads_strict(body)
    except (StrictJSONError, ValueError, UnicodeDecodeError) as exc:
        raise ValueError(f"the response is not JSON ({str(exc)[:80]})") from exc
    if not isinstance(data, dict) or data.get("status") != "ok" or data.get("message-type") != "work":
        raise ValueError("the response is not a Crossref work message (status ok, message-type work)")
    message = data.get("message")
    if not isinstance(message, dict):
        raise ValueError("the response's message is not an object")
    out: list[Update] = []
    for relation in ("updated-by", "update-to"):
        items = message.get(relation, [])
        if not isinstance(items, list):
            raise ValueError(f"the response's {relation} is not a list")
        for item in items:
            if not isinstance(item, dict):
                raise ValueError(f"an entry of {relation} is not an object")
            kind = _KINDS.get(str(item.get("type", "")).strip().lower().replace("-", "_").replace(" ", "_"))
            if kind is None:
                continue
            source = _text(item.get("source"))
            out.append(
                Update(kind=kind, relation=relation, doi=_text(item.get("DOI")), date=_date(item), source=source)
            )
    relations = message.get("relation", {})
    if not isinstance(relations, dict):
        raise ValueError("the response's relation is not an object")
    for name, items in sorted(relations.items()):
        kind = _RELATIONS.get(str(name).lower())
        if kind is None:
            continue
        for item in items if isinstance(items, list) else []:
            if isinstance(item, dict):
                doi = _text(item.get("id")) if item.get("id-type") == "doi" else None
                out.append(
                    Update(kind=kind, relation="relation", doi=doi, date=None, source=_text(item.get("asserted-by")))
                )
    return out


@dataclass(frozen=True)
class Asked:
    """The outcome of asking the registry about one DOI: the updates and the raw answer, or why not."""

    doi: str
    updates: list[Update] | None
    body: bytes | None
    receipt: dict[str, Any] | None
    problem: str | None


def ask_registry(doi: str, registry: str, *, timeout: float) -> Asked:
    """Ask ``registry`` about ``doi``; never raises for what the registry (or the network) does."""
    from .http import HttpFailure, http_get  # the HTTP client loads only when a registry is asked

    url = f"{registry.rstrip('/')}/works/{quote(doi, safe='')}"
    try:
        answer = http_get(url, timeout=timeout, max_bytes=_MAX_BODY)
    except HttpFailure as exc:
        return Asked(doi, None, None, None, exc.one_line())
    try:
        updates = parse_crossref(answer.body)
    except ValueError as exc:
        return Asked(doi, None, None, None, f"HTTP {answer.status}: {exc}")
    receipt = {
        "requested_url": url,
        "status": answer.status,
        "media_type": answer.media_type,
        "raw_sha256": hashlib.sha256(answer.body).hexdigest(),
        "raw_bytes": len(answer.body),
    }
    return Asked(doi, updates, answer.body, receipt, None)


def append_notice(wiki_root: Path, asked: Asked, registry: str, signer: Signer | None) -> Notice:
    """Keep the raw answer, then append its entry (signed when a signer is given)."""
    if asked.updates is None or asked.body is None or asked.receipt is None:
        raise UsageError(f"nothing to log for {asked.doi}: {asked.problem}")
    root = Path(wiki_root)

    def make(number: int, prev: str | None) -> tuple[Notice, bytes]:
        try:
            entry = Notice(
                schema_version=1,
                notice_id=f"nt-{number:04d}",
                prev=prev,
                type="notice",
                at=format_ts(utc_now()),
                doi=asked.doi,
                registry=registry,
                found=bool(asked.updates),
                updates=tuple(asked.updates or ()),
                receipt=NoticeReceipt.model_validate(asked.receipt),
            )
            if signer is not None:
                entry = sign_line(entry, signer, signed_for=SIGNED_FOR)
        except ValidationError as exc:
            raise UsageError(f"refused to log an invalid notice: {first_error(exc)}") from exc
        return entry, canonical_bytes(entry.wire()) + b"\n"

    put_blob(root / NOTICES_RAW, asked.body)
    return append_chained(root / NOTICES_FILE, make, _parse, what="notice")


def _parse(line: bytes) -> Notice:
    return Notice.model_validate(loads_strict(line))


def read_notices(wiki_root: Path) -> LogState[Notice]:
    """Read and check the whole notice log (chain, order, torn line); a missing log reads as empty."""
    return read_chain(Path(wiki_root) / NOTICES_FILE, _parse, lambda n: n.notice_id, NOTICES_FILE)


def notice_signature_problem(entry: Notice, ring: KeyRing) -> str | None:
    """Why ``entry`` is not signed for the notice log by a key of ``ring`` trusted for ``acquire``
    (a notice is a retrieval, like a fetch), or None."""
    return line_signature_problem(
        entry, entry.notice_id, ring, signed_for=SIGNED_FOR, role=Role.ACQUIRE, log="the notice log"
    )


def wiki_dois(dois: list[str]) -> list[str]:
    """Distinct DOIs in their stored form, compared case-insensitively, first spelling kept."""
    seen: dict[str, str] = {}
    for value in dois:
        try:
            doi = canonical_id("doi", value)
        except IdError:
            continue
        seen.setdefault(doi.lower(), doi)
    return list(seen.values())
