"""Frozen, strict records of the evidence kernel (CONTRACT sections 1-4).

These models validate shapes and types. Digests are checked by the store and the event log,
which own the bytes; a model never recomputes a hash. Agent-written records (extractions,
appraisals) live in :mod:`publisher.records`, because they are read leniently.
"""

import re
from collections.abc import Iterable
from enum import StrEnum
from typing import Annotated, Any, Literal, Self

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    StrictBool,
    StrictInt,
    StrictStr,
    ValidationError,
    field_validator,
    model_validator,
)

from .canonical import DIGEST_RE, HEX64_RE, SOURCE_ID_RE, parse_ts
from .eventviews import signed_payload
from .vocab import (
    ACCESS_ORDER,
    ACQUISITIONS,
    DEFAULT_EXCLUDED_MODALITIES,
    IDENTITY_KINDS,
    Access,
    Basis,
    EventType,
    Origin,
    SurfaceType,
    surface_manifest_hash,
)

__all__ = [
    "first_error",
    "build_validators",
    "Access",
    "Origin",
    "EventType",
    "ACCESS_ORDER",
    "ACQUISITIONS",
    "Paper",
    "Basis",
    "IdentityEntry",
    "Identity",
    "IDENTITY_KINDS",
    "Asset",
    "Section",
    "Page",
    "Snapshot",
    "SurfaceType",
    "Surface",
    "DEFAULT_EXCLUDED_MODALITIES",
    "surface_manifest_hash",
    "Event",
    "Receipt",
    "Signature",
    "signed_payload",
    "Span",
    "Gates",
    "RunConfig",
    "Timestamp",
    "SourceId",
    "PrefixedDigest",
    "HexDigest",
    "Offset",
    "list_as_tuple",
    "enum_from_str",
]


def first_error(exc: ValidationError, whole: str = "record") -> str:
    """One line naming the first problem pydantic found: ``invalid field <path>: <message>``."""
    first = exc.errors()[0]
    where = ".".join(str(p) for p in first["loc"]) or whole
    return f"invalid field {where}: {first['msg']}"


def _check_ts(value: str) -> str:
    parse_ts(value)
    return value


def _matching(pattern: re.Pattern[str], problem: str) -> AfterValidator:
    """A string that ``pattern`` matches whole, else ``problem`` (the one way ids and digests are checked)."""

    def check(value: str) -> str:
        if not pattern.fullmatch(value):
            raise ValueError(problem)
        return value

    return AfterValidator(check)


def _exact_one(value: Any) -> Any:
    # Literal[1] alone also takes True and 1.0, even in strict mode; a version is an int.
    if type(value) is not int:
        raise ValueError("schema_version must be the integer 1")
    return value


def list_as_tuple(value: Any) -> Any:
    """A JSON list as the tuple a frozen record holds (strict mode would refuse the list outright)."""
    return tuple(value) if isinstance(value, list) else value


def enum_from_str(enum: type[StrEnum]) -> BeforeValidator:
    """Accept an enum's string value (what JSON holds) and nothing else but the member itself.

    Strict mode refuses a plain ``str`` for an enum field, and lax mode would accept bytes too;
    this takes exactly the values a JSON record can carry.
    """

    def convert(value: Any) -> Any:
        if isinstance(value, str) and not isinstance(value, enum):
            try:
                return enum(value)
            except ValueError:
                choices = ", ".join(e.value for e in enum)
                raise ValueError(f"{value[:40]!r} is not one of: {choices}") from None
        return value

    return BeforeValidator(convert)


Timestamp = Annotated[StrictStr, AfterValidator(_check_ts)]
SourceId = Annotated[StrictStr, _matching(SOURCE_ID_RE, "source_id must be 'src-' followed by 64 lowercase hex digits")]
PrefixedDigest = Annotated[
    StrictStr, _matching(DIGEST_RE, "digest must be 'sha256:' followed by 64 lowercase hex digits")
]
HexDigest = Annotated[StrictStr, _matching(HEX64_RE, "digest must be 64 lowercase hex digits")]
Offset = Annotated[StrictInt, Field(ge=0)]
SchemaVersion = Annotated[Literal[1], BeforeValidator(_exact_one)]
AccessField = Annotated[Access, enum_from_str(Access)]
OriginField = Annotated[Origin, enum_from_str(Origin)]
EventTypeField = Annotated[EventType, enum_from_str(EventType)]

_FROZEN = ConfigDict(frozen=True, extra="forbid", strict=True, defer_build=True)


class Paper(BaseModel):
    """Bibliographic identity of a snapshot."""

    model_config = _FROZEN
    pmid: StrictStr | None = None
    doi: StrictStr | None = None
    pmcid: StrictStr | None = None

    def ids(self) -> dict[str, str]:
        """The ids that are present, by kind."""
        return {k: v for k, v in (("pmid", self.pmid), ("doi", self.doi), ("pmcid", self.pmcid)) if v}


class IdentityEntry(BaseModel):
    """One id (or the title) of a snapshot with its basis and where it was read (``via``)."""

    model_config = _FROZEN
    value: Annotated[StrictStr, Field(min_length=1)]
    basis: Annotated[Basis, enum_from_str(Basis)]
    via: Annotated[StrictStr, Field(min_length=1, max_length=200)]

    @property
    def derived(self) -> bool:
        """Whether the document or a registry's URL gives it (not the acquirer's word alone)."""
        return self.basis is not Basis.ASSERTED


class Identity(BaseModel):
    """A snapshot's ids and title, each with its basis (ext, sealed by ``record_hash``)."""

    model_config = _FROZEN
    pmid: IdentityEntry | None = None
    doi: IdentityEntry | None = None
    pmcid: IdentityEntry | None = None
    title: IdentityEntry | None = None

    def ids(self) -> dict[str, IdentityEntry]:
        """The paper ids present, by kind (the title left out)."""
        return {k: e for k in ("pmid", "doi", "pmcid") if (e := getattr(self, k)) is not None}

    def derived_ids(self) -> dict[str, str]:
        """The paper ids that the document or a registry URL gives: what a work rests on."""
        return {k: e.value for k, e in self.ids().items() if e.derived}


class Asset(BaseModel):
    """A stored file a snapshot's text was derived from (a PDF in the wiki's library)."""

    model_config = _FROZEN
    path: StrictStr
    sha256: HexDigest
    bytes: Annotated[StrictInt, Field(ge=0)]

    @field_validator("path")
    @classmethod
    def _relative(cls, value: str) -> str:
        parts = value.replace("\\", "/").split("/")
        if value.startswith("/") or ".." in parts or not value:
            raise ValueError("asset path must be relative to the wiki root, without '..'")
        return value


class Section(BaseModel):
    """A titled half-open range of a snapshot's text."""

    model_config = _FROZEN
    title: StrictStr
    start: Offset
    end: Offset


class Page(BaseModel):
    """A PDF page's half-open range of a snapshot's text."""

    model_config = _FROZEN
    page: Annotated[StrictInt, Field(ge=0)]
    start: Offset
    end: Offset


_PageList = Annotated[tuple[Annotated[StrictInt, Field(ge=1)], ...], BeforeValidator(list_as_tuple)]


class Surface(BaseModel):
    """The text surface declared at acquisition (CONTRACT section 14), sealed in the snapshot.

    Completeness is declared, never inferred: ``expected_pages`` is what the acquirer declared
    (null when nothing was declared), ``extracted_pages`` the pages that gave text, and the rest
    follows from the two. ``manifest_hash`` binds the surface to the snapshot's text
    (:func:`surface_manifest_hash`); the store recomputes it on every read.
    """

    model_config = _FROZEN
    type: Annotated[SurfaceType, enum_from_str(SurfaceType)]
    expected_pages: _PageList | None
    extracted_pages: _PageList
    missing_pages: _PageList
    unexpected_pages: _PageList
    complete: StrictBool
    excluded_modalities: Annotated[tuple[StrictStr, ...], BeforeValidator(list_as_tuple)]
    method: Annotated[StrictStr, Field(min_length=1, max_length=200)]
    manifest_hash: PrefixedDigest

    @model_validator(mode="after")
    def _consistent(self) -> Self:
        for name in ("expected_pages", "extracted_pages", "missing_pages", "unexpected_pages"):
            pages = getattr(self, name) or ()
            if list(pages) != sorted(set(pages)):
                raise ValueError(f"{name} must be increasing page numbers without repeats")
        if self.type is SurfaceType.WHOLE_TEXT:
            if self.expected_pages is not None or self.extracted_pages or self.missing_pages or self.unexpected_pages:
                raise ValueError("a WHOLE_TEXT surface has no pages")
            return self
        expected = set(self.expected_pages or ())
        extracted = set(self.extracted_pages)
        declared = self.expected_pages is not None
        missing = sorted(expected - extracted) if declared else []
        unexpected = sorted(extracted - expected) if declared else []
        if list(self.missing_pages) != missing or list(self.unexpected_pages) != unexpected:
            raise ValueError("missing_pages and unexpected_pages must follow from expected_pages and extracted_pages")
        if self.complete != (declared and not missing):
            raise ValueError("a page-indexed surface is complete exactly when pages were declared and none is missing")
        return self


class Snapshot(BaseModel):
    """A snapshot record (``sources/src-<64hex>.json``), shape only; the store verifies digests."""

    model_config = _FROZEN
    schema_version: SchemaVersion
    source_id: SourceId
    content_hash: PrefixedDigest
    url: StrictStr
    title: StrictStr | None
    retrieved_at: Timestamp
    access: AccessField
    origin: OriginField
    paper: Paper | None
    asset: Asset | None
    text: StrictStr
    sections: Annotated[tuple[Section, ...] | None, BeforeValidator(list_as_tuple)] = None
    pages: Annotated[tuple[Page, ...] | None, BeforeValidator(list_as_tuple)] = None
    record_hash: PrefixedDigest | None = None
    merkle_root: PrefixedDigest | None = None
    """The Merkle root of ``text`` (CONTRACT section 16); absent on records written before it."""
    merkle_size: Annotated[StrictInt, Field(ge=0)] | None = None
    """The number of leaves under ``merkle_root``: a root proves a chunk's position only with it."""
    surface: Surface | None = None
    identity: Identity | None = None
    """Each paper id and the title with its basis (CONTRACT section 18); absent on earlier records."""
    supersedes: SourceId | None = None
    """The snapshot this one is a revision of (CONTRACT section 18); absent on a first acquisition."""

    @model_validator(mode="after")
    def _complete_full_text(self) -> Self:
        if self.surface is not None and self.surface.complete and self.access is Access.ABSTRACT:
            raise ValueError("an abstract's surface is never complete")
        if self.supersedes == self.source_id:
            raise ValueError("a snapshot cannot supersede itself")
        return self

    @model_validator(mode="after")
    def _identity_matches_paper(self) -> Self:
        if self.identity is None:
            return self
        ids = {k: e.value for k, e in self.identity.ids().items()}
        paper = self.paper.ids() if self.paper is not None else {}
        if ids != paper:
            raise ValueError("identity's ids must be exactly the paper's ids")
        title = self.identity.title
        if (title.value if title is not None else None) != self.title:
            raise ValueError("identity's title must be the record's title")
        return self

    def derived_ids(self) -> dict[str, str]:
        """The ids a work rests on: the derived ones, or every paper id of a record written
        before identities had a basis (its basis is not recorded, counted as before)."""
        if self.identity is not None:
            return self.identity.derived_ids()
        return self.paper.ids() if self.paper is not None else {}

    @property
    def sealed(self) -> bool:
        """Whether the metadata is sealed by ``record_hash`` (upstream v1 records may lack it)."""
        return self.record_hash is not None


class Receipt(BaseModel):
    """What one acquisition attempt retrieved (CONTRACT section 12), bound to the raw bytes' digest.

    ``redirects`` lists every URL that answered with a redirect, in order (empty when the first
    answer was final); ``status`` and ``redirects`` are null for a local PDF. ``raw_sha256`` and
    ``raw_bytes`` describe the bytes the extractor read (after any Content-Encoding was undone),
    kept under the run's ``raw/`` folder (a PDF's under the wiki's ``assets/papers/``); they are
    null for an attempt that received no body.
    """

    model_config = _FROZEN
    requested_url: StrictStr
    final_url: StrictStr | None
    redirects: Annotated[tuple[StrictStr, ...] | None, BeforeValidator(list_as_tuple)]
    status: StrictInt | None
    media_type: StrictStr | None
    raw_sha256: HexDigest | None
    raw_bytes: Annotated[StrictInt, Field(ge=0)] | None
    extractor: StrictStr | None


class Signature(BaseModel):
    """An Ed25519 signature over an event (CONTRACT section 12); see :func:`signed_payload`."""

    model_config = _FROZEN
    alg: StrictStr
    key_id: HexDigest
    run: StrictStr
    value: StrictStr


class Event(BaseModel):
    """One line of ``events.jsonl``.

    ``source_id`` and ``sha256`` are null only on a ``fetch_failed`` event, which is never fresh.
    ``record_hash``, ``receipt`` and ``sig`` are optional so upstream logs stay readable; they are
    left out of the line when absent (:meth:`wire`).
    """

    model_config = _FROZEN
    schema_version: SchemaVersion
    event_id: Annotated[StrictStr, Field(pattern=r"^ev-[0-9]{4,}$")]
    type: EventTypeField
    source_id: SourceId | None
    url: StrictStr
    at: Timestamp
    fresh: StrictBool
    sha256: HexDigest | None
    actor: StrictStr
    detail: Annotated[StrictStr, Field(max_length=300)] | None
    prev: PrefixedDigest | None = None
    record_hash: PrefixedDigest | None = None
    receipt: Receipt | None = None
    sig: Signature | None = None
    merkle_root: PrefixedDigest | None = None
    merkle_size: Annotated[StrictInt, Field(ge=0)] | None = None
    surface: Surface | None = None
    supersedes: SourceId | None = None
    """On an acquisition of a revision: the snapshot it supersedes (signed with the event)."""

    @model_validator(mode="after")
    def _failed_has_no_source(self) -> Self:
        failed = self.type is EventType.FETCH_FAILED
        if failed and (self.source_id is not None or self.fresh):
            raise ValueError("a fetch_failed event has source_id null and fresh false")
        if not failed and (self.source_id is None or self.sha256 is None):
            raise ValueError(f"a {self.type.value} event needs a source_id and a sha256")
        return self

    @property
    def number(self) -> int:
        """The counter in ``event_id``."""
        return int(self.event_id[3:])

    def wire(self) -> dict[str, Any]:
        """The JSON object written as the event's line: optional ext fields only when present."""
        data = self.model_dump(mode="json")
        for name in _OPTIONAL_EXT:
            if data[name] is None:
                del data[name]
        return data


_OPTIONAL_EXT = ("record_hash", "receipt", "sig", "surface", "merkle_root", "merkle_size", "supersedes")


class SignedLine(BaseModel):
    """A line of one of our chained logs other than the event log (assessments, warrants,
    adjudications, notices, agent runs): written with ``sig`` only when signed."""

    model_config = ConfigDict(defer_build=True)

    def wire(self) -> dict[str, Any]:
        """The JSON object written as the line (``sig`` only when signed)."""
        data = self.model_dump(mode="json")
        if data.get("sig") is None:
            data.pop("sig", None)
        return data


class Span(BaseModel):
    """What an agent may contribute: a claim label, a source id and offsets.

    ``access``, ``text`` and ``excerpt`` are optional assertions that are only ever compared with
    what the snapshot says. Unknown fields are ignored by the record readers, never here.
    """

    model_config = ConfigDict(frozen=True, extra="ignore", strict=True, defer_build=True)
    claim: StrictStr | None = None
    evidence_id: StrictStr | None = None
    source_id: StrictStr
    start: StrictInt
    end: StrictInt
    access: StrictStr | None = None
    text: StrictStr | None = None
    excerpt: StrictStr | None = None


class Gates(BaseModel):
    """Switches in ``config.json``."""

    model_config = ConfigDict(frozen=True, extra="allow", strict=True, defer_build=True)
    evidence_kernel: StrictBool = False


class RunConfig(BaseModel):
    """``config.json``. Upstream runs may omit ``run_slug`` and carry other fields, kept as is."""

    model_config = ConfigDict(frozen=True, extra="allow", strict=True, defer_build=True)
    schema_version: SchemaVersion
    run_slug: StrictStr | None = None
    created_at: Timestamp | None = None
    gates: Gates = Field(default_factory=Gates)

    def extras(self) -> dict[str, Any]:
        """Fields beyond the schema (e.g. ``question``), shown but never required."""
        return dict(self.model_extra or {})


def build_validators(models: Iterable[type[BaseModel]]) -> None:
    """Build the validators of ``models`` now (each model defers its own to first use).

    A command calls this before it forks worker processes that validate these models, so every
    worker inherits the built validators instead of building its own copy.
    """
    for model in models:
        if not model.__pydantic_complete__:
            model.model_rebuild()
