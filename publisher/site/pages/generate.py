"""Pages the evidence hook generates in memory: concepts, sources, run reports and their indexes.

Each page is Markdown rendered from a template in ``templates/site/pages/``. Everything that is
data rather than prose (titles and headings, excerpts, snapshot text, tables) goes into *slots*: the Markdown holds an
inert token, and after MkDocs has rendered the Markdown the token is replaced by HTML built here.
No Markdown extension (smart quotes, emoji, math, critic marks, abbreviations ...) ever sees an
excerpt, so none can alter a character of it. Heavy slots (a whole snapshot text, a report body)
are built only when their page is rendered, so memory holds one at a time. A page's title is
kept as plain text (:attr:`GeneratedPage.title`) and handed to the theme by
:mod:`publisher.site.pages.titles`; it never passes through Markdown or YAML.

Generated pages other than the three indexes are kept out of the navigation, so a theme that
renders the whole navigation into every page stays linear in the number of pages.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ...kernel.errors import IntegrityError
from ...kernel.reasons import Reason
from ...wiki.evidence import ConceptEvidence, RunEvidence, WikiCheck
from .. import TEMPLATES_DIR
from .claims import CLAIMS_URI, MATRIX_URI, claims_page, concept_claims, matrix_page
from .highlight import SourceBody, SourceJob, SourceText
from .indexes import index_pages
from .markup import excerpt_html
from .model import Citation, GeneratedPage, PageModel, artifact_anchor
from .source import source_page
from .uris import INDEX_URIS, concept_uri, report_uri, source_uri

__all__ = [
    "CSS_URI",
    "READER_CSS_URI",
    "READER_JS_URI",
    "SiteModel",
    "content_date",
]


CSS_URI = "assets/publisher/evidence.css"
READER_CSS_URI = "assets/publisher/reader.css"
READER_JS_URI = "assets/publisher/verify.js"

_ATX_H1 = re.compile(r" {0,3}#(?:[ \t]|$)")


def _has_heading(lines: list[str]) -> bool:
    """Whether the first line with text is an ATX level-one heading (the concept's own)."""
    first = next((line for line in lines if line.strip()), "")
    return bool(_ATX_H1.match(first))


class SiteModel(PageModel):
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
        super().__init__(
            pre,
            use_directory_urls=use_directory_urls,
            templates_dir=templates_dir or TEMPLATES_DIR,
            report_body=report_body,
            source_text=source_text,
            source_body=source_body,
        )

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
        self._notes: dict[tuple[tuple[str, int, int, str], ...], str] = {}
        for ce in pre.concepts:
            for note in ce.doc.footnotes if ce.doc else ():
                for ref in note.refs:
                    self._citations.setdefault((ref.source_id, ref.start, ref.end), []).append(
                        Citation(
                            ce.label,
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
        # Always made, so that a wiki's navigation can name them before its first claim.
        self.pages[MATRIX_URI] = GeneratedPage(MATRIX_URI, "index", "", in_nav=True)
        matrix_page(self, self.pages[MATRIX_URI])
        self.pages[CLAIMS_URI] = GeneratedPage(CLAIMS_URI, "index", "", in_nav=True)
        claims_page(self, self.pages[CLAIMS_URI])
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
                        "text": excerpt,
                        "href": self.href(page.src_uri, source_uri(ref.source_id), f"span-{ref.start}-{ref.end}"),
                        "source_id": ref.source_id,
                        "start": ref.start,
                        "end": ref.end,
                    }
                )
            token = self.slot(page, self._note(items))
            # Nothing of the author's beside the excerpt: the wiki check refuses a footnote that is
            # not exactly promotion's form, and nothing of one is shown here either.
            lines[note.first : note.last] = [f"[^{note.label}]: {token}"]
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

    def _note(self, items: list[dict[str, Any]]) -> Callable[[], str]:
        """A footnote's excerpts in their sentences, made when its page is filled: the contexts
        are read then (from the build's helpers, which read them while the pages are made).

        The HTML is made from the spans, their verified excerpts (``text``) and contexts and the
        links to them alone, so a footnote of another concept page quoting the same spans with
        the same links (the pages of one folder) gets the note made for the first, not made
        again (nor its excerpts' elements)."""
        key = tuple((item["source_id"], item["start"], item["end"], item["href"]) for item in items)

        def note() -> str:
            made = self._notes.get(key)
            if made is None:
                for item in items:
                    item["excerpt"] = excerpt_html(item["source_id"], item["start"], item["end"], item["text"])
                    item["context"] = self.contexts.around(item["source_id"], item["start"], item["end"])
                made = self._notes[key] = str(self.fragments().evidence_note(items))
            return made

        return note

    def cited_sources(self) -> list[str]:
        """Every source a concept quotes, in the order the concept pages first quote them (the
        order MkDocs fills them in)."""
        seen: dict[str, None] = {}
        for ce in self.pre.concepts:
            for note in ce.doc.footnotes if ce.doc else ():
                for ref in note.refs:
                    seen.setdefault(ref.source_id)
        return [sid for sid in seen if sid in self.pre.sources]

    def context_sources(self) -> list[str]:
        """Every source whose excerpts a page shows in their sentences: those the concepts quote
        (:meth:`cited_sources`), then the other sources of the reports, in run order. Each is read
        for its contexts once a build."""
        seen = dict.fromkeys(self.cited_sources())
        for ev in self.pre.runs:
            for sid in ev.accepted.sources():
                if sid in self.pre.sources:
                    seen.setdefault(sid)
        return list(seen)

    def _report(self, page: GeneratedPage, ev: RunEvidence) -> None:
        uri = page.src_uri
        body = self._report_body

        def report_block() -> str:
            if body is None:
                return "<p>No report renderer configured.</p>"
            return body(ev)

        sources = []
        for sid in ev.accepted.sources():
            info = self.pre.sources.get(sid)
            title = info.label if info else sid
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
            # join, not +: a Markup value would escape the paragraph tags it is added to
            return "".join((match.group(1) or "", content, match.group(3) or ""))

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
