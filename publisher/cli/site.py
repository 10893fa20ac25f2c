"""``publisher check-site``: compare a built site's excerpts with its seal and the snapshots."""

from __future__ import annotations

import argparse

from ._common import add_json, emit, error_line


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Add ``check-site``."""
    p = sub.add_parser(
        "check-site",
        help="re-read a built site and check every excerpt against the seal and a fresh re-slice",
    )
    p.add_argument("site", metavar="SITE", help="the built site folder (e.g. site/)")
    p.add_argument("--wiki", required=True, metavar="WIKI", help="the wiki root whose runs hold the snapshots")
    add_json(p)
    p.set_defaults(func=_check_site)


def _check_site(args: argparse.Namespace) -> int:
    from pathlib import Path

    from ..kernel.errors import UsageError
    from ..site.checksite import check_site

    if not Path(args.site).is_dir():
        raise UsageError(f"site folder {args.site} does not exist")
    if not Path(args.wiki).is_dir():
        raise UsageError(f"wiki folder {args.wiki} does not exist")
    outcome = check_site(args.site, args.wiki)
    if outcome.ok:
        human = (
            f"site verified: {outcome.excerpts} excerpts, {outcome.snapshots} snapshot texts, "
            f"{outcome.windows} context windows on {outcome.pages} pages, {outcome.records} snapshot records"
        )
        emit(args, outcome.summary(), human)
        return 0
    if args.json:
        emit(args, outcome.summary())
    else:
        for finding in outcome.findings:
            error_line(f"publisher: {finding.one_line()}")
        error_line(f"publisher: error: site check failed: {len(outcome.findings)} finding(s)")
    return 1
