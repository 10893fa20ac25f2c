"""``publisher promote``, ``publisher check`` and ``publisher new``: concept files, the wiki-wide check and
wiki scaffolding."""

from __future__ import annotations

import argparse
import contextlib
from pathlib import Path

from ..kernel.findings import summary
from ._common import add_config, add_json, emit, missing_folder, refusal_lines, say, wiki_policy


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Add ``promote``, ``check``, ``migrate`` and ``new``."""
    p = sub.add_parser(
        "promote",
        help="verify a run's result and promote its accepted evidence into a concept file",
        description="Reads only outputs/result.json; re-verifies every cited snapshot and excerpt; "
        "writes concepts/<slug>.md all or nothing.",
    )
    p.add_argument("--run-dir", required=True, metavar="RUN", help="the run directory (inside the wiki)")
    p.add_argument("--wiki", required=True, metavar="WIKI", help="the wiki root (holds mkdocs.yml)")
    p.add_argument("--concept", metavar="SLUG", help="concept file to write (default: the run's slug)")
    p.add_argument("--check", action="store_true", help="verify only; write nothing")
    add_config(p)
    add_json(p)
    p.set_defaults(func=_promote)

    c = sub.add_parser(
        "check",
        help="run the build's checks on a wiki without building (exit 0 clean, 1 findings)",
        description="Every run assembled now and compared with its result.json, every snapshot re-hashed, "
        "every concept footnote re-sliced, every page's prose and every docs/ file checked: what 'mkdocs build' "
        "checks, without rendering or writing anything.",
    )
    c.add_argument("--wiki", required=True, metavar="WIKI", help="the wiki root (holds mkdocs.yml)")
    c.add_argument(
        "--scheduler",
        metavar="ADDRESS",
        help="run the check on the Dask cluster at ADDRESS (tcp://host:8786; default: $PUBLISHER_SCHEDULER, "
        "else this machine); its workers must see the wiki at the same path",
    )
    add_config(c)
    add_json(c)
    c.set_defaults(func=_check)

    m = sub.add_parser("migrate", help="bring a wiki written by an earlier version up to date")
    what = m.add_subparsers(dest="migration", metavar="WHAT")
    what.required = True
    ml = what.add_parser(
        "labels",
        help="rewrite positional evidence labels as stable ones, with the claims bound to them",
        description="Every concept whose promoted block carries the positional labels of an earlier version gets "
        "the labels derived from what they cite, and every claim bound to an old label the new one; all concepts "
        "or none. The assessment log is left as it is. Running it again changes nothing.",
    )
    ml.add_argument("--wiki", required=True, metavar="WIKI", help="the wiki root (holds mkdocs.yml)")
    ml.add_argument("--check", action="store_true", help="plan and verify only; write nothing")
    add_config(ml)
    add_json(ml)
    ml.set_defaults(func=_migrate_labels)

    n = sub.add_parser("new", help="scaffold an evidence wiki that builds as is")
    n.add_argument("wiki", metavar="WIKI", help="folder to create (must not already be a wiki)")
    n.add_argument("--title", help="site name (default: the folder name)")
    n.add_argument(
        "--unsigned",
        action="store_true",
        help="make no key pair: any fresh acquisition counts, signed or not (not recommended)",
    )
    n.add_argument(
        "--require-warrant",
        action="store_true",
        help="build only once every claim has a current independent review ('publisher warrant')",
    )
    add_json(n)
    n.set_defaults(func=_new)


def _promote(args: argparse.Namespace) -> int:
    from ..wiki.promote import PromotionRefused, promote
    from .progress import terminal_progress

    try:
        with terminal_progress("verifying snapshots", quiet=args.json) as progress:
            outcome = promote(
                args.run_dir,
                args.wiki,
                concept=args.concept,
                check=args.check,
                progress=progress,
                policy=wiki_policy(Path(args.wiki), args.config),
            )
    except PromotionRefused as exc:
        if args.json:
            emit(args, {"ok": False, "error": exc.one_line(), "findings": [f.to_dict() for f in exc.findings]})
        else:
            refusal_lines(exc.findings, exc.one_line())
        return exc.exit_status
    if args.check:
        verb = "would create" if outcome.created else ("would update" if outcome.changed else "leaves unchanged")
        human = f"check passed: {verb} {outcome.concept_file} ({outcome.claims} claims, {outcome.artifacts} artifacts)"
    elif outcome.written:
        verb = "created" if outcome.created else "updated"
        human = f"{verb} {outcome.concept_file}: {outcome.claims} claims from {outcome.artifacts} artifacts"
    else:
        human = f"{outcome.concept_file} is already up to date"
    emit(args, outcome.summary(), human)
    for notice in outcome.notices if not args.json else ():
        say(f"note: {notice}")
    return 0


def _check(args: argparse.Namespace) -> int:
    from ..kernel.errors import UsageError
    from ..parallel import Workers
    from ..parallel.cluster import cluster_executor, scheduler_from
    from ..site.lifecycle.checkpages import check_pages
    from ..site.lifecycle.policy import config_file_for
    from ..wiki.check import check_wiki
    from .progress import terminal_progress

    wiki = Path(args.wiki)
    if not wiki.is_dir():
        raise UsageError(missing_folder(wiki, "wiki"))
    policy = wiki_policy(wiki, args.config)
    scheduler = scheduler_from(args.scheduler)
    with contextlib.ExitStack() as stack:
        executor, workers = stack.enter_context(cluster_executor(scheduler)) if scheduler else (None, None)
        progress = stack.enter_context(terminal_progress("verifying snapshots", quiet=args.json))
        outcome = check_wiki(wiki, policy=policy, workers=Workers(executor, workers, progress))
    config = config_file_for(wiki, args.config)
    if outcome.ok and config is not None:
        # The build's other checks (prose, docs/ files, the policy's precondition), through the
        # build itself stopped before rendering: check and build cannot disagree on a page.
        outcome.findings.extend(check_pages(config, outcome))
    counts = outcome.counts_by_reason()
    report = {
        "ok": outcome.ok,
        "runs": len(outcome.runs),
        "concepts": len(outcome.concepts),
        "sources": len(outcome.sources),
        "excerpts": len(outcome.excerpts),
        "counts": counts,
        "findings": [f.to_dict() for f in outcome.findings],
        "notices": list(outcome.notices),
    }
    if args.json:
        emit(args, report)
    elif outcome.ok:
        say(
            f"wiki verified: {len(outcome.runs)} runs, {len(outcome.concepts)} concepts, "
            f"{len(outcome.sources)} sources, {len(outcome.excerpts)} excerpts"
        )
        for notice in outcome.notices:
            say(f"note: {notice}")
    else:
        refusal_lines(outcome.findings, f"wiki check failed: {summary(outcome.findings)}")
    return 0 if outcome.ok else 1


def _migrate_labels(args: argparse.Namespace) -> int:
    from ..wiki.migrate import MigrationRefused, migrate_labels

    wiki = Path(args.wiki)
    try:
        outcome = migrate_labels(wiki, policy=wiki_policy(wiki, args.config), check=args.check)
    except MigrationRefused as exc:
        if args.json:
            emit(args, {"ok": False, "error": exc.one_line(), "findings": [f.to_dict() for f in exc.findings]})
        else:
            refusal_lines(exc.findings, exc.one_line())
        return exc.exit_status
    count = sum(len(pairs) for pairs in outcome.labels.values())
    if not outcome.concepts:
        human = "every evidence label is already stable; nothing to migrate"
    else:
        verb = "would rewrite" if args.check else "rewrote"
        human = (
            f"{verb} {count} label(s) in {len(outcome.concepts)} concept(s) and {outcome.claims} claim(s) bound to them"
        )
    emit(args, outcome.summary(), human)
    return 0


def _new(args: argparse.Namespace) -> int:
    from ..site.scaffold import new_wiki

    written = new_wiki(args.wiki, title=args.title, signed=not args.unsigned, require_warrant=args.require_warrant)
    human = f"created evidence wiki {args.wiki} ({len(written)} files); build it with 'mkdocs build'"
    if not args.unsigned:
        from ..acquire.signing import user_key_dir

        human += f"\n  acquisition is signed: the private key is in {user_key_dir()} (keep it there)"
    if args.require_warrant:
        human += "\n  claims build only once independently reviewed: list a reviewer's warrant key (docs: warrant)"
    data = {"ok": True, "wiki": args.wiki, "files": written, "signed": not args.unsigned}
    emit(args, {**data, "require_warrant": args.require_warrant}, human)
    return 0
