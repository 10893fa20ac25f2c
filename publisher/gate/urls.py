"""Cited URLs (CONTRACT section 7): found in agent text, compared with what the run retrieved.

A URL an agent writes (a Markdown link or a bare URL in a report footnote, any string of an
extraction or appraisal record) claims that something was read there. It passes only as the URL
of a snapshot fetched in this run, or as an identifier link (PubMed, DOI, PubMed Central) of a
paper whose snapshot backs the artifact. URLs are compared by :func:`url_key`: as a Markdown link
holds them once parsed, with scheme and host in lower case and one trailing ``/`` ignored; the
snapshot's own ``url`` is never rewritten.
"""

from __future__ import annotations

import functools
import ipaddress
import re
from collections.abc import Iterable
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from ..kernel.eventlog import LogState
from ..kernel.eventviews import EventView
from ..kernel.ids import PaperIds
from ..kernel.vocab import EventType

if TYPE_CHECKING:
    from markdown_it import MarkdownIt

__all__ = ["followable", "link_key", "url_key", "urls_in", "identifier_keys", "fetched_urls"]

_LABEL = r"[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?"
_KEPT = r"[A-Za-z0-9\-._~!$&'()*+,;=:@/]"
_PLAIN_URL_RE = re.compile(
    rf"https?://{_LABEL}(?:\.{_LABEL})*(?:/{_KEPT}*)?(?:\?(?:{_KEPT}|\?)*)?(?:#(?:{_KEPT}|[?#])*)?"
)
"""An http(s) URL that Markdown's link normaliser gives back unchanged: a lower-case ASCII host of
plain labels, no port, no user, and a path, query and fragment of characters it never encodes
(no ``%``, no brackets, no space, nothing beyond ASCII). Tests hold the normaliser to it."""

_links: MarkdownIt | None = None


def _normaliser() -> MarkdownIt:
    """The Markdown parser whose link normaliser :func:`link_key` uses, made on first use: a run
    whose URLs are all plain never loads Markdown for them."""
    global _links
    if _links is None:
        from markdown_it import MarkdownIt

        _links = MarkdownIt("commonmark")
    return _links


_URL_RE = re.compile(r"https?://[^\s<>\"'`{}|\\^\[\]]+", re.IGNORECASE)
_TRAILING = ".,;:!?'\"»*_~"
_SPLIT_RE = re.compile(r"^([A-Za-z][A-Za-z0-9+.\-]*)://([^/?#]*)(.*)$", re.DOTALL)


def link_key(url: str) -> str:
    """A URL as a Markdown link's ``href`` holds it once parsed (percent-encoded, punycoded).

    A footnote link to ``https://e.org/Café`` reaches the assembler as ``…/Caf%C3%A9``; a
    snapshot URL is compared in this form too, so that the same address matches itself. A plain
    URL (:data:`_PLAIN_URL_RE`) is its own normal form.
    """
    if url.isascii() and _PLAIN_URL_RE.fullmatch(url) is not None:
        return url
    return str(_normaliser().normalizeLink(url))


@functools.lru_cache(maxsize=4096)
def url_key(url: str) -> str:
    """What two URLs must share to name the same retrieval (see the module docstring).

    Cached: a run's log and records name the same few URLs many times, and Markdown's link
    normaliser is the slow part of a run's re-assembly.
    """
    normal = link_key(url)
    match = _SPLIT_RE.match(normal)
    if match is None:
        return normal
    scheme, host, rest = match.groups()
    if rest.endswith("/"):
        rest = rest[:-1]
    return f"{scheme.lower()}://{host.lower()}{rest}"


def urls_in(text: str) -> list[str]:
    """The ``http(s)`` URLs written in ``text``, in order, without trailing punctuation."""
    out: list[str] = []
    for match in _URL_RE.finditer(text):
        url = match.group(0)
        while url and (url[-1] in _TRAILING or (url[-1] == ")" and url.count(")") > url.count("("))):
            url = url[:-1]
        if len(url) > len("https://") and url not in out:
            out.append(url)
    return out


_PMID_LINKS = ("pubmed.ncbi.nlm.nih.gov/{}", "www.ncbi.nlm.nih.gov/pubmed/{}")
_DOI_LINKS = ("doi.org/{}", "dx.doi.org/{}")
_PMCID_LINKS = ("pmc.ncbi.nlm.nih.gov/articles/{}", "www.ncbi.nlm.nih.gov/pmc/articles/{}")


def identifier_keys(papers: Iterable[PaperIds | None]) -> set[str]:
    """Lower-cased :func:`url_key` of every identifier link of these papers (http and https)."""
    out: set[str] = set()
    for paper in papers:
        if paper is None:
            continue
        for value, forms in ((paper.pmid, _PMID_LINKS), (paper.doi, _DOI_LINKS), (paper.pmcid, _PMCID_LINKS)):
            if not value:
                continue
            for form in forms:
                for scheme in ("https", "http"):
                    out.add(url_key(f"{scheme}://{form.format(value)}").lower())
    return out


def fetched_urls(log: LogState[EventView]) -> dict[str, list[str]]:
    """:func:`url_key` -> source ids of the log's ``fetch`` events for that URL, in log order."""
    out: dict[str, list[str]] = {}
    for event in log.events:
        if event.type is EventType.FETCH and event.source_id is not None:
            ids = out.setdefault(url_key(event.url), [])
            if event.source_id not in ids:
                ids.append(event.source_id)
    return out


def followable(url: str) -> bool:
    """Whether a reader can follow ``url`` from a published page: http(s) to a named host or a
    public address. A loopback or private address (a test server, a machine on the publisher's
    own network) names nothing a reader can reach; such a URL is shown, not linked."""
    try:
        parts = urlsplit(url)
        host = parts.hostname
    except ValueError:
        return False
    if parts.scheme not in ("http", "https") or not host:
        return False
    if host == "localhost" or host.endswith(".localhost"):
        return False
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return True
    return address.is_global
