"""``publisher review``: a document review of one claim over one snapshot, run by the tool.

The search runs here, never in the agent: every declared term is searched in the snapshot's
text exactly and after the quote locator's normalisation (:func:`publisher.kernel.locate.search_term`,
the product's one term search), and every hit is recorded as raw code-point offsets. All the terms
of a review share one work budget (:data:`REVIEW_BUDGET`); a review whose search would exceed it
is refused, never written as complete. The text's normal form is built once per process for all
the reviews of one snapshot (:func:`publisher.kernel.locate.normal_form`), not once per review.
Declared semantic queries are listed as declared and not executed; no semantic search exists,
and the record says so (``semantic_search_executed: false``).

Two digests keep contract and execution apart: ``review_contract_hash`` covers what was declared
(claim, source, surface, terms, semantic queries); ``executed_review_trace_hash`` covers what was
executed (the terms searched over this exact text and what each found), so an unexecuted query
can change the contract but never the trace. ``protocol_complete`` holds iff the surface is
complete and every declared term was executed. The surface counts as complete only when the
snapshot declares it complete and an acquisition event of the run's intact log recorded that very
surface (a snapshot written by hand declares nothing).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any

from ...kernel.canonical import canonical_bytes, format_ts, utc_now
from ...kernel.errors import UsageError
from ...kernel.locate import STREAM_ABOVE, Budget, normal_form, search_term
from ...kernel.models import EventType, Snapshot
from ...kernel.sentences import Sentences
from ...kernel.spans import MAX_SPAN
from ...kernel.trust import KeyRing, Role, event_signature_problem
from ...runs import Run
from .missingness import LogCache, log_of
from .model import ClaimRefusal, Guard, claim_hash, normalise_statement
from .records import Hit, HitSentence, ReviewRecord, write_record

__all__ = [
    "MAX_TERMS",
    "REVIEW_BUDGET",
    "Reviewed",
    "build_review",
    "run_review",
    "surface_declared_complete",
    "same_search",
    "sentence_problem",
]

MAX_TERMS = 100
"""Most search terms (and, separately, semantic queries) one review declares."""

REVIEW_BUDGET = 1_000_000
"""The work all the terms of one review may do together (see
:class:`~publisher.kernel.locate.Budget`: finding an occurrence, verbatim or after
normalisation, costs three and one per 64 code points of the term, normalising its raw slice
again to check it costs five and the slice's length, each code point outside ASCII counted
sixteen times; a million is under half a second at worst). Every
stored review is executed again at every build, so a repetitive snapshot with many terms that
(nearly) match everywhere must not cost seconds there. Counted in work, never in seconds, so
that a review passes or fails it alike on every machine and at every build. Fail-closed: a
review whose search would exceed it did not finish searching, so it cannot show that something
is absent; :func:`build_review` refuses it (``REVIEW_INCOMPLETE``), the command writes nothing
and the build does not count it. Ordinary reviews spend a few thousand (a hundred of a paper's
most frequent words: under 25,000)."""


@dataclass(frozen=True)
class Reviewed:
    """What ``publisher review`` wrote or found: the record, its id, whether it is new."""

    record: ReviewRecord
    review_id: str
    created: bool


def _digest(data: Any) -> str:
    return "sha256:" + hashlib.sha256(canonical_bytes(data)).hexdigest()


def surface_declared_complete(run: Run, snap: Snapshot, *, keys: KeyRing, logs: LogCache | None = None) -> bool:
    """Whether the snapshot's surface is complete as declared at an acquisition this run logged.

    With ``keys`` (a wiki's non-empty trusted keys), only an acquisition event signed by one of
    them for this run, sealing this very snapshot metadata (``record_hash``), declares anything:
    a line appended by hand to the log, or a snapshot rewritten with a "complete" surface, does not.
    """
    surface = snap.surface
    if surface is None or not surface.complete:
        return False
    state = log_of(run, logs)
    if not state.intact:
        return False
    name = run.name() if keys else ""
    return any(
        e.source_id == snap.source_id
        and e.type in (EventType.FETCH, EventType.LOCAL_PDF)
        and e.surface is not None
        and e.surface.manifest_hash == surface.manifest_hash
        and (
            not keys
            or (e.record_hash == snap.record_hash and event_signature_problem(e, keys, name, Role.ACQUIRE) is None)
        )
        for e in state.events
    )


def _declared(values: list[str], option: str) -> tuple[str, ...]:
    out: list[str] = []
    for value in values:
        if not value.strip():
            raise UsageError(f"{option} must not be empty")
        if len(value) > MAX_SPAN:
            raise UsageError(f"{option} is longer than {MAX_SPAN} code points")
        if value not in out:
            out.append(value)
    if len(out) > MAX_TERMS:
        raise UsageError(f"at most {MAX_TERMS} distinct {option} values")
    return tuple(out)


def run_review(
    run: Run,
    source_id: str,
    claim: str,
    terms: list[str],
    semantic_queries: list[str] | None = None,
    *,
    keys: KeyRing,
) -> Reviewed:
    """Search ``terms`` in the snapshot for ``claim``; write the review once and return it.

    The surface counts as complete under ``keys``, the wiki's trusted keys (with any, only an
    acquisition they signed declares it), as the build will re-execute it. Callers pass the keys
    of the policy MkDocs resolves (``INHERIT``, ``-f``, ``!ENV``), the one the build reads: there
    is no second reading of the wiki's configuration here."""
    stored, rid, created = write_record(run, build_review(run, source_id, claim, terms, semantic_queries, keys=keys))
    return Reviewed(stored, rid, created)


def build_review(
    run: Run,
    source_id: str,
    claim: str,
    terms: list[str] | tuple[str, ...],
    semantic_queries: Any = None,
    *,
    keys: KeyRing,
    logs: LogCache | None = None,
) -> ReviewRecord:
    """The review record of ``claim`` over the snapshot as the run holds it now (nothing written).

    The guards call this again to re-execute a stored review: a record whose hits, hashes or
    completeness differ from a re-execution was not written by this command. ``keys``: the wiki's
    trusted keys (see :func:`surface_declared_complete`), the same for the command and the build.
    """
    statement = normalise_statement(claim)
    if not statement:
        raise UsageError("--claim must not be empty")
    declared_terms = _declared(list(terms), "--term")
    if not declared_terms:
        raise UsageError("a review declares at least one --term")
    queries = _declared(list(semantic_queries or []), "--semantic-query")
    snap = run.store.read(source_id)  # verified on read
    manifest = snap.surface.manifest_hash if snap.surface is not None else None
    complete = surface_declared_complete(run, snap, keys=keys, logs=logs)
    hits: list[Hit] = []
    trace: list[dict[str, Any]] = []
    # Once for every term, and once per process for every review of this text (each stored review is
    # executed again at every build): the pass is linear in the text, the repetition is not. A long
    # text is searched a block at a time instead (search_term), its whole normal form never held.
    mapped = normal_form(snap.text) if len(snap.text) <= STREAM_ABOVE else None
    sentences = Sentences(snap.text, wrapped=snap.pages is not None)
    budget = Budget(REVIEW_BUDGET)  # one for all the terms together
    for term in declared_terms:
        found, stopped = search_term(snap.text, term, mapped=mapped, budget=budget)
        if stopped:
            raise ClaimRefusal(
                Guard.REVIEW_INCOMPLETE,
                f"searching {len(declared_terms)} term(s) over {snap.source_id[:16]}… exceeds the review "
                f"budget ({REVIEW_BUDGET:,} units of search work) at term {len(trace) + 1} ({term[:40]!r}): a "
                "search that did not finish cannot show that something is absent; declare fewer or more "
                "specific terms",
                source_id=snap.source_id,
                term=term[:200],
            )
        hits += [
            Hit(term=term, start=o.start, end=o.end, match=o.kind, sentence=_sentence(sentences, o.start, o.end))
            for o in found
        ]
        trace.append({"term": term, "hits": [[o.start, o.end, o.kind] for o in found]})
    chash = claim_hash(statement)
    contract = {
        "claim_hash": chash,
        "source_id": snap.source_id,
        "surface_manifest_hash": manifest,
        "search_terms": list(declared_terms),
        "semantic_queries": list(queries),
    }
    executed = {
        "source_id": snap.source_id,
        "content_hash": snap.content_hash,
        "terms": trace,
        "semantic_search_executed": False,
    }
    record = ReviewRecord(
        schema_version=1,
        claim=statement,
        claim_hash=chash,
        source_id=snap.source_id,
        surface_manifest_hash=manifest,
        surface_complete=complete,
        search_terms=declared_terms,
        hits=tuple(hits),
        semantic_queries_declared_not_executed=queries,
        semantic_search_executed=False,
        review_contract_hash=_digest(contract),
        executed_review_trace_hash=_digest(executed),
        protocol_complete=complete and len(trace) == len(declared_terms),
        created_at=format_ts(utc_now()),
    )
    return record


def _sentence(sentences: Sentences, start: int, end: int) -> HitSentence:
    """The whole sentences covering ``text[start:end]`` (the hit itself if the splitter finds none),
    cut to at most :data:`~publisher.kernel.spans.MAX_SPAN` code points around the hit: a text with
    no sentence end (a table, a hostile run of one word) would otherwise store the whole text once
    per hit, and the record could never be written."""
    lo, hi = sentences.covering(start, end) or (start, end)
    if hi - lo > MAX_SPAN:
        side = max(0, (MAX_SPAN - (end - start)) // 2)
        lo, hi = max(lo, start - side), min(hi, end + side)
    return HitSentence(start=lo, end=hi, text=sentences.text[lo:hi])


def same_search(stored: ReviewRecord, again: ReviewRecord) -> bool:
    """Whether a re-execution found what ``stored`` records, sentences aside.

    The sentence around a hit is a reading aid from the sentence splitter: a newer splitter may
    draw it differently without the search having changed, so it is checked apart
    (:func:`sentence_problem`), never by equality with a re-execution.
    """

    def bare(record: ReviewRecord) -> dict[str, Any]:
        data = record.model_dump(mode="json")
        del data["created_at"]
        for hit in data["hits"]:
            del hit["sentence"]
        return data

    return bare(stored) == bare(again)


def sentence_problem(review: ReviewRecord, text: str) -> str | None:
    """Why a stored hit's sentence is not an exact slice of ``text`` covering the hit, or None."""
    for hit in review.hits:
        s = hit.sentence
        if not (s.start <= hit.start < hit.end <= s.end <= len(text)) or text[s.start : s.end] != s.text:
            return f"the sentence recorded for the hit #{hit.start}-{hit.end} ({hit.term[:40]!r}) is not the text's"
    return None
