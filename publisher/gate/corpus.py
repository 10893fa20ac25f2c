"""``corpus.jsonl`` (CONTRACT section 1): the bibliographic records a run considered, read strictly.

An upstream run lists one record per line: an ``evidence_id``, the paper's ids, and optionally the
snapshots registered for it (``source_ids``). The assembler uses the corpus three ways, as the
upstream kit does: an agent record whose ``evidence_id`` the corpus does not list is a
``SCHEMA_ERROR``; a span may only cite a snapshot the corpus registers for its evidence id (when
it names any); and a report footnote in the upstream form is resolved to an evidence id through
its label (``[^pubmed-12345678]``) or the paper ids it states.

A corpus is an input that decides acceptance, so it is read fail-closed: a line that is not a
strict JSON object, a record without an ``evidence_id``, a malformed paper id or source id, or two
different records for one evidence id make the run unreadable (``SCHEMA_ERROR``, exit 2).
"""

from __future__ import annotations

import re
from typing import Any

from ..kernel.canonical import SOURCE_ID_RE, StrictJSONError, loads_strict
from ..kernel.errors import UsageError
from ..kernel.ids import LITERATURE_KINDS, IdError, canonical_id, split_evidence_id
from ..kernel.reasons import Reason

__all__ = ["CorpusRecord", "Corpus", "parse_corpus", "label_key"]

_NOT_ALNUM_RE = re.compile(r"[^a-z0-9]+")


def label_key(text: str) -> str:
    """A footnote label or identifier reduced to lowercase letters and digits (``pubmed-1`` -> ``pubmed1``)."""
    return _NOT_ALNUM_RE.sub("", text.lower())


class CorpusRecord:
    """One corpus line: the evidence id, the paper ids it states and the snapshots it registers.

    ``ids``: paper id kind (``pmid``, ``doi``, ``pmcid``) -> canonical value, for the ids the line
    states; ``source_ids``: the snapshots registered for this evidence id, empty when the record
    names none. This and :class:`Corpus` are plain slotted classes: a dataclass compiles its
    methods each time its module is imported, which every ``assemble`` and ``verify`` pays, and
    nothing compares these."""

    __slots__ = ("evidence_id", "ids", "line", "source_ids")

    def __init__(self, evidence_id: str, line: int, ids: dict[str, str], source_ids: tuple[str, ...]) -> None:
        self.evidence_id, self.line, self.ids, self.source_ids = evidence_id, line, ids, source_ids

    def label_keys(self) -> set[str]:
        """The footnote labels that name this record, as :func:`label_key` reduces them.

        The evidence id itself, each paper id bare, and the usual prefixed forms (``pubmed-N``,
        ``pmid-N``, ``pmc-N``, ``pmcid-PMCN``, ``doi-…``, ``fulltext-…``).
        """
        keys = {label_key(self.evidence_id)}
        pmid, doi, pmcid = self.ids.get("pmid"), self.ids.get("doi"), self.ids.get("pmcid")
        if pmid:
            keys |= {pmid, *(label_key(p + pmid) for p in ("pubmed", "pmid", "fulltext"))}
        if pmcid:
            digits = pmcid[3:]
            keys |= {label_key(pmcid), *(label_key(p + x) for p in ("pmc", "pmcid") for x in (pmcid, digits))}
        if doi:
            keys |= {label_key(doi), *(label_key(p + doi) for p in ("doi", "fulltext"))}
        keys.discard("")
        return keys


class Corpus:
    """The records of ``corpus.jsonl`` by evidence id (empty when the run has no corpus), and the
    :func:`label_key` of every label that names a record -> the evidence ids it names."""

    __slots__ = ("labels", "records")

    def __init__(
        self, records: dict[str, CorpusRecord] | None = None, labels: dict[str, list[str]] | None = None
    ) -> None:
        self.records: dict[str, CorpusRecord] = {} if records is None else records
        self.labels: dict[str, list[str]] = {} if labels is None else labels

    @classmethod
    def of(cls, records: dict[str, CorpusRecord]) -> Corpus:
        """A corpus of these records, with its label index."""
        labels: dict[str, list[str]] = {}
        for record in records.values():
            for key in sorted(record.label_keys()):
                labels.setdefault(key, []).append(record.evidence_id)
        return cls(records, labels)

    def __bool__(self) -> bool:
        return bool(self.records)

    def record(self, evidence_id: str | None) -> CorpusRecord | None:
        """The record of an evidence id, or None."""
        return self.records.get(evidence_id) if evidence_id is not None else None

    def resolve_label(self, label: str) -> tuple[str | None, str | None]:
        """The evidence id a footnote label names, or None and why (no record, or several)."""
        hits = self.labels.get(label_key(label), [])
        if len(hits) == 1:
            return hits[0], None
        if hits:
            return None, f"label [^{label}] names {len(hits)} corpus records ({', '.join(hits[:3])})"
        return None, f"label [^{label}] names no corpus.jsonl record"


def _id_value(raw: Any, kind: str, where: str) -> str | None:
    if raw is None or raw == "":
        return None
    if isinstance(raw, int) and not isinstance(raw, bool):
        raw = str(raw)
    if not isinstance(raw, str):
        raise UsageError(f"{where}: {kind} must be a string or null", reason=Reason.SCHEMA_ERROR)
    try:
        return canonical_id(kind, raw)
    except IdError as exc:
        raise UsageError(f"{where}: {exc}", reason=Reason.SCHEMA_ERROR) from exc


def _record(raw: Any, line: int, name: str) -> CorpusRecord:
    where = f"{name} line {line}"
    if not isinstance(raw, dict):
        raise UsageError(f"{where}: not a JSON object", reason=Reason.SCHEMA_ERROR)
    evidence_id = raw.get("evidence_id")
    if not isinstance(evidence_id, str) or not evidence_id.strip():
        raise UsageError(f"{where}: no evidence_id string", reason=Reason.SCHEMA_ERROR)
    ids = {kind: value for kind in LITERATURE_KINDS if (value := _id_value(raw.get(kind), kind, where))}
    split = split_evidence_id(evidence_id)
    if split is not None and split[0] not in ids:
        try:
            ids[split[0]] = canonical_id(*split)
        except IdError:
            pass  # an evidence id of a malformed id: its records meet NO_PAPER_ID at assembly
    sources = raw.get("source_ids")
    if sources is None:
        sources = []
    if not isinstance(sources, list) or not all(isinstance(s, str) and SOURCE_ID_RE.fullmatch(s) for s in sources):
        raise UsageError(f"{where}: source_ids must be a list of src-<64 hex> ids", reason=Reason.SCHEMA_ERROR)
    return CorpusRecord(evidence_id, line, ids, tuple(dict.fromkeys(sources)))


def parse_corpus(data: bytes | None, name: str = "corpus.jsonl") -> Corpus:
    """The corpus of a run from the bytes of its ``corpus.jsonl`` (None: the run has none).

    Raises :class:`~publisher.kernel.errors.UsageError` (``SCHEMA_ERROR``) naming the first bad line
    (also as ``context["line"]``).
    """
    if data is None:
        return Corpus()
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise UsageError(f"{name} is not UTF-8 (byte {exc.start})", reason=Reason.SCHEMA_ERROR) from exc
    records: dict[str, CorpusRecord] = {}
    raw_of: dict[str, Any] = {}
    for number, line in enumerate(text.split("\n"), start=1):
        if not line.strip():
            continue
        try:
            raw = loads_strict(line)
        except (StrictJSONError, ValueError) as exc:
            raise UsageError(
                f"{name} line {number}: not strict JSON ({exc})", reason=Reason.SCHEMA_ERROR, line=number
            ) from exc
        try:
            record = _record(raw, number, name)
        except UsageError as exc:
            exc.context.setdefault("line", number)  # the line at fault, as a fact beside the message
            raise
        first = records.get(record.evidence_id)
        if first is not None:
            if raw_of[record.evidence_id] != raw:
                raise UsageError(
                    f"{name} lines {first.line} and {number} describe {record.evidence_id} differently",
                    reason=Reason.SCHEMA_ERROR,
                    line=number,
                )
            continue
        records[record.evidence_id] = record
        raw_of[record.evidence_id] = raw
    return Corpus.of(records)
