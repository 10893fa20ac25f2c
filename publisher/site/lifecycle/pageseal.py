"""The seal and the Content-Security-Policy of one built page.

What the build does with every page MkDocs renders: scan its final HTML as a browser reads it
(:mod:`publisher.site.checks.scan`), hold every evidence element to what the wiki check verified
(:mod:`publisher.site.checks.seal`) and, when nothing is wrong, give the page its policy
(:mod:`publisher.site.checks.csp`) and the accessible names the theme leaves out.

:func:`seal_html` (the scan, the seal and the policy's value) is the costly part and needs only
the page's HTML: the build's helper processes run it while MkDocs renders the next pages
(:meth:`publisher.site.lifecycle.workers.BuildHelper.seal_later`), and this process inserts the policy
(:func:`with_policy`) and writes the page again. :func:`seal_output` does both here.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass

from ...kernel.checkids import CheckId
from ..checks import csp
from ..checks.scan import scan_page
from ..checks.seal import PageSeal, seal_page
from ..pages.a11y import name_search_dialog
from .refusal import error_finding

__all__ = ["PagePolicy", "BuiltPage", "seal_html", "seal_output", "with_policy"]


@dataclass(frozen=True)
class PagePolicy:
    """What a page's Content-Security-Policy depends on beside its own scripts and styles."""

    worker: str | None
    web_fonts: bool
    offline: bool


@dataclass(frozen=True)
class BuiltPage:
    """One rendered page and what its seal holds it to."""

    output: str
    """Its final HTML (what MkDocs writes)."""
    dest: str
    """Its path in the site (what findings and manifest entries name)."""
    src_uri: str
    """Its source (what a policy finding names)."""
    expected: Counter[tuple[str, int, int]] | None
    """The excerpts a generated page must show (None for a page the build did not generate)."""
    windows: Counter[tuple[str, int, int, str]]
    """The context windows it must show."""
    path: str = ""
    """Where MkDocs writes it (in the staging folder)."""


def seal_html(
    page: BuiltPage,
    excerpts: Mapping[tuple[str, int, int], str],
    content_hashes: Mapping[str, str],
    policy: PagePolicy,
) -> tuple[PageSeal, str | None]:
    """The seal of a page's HTML and, when it found nothing, the value of the page's policy
    (None: the page keeps none, the build is refused)."""
    scan = scan_page(page.output)
    sealed = seal_page(scan, page.dest, excerpts, content_hashes, page.expected, page.windows)
    if sealed.findings:
        return sealed, None
    value = csp.policy(
        scan.scripts, scan.styles, web_fonts=policy.web_fonts, offline=policy.offline, worker=policy.worker
    )
    return sealed, value


def with_policy(page: BuiltPage, sealed: PageSeal, value: str | None) -> str:
    """The page to publish: with its policy (and the theme's missing names) where ``value`` is
    one, else unchanged; a page that cannot carry a policy gets a finding (C-CSP) in ``sealed``."""
    if value is None:
        return page.output
    try:
        return csp.insert(name_search_dialog(page.output), value)
    except ValueError as exc:
        sealed.findings.append(error_finding(exc, page.src_uri, CheckId.CSP))
        return page.output


def seal_output(
    page: BuiltPage,
    excerpts: Mapping[tuple[str, int, int], str],
    content_hashes: Mapping[str, str],
    policy: PagePolicy,
) -> tuple[PageSeal, str]:
    """:func:`seal_html` and :func:`with_policy`, here: the seal and the page to publish."""
    sealed, value = seal_html(page, excerpts, content_hashes, policy)
    return sealed, with_policy(page, sealed, value)
