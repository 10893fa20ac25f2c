"""The Content-Security-Policy every page of an evidence site carries.

The policy is a ``<meta http-equiv>`` the hook inserts at the top of ``<head>`` once a page is
final. Scripts and styles load only from the site itself (``'self'``); the inline scripts and
style elements the theme writes are allowed by their SHA-256, computed from the page as a
browser parses it (:mod:`publisher.site.checks.scan`). The hashes are never "whatever inline
scripts the page holds": the seal first holds every script of the whole page to the scripts the
site ships (:func:`publisher.site.checks.seal.check_scripts`: an inline script only when it is
one the installed theme's templates write, :mod:`publisher.site.checks.themescripts`; a script
file only a ``.js``/``.mjs`` file of the site), and a page with any other is refused before it
gets a policy. The prose check (:mod:`publisher.site.checks.prose`) has refused any script or
style an author wrote before that. Inline event handlers, style attributes, ``javascript:``
URLs, plugins, frames and ``<base>`` are refused by the browser; a script or style rule injected
after the build does not run. What a meta policy cannot say (``frame-ancestors``, reporting)
belongs in the web server's headers.

Workers start only from files the site itself ships. With ``site_url`` set, ``worker-src`` is
pinned to the theme's worker folder under it (:func:`worker_source`, a path source ending in
``/``: the search worker Material starts, nothing else); a policy cannot name a path without a
host, so without ``site_url`` it is ``'self'``, which admits only scripts the build published:
the theme's, the evidence build's own and the ``.js`` files of ``docs/`` that ``mkdocs.yml``
names as scripts (checked to be JavaScript text alone); no other ``.js`` (or other active file)
of ``docs/`` is ever published (:mod:`publisher.site.checks.inert`) and ``check-site`` refuses
any file added after the build. The theme's configuration element (``#__config``, which names the worker) cannot be
shadowed by prose: the allow-list refuses every ``id`` or ``name`` Markdown did not make and any
beginning with ``_`` (:mod:`publisher.site.checks.prose`).
"""

from __future__ import annotations

import base64
import hashlib
import re
from collections.abc import Iterable

__all__ = ["policy", "policies", "meta", "insert", "hash_source", "worker_source", "WEB_FONT_ORIGINS", "WORKERS_PATH"]

WEB_FONT_ORIGINS = ("https://fonts.googleapis.com", "https://fonts.gstatic.com")
"""Where Material loads its web fonts from (``extra: evidence: web_fonts: true`` allows them)."""

WORKERS_PATH = "assets/javascripts/workers/"
"""Where Material ships its search worker, relative to the site's root."""

_PINNED_WORKER = re.compile(r"worker-src (https?://[^\s;'\"*]+/" + re.escape(WORKERS_PATH) + r")(?: blob:)?(?:;|$)")
_CHARSET = re.compile(r"<meta\s+charset\s*=\s*[\"']?utf-8[\"']?\s*/?>", re.IGNORECASE)
_HEAD = re.compile(r"<head(?:\s[^<>]*)?>", re.IGNORECASE)


def hash_source(text: str) -> str:
    """A CSP hash source for an inline script or style: SHA-256 of its UTF-8 text, base64."""
    digest = hashlib.sha256(text.encode("utf-8", errors="surrogatepass")).digest()
    return f"'sha256-{base64.b64encode(digest).decode('ascii')}'"


def worker_source(site_url: str | None) -> str | None:
    """The pinned worker source of a site published at ``site_url`` (None without one, or for a
    URL that is not plain http(s))."""
    if not site_url or not re.fullmatch(r"https?://[^\s;'\"*,&<>]+", site_url):
        return None
    return site_url.rstrip("/") + "/" + WORKERS_PATH


def policy(
    scripts: Iterable[str],
    styles: Iterable[str],
    *,
    web_fonts: bool = False,
    offline: bool = False,
    worker: str | None = None,
) -> str:
    """The policy of a page whose inline scripts and style elements are ``scripts`` and ``styles``.

    ``offline`` (``extra: evidence: offline: true``) also allows workers from ``blob:`` URLs,
    which only a script the policy already admits can create: the site's own ``offline.js``
    starts the theme's search worker that way on a page opened from disk
    (:mod:`publisher.site.pages.offline`). ``worker`` (:func:`worker_source`) pins workers to the
    theme's worker folder instead of the whole site.
    """
    script_hashes = sorted({hash_source(s) for s in scripts})
    style_hashes = sorted({hash_source(s) for s in styles})
    style_from = ["'self'", *style_hashes]
    font_from = ["'self'"]
    if web_fonts:
        style_from.append(WEB_FONT_ORIGINS[0])
        font_from.append(WEB_FONT_ORIGINS[1])
    directives = [
        "default-src 'none'",
        "script-src " + " ".join(["'self'", *script_hashes]),
        "script-src-attr 'none'",
        "style-src " + " ".join(style_from),
        "img-src 'self' data:",
        "font-src " + " ".join(font_from),
        "connect-src 'self'",
        "worker-src " + (worker or "'self'") + (" blob:" if offline else ""),
        "manifest-src 'self'",
        "media-src 'self'",
        "object-src 'none'",
        "frame-src 'none'",
        "base-uri 'none'",
        "form-action 'self'",
    ]
    return "; ".join(directives)


def policies(scripts: Iterable[str], styles: Iterable[str], found: str | None = None) -> set[str]:
    """Every policy a page with these inline scripts and styles may carry (fonts and offline on
    or off; workers from the site, or pinned to the worker folder that ``found``, the page's own
    policy, names)."""
    scripts, styles = list(scripts), list(styles)
    pinned = _PINNED_WORKER.search(found or "")
    workers = [None, pinned.group(1)] if pinned else [None]
    return {
        policy(scripts, styles, web_fonts=f, offline=o, worker=w)
        for f in (False, True)
        for o in (False, True)
        for w in workers
    }


def meta(value: str) -> str:
    """The ``<meta>`` element carrying ``value`` (which holds no double quote or ampersand)."""
    return f'<meta http-equiv="Content-Security-Policy" content="{value}">'


def insert(page_html: str, value: str) -> str:
    """``page_html`` with the policy right after its ``<meta charset>`` (else its ``<head>`` tag).

    The policy applies to what follows it, so it goes before any script, style or link; after the
    charset declaration, which a browser looks for in the first 1024 bytes. Raises ValueError when
    the page has neither (it cannot be given a policy).
    """
    head = _HEAD.search(page_html)
    if head is None:
        raise ValueError("the page has no <head> element to carry its Content-Security-Policy")
    charset = _CHARSET.search(page_html, head.end(), head.end() + 1024)
    at = charset.end() if charset is not None else head.end()
    return page_html[:at] + meta(value) + page_html[at:]
