"""``publisher missing``, ``publisher review`` and ``publisher assess``: claims and their grounds.

Thin adapters over :mod:`publisher.wiki.claims`; a refusal is one line naming the guard that
failed, with the fix, and exit status 1.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING

from ..kernel.text import one_line
from ._common import add_config, add_json, emit, open_run, wiki_policy

if TYPE_CHECKING:
    from ..kernel.trust import KeyRing
    from ..runs import Run


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Add ``missing`` (and the other claim commands)."""
    p = sub.add_parser("missing", help="record why a claim cannot be evaluated, from trusted facts only")
    p.add_argument("--run-dir", required=True, type=Path)
    p.add_argument("--claim", required=True, help="the claim's statement")
    group = p.add_mutually_exclusive_group(required=True)
    group.add_argument("--event", help="a fetch_failed event of the run (SOURCE_UNAVAILABLE)")
    group.add_argument("--source-id", help="a snapshot acquired in the run: not full text, or missing declared pages")
    add_config(p)
    add_json(p)
    p.set_defaults(func=_missing)

    p = sub.add_parser(
        "review",
        help="search a snapshot for a claim's terms; the tool runs the search ('review adjudicate': decide a hit)",
    )
    p.add_argument("--run-dir", type=Path, help="the run holding the snapshot (required)")
    p.add_argument("--source-id", help="the snapshot to search (required)")
    p.add_argument("--claim", help="the claim's statement (required)")
    p.add_argument("--term", action="append", default=[], help="a search term (repeatable; at least one)")
    p.add_argument(
        "--semantic-query",
        action="append",
        default=[],
        metavar="Q",
        help="declared and recorded as not executed (no semantic search runs)",
    )
    add_config(p)
    add_json(p)
    p.set_defaults(func=_review)
    rs = p.add_subparsers(dest="review_command", metavar="SUBCOMMAND")
    a = rs.add_parser(
        "adjudicate",
        help="record (signed) that one hit of a review, read in its sentence, does not support the claim",
    )
    a.add_argument("--run-dir", required=True, type=Path, help="the run holding the review")
    a.add_argument("--review", required=True, help="the review id (rev-…)")
    a.add_argument("--hit", required=True, type=int, metavar="N", help="the hit's number, 1-based, as 'review' lists")
    a.add_argument("--reason", required=True, help="why the hit does not support the claim (one line)")
    a.add_argument(
        "--key",
        type=Path,
        help="Ed25519 private key (PEM) that signs the entry (default: $PUBLISHER_SIGNING_KEY, else your key for "
        "one of the wiki's trusted keys; required on a wiki that trusts keys)",
    )
    add_config(a)
    add_json(a)
    a.set_defaults(func=_adjudicate)

    p = sub.add_parser("assess", help="propose a claim's status; every attempt is logged, an admitted one written")
    p.add_argument("--wiki", required=True, type=Path)
    p.add_argument("--concept", required=True, help="the concept's slug (concepts/SLUG.md)")
    p.add_argument("--claim-id", required=True, help="the claim's id in the concept (a slug)")
    p.add_argument("--statement", required=True)
    p.add_argument("--status", required=True, help="S, P, NS, C or NE (or the status's name)")
    p.add_argument("--evidence", action="append", default=[], metavar="LABEL", help="a footnote label (repeatable)")
    p.add_argument("--condition", action="append", default=[], metavar="TEXT", help="a condition of P (repeatable)")
    p.add_argument("--review", help="the review id (rev-…) an NS rests on")
    p.add_argument("--missingness", help="the missingness id (mis-…) an NE rests on")
    p.add_argument(
        "--key",
        type=Path,
        help="Ed25519 private key (PEM) that signs the entry (default: $PUBLISHER_SIGNING_KEY, else your key "
        "for one of the wiki's keys with the assess role; refused on a wiki that trusts keys when there is none)",
    )
    add_config(p)
    add_json(p)
    p.set_defaults(func=_assess)


def _run_wiki_keys(run: Run, config: Path | None) -> KeyRing:
    """The trusted keys of the wiki holding ``run``, from the configuration MkDocs resolves
    (``--config FILE``, else the wiki's ``mkdocs.yml`` with ``INHERIT`` and ``!ENV``), as the
    build that re-checks the record reads them."""
    from ..runs import find_wiki_root

    return wiki_policy(find_wiki_root(run.path), config).trusted_keys


def _missing(args: argparse.Namespace) -> int:
    from ..wiki.claims.missingness import record_missing

    run = open_run(args.run_dir)
    keys = _run_wiki_keys(run, args.config)
    found = record_missing(run, args.claim, event_id=args.event, source_id=args.source_id, keys=keys)
    record = found.record
    state = "stored" if found.created else "already stored (kept as is)"
    human = (
        f"{found.missingness_id}  {state}\n"
        f"  {record.kind.value} for claim {record.claim_hash}\n"
        f"  basis: {record.basis.run} {record.basis.event_id}"
        + (f" {record.basis.source_id}" if record.basis.source_id else f" {record.basis.url}")
        + f"\n  created_at {record.created_at}"
    )
    data = {"missingness_id": found.missingness_id, "created": found.created, "record": record.model_dump(mode="json")}
    emit(args, data, human)
    return 0


def _assess(args: argparse.Namespace) -> int:
    from ..kernel.trust import Role, require_signer
    from ..wiki.assess import assess
    from ..wiki.claims.admission import Proposal
    from ..wiki.claims.log import SIGNED_FOR
    from ..wiki.claims.model import parse_status, status_code

    status = parse_status(args.status)
    proposal = Proposal(
        args.claim_id,
        args.statement,
        status,
        tuple(args.condition),
        tuple(args.evidence),
        args.review,
        args.missingness,
    )
    policy = wiki_policy(Path(args.wiki), args.config)
    signer = require_signer(args.key, ring=policy.trusted_keys, role=Role.ASSESS, run=SIGNED_FOR)
    done = assess(args.wiki, args.concept, proposal, signer=signer, policy=policy)
    entry = done.entry
    human = (
        f"admitted {entry.assessment_id}: claim {entry.claim_id} of {done.concept_file} as "
        f"{status_code(entry.status)} ({entry.status.value})\n"
        f"  structurally admissible proposal for {entry.status.value}: not adjudicated\n"
        f"  {'signed by key ' + entry.sig.key_id[:16] + '…' if entry.sig else 'unsigned'}"
    )
    emit(args, {"admitted": True, "concept_file": done.concept_file, "entry": entry.wire()}, human)
    return 0


def _review(args: argparse.Namespace) -> int:
    from ..kernel.errors import UsageError
    from ..wiki.claims.reviews import run_review

    missing = [name for name in ("run_dir", "source_id", "claim") if getattr(args, name) is None]
    if missing:
        flags = ", ".join("--" + name.replace("_", "-") for name in missing)
        raise UsageError(f"publisher review needs {flags} (or 'publisher review adjudicate')")
    run = open_run(args.run_dir)
    keys = _run_wiki_keys(run, args.config)
    done = run_review(run, args.source_id, args.claim, args.term, args.semantic_query, keys=keys)
    record = done.record
    state = "stored" if done.created else "already stored (kept as is)"
    lines = [
        f"{done.review_id}  {state}",
        f"  claim {record.claim_hash} over {record.source_id}",
        f"  surface complete: {'yes' if record.surface_complete else 'no'}; "
        f"protocol complete: {'yes' if record.protocol_complete else 'no'}",
    ]
    for term in record.search_terms:
        found = [h for h in record.hits if h.term == term]
        lines.append(f"  term {term!r}: {len(found)} hit(s)")
    for number, hit in enumerate(record.hits, start=1):
        lines.append(f"  hit {number}: {hit.term!r} #{hit.start}-{hit.end} in: {one_line(hit.sentence.text, 160)}")
    if record.hits:
        lines.append(
            "  not_supported rests on this review only once every hit is adjudicated "
            "('publisher review adjudicate --hit N --reason …')"
        )
    for query in record.semantic_queries_declared_not_executed:
        lines.append(f"  semantic query {query!r}: declared, NOT executed")
    emit(
        args,
        {"review_id": done.review_id, "created": done.created, "record": record.model_dump(mode="json")},
        "\n".join(lines),
    )
    return 0


def _adjudicate(args: argparse.Namespace) -> int:
    from ..kernel.trust import Role, require_signer
    from ..wiki.claims.adjudications import adjudicate

    run = open_run(args.run_dir)
    ring = _run_wiki_keys(run, args.config)
    signer = require_signer(args.key, ring=ring, role=Role.ASSESS, run=run.name())
    done = adjudicate(run, args.review, args.hit, args.reason, signer=signer, ring=ring)
    entry = done.entry
    state = "recorded" if done.created else "already adjudicated (kept as is)"
    human = (
        f"{entry.adjudication_id}  {state}\n"
        f"  {entry.review_id[:20]}… hit {entry.hit.term!r} #{entry.hit.start}-{entry.hit.end}: {entry.decision}\n"
        f"  reason: {entry.reason}\n"
        f"  {'signed by key ' + entry.sig.key_id[:16] + '…' if entry.sig else 'unsigned'}"
    )
    emit(args, {"created": done.created, "entry": entry.wire()}, human)
    return 0
