"""The agents' tools, as plain functions over one wiki (and optionally one run): read, find, locate, check.

Each tool validates its arguments before any file is touched (a source id is ``src-`` and 64
lowercase hex, offsets are whole numbers within bounds, texts are bounded), reads snapshots only
through the verifying store, and writes nothing: no snapshot, no event (not even a ``read``), no
record, no result. A problem is raised as :class:`ToolProblem`, one line with its reason code,
which the server hands to the agent as a tool error.

:data:`TOOLS` is the allow-list the server registers, and the one place a tool is added.
"""

from __future__ import annotations

import glob
import os
from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Annotated, Any, TypeVar

from pydantic import Field

from ..acquire.reading import read_window, snapshot_summary
from ..acquire.select import MAX_QUOTE, locate_in, located_json, select_spans
from ..kernel.canonical import SOURCE_ID_RE
from ..kernel.errors import PublisherError
from ..kernel.ids import paper_problem
from ..kernel.locate import LOCATE_BUDGET, nearest, search_quote
from ..kernel.models import Snapshot
from ..kernel.reasons import Reason
from ..kernel.spans import MAX_SPAN, check_range, locator
from ..kernel.text import one_line
from ..kernel.trust import KeyRing, Role, Signer
from ..runs import RUN_LAYOUTS, Run
from ..wiki.policy import Policy

__all__ = ["TOOLS", "ToolSpec", "ToolProblem", "Workspace", "MAX_OFFSET", "MAX_CONTEXT", "MAX_LISTED"]

MAX_OFFSET = 1_000_000_000
"""Largest offset a tool accepts; anything larger is refused before any file is read."""

MAX_CONTEXT = 1000
"""Most code points of context a ``find_spans`` window carries each side."""

MAX_LISTED = 1000
"""Most sources ``list_sources`` returns at once."""

Offset = Annotated[int, Field(ge=0, le=MAX_OFFSET, strict=True)]
SourceId = Annotated[str, Field(min_length=1, max_length=80, strict=True)]
Phrase = Annotated[str, Field(min_length=1, max_length=MAX_SPAN, strict=True)]
Quote = Annotated[str, Field(min_length=1, max_length=MAX_QUOTE, strict=True)]
Flag = Annotated[bool, Field(strict=True)]
"""A yes/no argument: JSON true or false only (not 1, "yes" or "true")."""


class ToolProblem(Exception):
    """A tool's refusal: one line for the agent, with the reason code where one applies."""

    def __init__(self, message: str, reason: Reason | None = None, *, field: str | None = None) -> None:
        super().__init__(f"{reason.value}: {message}" if reason else message)
        self.reason = reason
        self.field = field
        """The argument at fault, where the refusal is about one (``source_id`` ...)."""


@dataclass(frozen=True)
class Workspace:
    """What the tools may read: one wiki's runs, or the one run given."""

    wiki: Path
    run_dir: Path | None = None
    signer: Signer | None = None
    """The key the person running the server gave it (``publisher mcp --key``); on a wiki that
    trusts keys the server writes an assessment only with it, and only proposes without it."""

    def runs(self) -> list[Run]:
        """The runs in scope: the given run, else every run folder of the wiki's layouts."""
        if self.run_dir is not None:
            return [Run(self.run_dir)]
        found: list[Run] = []
        seen: set[Path] = set()
        for pattern in RUN_LAYOUTS:
            for name in sorted(glob.glob(os.path.join(glob.escape(str(self.wiki)), pattern))):
                path = Path(name)
                if path.is_dir() and (path / "config.json").is_file() and path.resolve() not in seen:
                    seen.add(path.resolve())
                    found.append(Run(path))
        return found

    def run_of(self, source_id: str) -> Run:
        """The run holding ``source_id`` (the id is checked before any file system access)."""
        checked = _source_id(source_id)
        for run in self.runs():
            if os.path.lexists(run.sources_dir / f"{checked}.json"):
                return run
        raise ToolProblem(f"no snapshot {checked} in this workspace", Reason.UNKNOWN_SOURCE)

    @cached_property
    def policy(self) -> Policy:
        """The wiki's policy, from the configuration MkDocs resolves (``INHERIT``, ``!ENV``), as the
        build reads it; once per server."""
        from ..site.lifecycle.policy import resolve_policy

        policy: Policy = _guard(lambda: resolve_policy(self.wiki))
        return policy

    @property
    def trusted_keys(self) -> KeyRing:
        """The wiki's trusted keys (of :attr:`policy`)."""
        return self.policy.trusted_keys

    def snapshot(self, source_id: str) -> tuple[Run, Snapshot]:
        """The verified snapshot and its run."""
        run = self.run_of(source_id)
        return run, _guard(lambda: run.store.read(source_id))


def _source_id(value: object) -> str:
    if not isinstance(value, str) or not SOURCE_ID_RE.fullmatch(value):
        shown = repr(value[:80]) if isinstance(value, str) else type(value).__name__
        raise ToolProblem(
            f"{shown} is not a source id (src- and 64 lowercase hex)", Reason.UNKNOWN_SOURCE, field="source_id"
        )
    return value


_T = TypeVar("_T")


def _guard(action: Callable[[], _T]) -> _T:
    """Run a library call; its refusal becomes a :class:`ToolProblem` (one line, reason code)."""
    try:
        return action()
    except PublisherError as exc:
        raise ToolProblem(one_line(exc.message), exc.reason) from exc
    except OSError as exc:
        raise ToolProblem(f"cannot read: {exc.strerror or type(exc).__name__}") from exc


def list_sources(ws: Workspace) -> dict[str, Any]:
    """Every snapshot in the workspace, verified as it is read, as ``publisher source`` summarises
    it (:func:`~publisher.acquire.reading.snapshot_summary`) with its run; a snapshot that does not
    verify is listed with its reason code instead."""
    sources: list[dict[str, Any]] = []
    problems: list[dict[str, Any]] = []
    for run in ws.runs():
        folder = run.sources_dir
        names = sorted(os.listdir(folder)) if folder.is_dir() else []
        for name in names:
            stem = name[:-5] if name.endswith(".json") else None
            if stem is None or not SOURCE_ID_RE.fullmatch(stem):
                continue
            if len(sources) >= MAX_LISTED:
                return {"sources": sources, "problems": problems, "truncated": True}
            try:
                sources.append(snapshot_summary(run.store.read(stem)) | {"run": run.path.name})
            except PublisherError as exc:
                problems.append(
                    {
                        "source_id": stem,
                        "reason_code": exc.reason.value if exc.reason else None,
                        "detail": exc.one_line(),
                    }
                )
    return {"sources": sources, "problems": problems, "truncated": False}


def read_source(ws: Workspace, source_id: SourceId, start: Offset = 0, end: Offset | None = None) -> dict[str, Any]:
    """A verified window of a snapshot's text with its true offsets, as ``publisher source read``
    gives it (:func:`~publisher.acquire.reading.read_window`), except that nothing is logged.

    A window past the end of the text is clamped to it with a ``note``; a reversed window
    (``SPAN_OUT_OF_RANGE``) or one longer than 20,000 code points (``SPAN_TOO_LONG``) is refused
    as the command refuses it, a tool error with that reason code.
    """
    run = ws.run_of(source_id)
    window: dict[str, Any] = _guard(lambda: read_window(run, source_id, start, end, log=False))
    return window


def find_spans(
    ws: Workspace,
    source_id: SourceId,
    query: Phrase | None = None,
    sentence: Flag = False,
    from_text: Phrase | None = None,
    to_text: Phrase | None = None,
    context: Annotated[int, Field(ge=0, le=MAX_CONTEXT, strict=True)] = 80,
    ignore_case: Flag = False,
) -> dict[str, Any]:
    """Spans to cite: every occurrence of ``query`` (exact or after normalisation), or the
    sentence(s) holding each (``sentence``), or from ``from_text`` to the next ``to_text``; each
    with exact offsets, excerpt, section, page and a window of context."""
    run = ws.run_of(source_id)
    return _guard(
        lambda: select_spans(
            run,
            source_id,
            query=query,
            from_text=from_text,
            to_text=to_text,
            sentence=sentence,
            context=context,
            ignore_case=ignore_case,
        )
    )


def locate_quote(ws: Workspace, source_id: SourceId, quote: Quote) -> dict[str, Any]:
    """Candidate offsets of a quote: ``exact``, else ``normalized`` (typographic marks and white
    space folded), else ``fragments`` (split at ellipses). Suggestions only: cite one as a span."""
    run = ws.run_of(source_id)
    snap, candidates, stopped = _guard(lambda: locate_in(run, source_id, quote))
    return located_json(snap.source_id, quote, candidates, truncated=stopped)


def check_span(
    ws: Workspace,
    source_id: SourceId,
    start: Offset,
    end: Offset,
    quote: Quote | None = None,
    evidence_id: Annotated[str, Field(min_length=1, max_length=200, strict=True)] | None = None,
) -> dict[str, Any]:
    """Re-slice a span as the gate will: range, length, the excerpt, section and page; with
    ``quote``, whether it equals the re-slice (and the nearest located candidate when it does
    not, none when locating it stopped at its budget); with ``evidence_id``, whether the snapshot
    carries that paper id. Writes nothing."""
    _, snap = ws.snapshot(source_id)
    n = len(snap.text)
    findings: list[dict[str, Any]] = []
    out: dict[str, Any] = {"source_id": snap.source_id, "start": start, "end": end, "length": n}
    reason = check_range(start, end, n)
    if reason is not None:
        findings.append({"reason_code": reason.value, "detail": f"[{start}, {end}) on a text of {n} code points"})
        out["excerpt"] = None
    else:
        excerpt = snap.text[start:end]
        section, page = locator(snap.sections)(start), locator(snap.pages)(start)
        out |= {
            "excerpt": excerpt,
            "section": section.title if section else None,
            "page": page.page if page else None,
        }
        if quote is not None and quote != excerpt:
            # A diagnostic: a search that stops at its budget names no candidate (the verdict stands).
            candidates, stopped = search_quote(snap.text, quote, budget=LOCATE_BUDGET)
            best = None if stopped else nearest(candidates, start, end)
            mismatch: dict[str, Any] = {
                "reason_code": Reason.EXCERPT_MISMATCH.value,
                "detail": "quote differs from the re-slice",
                "nearest_candidate": best.as_json() if best else None,
            }
            if stopped:  # no candidate named because the search did not finish, not because there is none
                mismatch["detail"] += "; locating the quote stopped at its work budget: quote more of the passage"
                mismatch["truncated"] = True
            findings.append(mismatch)
    if evidence_id is not None:
        problem = paper_problem(evidence_id, snap.paper)
        if problem is not None:
            findings.append({"reason_code": Reason.NO_PAPER_ID.value, "detail": problem})
    out |= {"access": snap.access.value, "url": snap.url, "ok": not findings, "findings": findings}
    return out


Statement = Annotated[str, Field(min_length=1, max_length=4000, strict=True)]
Label = Annotated[str, Field(min_length=1, max_length=200, strict=True)]
Term = Annotated[str, Field(min_length=1, max_length=MAX_SPAN, strict=True)]


def run_document_review(
    ws: Workspace,
    source_id: SourceId,
    claim: Statement,
    terms: Annotated[list[Term], Field(min_length=1, max_length=100)],
    semantic_queries: Annotated[list[Term], Field(max_length=100)] | None = None,
) -> dict[str, Any]:
    """Review one snapshot for a claim: the server searches every term (exactly and normalised)
    and records the hits as raw offsets; semantic queries are recorded as declared and NOT
    executed. Protocol-complete only over a surface declared complete at acquisition. Writes the
    content-addressed review record (the same review again changes nothing). A review whose terms
    together exceed the search work budget is refused and not written (C-CLAIM REVIEW_INCOMPLETE):
    declare fewer or more specific terms."""
    from ..wiki.claims.model import ClaimRefusal
    from ..wiki.claims.reviews import Reviewed, run_review

    run = ws.run_of(source_id)

    def review() -> Reviewed:
        try:
            return run_review(run, source_id, claim, list(terms), list(semantic_queries or []), keys=ws.trusted_keys)
        except ClaimRefusal as exc:  # over the review budget: the guard named, as 'publisher review' names it
            raise ToolProblem(exc.one_line(), field="terms") from exc

    done = _guard(review)
    return {"review_id": done.review_id, "created": done.created, "record": done.record.model_dump(mode="json")}


def validate_evidence_assessment(
    ws: Workspace,
    concept: Label,
    claim_id: Label,
    statement: Statement,
    status: Annotated[str, Field(min_length=1, max_length=40, strict=True)],
    evidence: Annotated[list[Label], Field(max_length=200)] | None = None,
    conditions: Annotated[list[Statement], Field(max_length=50)] | None = None,
    review: Label | None = None,
    missingness: Label | None = None,
) -> dict[str, Any]:
    """Propose a status for a claim (S, P, NS, C, NE): the guards are checked against the current
    state. On a wiki that trusts signing keys, the server writes only when the person running it
    gave it one of them (publisher mcp --key); without, it writes nothing and answers what would be
    admitted ("written": false, "would_admit", the guards that fail). Otherwise the attempt is
    logged in assessments.jsonl, admitted or rejected with the guard that failed, and an admitted
    claim is written into the concept's front matter. Admitted means a structurally admissible
    proposal, never an adjudication."""
    from ..wiki.assess import assess, propose
    from ..wiki.claims.admission import Proposal
    from ..wiki.claims.counts import ADMISSIBLE
    from ..wiki.claims.model import ClaimRefusal, parse_status

    proposal = Proposal(
        claim_id,
        statement,
        _guard(lambda: parse_status(status)),
        tuple(conditions or ()),
        tuple(evidence or ()),
        review,
        missingness,
    )
    policy = ws.policy
    ring = policy.trusted_keys
    meaning = ADMISSIBLE.format(status=proposal.status.value)
    if ring and (ws.signer is None or not ring.has_role(ws.signer.key_id, Role.ASSESS)):
        # A signed wiki and no key of it: an unsigned entry would fail the next build, so nothing
        # is written and the answer says what would be admitted.
        try:
            found = propose(ws.wiki, concept, proposal, policy=policy)
        except PublisherError as exc:
            raise ToolProblem(one_line(exc.message), exc.reason) from exc
        first = found.problems[0] if found.problems else None
        return {
            "admitted": False,
            "written": False,
            "would_admit": found.admissible,
            "guard": first.guard.value if first else None,
            "detail": one_line(first.detail, 300) if first else None,
            "problems": [{"guard": p.guard.value, "detail": one_line(p.detail, 300)} for p in found.problems],
            "meaning": meaning if found.admissible else None,
            "why_not_written": "this wiki trusts signing keys and the server holds none of them: run "
            "'publisher assess' with your key, or start the server with 'publisher mcp --key FILE'",
        }
    try:
        done = assess(ws.wiki, concept, proposal, signer=ws.signer, policy=policy)
    except ClaimRefusal as exc:
        return {
            "admitted": False,
            "written": True,
            "guard": exc.guard.value,
            "detail": exc.one_line(),
            "assessment_id": exc.context.get("assessment_id"),
        }
    except PublisherError as exc:
        raise ToolProblem(one_line(exc.message), exc.reason) from exc
    entry = done.entry
    return {
        "admitted": True,
        "written": True,
        "assessment_id": entry.assessment_id,
        "meaning": meaning,
        "concept_file": done.concept_file,
        "signed_by": entry.sig.key_id if entry.sig is not None else None,
    }


def build_evidence_matrix(ws: Workspace) -> dict[str, Any]:
    """Every claim of the wiki with its status, admissibility, provenance now, counts (citations,
    excerpts, snapshots, URLs, works) and lineage, as the build would publish them (claims.json).
    Refused when the wiki check finds anything: then ``{"ok": false, "findings": [...]}``, every
    finding as data (the fields of ``publisher check --json``), never as text."""
    from ..wiki.check import check_wiki
    from ..wiki.claims.counts import claims_document

    wiki = _guard(lambda: check_wiki(ws.wiki, policy=ws.policy))
    if not wiki.ok:
        return {"ok": False, "findings": [f.to_dict() for f in wiki.findings]}
    return claims_document(wiki)


def list_claims_awaiting_review(ws: Workspace) -> dict[str, Any]:
    """The claims no current independent review covers (never reviewed, or reviewed before the
    claim or its cited spans changed), each with its status, statement, warrant state and counts.
    Only a person reviews them (``publisher warrant``, with a passphrase typed at a terminal): no
    tool writes a warrant. Refused like build_evidence_matrix when the wiki check finds anything."""
    from ..wiki.check import check_wiki
    from ..wiki.warrant import awaiting_review

    wiki = _guard(lambda: check_wiki(ws.wiki, policy=ws.policy))
    if not wiki.ok:
        return {"ok": False, "findings": [f.to_dict() for f in wiki.findings]}
    awaiting = [
        {
            "concept": item.view["concept"],
            "id": item.view["id"],
            "code": item.view["code"],
            "statement": item.view["statement"],
            "warrant": item.view["warrant"]["state"],
            "counts": item.view["counts"],
        }
        for item in awaiting_review(wiki)
    ]
    return {"ok": True, "awaiting": awaiting}


@dataclass(frozen=True)
class ToolSpec:
    """One allowed tool: its name, the function (first argument: the workspace) and whether it
    writes (a review record, an assessment)."""

    name: str
    function: Callable[..., dict[str, Any]]
    writes: bool = False


TOOLS: tuple[ToolSpec, ...] = (
    ToolSpec("list_sources", list_sources),
    ToolSpec("read_source", read_source),
    ToolSpec("find_spans", find_spans),
    ToolSpec("locate_quote", locate_quote),
    ToolSpec("check_span", check_span),
    ToolSpec("run_document_review", run_document_review, writes=True),
    ToolSpec("validate_evidence_assessment", validate_evidence_assessment, writes=True),
    ToolSpec("build_evidence_matrix", build_evidence_matrix),
    ToolSpec("list_claims_awaiting_review", list_claims_awaiting_review),
)
"""The allow-list: the server registers exactly these, nothing else. Two write, and only what
their commands write: a content-addressed review record (``publisher review``) and an assessment
attempt with, when admitted, the claim in front matter (``publisher assess``). Deliberately
absent: any tool that acquires sources, registers text, writes snapshots, events, results,
missingness records or warrants, or declares a review complete."""
