"""Import of located citations from an agent API: a Messages API response becomes an extraction record.

A response's text blocks may carry ``citations``: ``char_location`` (``document_index``,
``start_char_index``, ``end_char_index``, ``cited_text``) and ``page_location`` (``document_index``,
``start_page_number``, ``end_page_number`` exclusive, ``cited_text``). The caller maps each
document index to a snapshot of the run (``--document N=SRC``); nothing is fetched and no network
is used. Each citation is then checked as the gate checks a span:

1. ``char_location``: the offsets are re-sliced from the snapshot (a range outside the text is
   ``SPAN_OUT_OF_RANGE``, one over 2,000 code points ``SPAN_TOO_LONG``) and the citation is kept
   only when ``cited_text`` equals the re-slice.
2. ``page_location``: the pages are resolved through the snapshot's page map (none:
   ``SCHEMA_ERROR``); the citation is kept only when ``cited_text`` occurs exactly once, verbatim,
   inside those pages; its span is that occurrence. The searches of one import together are
   bounded (:data:`PAGE_SEARCH_BUDGET`), checked before any runs.
3. A citation not kept is ``EXCERPT_MISMATCH`` (or the code above) and is reported with the quote
   locator's candidates (:func:`publisher.kernel.locate.locate`; for at most :data:`MAX_LOCATED`
   citations of one import, each snapshot normalised once); it is never accepted as is, and
   never re-anchored silently. A citation of an unmapped document is ``UNKNOWN_SOURCE``; other
   citation types (``content_block_location``, search results) are reported as not importable.

The kept citations become record-level spans of one extraction record (claim label: the text
block the citation supports; ``text``: the cited text, which the gate compares again), written
with exclusive creation under ``workspace/extractions/``. The record names one paper: the
``evidence_id`` is given, or derived from the mapped snapshots' paper ids when they agree.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, StrictInt, StrictStr, ValidationError

from ..kernel import _fs
from ..kernel.canonical import SOURCE_ID_RE, StrictJSONError, canonical_bytes, loads_strict, sha256_hex
from ..kernel.errors import UsageError
from ..kernel.findings import Finding, LocateOutcome
from ..kernel.locate import LOCATE_BUDGET, Budget, Candidate, search_quote
from ..kernel.models import Snapshot
from ..kernel.reasons import Reason
from ..kernel.spans import MAX_SPAN, check_range
from ..kernel.text import one_line
from ..runs import Run

__all__ = [
    "CitationOutcome",
    "ImportOutcome",
    "import_anthropic",
    "parse_documents",
    "MAX_LOCATED",
    "MAX_RESPONSE_BYTES",
    "PAGE_SEARCH_BUDGET",
]

MAX_RESPONSE_BYTES = 32 * 1024 * 1024
"""Largest response file read."""

MAX_LOCATED = 100
"""Most rejected citations one import locates candidates for (as the assembler bounds its own), all
of them together within :data:`~publisher.kernel.locate.LOCATE_BUDGET` work: a response of
thousands of bad citations, or of a few hostile ones, costs no more than a few."""

PAGE_SEARCH_BUDGET = 500_000_000
"""Most code points the page-range citations of one import may search for their quotes together
(each distinct citation once; a fraction of a second of ``str.find``): a response of many citations
over a long text's pages is refused before the search, not left to run for minutes."""

MAX_CLAIM = 2000
"""Longest claim label taken from a text block (longer is cut, with an ellipsis)."""

_NAME_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,119}")
_DOCUMENT_RE = re.compile(r"(\d{1,6})=(.*)", re.DOTALL)

_LENIENT = ConfigDict(frozen=True, extra="allow", defer_build=True)


class _Citation(BaseModel):
    model_config = _LENIENT
    type: StrictStr
    cited_text: StrictStr | None = None
    document_index: StrictInt | None = Field(default=None, ge=0)
    start_char_index: StrictInt | None = None
    end_char_index: StrictInt | None = None
    start_page_number: StrictInt | None = None
    end_page_number: StrictInt | None = None


class _Block(BaseModel):
    model_config = _LENIENT
    type: StrictStr
    text: StrictStr | None = None
    citations: tuple[_Citation, ...] | None = None


class _Message(BaseModel):
    model_config = _LENIENT
    id: StrictStr | None = None
    type: Literal["message"] | None = None
    model: StrictStr | None = None
    content: tuple[_Block, ...]


@dataclass(frozen=True)
class CitationOutcome:
    """What became of one citation: kept as a span, or rejected with a reason and candidates."""

    block: int
    index: int
    type: str
    document: int | None
    kept: bool
    source_id: str | None = None
    start: int | None = None
    end: int | None = None
    reason: Reason | None = None
    detail: str = ""
    candidates: tuple[Candidate, ...] = ()
    located: LocateOutcome | None = None
    """For a rejected citation whose snapshot was read: what the quote locator made of its text."""

    def to_dict(self) -> dict[str, Any]:
        """JSON form for the command's output."""
        return {
            "block": self.block,
            "citation": self.index,
            "type": self.type,
            "document": self.document,
            "kept": self.kept,
            "source_id": self.source_id,
            "start": self.start,
            "end": self.end,
            "reason_code": self.reason.value if self.reason else None,
            "detail": self.detail,
            "candidates": [c.as_json() for c in self.candidates],
            "located": self.located.value if self.located is not None else None,
        }


@dataclass
class ImportOutcome:
    """The import's result: every citation's outcome and the record written (if any)."""

    evidence_id: str | None
    record_path: Path | None
    written: bool
    citations: list[CitationOutcome] = field(default_factory=list)

    @property
    def kept(self) -> int:
        return sum(1 for c in self.citations if c.kept)

    @property
    def ok(self) -> bool:
        """Every citation was kept (and there was at least one)."""
        return bool(self.citations) and all(c.kept for c in self.citations)

    def summary(self, run: Run) -> dict[str, Any]:
        """JSON form for the command's output (the record path relative to the run)."""
        rel = self.record_path.relative_to(run.path).as_posix() if self.record_path else None
        return {
            "ok": self.ok,
            "evidence_id": self.evidence_id,
            "record": rel,
            "written": self.written,
            "kept": self.kept,
            "rejected": len(self.citations) - self.kept,
            "citations": [c.to_dict() for c in self.citations],
        }


def parse_documents(values: list[str]) -> dict[int, str]:
    """``N=SRC`` options as a map from document index to source id, checked before any file access."""
    out: dict[int, str] = {}
    for value in values:
        match = _DOCUMENT_RE.fullmatch(value)
        if match is None:
            raise UsageError(f"--document {value[:80]!r} is not N=SRC (a document index, '=', a source id)")
        index, source_id = int(match.group(1)), match.group(2)
        if not SOURCE_ID_RE.fullmatch(source_id):
            raise UsageError(f"--document {index}={source_id[:80]!r}: not a source id (src-<64 hex>)")
        if index in out:
            raise UsageError(f"--document {index} is given twice")
        out[index] = source_id
    if not out:
        raise UsageError("give at least one --document N=SRC")
    return out


def _read_response(path: Path) -> tuple[_Message, bytes]:
    try:  # bounded: a file over the limit (or growing past it) is refused, not read into memory
        data = _fs.read_regular(path, limit=MAX_RESPONSE_BYTES)
    except FileNotFoundError as exc:
        raise UsageError(f"response file {path} does not exist") from exc
    except _fs.FileTooLargeError as exc:
        raise UsageError(
            f"response file {path} is over {MAX_RESPONSE_BYTES} bytes", reason=Reason.SCHEMA_ERROR
        ) from exc
    except OSError as exc:
        raise UsageError(f"response file {path} cannot be read: {exc.strerror or exc}") from exc
    try:
        raw = loads_strict(data)
    except (StrictJSONError, ValueError) as exc:
        raise UsageError(
            f"response file {path} is not strict JSON: {one_line(exc, 160)}", reason=Reason.SCHEMA_ERROR
        ) from exc
    try:
        return _Message.model_validate(raw), data
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "(top)"
        raise UsageError(
            f"response file {path} is not a Messages API response: {where}: {first['msg']}", reason=Reason.SCHEMA_ERROR
        ) from exc


_ID_KINDS = ("pmid", "pmcid", "doi")
"""The paper ids a snapshot may state, in the order the evidence id prefers them."""


def _evidence_id(snapshots: dict[int, Snapshot]) -> str:
    """The one paper the mapped snapshots name (PMID, else PMCID, else DOI, from any of them).

    They agree when no id kind has two values among them and each shares an id with the others
    (directly or through another): a copy stating only the DOI is the paper whose other copy states
    its PMID and that DOI. Two values of one kind, or a group sharing no id with the rest, are two
    papers as far as the ids tell."""
    stated: dict[int, dict[str, str]] = {}
    for index, snap in snapshots.items():
        paper = snap.paper
        ids = {kind: value for kind in _ID_KINDS if paper is not None and (value := getattr(paper, kind))}
        if not ids:
            raise UsageError(
                f"document {index} ({snap.source_id}) has no paper ids: name the evidence with --evidence-id"
            )
        stated[index] = ids
    first = next(iter(stated))
    merged, left = dict(stated[first]), [i for i in stated if i != first]
    other: int | None = None
    while left and other is None:  # grow the paper by a document sharing an id with it
        linked = next((i for i in left if any(merged.get(k) == v for k, v in stated[i].items())), None)
        if linked is None:
            break
        if any(merged.get(k, v) != v for k, v in stated[linked].items()):
            other = linked  # shares one id, states another of the same kind otherwise: two papers
        else:
            merged.update(stated[linked])
            left.remove(linked)
    if left:
        other = left[0] if other is None else other
        named = "; ".join(
            f"document {i}: {', '.join(f'{k}:{v}' for k, v in stated[i].items())}" for i in (first, other)
        )
        raise UsageError(
            f"the documents are different papers ({named}): import one paper at a time",
            field="--document",
            source_id=snapshots[other].source_id,
        )
    kind = next(k for k in _ID_KINDS if k in merged)
    return f"{kind}:{merged[kind]}"


def _problem(snap: Snapshot, reason: Reason, detail: str) -> Finding:
    """A citation that does not hold against the snapshot it names."""
    return Finding(reason, f"sources/{snap.source_id}.json", detail, source_id=snap.source_id)


def _check_char(cit: _Citation, snap: Snapshot, claim: dict[str, Any]) -> Finding | None:
    """What is wrong with a character-range citation against its snapshot (None: nothing)."""
    start, end, quoted = cit.start_char_index, cit.end_char_index, cit.cited_text
    if start is None or end is None or quoted is None:
        return _problem(snap, Reason.SCHEMA_ERROR, "char_location needs start_char_index, end_char_index, cited_text")
    claim.update(start=start, end=end)
    reason = check_range(start, end, len(snap.text))
    where = f"{snap.source_id}#{start}-{end}"
    if reason is not None:
        return _problem(snap, reason, f"{where} on a text of {len(snap.text)} code points")
    if snap.text[start:end] != quoted:
        return _problem(snap, Reason.EXCERPT_MISMATCH, f"cited_text differs from the re-slice of {where}")
    return None


PageMap = dict[int, tuple[int, int] | None]
"""A snapshot's pages by number: ``(start, end)``, or None for a number the map gives twice."""


def _page_map(snap: Snapshot, maps: dict[str, PageMap]) -> PageMap:
    """The page map of ``snap`` by number, built once per snapshot of an import (a lookup per
    citation, not a scan of every page)."""
    found = maps.get(snap.source_id)
    if found is None:
        found = {}
        for p in snap.pages or ():
            found[p.page] = None if p.page in found else (p.start, p.end)
        maps[snap.source_id] = found
    return found


def _page_range(cit: _Citation, snap: Snapshot, maps: dict[str, PageMap]) -> tuple[int, int] | Finding:
    """The text range of a page-range citation's pages, or what is wrong with them."""
    first, last = cit.start_page_number, cit.end_page_number
    if first is None or last is None or cit.cited_text is None:
        return _problem(snap, Reason.SCHEMA_ERROR, "page_location needs start_page_number, end_page_number, cited_text")
    if not snap.pages:
        return _problem(snap, Reason.SCHEMA_ERROR, f"snapshot {snap.source_id} has no page map")
    by_number = _page_map(snap, maps)
    ranges = [by_number.get(n) for n in range(first, last)] if 0 < last - first <= len(by_number) else []
    if not ranges or None in ranges:
        return _problem(
            snap,
            Reason.SPAN_OUT_OF_RANGE,
            f"pages {first} to {last} (exclusive) are not all in the page map of {snap.source_id}",
        )
    return min(r[0] for r in ranges if r), max(r[1] for r in ranges if r)


def _check_page(cit: _Citation, snap: Snapshot, claim: dict[str, Any], maps: dict[str, PageMap]) -> Finding | None:
    """What is wrong with a page-range citation against its snapshot (None: nothing)."""
    resolved = _page_range(cit, snap, maps)
    if isinstance(resolved, Finding):
        return resolved
    lo, hi = resolved
    quoted = cit.cited_text or ""
    pages = f"pages {cit.start_page_number}-{(cit.end_page_number or 0) - 1}"  # both set: resolved
    hits: list[int] = []
    at = snap.text.find(quoted, lo, hi) if quoted else -1
    while at != -1 and len(hits) < 2:
        hits.append(at)
        at = snap.text.find(quoted, at + 1, hi)
    if len(hits) == 1:
        start, end = hits[0], hits[0] + len(quoted)
        claim.update(start=start, end=end)
        reason = check_range(start, end, len(snap.text))
        if reason is not None:
            return _problem(snap, reason, f"cited_text on {pages} is {end - start} code points")
        return None
    what = "occurs more than once" if hits else "does not occur verbatim"
    return _problem(snap, Reason.EXCERPT_MISMATCH, f"cited_text {what} on {pages} of {snap.source_id}")


def _page_search_cost(message: _Message, snapshots: dict[int, Snapshot], maps: dict[str, PageMap]) -> int:
    """Code points the import's page-range citations would search, each distinct one once."""
    seen: set[tuple[int, int, int, str]] = set()
    total = 0
    for block in message.content:
        for cit in block.citations or () if block.type == "text" else ():
            snap = snapshots.get(cit.document_index) if cit.document_index is not None else None
            if cit.type != "page_location" or snap is None or not cit.cited_text:
                continue
            resolved = _page_range(cit, snap, maps)
            key = (cit.document_index or 0, cit.start_page_number or 0, cit.end_page_number or 0, cit.cited_text)
            if isinstance(resolved, tuple) and key not in seen:
                seen.add(key)
                total += resolved[1] - resolved[0]
    return total


@dataclass
class _Locator:
    """The quote locator for rejected citations: a snapshot normalised only for a quote not found
    verbatim in it, once per process (:func:`~publisher.kernel.locate.normal_form`, bounded), at
    most :data:`MAX_LOCATED` quotes located within one work budget, none longer than a span's
    quote may be. A search that stops at the budget names no candidate (the citation stays
    rejected)."""

    count: int = 0
    budget: Budget = field(default_factory=lambda: Budget(LOCATE_BUDGET))

    def __call__(self, snap: Snapshot, quoted: str | None) -> tuple[tuple[Candidate, ...], LocateOutcome]:
        if not quoted or not quoted.strip() or len(quoted) > 2 * MAX_SPAN:
            return (), LocateOutcome.NOT_SEARCHED
        if self.count >= MAX_LOCATED:
            return (), LocateOutcome.OVER_LIMIT
        self.count += 1
        found, stopped = search_quote(snap.text, quoted, budget=self.budget)
        if stopped:
            return (), LocateOutcome.BUDGET
        candidates = tuple(found)
        return candidates, (LocateOutcome.LOCATED if candidates else LocateOutcome.NOWHERE)

    @staticmethod
    def words(outcome: LocateOutcome, candidates: int) -> str:
        """The detail's wording of an outcome (``located`` in the JSON holds the fact)."""
        match outcome:
            case LocateOutcome.LOCATED:
                return f"{candidates} located candidate(s)"
            case LocateOutcome.OVER_LIMIT:
                return f"not located (over {MAX_LOCATED} rejected citations)"
            case LocateOutcome.BUDGET:
                return f"not located (the search stopped at its budget of {LOCATE_BUDGET:,} units of work)"
            case _:
                return "not located"


def _outcome(
    block: int,
    index: int,
    cit: _Citation,
    snapshots: dict[int, Snapshot],
    locator: _Locator,
    maps: dict[str, PageMap],
) -> tuple[CitationOutcome, dict[str, Any]]:
    doc = cit.document_index
    claim: dict[str, Any] = {}

    def refused(reason: Reason, detail: str) -> CitationOutcome:
        """A citation rejected before any snapshot is read: no offsets, no candidates."""
        return CitationOutcome(block, index, cit.type, doc, False, reason=reason, detail=detail)

    if cit.type not in ("char_location", "page_location"):
        detail = f"citation type {cit.type[:60]!r} is not importable (char_location, page_location)"
        return refused(Reason.SCHEMA_ERROR, detail), claim
    snap = snapshots.get(doc) if doc is not None else None
    if snap is None:
        detail = f"document {doc} is not mapped to a snapshot (--document {doc}=SRC)"
        return refused(Reason.UNKNOWN_SOURCE, detail), claim
    if cit.type == "char_location":
        problem = _check_char(cit, snap, claim)
    else:
        problem = _check_page(cit, snap, claim, maps)
    start, end = claim.get("start"), claim.get("end")
    if problem is None:
        return CitationOutcome(block, index, cit.type, doc, True, snap.source_id, start, end), claim
    candidates, located = locator(snap, cit.cited_text)
    detail = f"{problem.detail}; {locator.words(located, len(candidates))}"
    return (
        CitationOutcome(
            block,
            index,
            cit.type,
            doc,
            False,
            snap.source_id,
            start,
            end,
            problem.reason,
            one_line(detail),
            candidates,
            located,
        ),
        claim,
    )


def import_anthropic(
    run: Run,
    response: Path,
    documents: dict[int, str],
    *,
    evidence_id: str | None = None,
    name: str | None = None,
) -> ImportOutcome:
    """Check every citation of a Messages API response and write the kept ones as an extraction record.

    See the module docstring. Raises :class:`UsageError` for a bad argument or response file and
    :class:`~publisher.kernel.errors.IntegrityError` for a snapshot that does not verify, before
    anything is written. Writes nothing when no citation is kept; never replaces an existing record
    (the same record again is left as it is).
    """
    if name is not None and not _NAME_RE.fullmatch(name):
        raise UsageError(f"--name {name[:80]!r} is not letters, digits, '.', '_' or '-' (at most 120)")
    if evidence_id is not None and (not evidence_id.strip() or len(evidence_id) > 200 or not evidence_id.isprintable()):
        # isprintable: no line break of any kind (\r, U+2028 too), tab or terminal control character
        raise UsageError("--evidence-id must be one line of at most 200 printable characters")
    message, data = _read_response(Path(response))
    snapshots = {index: run.store.read(sid) for index, sid in sorted(documents.items())}
    evidence = evidence_id if evidence_id is not None else _evidence_id(snapshots)
    outcome = ImportOutcome(evidence, None, False)
    spans: list[dict[str, Any]] = []
    seen: set[tuple[Any, ...]] = set()
    locator = _Locator()
    maps: dict[str, PageMap] = {}
    cost = _page_search_cost(message, snapshots, maps)
    if cost > PAGE_SEARCH_BUDGET:
        raise UsageError(
            f"response file {response}: its page_location citations would search {cost:,} code points "
            f"(over {PAGE_SEARCH_BUDGET:,}): import fewer citations or narrower page ranges at a time",
            reason=Reason.SCHEMA_ERROR,
        )
    for b, block in enumerate(message.content):
        if block.type != "text" or not block.citations:
            continue
        label = one_line(block.text or "", MAX_CLAIM) or None
        for i, cit in enumerate(block.citations):
            result, claim = _outcome(b, i, cit, snapshots, locator, maps)
            outcome.citations.append(result)
            key = (label, result.source_id, result.start, result.end)
            if result.kept and key not in seen:
                seen.add(key)
                span = {"claim": label, "evidence_id": evidence, "source_id": result.source_id, **claim}
                spans.append(span | {"text": cit.cited_text})
    if not spans:
        return outcome
    message_id = message.id if message.id and _NAME_RE.fullmatch(message.id) else None
    stem = name or f"anthropic-{message_id or sha256_hex(data)[:16]}"
    kept = len(outcome.citations) - sum(1 for c in outcome.citations if not c.kept)
    record = {
        "schema_version": 1,
        "evidence_id": evidence,
        "pmid": next((s.paper.pmid for s in snapshots.values() if s.paper and s.paper.pmid), None),
        "extractor_notes": one_line(
            f"imported from a Messages API response {message_id or ''} ({message.model or 'model not stated'}): "
            f"{kept} of {len(outcome.citations)} citations kept, each re-sliced from its snapshot "
            f"(response sha256:{sha256_hex(data)})"
        ),
        "spans": spans,
    }
    path = run.extractions_dir / f"{stem}.json"
    body = canonical_bytes(record) + b"\n"
    outcome.record_path = path
    _fs.own_folder(run.extractions_dir, root=run.path)
    if _fs.create_exclusive(path, body, mode=0o644):
        outcome.written = True
    else:
        try:
            same = _fs.read_regular(path, follow_symlinks=False) == body
        except OSError:
            same = False
        if not same:
            raise UsageError(f"{path.name} already exists in workspace/extractions with other content: choose --name")
    return outcome
