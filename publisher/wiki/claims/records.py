"""Review and missingness records: write-once, content-addressed files inside a run.

A record's id is ``<prefix>-`` + the SHA-256 of the canonical JSON of every field but
``created_at``: the same situation gives the same id, and the stored file (with its first
``created_at``) is left untouched. Every read re-derives the id from the bytes and refuses a
file whose name, shape or digest disagree, before anything trusts it.
"""

from __future__ import annotations

import hashlib
import os
from enum import StrEnum
from pathlib import Path
from typing import Annotated, Literal, TypeVar

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, StrictBool, StrictInt, StrictStr, ValidationError

from ...kernel import _fs
from ...kernel.canonical import StrictJSONError, canonical_bytes, loads_strict
from ...kernel.errors import ConflictError, IntegrityError, ResourceError, UsageError
from ...kernel.models import (
    Offset,
    PrefixedDigest,
    SchemaVersion,
    SourceId,
    Timestamp,
    enum_from_str,
    first_error,
    list_as_tuple,
)
from ...kernel.reasons import Reason
from ...runs import Run
from .model import ID_RE

__all__ = [
    "REVIEWS_DIR",
    "MISSINGNESS_DIR",
    "MAX_RECORD_BYTES",
    "MissingKind",
    "MissingBasis",
    "MissingnessRecord",
    "HitSentence",
    "Hit",
    "ReviewRecord",
    "record_id",
    "record_folder",
    "write_record",
    "read_record",
]

REVIEWS_DIR = "reviews"
MISSINGNESS_DIR = "missingness"
"""Folders of a run holding ``rev-<64hex>.json`` and ``mis-<64hex>.json``."""

MAX_RECORD_BYTES = 16 * 1024 * 1024
"""A record file larger than this is refused unread."""

_FROZEN = ConfigDict(frozen=True, extra="forbid", strict=True, defer_build=True)


class MissingKind(StrEnum):
    """What is missing, as the trusted facts show it."""

    SOURCE_UNAVAILABLE = "SOURCE_UNAVAILABLE"
    ACCESS_RESTRICTED = "ACCESS_RESTRICTED"
    SURFACE_INCOMPLETE = "SURFACE_INCOMPLETE"


class MissingBasis(BaseModel):
    """The trusted facts a missingness record rests on, by their ids and digests.

    ``event_id``/``event_digest`` bind the exact log line (a ``fetch_failed`` event, or the
    acquisition of the source); ``source_id``/``record_hash``/``manifest_hash`` the exact snapshot.
    """

    model_config = _FROZEN
    run: StrictStr
    event_id: StrictStr
    event_digest: PrefixedDigest
    url: StrictStr
    source_id: SourceId | None = None
    record_hash: PrefixedDigest | None = None
    access: StrictStr | None = None
    manifest_hash: PrefixedDigest | None = None
    missing_pages: Annotated[tuple[Annotated[StrictInt, Field(ge=1)], ...], BeforeValidator(list_as_tuple)] = ()


class MissingnessRecord(BaseModel):
    """``missingness/mis-<64hex>.json``: a claim that cannot be evaluated, and why (section 14)."""

    model_config = _FROZEN
    schema_version: SchemaVersion
    claim: Annotated[StrictStr, Field(min_length=1)]
    claim_hash: PrefixedDigest
    kind: Annotated[MissingKind, enum_from_str(MissingKind)]
    basis: MissingBasis
    created_at: Timestamp


class HitSentence(BaseModel):
    """The sentence a hit lies in: raw code-point offsets into the snapshot's text and its text.

    A reading aid recorded with the hit so that a reader (and the person adjudicating it) sees
    the hit in context; the build checks it is the exact slice and covers the hit.
    """

    model_config = _FROZEN
    start: Offset
    end: Offset
    text: StrictStr


class Hit(BaseModel):
    """One occurrence of a search term: raw code-point offsets into the snapshot's text, and the
    sentence it lies in."""

    model_config = _FROZEN
    term: StrictStr
    start: Offset
    end: Offset
    match: Literal["exact", "normalized"]
    sentence: HitSentence


class ReviewRecord(BaseModel):
    """``reviews/rev-<64hex>.json``: a document review of one claim over one snapshot (section 14).

    ``semantic_search_executed`` is always false: declared semantic queries are listed, visibly
    unexecuted, and never count as a search.
    """

    model_config = _FROZEN
    schema_version: SchemaVersion
    claim: Annotated[StrictStr, Field(min_length=1)]
    claim_hash: PrefixedDigest
    source_id: SourceId
    surface_manifest_hash: PrefixedDigest | None
    surface_complete: StrictBool
    search_terms: Annotated[tuple[StrictStr, ...], BeforeValidator(list_as_tuple)]
    hits: Annotated[tuple[Hit, ...], BeforeValidator(list_as_tuple)]
    semantic_queries_declared_not_executed: Annotated[tuple[StrictStr, ...], BeforeValidator(list_as_tuple)]
    semantic_search_executed: Literal[False]
    review_contract_hash: PrefixedDigest
    executed_review_trace_hash: PrefixedDigest
    protocol_complete: StrictBool
    created_at: Timestamp


R = TypeVar("R", MissingnessRecord, ReviewRecord)

_KINDS: dict[type[BaseModel], tuple[str, str]] = {
    MissingnessRecord: ("mis", MISSINGNESS_DIR),
    ReviewRecord: ("rev", REVIEWS_DIR),
}


def record_id(record: MissingnessRecord | ReviewRecord) -> str:
    """``mis-``/``rev-`` + SHA-256 of the canonical JSON of every field but ``created_at``."""
    prefix = _KINDS[type(record)][0]
    body = record.model_dump(mode="json")
    del body["created_at"]
    return f"{prefix}-{hashlib.sha256(canonical_bytes(body)).hexdigest()}"


def record_folder(run: Run, model: type[BaseModel]) -> Path:
    """The folder of a run holding records of ``model``."""
    return run.path / _KINDS[model][1]


def write_record(run: Run, record: R) -> tuple[R, str, bool]:
    """Publish ``record`` write-once; returns (the stored record, its id, created).

    When the id exists already, the stored record is returned untouched (its ``created_at`` is
    the first one); a stored file that does not verify is a conflict, left as it is. A record over
    :data:`MAX_RECORD_BYTES` is refused (``UsageError``), never written: it could not be read back.
    """
    data = canonical_bytes(record.model_dump(mode="json")) + b"\n"
    if len(data) > MAX_RECORD_BYTES:  # it could never be read back: nothing is written
        raise UsageError(
            f"the record would be {len(data):,} bytes, over the {MAX_RECORD_BYTES:,} a record may be; "
            "a review: declare fewer or shorter terms"
        )
    rid = record_id(record)
    folder = record_folder(run, type(record))
    _fs.own_folder(folder)
    if _fs.create_exclusive(folder / f"{rid}.json", data):
        return record, rid, True
    try:
        return read_record(run, rid, type(record)), rid, False
    except IntegrityError as exc:
        raise ConflictError(
            f"{rid} already exists in {folder.name}/ and does not verify; left untouched "
            "(inspect or remove it by hand)",
            reason=Reason.SCHEMA_ERROR,
        ) from exc


def read_record(run: Run, rid: str, model: type[R]) -> R:
    """Read and verify one record; raises IntegrityError (``UNKNOWN_SOURCE`` when there is none,
    ``SCHEMA_ERROR`` for a record whose name, shape or digest disagree)."""
    prefix, folder_name = _KINDS[model]
    pattern = ID_RE["missingness" if prefix == "mis" else "review"]
    if not isinstance(rid, str) or not pattern.fullmatch(rid):
        raise IntegrityError(f"{str(rid)[:80]!r} is not '{prefix}-' + 64 lowercase hex", reason=Reason.SCHEMA_ERROR)
    path = run.path / folder_name / f"{rid}.json"
    try:
        if os.path.lexists(path) and os.lstat(path).st_size > MAX_RECORD_BYTES:
            raise IntegrityError(f"{rid} is over {MAX_RECORD_BYTES} bytes", reason=Reason.SCHEMA_ERROR)
        data = _fs.read_regular(path, follow_symlinks=False)
    except FileNotFoundError as exc:
        raise IntegrityError(f"no {rid} in {run.path.name}/{folder_name}", reason=Reason.UNKNOWN_SOURCE) from exc
    except _fs.NotRegularFileError as exc:
        raise IntegrityError(f"{rid} is not a regular file", reason=Reason.SCHEMA_ERROR) from exc
    except OSError as exc:
        raise ResourceError(f"{rid} cannot be read: {exc.strerror or exc}") from exc
    try:
        record = model.model_validate(loads_strict(data))
    except (StrictJSONError, ValueError) as exc:
        why = first_error(exc) if isinstance(exc, ValidationError) else f"not strict JSON ({exc})"
        raise IntegrityError(f"{rid}: {why}", reason=Reason.SCHEMA_ERROR) from exc
    got = record_id(record)
    if got != rid:
        raise IntegrityError(f"{rid}: its content digests to {got}", reason=Reason.SCHEMA_ERROR, got=got)
    return record
