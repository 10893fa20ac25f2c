"""``publisher source fetch|register|local|revise|revisions|read|spans|locate``."""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from ..kernel.spans import MAX_SPAN
from ._common import (
    add_config,
    add_json,
    byte_count_arg,
    emit,
    open_run,
    seconds_arg,
    source_id_arg,
    wiki_policy,
)

if TYPE_CHECKING:
    from ..acquire import signing, sources
    from ..kernel.models import Surface
    from ..runs import Run


def _metadata_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--access", help="full_text, abstract, preprint, guideline or web (default: derived, else web)")
    parser.add_argument("--origin", help="pubmed, pmc, europepmc, unpaywall, oa-pdf, user-supplied-pdf or web")
    parser.add_argument("--pmid", help="PubMed id, if the document does not state it")
    parser.add_argument("--doi", help="DOI, if the document does not state it")
    parser.add_argument("--pmcid", help="PubMed Central id (PMC…), if the document does not state it")
    parser.add_argument("--title", help="title, if the document does not state it")
    parser.add_argument("--actor", default="main", help="who acts: main or a worker id (default main)")


def _key_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--key",
        type=Path,
        help="Ed25519 private key (PEM) that signs the acquisition event (default: $PUBLISHER_SIGNING_KEY, "
        "else your key for one of the wiki's keys with the acquire role; on a wiki that trusts keys, "
        "refused when there is none)",
    )
    add_config(parser)  # which keys the run's wiki trusts, as MkDocs resolves its configuration


def _surface_options(parser: argparse.ArgumentParser, *, whole_text: bool) -> None:
    parser.add_argument(
        "--expected-pages", metavar="PAGES", help="a PDF's declared surface, e.g. 1,3-12 (never inferred)"
    )
    parser.add_argument("--expected-page-count", type=int, metavar="N", help="a PDF's declared surface: pages 1..N")
    if whole_text:
        parser.add_argument(
            "--complete", action="store_true", help="declare the fetched full text complete (never for an abstract)"
        )


def _declaration(args: argparse.Namespace) -> sources.Declaration:
    from ..acquire import sources

    return sources.Declaration(
        expected_pages=args.expected_pages,
        expected_page_count=args.expected_page_count,
        complete=bool(getattr(args, "complete", False)),
    )


def _signer(args: argparse.Namespace, run: Run) -> signing.Signer | None:
    """The one signer discovery (:func:`publisher.kernel.trust.require_signer`) for an acquisition:
    ``--key``, else ``$PUBLISHER_SIGNING_KEY``, else this user's private key for one of the keys
    the run's wiki trusts for ``acquire`` (resolved through MkDocs, see :func:`wiki_policy`). On a
    wiki that trusts keys, no usable key is a one-line refusal before anything is written."""
    from ..kernel.trust import Role, require_signer
    from ..runs import find_wiki_root

    root = getattr(args, "wiki", None) or find_wiki_root(run.path)
    ring = wiki_policy(root, getattr(args, "config", None)).trusted_keys
    return require_signer(args.key, ring=ring, role=Role.ACQUIRE, run=run.name())


def _meta(args: argparse.Namespace) -> sources.Metadata:
    from ..acquire import sources

    return sources.Metadata(
        access=args.access, origin=args.origin, pmid=args.pmid, doi=args.doi, pmcid=args.pmcid, title=args.title
    )


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Add ``source`` and its sub-commands."""
    source = sub.add_parser("source", help="acquire snapshots and read them")
    ss = source.add_subparsers(dest="source_command", metavar="SUBCOMMAND")
    ss.required = True

    p = ss.add_parser("fetch", help="retrieve a URL over HTTP and store its text as a snapshot")
    p.add_argument("--run-dir", required=True, type=Path)
    p.add_argument("--url", required=True)
    p.add_argument("--timeout", type=seconds_arg, default=30.0, help="seconds (default 30)")
    p.add_argument("--max-bytes", type=byte_count_arg, default=64 * 1024 * 1024, help="largest body accepted")
    _metadata_options(p)
    _surface_options(p, whole_text=True)
    _key_option(p)
    add_json(p)
    p.set_defaults(func=_fetch)

    p = ss.add_parser("register", help="store text obtained elsewhere (never fresh)")
    p.add_argument("--run-dir", required=True, type=Path)
    p.add_argument("--url", required=True)
    p.add_argument("--text-file", required=True, type=Path)
    _metadata_options(p)
    _key_option(p)
    add_json(p)
    p.set_defaults(func=_register)

    p = ss.add_parser("local", help="store a user-supplied PDF in the wiki library and snapshot its text")
    p.add_argument("--run-dir", required=True, type=Path)
    p.add_argument("--file", required=True, type=Path)
    p.add_argument("--wiki", required=True, type=Path)
    _metadata_options(p)
    _surface_options(p, whole_text=False)
    _key_option(p)
    add_json(p)
    p.set_defaults(func=_local)

    p = ss.add_parser(
        "revise", help="re-acquire a stored source as a new revision that supersedes it (its URL, or --url, or --file)"
    )
    p.add_argument("--run-dir", required=True, type=Path, help="the run the revision is stored in")
    p.add_argument("--source-id", required=True, type=source_id_arg, help="the snapshot it supersedes")
    p.add_argument("--url", help="acquire the revision from this address (default: the source's own URL)")
    p.add_argument("--file", type=Path, help="a PDF to store as the revision (a user-supplied PDF's revision)")
    p.add_argument("--timeout", type=seconds_arg, default=30.0, help="seconds (default 30)")
    p.add_argument("--max-bytes", type=byte_count_arg, default=64 * 1024 * 1024, help="largest body accepted")
    _metadata_options(p)
    _surface_options(p, whole_text=True)
    _key_option(p)
    add_json(p)
    p.set_defaults(func=_revise)

    p = ss.add_parser("revisions", help="list a source's revisions, first to newest")
    p.add_argument("source_id", type=source_id_arg, metavar="SOURCE_ID")
    p.add_argument("--wiki", required=True, type=Path)
    add_config(p)
    add_json(p)
    p.set_defaults(func=_revisions)

    p = ss.add_parser(
        "notices", help="ask a registry for retraction and correction notices of every DOI of the wiki, and log them"
    )
    p.add_argument("--wiki", required=True, type=Path)
    p.add_argument("--registry", help="the registry's REST base URL (default https://api.crossref.org)")
    p.add_argument("--timeout", type=seconds_arg, default=30.0, help="seconds per request (default 30)")
    p.add_argument(
        "--key", type=Path, help="Ed25519 private key (PEM) that signs each notice (default: as for acquisition)"
    )
    add_config(p)
    add_json(p)
    p.set_defaults(func=_notices)

    p = ss.add_parser("read", help="print a verified window of a snapshot with its offsets")
    p.add_argument("--run-dir", required=True, type=Path)
    p.add_argument("--source-id", required=True, type=source_id_arg)
    p.add_argument("--start", type=int)
    p.add_argument("--end", type=int)
    p.add_argument("--actor", default="main")
    add_json(p)
    p.set_defaults(func=_read)

    p = ss.add_parser("spans", help="find a phrase, its sentence, or a from-to range, with exact offsets")
    p.add_argument("--run-dir", required=True, type=Path)
    p.add_argument("--source-id", required=True, type=source_id_arg)
    p.add_argument("--query", help="the text to find")
    p.add_argument("--sentence", action="store_true", help="select the whole sentence(s) holding each match")
    p.add_argument("--from", dest="from_text", metavar="TEXT", help="select from the start of this text ...")
    p.add_argument("--to", dest="to_text", metavar="TEXT", help="... to the end of the next occurrence of this one")
    p.add_argument("--context", type=int, default=80, help="code points of context each side (default 80)")
    p.add_argument("--ignore-case", action="store_true")
    add_json(p)
    p.set_defaults(func=_spans)

    p = ss.add_parser(
        "locate",
        help="where a quote really is: candidate offsets (exact, normalized, fragments); suggests, never accepts",
    )
    p.add_argument("--run-dir", required=True, type=Path)
    p.add_argument("--source-id", required=True, type=source_id_arg)
    p.add_argument("--quote", required=True, help="the passage as the agent believes it reads")
    add_json(p)
    p.set_defaults(func=_locate)


def _acquired(args: argparse.Namespace, outcome: sources.Acquired, verb: str) -> int:
    info = outcome.summary()
    state = "stored" if outcome.created else "already stored (kept as is)"
    extra = []
    if info["sections"]:
        extra.append(f"{info['sections']} sections")
    if info["pages"]:
        extra.append(f"{info['pages']} pages")
    human = (
        f"{verb} {info['url']}\n"
        f"  {info['source_id']}  {state}\n"
        f"  {info['chars']} chars, access {info['access']}, origin {info['origin']}"
        + (f", {', '.join(extra)}" if extra else "")
        + _identity_lines(outcome)
        + (f"\n  supersedes {info['supersedes']}" if info["supersedes"] else "")
        + _surface_line(outcome.snapshot.surface)
        + f"\n  logged {info['event_id']} (fresh: {'yes' if info['fresh'] else 'no'}; "
        + (f"signed by key {info['signed_by'][:16]}…)" if info["signed_by"] else "unsigned)")
    )
    emit(args, info, human)
    return 0


def _identity_lines(outcome: sources.Acquired) -> str:
    """Each stored id and the title with its basis; when no id is derived, what to do about it."""
    snap = outcome.snapshot
    identity = snap.identity
    entries = identity.ids() if identity is not None else {}
    lines = [f"\n  {k} {e.value} ({e.basis.value}: {e.via})" for k, e in entries.items()]
    title = identity.title if identity is not None else None
    if title is not None:
        lines.append(f"\n  title: {title.value} ({title.basis.value}: {title.via})")
    lines += [f"\n  note: {note}" for note in outcome.notes]
    if not any(e.derived for e in entries.values()):
        asserted = "; the ids given are stored as asserted, each its own work" if entries else ""
        lines.append(
            "\n  no paper id derived: neither the document nor its URL states one" + asserted + ". To record one, "
            "acquire the paper from a registry's article URL (https://doi.org/DOI, "
            "https://pubmed.ncbi.nlm.nih.gov/PMID/) or a copy that states it, as a revision of this source: "
            f"'publisher source revise --run-dir RUN --source-id {snap.source_id} --url URL'"
        )
    return "".join(lines)


def _surface_line(surface: Surface | None) -> str:
    if surface is None:
        return ""
    state = "complete (declared)" if surface.complete else "not complete"
    missing = surface.missing_pages
    return f"\n  surface: {surface.type.value}, {state}" + (f", missing pages {_ranges(missing)}" if missing else "")


def _ranges(pages: Sequence[int]) -> str:
    out: list[tuple[int, int]] = []
    for page in pages:
        if out and out[-1][1] == page - 1:
            out[-1] = (out[-1][0], page)
        else:
            out.append((page, page))
    return ",".join(f"{a}-{b}" if a != b else str(a) for a, b in out)


def _fetch(args: argparse.Namespace) -> int:
    from ..acquire import sources

    run = open_run(args.run_dir)
    outcome = sources.fetch(
        run,
        args.url,
        _meta(args),
        actor=args.actor,
        timeout=args.timeout,
        max_bytes=args.max_bytes,
        signer=_signer(args, run),
        declaration=_declaration(args),
        revision=_revision(args, run),
    )
    return _acquired(args, outcome, "Fetched")


def _revision(args: argparse.Namespace, run: Run, supersedes: str | None = None) -> sources.Revision:
    """Where the acquisition's revisions are looked for: the run's wiki, with the keys it trusts."""
    from ..acquire import sources
    from ..kernel.trust import KeyRing
    from ..runs import find_wiki_root

    wiki = find_wiki_root(run.path)
    ring = wiki_policy(wiki, getattr(args, "config", None)).trusted_keys if wiki is not None else KeyRing()
    return sources.Revision(wiki, supersedes, ring)


def _revise(args: argparse.Namespace) -> int:
    from dataclasses import replace

    from ..acquire import sources
    from ..acquire.revisions import find_snapshot
    from ..kernel.errors import UsageError

    run = open_run(args.run_dir)
    revision = _revision(args, run, args.source_id)
    old = find_snapshot(run, args.source_id, revision.wiki, trusted_keys=revision.trusted_keys).snapshot
    # Access and origin say what kind of text it is, not whose: they carry over unless given.
    meta = replace(_meta(args), access=args.access or old.access.value, origin=args.origin or old.origin.value)
    if args.file is not None:
        if args.url is not None:
            raise UsageError("give --url or --file, not both")
        if revision.wiki is None:
            raise UsageError(f"{run.path} is in no wiki: a PDF is stored in its wiki's library")
        outcome = sources.add_local_pdf(
            run, args.file, revision.wiki, meta, actor=args.actor, signer=_signer(args, run),
            declaration=_declaration(args), revision=revision,
        )  # fmt: skip
        return _acquired(args, outcome, "Revised with local PDF")
    url = args.url or old.url
    if url.startswith("urn:"):
        raise UsageError(f"{old.source_id} is a user-supplied PDF: give the revised PDF with --file, or --url")
    outcome = sources.fetch(
        run, url, meta, actor=args.actor, timeout=args.timeout, max_bytes=args.max_bytes,
        signer=_signer(args, run), declaration=_declaration(args), revision=revision,
    )  # fmt: skip
    return _acquired(args, outcome, "Revised")


def _revisions(args: argparse.Namespace) -> int:
    from ..acquire.revisions import chain, wiki_views

    stored = list(wiki_views(args.wiki, trusted_keys=wiki_policy(args.wiki, args.config).trusted_keys))
    found = chain(stored, args.source_id)
    rows = [
        {
            "revision": number,
            "source_id": s.snapshot.source_id,
            "supersedes": s.snapshot.supersedes,
            "run": s.run.name,
            "retrieved_at": s.snapshot.retrieved_at,
            "url": s.snapshot.url,
            "current": number == len(found),
        }
        for number, s in enumerate(found, start=1)
    ]
    lines = [f"{len(rows)} revision(s) of {args.source_id}:"]
    for row in rows:
        mark = " (current)" if row["current"] else ""
        mark += " <- asked" if row["source_id"] == args.source_id else ""
        lines.append(f"  {row['revision']}. {row['source_id']}  run {row['run']}  {row['retrieved_at']}{mark}")
        lines.append(f"     {row['url']}")
    emit(args, {"source_id": args.source_id, "revisions": rows}, "\n".join(lines))
    return 0


def _notices(args: argparse.Namespace) -> int:
    from ..acquire import notices
    from ..acquire.revisions import wiki_snapshots
    from ..kernel.trust import Role, require_signer

    ring = wiki_policy(args.wiki, args.config).trusted_keys
    # Refused before anything is asked or written on a wiki that trusts keys and no key signs.
    signer = require_signer(args.key, ring=ring, role=Role.ACQUIRE, run=notices.SIGNED_FOR)
    registry = (args.registry or notices.DEFAULT_REGISTRY).rstrip("/")
    dois = notices.wiki_dois(
        [
            s.snapshot.paper.doi
            for s in wiki_snapshots(args.wiki, trusted_keys=ring)
            if s.snapshot.paper and s.snapshot.paper.doi
        ]
    )
    rows: list[dict[str, object]] = []
    lines = [f"Notices of {len(dois)} DOI(s) asked of {registry}:"]
    failed = 0
    for doi in dois:
        asked = notices.ask_registry(doi, registry, timeout=args.timeout)
        if asked.problem is not None:
            failed += 1
            rows.append({"doi": doi, "ok": False, "problem": asked.problem})
            lines.append(f"  {doi}: not logged: {asked.problem}")
            continue
        entry = notices.append_notice(args.wiki, asked, registry, signer)
        updates = [u.model_dump(mode="json") for u in entry.updates]
        rows.append({"doi": doi, "ok": True, "notice_id": entry.notice_id, "updates": updates, "at": entry.at})
        if not entry.updates:
            lines.append(f"  {doi}: no notice found in {registry} on {entry.at[:10]} ({entry.notice_id})")
        for u in entry.updates:
            about = "this work" if u.about_this_work else "another work (this is the notice)"
            lines.append(
                f"  {doi}: {u.kind.value} of {about}, notice {u.doi or '?'} {u.date or ''} ({entry.notice_id})"
            )
    emit(args, {"registry": registry, "dois": rows, "failed": failed}, "\n".join(lines))
    return 1 if failed else 0


def _register(args: argparse.Namespace) -> int:
    from ..acquire import sources

    run = open_run(args.run_dir)
    outcome = sources.register(run, args.url, args.text_file, _meta(args), actor=args.actor, signer=_signer(args, run))
    return _acquired(args, outcome, "Registered")


def _local(args: argparse.Namespace) -> int:
    from ..acquire import sources

    run = open_run(args.run_dir)
    outcome = sources.add_local_pdf(
        run,
        args.file,
        args.wiki,
        _meta(args),
        actor=args.actor,
        signer=_signer(args, run),
        declaration=_declaration(args),
        revision=_revision(args, run),
    )
    return _acquired(args, outcome, "Added local PDF")


def _read(args: argparse.Namespace) -> int:
    from ..acquire import reading

    run = open_run(args.run_dir)
    window = reading.read_window(run, args.source_id, args.start, args.end, actor=args.actor)
    data = {k: window[k] for k in ("source_id", "start", "end", "text", "note") if k in window}
    note = f" (note: {window['note']})" if "note" in window else ""
    human = f"{window['source_id']} [{window['start']}, {window['end']}) of {window['length']}{note}\n{window['text']}"
    emit(args, data, human)
    return 0


def _spans(args: argparse.Namespace) -> int:
    from ..acquire import reading

    run = open_run(args.run_dir)
    if args.sentence or args.from_text is not None or args.to_text is not None or args.query is None:
        return _select(args, run)
    found = reading.find_spans(run, args.source_id, args.query, context=args.context, ignore_case=args.ignore_case)
    lines = [f"{len(found['matches'])} match(es) for {args.query!r} in {found['source_id']}"]
    for m in found["matches"]:
        window = m["window"].replace("\n", "⏎")
        lines.append(f"  #{m['start']}-{m['end']}  …{window}…")
    if found.get("truncated"):
        lines.append("  (the search stopped at its budget: there may be more; search a longer or more specific text)")
    emit(args, found, "\n".join(lines))
    return 0 if found["matches"] else 1


def _locate(args: argparse.Namespace) -> int:
    from ..acquire.select import locate_in, located_json
    from ..kernel.text import terminal_safe

    run = open_run(args.run_dir)
    snap, candidates, stopped = locate_in(run, args.source_id, args.quote)
    found = located_json(snap.source_id, args.quote, candidates, truncated=stopped)
    lines = [f"{len(candidates)} candidate(s) in {snap.source_id} (suggestions only: cite one as a span)"]
    for c in candidates:
        parts = ", ".join(f"{f.start}-{f.end}" for f in c.fragments)
        lines.append(f"  #{c.start}-{c.end}  {c.kind}" + (f"  (parts {parts})" if parts else ""))
        lines.append("    " + terminal_safe(snap.text[c.start : c.end], keep_newlines=False))
    if stopped:
        lines.append("  (the search stopped at its budget: there may be more; quote more of the passage)")
    emit(args, found, "\n".join(lines))
    return 0 if candidates else 1


def _select(args: argparse.Namespace, run: Run) -> int:
    from ..acquire.select import select_spans
    from ..kernel.text import terminal_safe

    found = select_spans(
        run,
        args.source_id,
        query=args.query,
        from_text=args.from_text,
        to_text=args.to_text,
        sentence=args.sentence,
        context=args.context,
        ignore_case=args.ignore_case,
    )
    what = f"{args.query!r}" if args.query is not None else f"from {args.from_text!r} to {args.to_text!r}"
    unit = "sentence selection(s)" if args.sentence else "match(es)"
    lines = [f"{len(found['matches'])} {unit} for {what} in {found['source_id']}"]
    if found.get("skipped"):
        lines.append(f"  {found['skipped']} occurrence(s) of --from have no --to within {MAX_SPAN} code points")
    for m in found["matches"]:
        where = ", ".join(f"{k} {m[k]!r}" for k in ("section", "page") if m[k] is not None)
        lines.append(f"  #{m['start']}-{m['end']}" + (f"  ({where})" if where else ""))
        lines.append("    " + terminal_safe(m["excerpt"], keep_newlines=False))
        if m.get("note"):
            lines.append(f"    note: {m['note']}")
    if found["truncated"]:
        lines.append(f"  (only the first {len(found['matches'])} shown)")
    emit(args, found, "\n".join(lines))
    return 0 if found["matches"] else 1
