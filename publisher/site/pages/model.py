"""The page value types the page modules share: a generated page, its slots, and the model of a
wiki's pages they are written into.

:class:`PageModel` is what :mod:`.source`, :mod:`.indexes` and :mod:`.claims` use while they write
a page (links, slots, templates, the wiki check); :class:`~publisher.site.pages.generate.SiteModel`
extends it with the generation of every page, so those modules never import the generator.
"""

from __future__ import annotations

import posixpath
import secrets
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import jinja2
from mkdocs.structure.files import File
from mkdocs.utils import get_relative_url

from ...kernel.refs import neutral_text
from ...wiki.evidence import RunEvidence, WikiCheck
from .context import ContextSource, SentenceContexts, context_source
from .highlight import SourceBody, SourceJob, SourceText, render_source_body
from .uris import report_uri, source_uri

__all__ = ["Slot", "Citation", "GeneratedPage", "PageModel", "artifact_anchor"]


Slot = str | Callable[[], str]
"""HTML for a slot, or a function producing it when the page is rendered."""


@dataclass(frozen=True)
class Citation:
    """A page citing a span: what a source page's "Cited by" column links to."""

    label: str
    """What the link says (a concept's title, ``Report: <run>``)."""
    detail: str
    """Its hover text: the footnote label or the artifact id."""
    target: str
    fragment: str


def artifact_anchor(artifact_id: str, index: int) -> str:
    """The id of claim ``index`` of an accepted artifact on its run's report page."""
    return f"{artifact_id.replace(':', '-')}-{index + 1}"


@dataclass
class GeneratedPage:
    """One page to add: its Markdown, its slots, and the excerpts and windows its output must show.

    ``windows`` holds ``(source id, start, end, sha256 of text[start:end])`` of each context
    window, filled when the page's snapshot slot is rendered (``source_text: windows``).
    """

    src_uri: str
    kind: str
    markdown: str
    title: str = ""
    """The page title as plain text; it reaches HTML only through :mod:`publisher.site.pages.titles`."""
    slots: dict[str, Slot] = field(default_factory=dict)
    in_nav: bool = False
    excerpts: Counter[tuple[str, int, int]] = field(default_factory=Counter)
    windows: Counter[tuple[str, int, int, str]] = field(default_factory=Counter)
    origin: Path | None = None
    """The file whose prose the page shows (a concept file), for findings with a line number."""


def _environment(templates_dir: Path, autoescape: bool) -> jinja2.Environment:
    return jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(templates_dir)),
        autoescape=autoescape,
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=True,
    )


class PageModel:
    """What the page modules share while a wiki's pages are generated: the passed wiki check, the
    templates, links between pages and slots (:class:`~publisher.site.pages.generate.SiteModel`
    builds the pages)."""

    def __init__(
        self,
        pre: WikiCheck,
        *,
        use_directory_urls: bool,
        templates_dir: Path,
        report_body: Callable[[RunEvidence], str] | None = None,
        source_text: SourceText | None = None,
        source_body: Callable[[SourceJob], SourceBody] | None = None,
    ) -> None:
        self.pre = pre
        self.contexts = SentenceContexts(pre)
        self.source_text = source_text or SourceText()
        self.use_directory_urls = use_directory_urls
        self._md = _environment(templates_dir / "pages", autoescape=False)
        self._html = _environment(templates_dir, autoescape=True)
        self._fragments: Any = None
        self._report_body = report_body
        self._source_body = source_body or render_source_body
        self._token = secrets.token_hex(6)
        self._count = 0
        self._urls: dict[str, str] = {}
        self.pages: dict[str, GeneratedPage] = {}
        self._events: dict[str, list[tuple[str, Any]]] = {}
        self._citations: dict[tuple[str, int, int], list[Citation]] = {}

    # -- links ---------------------------------------------------------------------------------

    def url(self, uri: str) -> str:
        """The page URL MkDocs gives the file ``uri``."""
        hit = self._urls.get(uri)
        if hit is None:
            hit = self._urls[uri] = File(uri, None, "", self.use_directory_urls).url
        return hit

    def href(self, page: str, target: str, fragment: str = "") -> str:
        """A relative link from page ``page`` to page ``target`` (both src URIs)."""
        return get_relative_url(self.url(target), self.url(page)) + (f"#{fragment}" if fragment else "")

    @staticmethod
    def md_link(page: str, target: str) -> str:
        """A relative Markdown link target (MkDocs validates and rewrites it)."""
        return posixpath.relpath(target, posixpath.dirname(page) or ".")

    @staticmethod
    def report_page(slug: str) -> str:
        return report_uri(slug)

    def source_links(self, ev: RunEvidence) -> dict[str, str]:
        """Each source a run holds, as a link from the run's report page to its source page."""
        page = report_uri(ev.slug)
        return {
            sid: self.href(page, source_uri(sid)) for sid, info in self.pre.sources.items() if ev.slug in info.holders
        }

    def report_contexts(self, ev: RunEvidence) -> dict[str, tuple[str, str, bool, bool]]:
        """The sentence context of every excerpt ``ev``'s report shows, keyed ``source_id#start-end``."""
        out = {}
        for sid, start, end in sorted(ev.accepted):
            c = self.contexts.around(sid, start, end)
            out[f"{sid}#{start}-{end}"] = (c.before, c.after, c.cut_before, c.cut_after)
        return out

    def report_context_sources(self, ev: RunEvidence) -> list[ContextSource]:
        """Where the contexts of :meth:`report_contexts` are read from: for a build's helper, which
        reads them beside the report (:func:`publisher.site.pages.context.keyed_contexts`)."""
        spans: dict[str, set[tuple[int, int]]] = {}
        for sid, start, end in ev.accepted:
            spans.setdefault(sid, set()).add((start, end))
        return [context_source(self.pre, sid, chosen) for sid, chosen in sorted(spans.items())]

    # -- helpers for the page modules (sourcepage, indexes) ----------------------------------------

    def slot(self, page: GeneratedPage, value: Slot) -> str:
        """A token for ``value`` in ``page``'s Markdown, replaced by it once the page is rendered."""
        self._count += 1
        token = f"pubslot{self._token}n{self._count:06d}x"
        page.slots[token] = value
        return token

    def signed(self) -> bool:
        """Whether the wiki lists trusted keys (CONTRACT 12): source pages say if provenance is signed."""
        return self.pre.policy.signed

    def heading(self, page: GeneratedPage) -> str:
        """A slot holding the page's ``<h1>``, its title escaped by the HTML templates and shown as
        the theme shows it (:func:`publisher.kernel.refs.neutral_text`: no bidi control, no look of
        evidence)."""
        return self.slot(page, str(self.fragments().heading(neutral_text(page.title))))

    def fragments(self) -> Any:
        """The macros of ``fragments.html.j2`` (autoescaped HTML)."""
        if self._fragments is None:
            self._fragments = self._html.get_template("fragments.html.j2").make_module({})
        return self._fragments

    def markdown(self, name: str) -> jinja2.Template:
        """A page skeleton of ``templates/site/pages/`` (Markdown)."""
        return self._md.get_template(name)

    def events_of(self, source_id: str) -> list[tuple[str, Any]]:
        """(run slug, event) of every retrieval event naming ``source_id``."""
        return self._events.get(source_id, [])

    def citations_of(self, source_id: str, start: int, end: int) -> list[Citation]:
        """The concept footnotes and report artifacts citing a span, concepts first."""
        return self._citations.get((source_id, start, end), [])

    def source_body(self, job: SourceJob) -> SourceBody:
        """A source page's text (from the build's helper processes when there are any)."""
        return self._source_body(job)

    @property
    def has_claims(self) -> bool:
        """Whether any concept publishes a claim (then the matrix page and ``claims.json`` exist)."""
        return any(state.entry is not None for state in self.pre.claims)
