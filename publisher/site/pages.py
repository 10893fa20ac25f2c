"""Pages the evidence hook generates in memory: concepts, sources, run reports and their indexes.

Each page is Markdown rendered from a template in ``templates/site/pages/``. Everything that is
data rather than prose (titles and headings, excerpts, snapshot text, tables) goes into *slots*: the Markdown holds an
inert token, and after MkDocs has rendered the Markdown the token is replaced by HTML built here.
No Markdown extension (smart quotes, emoji, math, critic marks, abbreviations ...) ever sees an
excerpt, so none can alter a character of it. Heavy slots (a whole snapshot text, a report body)
are built only when their page is rendered, so memory holds one at a time. A page's title is
kept as plain text (:attr:`GeneratedPage.title`) and handed to the theme by
:mod:`publisher.site.titles`; it never passes through Markdown or YAML.

Generated pages other than the three indexes are kept out of the navigation, so a theme that
renders the whole navigation into every page stays linear in the number of pages.
"""

from __future__ import annotations

import posixpath
import re
import secrets
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import jinja2
from markupsafe import Markup
from mkdocs.structure.files import File
from mkdocs.utils import get_relative_url

from ..kernel.errors import IntegrityError
from ..kernel.reasons import Reason
from ..wiki.evidence import ConceptEvidence, RunEvidence, WikiCheck
from . import TEMPLATES_DIR
from .claimpages import MATRIX_URI, concept_claims, matrix_page
from .context import SentenceContexts
from .highlight import SourceBody, SourceJob, SourceText, render_source_body
from .indexes import index_pages
from .markup import excerpt_html
from .sourcepage import source_page
from .uris import INDEX_URIS, concept_uri, report_uri, source_uri

__all__ = [
    "TEMPLATES_DIR",
    "CSS_URI",
    "INDEX_URIS",
    "Slot",
    "GeneratedPage",
    "SiteModel",
    "Citation",
    "artifact_anchor",
    "source_uri",
    "concept_uri",
    "report_uri",
    "STATIC_DIR",
    "READER_CSS_URI",
    "READER_JS_URI",
    "content_date",
]


CSS_URI = "assets/publisher/evidence.css"
STATIC_DIR = Path(__file__).resolve().parent / "static"
"""Files served as they are: the reader's stylesheet and the in-browser verifier."""
READER_CSS_URI = "assets/publisher/reader.css"
READER_JS_URI = "assets/publisher/verify.js"

_ATX_H1 = re.compile(r" {0,3}#(?:[ \t]|$)")


def _has_heading(lines: list[str]) -> bool:
    """Whether the first line with text is an ATX level-one heading (the concept's own)."""
    first = next((line for line in lines if line.strip()), "")
    return bool(_ATX_H1.match(first))


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
    """The page title as plain text; it reaches HTML only through :mod:`publisher.site.titles`."""
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


class SiteModel:
    """Builds every generated page of a wiki from a passed wiki check."""

    def __init__(
        self,
        pre: WikiCheck,
        *,
        use_directory_urls: bool,
        templates_dir: Path | None = None,
        report_body: Callable[[RunEvidence], str] | None = None,
        source_text: SourceText | None = None,
        source_body: Callable[[SourceJob], SourceBody] | None = None,
    ) -> None:
        self.pre = pre
        self.contexts = SentenceContexts(pre)
        self.source_text = source_text or SourceText()
        self.use_directory_urls = use_directory_urls
        folder = templates_dir or TEMPLATES_DIR
        self._md = _environment(folder / "pages", autoescape=False)
        self._html = _environment(folder, autoescape=True)
        self._fragments: Any = None
        self._report_body = report_body
        self._source_body = source_body or render_source_body
        self._token = secrets.token_hex(6)
        self._count = 0
        self._urls: dict[str, str] = {}
        self.pages: dict[str, GeneratedPage] = {}

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
        """A slot holding the page's ``<h1>``, its title escaped by the HTML templates."""
        return self.slot(page, str(self.fragments().heading(page.title)))

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

    # -- pages ---------------------------------------------------------------------------------

    def build(self) -> list[GeneratedPage]:
        """Every generated page, indexes first."""
        pre = self.pre
        self.pages = {}
        self._events: dict[str, list[tuple[str, Any]]] = {}
        for ev in pre.runs:
            for event in ev.events:
                if event.source_id is not None:  # a fetch_failed attempt concerns no source
                    self._events.setdefault(event.source_id, []).append((ev.slug, event))
        self._citations: dict[tuple[str, int, int], list[Citation]] = {}
        for ce in pre.concepts:
            for note in ce.doc.footnotes if ce.doc else ():
                for ref in note.refs:
                    self._citations.setdefault((ref.source_id, ref.start, ref.end), []).append(
                        Citation(
                            ce.doc.front.title if ce.doc else ce.slug,
                            f"footnote [^{note.label}]",
                            concept_uri(ce.slug),
                            f"fn:{note.label}",
                        )
                    )
        for ev in pre.runs:
            for key, uses in ev.accepted.items():
                for aid, index in uses:
                    self._citations.setdefault(key, []).append(
                        Citation(f"Report: {ev.slug}", aid, report_uri(ev.slug), artifact_anchor(aid, index))
                    )
        for uri in INDEX_URIS:
            self.pages[uri] = GeneratedPage(uri, "index", "", in_nav=True)
        for ce in pre.concepts:
            self.pages[concept_uri(ce.slug)] = GeneratedPage(concept_uri(ce.slug), "concept", "", origin=ce.path)
        for sid in sorted(pre.sources):
            self.pages[source_uri(sid)] = GeneratedPage(source_uri(sid), "source", "")
        for ev in pre.runs:
            self.pages[report_uri(ev.slug)] = GeneratedPage(report_uri(ev.slug), "report", "")
        for ce in pre.concepts:
            self._concept(self.pages[concept_uri(ce.slug)], ce)
        for sid, info in sorted(pre.sources.items()):
            source_page(self, self.pages[source_uri(sid)], sid, info)
        for ev in pre.runs:
            self._report(self.pages[report_uri(ev.slug)], ev)
        index_pages(self)
        if self.has_claims:
            self.pages[MATRIX_URI] = GeneratedPage(MATRIX_URI, "index", "", in_nav=True)
            matrix_page(self, self.pages[MATRIX_URI])
        return list(self.pages.values())

    def _concept(self, page: GeneratedPage, ce: ConceptEvidence) -> None:
        doc = ce.doc
        if doc is None:
            raise IntegrityError(f"{ce.rel} did not parse", reason=Reason.SCHEMA_ERROR)
        lines = doc.body.split("\n")
        for note in sorted(doc.footnotes, key=lambda n: n.first, reverse=True):
            items = []
            for ref in note.refs:
                key = (ref.source_id, ref.start, ref.end)
                excerpt = self.pre.excerpts.get(key)
                if excerpt is None:
                    raise IntegrityError(
                        f"{ce.rel} footnote [^{note.label}] cites an unverified span",
                        reason=Reason.SOURCE_OUTSIDE_ACCEPTED,
                    )
                page.excerpts[key] += 1
                items.append(
                    {
                        "excerpt": Markup(excerpt_html(ref.source_id, ref.start, ref.end, excerpt)),
                        "context": self.contexts.around(ref.source_id, ref.start, ref.end),
                        "href": self.href(page.src_uri, source_uri(ref.source_id), f"span-{ref.start}-{ref.end}"),
                        "source_id": ref.source_id,
                        "start": ref.start,
                        "end": ref.end,
                    }
                )
            token = self.slot(page, str(self.fragments().evidence_note(items)))
            rest = f" {note.rest}" if note.rest else ""
            lines[note.first : note.last] = [f"[^{note.label}]: {token}{rest}"]
        runs = []
        for entry in doc.front.runs:
            ev = self.pre.run_by_slug(entry.run)
            runs.append(
                {
                    "run": entry.run,
                    "promoted_at": entry.promoted_at,
                    "inputs_hash": entry.inputs_hash,
                    "href": self.href(page.src_uri, report_uri(ev.slug)) if ev else None,
                }
            )
        page.title = doc.front.title
        page.markdown = self._md.get_template("concept.md.j2").render(
            heading_slot="" if _has_heading(lines) else self.heading(page),
            body="\n".join(lines),
            claims_slot=concept_claims(self, page, ce.slug),
            provenance_slot=self.slot(page, str(self.fragments().provenance(runs))),
        )

    def _report(self, page: GeneratedPage, ev: RunEvidence) -> None:
        uri = page.src_uri
        body = self._report_body

        def report_block() -> str:
            if body is None:
                return "<p>No report renderer configured.</p>"
            return body(ev)

        sources = []
        for sid in sorted({key[0] for key in ev.accepted}):
            info = self.pre.sources.get(sid)
            title = info.meta.title if info and info.meta.title else sid
            sources.append({"href": self.href(uri, source_uri(sid)), "text": title, "note": sid})
        page.title = f"Report: {ev.slug}"
        page.markdown = self._md.get_template("report.md.j2").render(
            heading_slot=self.heading(page),
            report_slot=self.slot(page, report_block),
            sources_slot=self.slot(page, str(self.fragments().links(sources))),
        )

    # -- filling -------------------------------------------------------------------------------

    def fill(self, uri: str, html: str) -> str:
        """Replace every slot token of page ``uri`` in its rendered HTML; each must appear once.

        One pass over the page, whatever the number of slots. A token alone in a paragraph is
        replaced with the paragraph (block content such as a table or the snapshot text).
        """
        page = self.pages.get(uri)
        if page is None:
            return html
        pattern = re.compile(rf"(<p>)?(pubslot{self._token}n\d{{6}}x)(</p>)?")
        seen: Counter[str] = Counter()

        def replace(match: re.Match[str]) -> str:
            token = match.group(2)
            seen[token] += 1
            value = page.slots.get(token)
            if value is None or seen[token] > 1:
                return match.group(0)
            content = value() if callable(value) else value
            if match.group(1) and match.group(3):
                return content
            return (match.group(1) or "") + content + (match.group(3) or "")

        filled = pattern.sub(replace, html)
        wrong = [t for t in page.slots if seen[t] != 1] + [t for t in seen if t not in page.slots]
        if wrong:
            raise IntegrityError(
                f"page {uri}: {len(wrong)} slot(s) did not survive Markdown exactly once; refusing to publish",
                reason=Reason.EXCERPT_MISMATCH,
            )
        return filled


def content_date(pre: WikiCheck) -> str:
    """The date a build shows where MkDocs would show the build's own (a sitemap's ``lastmod``):
    the latest run creation or promotion the wiki records, so the same inputs give the same site.
    ``SOURCE_DATE_EPOCH``, when set, takes precedence (MkDocs honours it itself)."""
    stamps = [str(ev.config.get("created_at") or "") for ev in pre.runs]
    stamps += [str(entry.promoted_at) for ce in pre.concepts if ce.doc for entry in ce.doc.front.runs]
    days = [s[:10] for s in stamps if re.fullmatch(r"\d{4}-\d{2}-\d{2}", s[:10])]
    return max(days, default="1970-01-01")
