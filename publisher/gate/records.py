"""Agent records (CONTRACT sections 4-6), read leniently.

Extractions and appraisals are written by agents. They are read leniently: a missing optional
field reads as null, a field nobody defined is ignored (and listed as a warning), and only a
wrong type, a missing ``evidence_id`` or a span without ``source_id``/``start``/``end`` is a
``SCHEMA_ERROR``. Every schema problem of a record is reported, each with the field it concerns
(``outcomes[1].effect``), and the well-formed spans of a record that has schema problems are still
handed on so their own checks run too: one finding never hides another.

Of a span only the claim label, the source id and the offsets are ever used; everything else an
agent writes (quote text, access, ``quotes[]``) is at most compared with what the snapshot says.
Every ``http(s)`` URL written anywhere in a record is kept with its field (:attr:`AgentRecord.urls`):
a URL cited in a record must have been retrieved in the run.

A record that :func:`~.recordshape.record_shape` proves the schema accepts (the usual case) is
read without the validation library, its spans as views; any other is validated by the models of
:mod:`.recordschema`, which word each problem. Both give the same record.
"""

from __future__ import annotations

import errno
import os
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from ..kernel import _fs
from ..kernel.canonical import StrictJSONError, loads_strict, prefixed, sha256_hex
from ..kernel.findings import Finding
from ..kernel.reasons import Reason
from ..kernel.text import one_line
from ..parallel import fewer_collections
from .recordshape import (
    APPRAISAL_DATA,
    APPRAISAL_FIELDS,
    DOMAIN_DATA,
    DOMAIN_FIELDS,
    EXTRACTION_DATA,
    EXTRACTION_FIELDS,
    NARRATIVE_FIELDS,
    NUMERIC_OUTCOME_FIELDS,
    OUTCOME_DATA,
    OUTCOME_FIELDS,
    SPAN_FIELDS,
    SpanView,
    record_data,
    record_shape,
    span_view,
)
from .urls import urls_in

if TYPE_CHECKING:
    from pydantic import ValidationError

    from ..kernel.models import Span
    from .recordschema import Appraisal, Domain, Extraction, Outcome

__all__ = [
    "SpanEntry",
    "LegacyQuote",
    "AgentRecord",
    "read_record",
    "read_records",
    "field_path",
]


class SpanEntry:
    """A well-formed span of a record and the field path it sits at (``outcomes[0].spans[1]``).

    The record's parts are plain slotted classes: a dataclass compiles its methods each time its
    module is imported, which every ``assemble`` and ``verify`` pays, and nothing compares these."""

    __slots__ = ("field", "span")
    span: Span | SpanView
    """The model's span, or its :class:`~.recordshape.SpanView` when the record was read without
    the model; both have the same attributes and values."""

    def __init__(self, field: str, span: Span | SpanView) -> None:
        self.field, self.span = field, span


class LegacyQuote:
    """A quote an older agent typed with offsets; compared with the re-slice, never used."""

    __slots__ = ("end", "field", "source_id", "start", "text")

    def __init__(self, field: str, source_id: str, start: int, end: int, text: str) -> None:
        self.field, self.source_id, self.start, self.end, self.text = field, source_id, start, end, text


class AgentRecord:
    """One extraction or appraisal file, read leniently.

    ``findings``: problems of the record itself (SCHEMA_ERROR, NO_SPANS), each naming its field;
    ``urls``: ``(field path, url)`` of every URL written in any string of the record."""

    __slots__ = ("data", "digest", "evidence_id", "findings", "kind", "quotes", "record", "spans", "urls", "warnings")

    def __init__(
        self, kind: Literal["extraction", "appraisal"], record: str, digest: str, evidence_id: str | None
    ) -> None:
        self.kind, self.record, self.digest, self.evidence_id = kind, record, digest, evidence_id
        self.spans: list[SpanEntry] = []
        self.quotes: list[LegacyQuote] = []
        self.findings: list[Finding] = []
        self.warnings: list[tuple[str, str]] = []
        self.data: dict[str, Any] = {}
        self.urls: list[tuple[str, str]] = []

    @property
    def artifact_id(self) -> str:
        """``extraction:<evidence_id>``; a record without a usable id is named by its file."""
        return f"{self.kind}:{self.evidence_id if self.evidence_id is not None else self.record}"

    def find(self, field_name: str, reason: Reason, detail: str) -> None:
        """A problem of the record itself at ``field_name``."""
        self.findings.append(Finding(reason, self.record, detail, field=field_name))


def field_path(loc: Sequence[str | int]) -> str:
    """``("outcomes", 1, "spans", 0)`` -> ``outcomes[1].spans[0]``."""
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += f".{part}" if out else str(part)
    return out or "record"


def _schema_findings(exc: ValidationError, name: str) -> list[Finding]:
    found: list[Finding] = []
    seen: set[str] = set()
    for error in exc.errors():
        where = field_path([p for p in error["loc"] if isinstance(p, int | str)])
        if where in seen:
            continue
        seen.add(where)
        found.append(Finding(Reason.SCHEMA_ERROR, name, one_line(f"{where}: {error['msg']}"), field=where))
    return found


def _spans_at(
    raw: Any, prefix: str, record: AgentRecord, valid: Sequence[Span] | None = None, shaped: bool = False
) -> list[SpanEntry]:
    """The well-formed spans of a raw ``spans`` list; malformed ones are schema findings already.

    ``shaped``: the whole record passed :func:`~.recordshape.record_shape`, so every span is
    well formed and read as a view. ``valid``: the same list as the record's validated model
    holds it (the whole record passed its schema), so no span is validated twice; else each span
    is validated on its own.
    """
    if not isinstance(raw, list):
        return []
    if valid is not None and len(valid) != len(raw):
        valid = None
    out: list[SpanEntry] = []
    for index, item in enumerate(raw):
        where = f"{prefix}[{index}]"
        span: Span | SpanView
        if shaped:
            span = span_view(item)
        elif valid is not None:
            span = valid[index]
        else:
            from pydantic import ValidationError

            from ..kernel.models import Span

            try:
                span = Span.model_validate(item)
            except ValidationError:
                continue
        extras = item.keys() - _SPAN_KEYS
        for extra in sorted(extras) if extras else ():
            record.warnings.append((f"{where}.{extra}", f"unknown span field {extra!r} ignored"))
        out.append(SpanEntry(where, span))
    return out


_SPAN_KEYS = frozenset(SPAN_FIELDS)
_FIELDS: dict[str, frozenset[str]] = {
    "extraction": frozenset(EXTRACTION_FIELDS),
    "appraisal": frozenset(APPRAISAL_FIELDS),
    "outcomes": frozenset(OUTCOME_FIELDS),
    "domains": frozenset(DOMAIN_FIELDS),
}
"""The schema fields of a record and of its nested entries (an extra is a key outside them),
listed by hand in :mod:`.recordshape` and held to the models' own by the tests."""


def _extras(raw: Any, fields: frozenset[str], prefix: str, record: AgentRecord) -> None:
    if not isinstance(raw, dict):
        return
    extras = raw.keys() - fields
    for extra in sorted(extras) if extras else ():
        where = f"{prefix}.{extra}" if prefix else extra
        record.warnings.append((where, f"unknown field {extra!r} ignored"))


_DATA_INCLUDE: dict[str, dict[str, Any]] = {
    "extraction": {**dict.fromkeys(EXTRACTION_DATA, True), "outcomes": {"__all__": set(OUTCOME_DATA)}},
    "appraisal": {**dict.fromkeys(APPRAISAL_DATA, True), "domains": {"__all__": set(DOMAIN_DATA)}},
}
"""What a record's ``data`` keeps of its validated model: the schema fields (no extras), without
the spans, the agent's quotes and, at the top, the nested list, which comes last."""


def _data(model: Extraction | Appraisal, kind: Literal["extraction", "appraisal"]) -> dict[str, Any]:
    """The schema fields of a validated record as JSON values, without extras or spans: the top
    fields in schema order, then ``outcomes`` (``domains``) with each entry's fields likewise.

    One serialization of the model, restricted to those fields, rather than a whole dump per
    object filtered afterwards."""
    nested = "outcomes" if kind == "extraction" else "domains"
    dumped = model.model_dump(mode="json", include=_DATA_INCLUDE[kind])
    items = dumped.pop(nested, None)
    dumped[nested] = items if items is not None else []
    return dumped


def _urls(node: Any, path: list[str | int], out: list[tuple[str, str]]) -> None:
    """Every URL in every string of a JSON value, with the field path of its string.

    ``path`` is the caller's stack, extended and restored in place. A URL needs ``://``, so a
    string without it is passed over without running the URL pattern or naming its field.
    """
    if isinstance(node, str):
        if "://" in node:
            found = urls_in(node)
            if found:
                where = field_path(path)
                out.extend((where, url) for url in found)
        return
    if isinstance(node, dict):
        items: Iterable[tuple[str | int, Any]] = ((str(key), value) for key, value in node.items())
    elif isinstance(node, list):
        items = enumerate(node)
    else:
        return
    for step, value in items:
        if isinstance(value, str):
            if "://" not in value:
                continue
        elif not isinstance(value, (dict, list)):
            continue  # a number, a boolean or null holds no URL
        path.append(step)
        _urls(value, path, out)
        path.pop()


def _legacy_quotes(raw: Any, record: AgentRecord) -> None:
    """Keep quotes that carry text and offsets for comparison; the rest is discarded."""
    if raw is None:
        return
    if not isinstance(raw, list):
        record.find("quotes", Reason.SCHEMA_ERROR, "quotes: must be a list")
        return
    discarded = 0
    for index, item in enumerate(raw):
        if isinstance(item, dict):
            text = next((item[k] for k in ("text", "excerpt", "quote") if isinstance(item.get(k), str)), None)
            sid, start, end = item.get("source_id"), item.get("start"), item.get("end")
            if (
                text is not None
                and isinstance(sid, str)
                and isinstance(start, int)
                and isinstance(end, int)
                and not isinstance(start, bool)
                and not isinstance(end, bool)
            ):
                record.quotes.append(LegacyQuote(f"quotes[{index}]", sid, start, end, text))
                continue
        discarded += 1
    if discarded:
        record.warnings.append(("quotes", f"{discarded} agent-written quote(s) without offsets discarded"))


def _owed_spans(
    kind: Literal["extraction", "appraisal"],
    top: Mapping[str, Any],
    entries: Iterable[Mapping[str, Any]],
    record: AgentRecord,
) -> None:
    """``NO_SPANS`` wherever the record owes spans and carries none (sections 5a and 6).

    ``top`` and ``entries`` (its outcomes or domains) are the fields of a record its schema
    accepts: the parsed JSON, or a validated model's ``__dict__`` (where a list is a tuple)."""
    if kind == "extraction":
        stated = [name for name in NARRATIVE_FIELDS if (value := top.get(name)) is not None and value not in _EMPTY]
        if stated and not top.get("spans"):
            record.find("spans", Reason.NO_SPANS, f"spans: empty while {', '.join(stated)} stated")
        for index, outcome in enumerate(entries):
            numbers = [name for name in NUMERIC_OUTCOME_FIELDS if outcome.get(name) is not None]
            if numbers and not outcome.get("spans"):
                record.find(
                    f"outcomes[{index}].spans",
                    Reason.NO_SPANS,
                    f"outcomes[{index}].spans: empty while {', '.join(numbers)} stated",
                )
    else:
        for index, domain in enumerate(entries):
            judgement = domain.get("judgement")
            if judgement is not None and judgement.strip().lower() != "unclear" and not domain.get("spans"):
                record.find(
                    f"domains[{index}].spans",
                    Reason.NO_SPANS,
                    one_line(f"domains[{index}].spans: empty for judgement {judgement!r}"),
                )
    if not record.spans and not any(f.reason is Reason.NO_SPANS for f in record.findings):
        record.find("spans", Reason.NO_SPANS, "the record carries no span at all")


_EMPTY: tuple[object, ...] = ((), [])
"""An empty list (``n_arms``), as parsed or as the model holds it: stated as nothing."""


def read_record(kind: Literal["extraction", "appraisal"], name: str, data: bytes) -> AgentRecord:
    """Read one agent record from its bytes; every problem becomes a finding, never an exception.

    A record :func:`~.recordshape.record_shape` takes is read without the validation library
    (its spans as views); any other is validated by its model, which words each problem."""
    record = AgentRecord(kind=kind, record=name, digest=prefixed(sha256_hex(data)), evidence_id=None)
    try:
        raw = loads_strict(data)
    except (StrictJSONError, ValueError) as exc:
        record.find("record", Reason.SCHEMA_ERROR, one_line(f"not strict JSON: {exc}"))
        return record
    if not isinstance(raw, dict):
        record.find("record", Reason.SCHEMA_ERROR, "not a JSON object")
        return record
    if isinstance(raw.get("evidence_id"), str) and raw["evidence_id"].strip():
        record.evidence_id = raw["evidence_id"]
    elif "evidence_id" in raw and isinstance(raw["evidence_id"], str):
        record.find("evidence_id", Reason.SCHEMA_ERROR, "evidence_id: empty")
    nested = "outcomes" if kind == "extraction" else "domains"
    if record_shape(kind, raw):
        _parts(kind, raw, data, record, None, shaped=True)
        _owed_spans(kind, raw, raw.get(nested) or (), record)
        record.data = record_data(kind, raw)
        return record
    from pydantic import ValidationError

    from .recordschema import Appraisal, Extraction

    model_type: type[Extraction] | type[Appraisal] = Extraction if kind == "extraction" else Appraisal
    model: Extraction | Appraisal | None
    try:  # validated first (no side effects); its findings are reported below, in their order
        model, invalid = model_type.model_validate(raw), []
    except ValidationError as exc:
        model, invalid = None, _schema_findings(exc, record.record)
    _parts(kind, raw, data, record, model, shaped=False)
    if model is None:
        record.findings.extend(invalid)
        return record
    held = model.outcomes if isinstance(model, Extraction) else model.domains
    _owed_spans(kind, model.__dict__, [entry.__dict__ for entry in held or ()], record)
    record.data = _data(model, kind)
    return record


def _parts(
    kind: Literal["extraction", "appraisal"],
    raw: dict[str, Any],
    data: bytes,
    record: AgentRecord,
    model: Extraction | Appraisal | None,
    *,
    shaped: bool,
) -> None:
    """A record's URLs, unknown fields, spans and legacy quotes, in the order they are reported.

    ``shaped``: :func:`~.recordshape.record_shape` took the record (its spans are read as views);
    else ``model`` is the validated model (its spans are taken from it), or None when the
    record failed its schema (each span is then validated on its own)."""
    if b"://" in data or b"\\" in data:  # no string can hold a URL otherwise (an escape could spell one)
        _urls(raw, [], record.urls)
    _extras(raw, _FIELDS[kind], "", record)
    if kind == "extraction":
        valid = model.__dict__["spans"] if model is not None else None
        record.spans.extend(_spans_at(raw.get("spans"), "spans", record, valid, shaped))
    nested = "outcomes" if kind == "extraction" else "domains"
    items = raw.get(nested)
    if isinstance(items, list):
        held: Sequence[Outcome | Domain] | None = model.__dict__[nested] if model is not None else None
        fields = _FIELDS[nested]
        for index, item in enumerate(items):
            _extras(item, fields, f"{nested}[{index}]", record)
            if isinstance(item, dict):
                inner = held[index].spans if held is not None and index < len(held) else None
                record.spans.extend(_spans_at(item.get("spans"), f"{nested}[{index}].spans", record, inner, shaped))
    if kind == "extraction":
        _legacy_quotes(raw.get("quotes"), record)


def read_records(extractions_dir: Path, appraisals_dir: Path) -> list[AgentRecord]:
    """Every ``*.json`` record of both folders: extractions first, each folder in name order."""
    with fewer_collections():  # a burst of long-lived objects, in a worker process too
        return _read_records(extractions_dir, appraisals_dir)


_NO_FOLDER = frozenset({errno.ENOENT, errno.ENOTDIR, errno.EBADF, errno.ELOOP})
"""Why a records folder is not there (what ``Path.is_dir`` answers False for): no records."""


def _read_records(extractions_dir: Path, appraisals_dir: Path) -> list[AgentRecord]:
    out: list[AgentRecord] = []
    for kind, folder in (("extraction", extractions_dir), ("appraisal", appraisals_dir)):
        where, prefix = os.fspath(folder), f"workspace/{folder.name}/"
        try:
            names = os.listdir(where)
        except OSError as exc:
            if exc.errno in _NO_FOLDER:
                continue
            raise
        # Names, not paths: a record is named ``x.json`` (what ``Path.suffix`` calls ``.json``
        # for any name that does not start with a dot), and hidden names are passed over.
        for name in sorted(names):
            if not name.endswith(".json") or name.startswith("."):
                continue
            relative = prefix + name
            try:
                data = _fs.read_regular(os.path.join(where, name), follow_symlinks=False)
            except OSError as exc:
                out.append(_unreadable(kind, relative, exc))  # type: ignore[arg-type]
                continue
            out.append(read_record(kind, relative, data))  # type: ignore[arg-type]
    return out


def _unreadable(kind: Literal["extraction", "appraisal"], name: str, exc: OSError) -> AgentRecord:
    """A record name that is not a readable regular file (a link, folder or FIFO): SCHEMA_ERROR.

    A symbolic link could pull a record in from outside the run, and a FIFO would block the
    reader, so neither is followed; the name is reported instead of being skipped in silence.
    """
    if isinstance(exc, _fs.NotRegularFileError):
        why = f"is {exc.what}, not a regular file"
    else:
        why = f"cannot be read ({exc.strerror or exc})"
    record = AgentRecord(kind=kind, record=name, digest=prefixed(sha256_hex(why.encode())), evidence_id=None)
    record.find("record", Reason.SCHEMA_ERROR, one_line(f"{name} {why}"))
    return record
