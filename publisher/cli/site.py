"""``publisher check-site``: compare a built site's excerpts with its seal and the snapshots."""

from __future__ import annotations

import argparse

from ..kernel.findings import summary
from ._common import add_config, add_json, emit, missing_folder, refusal_lines, wiki_policy


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Add ``check-site``."""
    p = sub.add_parser(
        "check-site",
        help="verify a built site: every file against its manifest, every excerpt against a fresh re-slice",
    )
    p.add_argument("site", metavar="SITE", help="the built site folder (e.g. site/)")
    p.add_argument("--wiki", required=True, metavar="WIKI", help="the wiki root whose runs hold the snapshots")
    p.add_argument(
        "--expect",
        metavar="sha256:HEX",
        help="the manifest digest the site must have (e.g. that of a site rebuilt from the same inputs)",
    )
    add_config(p)
    add_json(p)
    p.set_defaults(func=_check_site)


def _check_site(args: argparse.Namespace) -> int:
    from pathlib import Path

    from ..kernel.canonical import DIGEST_RE
    from ..kernel.errors import UsageError
    from ..site.checks.checksite import check_site

    if not Path(args.site).is_dir():
        raise UsageError(missing_folder(args.site, "site"))
    if not Path(args.wiki).is_dir():
        raise UsageError(missing_folder(args.wiki, "wiki"))
    if args.expect is not None and not DIGEST_RE.fullmatch(args.expect):
        raise UsageError(f"--expect must be sha256: and 64 lowercase hex digits, not {args.expect!r}")
    outcome = check_site(args.site, args.wiki, expect=args.expect, policy=wiki_policy(Path(args.wiki), args.config))
    digest = f"manifest {outcome.manifest_digest}" if outcome.manifest_digest else "no manifest"
    if outcome.ok:
        human = (
            f"site verified: {outcome.files} files as sealed, {outcome.excerpts} excerpts, "
            f"{outcome.snapshots} snapshot texts, {outcome.windows} context windows on {outcome.pages} pages, "
            f"{outcome.records} snapshot records; {digest}; trusted: {outcome.trust}"
        )
        emit(args, outcome.summary(), human)
        return 0
    if args.json:
        emit(args, outcome.summary())
    else:
        refusal_lines(
            outcome.findings, f"site check failed: {summary(outcome.findings)}; {digest}; trusted: {outcome.trust}"
        )
    return 1
