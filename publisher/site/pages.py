"""Pages the evidence hook generates in memory: concepts, sources, run reports and their indexes.

Each page is Markdown rendered from a template in ``templates/site/pages/``. Everything that is
data rather than prose (excerpts, snapshot text, tables) goes into *slots*: the Markdown holds an
inert token, and after MkDocs has rendered the Markdown the token is replaced by HTML built here.
No Markdown extension (smart quotes, emoji, math, critic marks, abbreviations ...) ever sees an
excerpt, so none can alter a character of it. Heavy slots (a whole snapshot text, a report body)
are built only when their page is rendered, so memory holds one at a time.

Generated pages other than the three indexes are kept out of the navigation, so a theme that
renders the whole navigation into every page stays linear in the number of pages.
"""

from __future__ import annotations

import itertools
import posixpath
import secrets
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import jinja2
import yaml
from markupsafe import Markup
from mkdocs.structure.files import File
from mkdocs.utils import get_relative_url

from ..concepts import markdown_text
from ..errors import IntegrityError
from ..preflight import ConceptEvidence, Preflight, RunEvidence, SourceInfo
from ..reasons import Reason
from ..store import SnapshotStore
from . import TEMPLATES_DIR
from .seal import SNAPSHOT_CLASS, escape_text, excerpt_html

__all__ = [
    "TEMPLATES_DIR",
    "CSS_URI",
    "INDEX_URIS",
    "Slot",
    "GeneratedPage",
    "SiteModel",
    "source_uri",
    "concept_uri",
    "report_uri",
    "snapshot_html",
]


CSS_URI = "assets/publisher/evidence.css"
CONCEPTS_INDEX = "concepts/index.md"
SOURCES_INDEX = "sources/index.md"
RUNS_INDEX = "runs/index.md"
INDEX_URIS = (CONCEPTS_INDEX, SOURCES_INDEX, RUNS_INDEX)

Slot = str | Callable[[], str]
"""HTML for a slot, or a function producing it when the page is rendered."""


def source_uri(source_id: str) -> str:
    """The source page: its link path names the source id."""
    return f"sources/{source_id}.md"


def concept_uri(slug: str) -> str:
    return f"concepts/{slug}.md"


def report_uri(slug: str) -> str:
    return f"runs/{slug}/report.md"


@dataclass
class GeneratedPage:
    """One page to add: its Markdown, its slots, and the excerpts its output must show."""

    src_uri: str
    kind: str
    markdown: str
    slots: dict[str, Slot] = field(default_factory=dict)
    in_nav: bool = False
    excerpts: Counter[tuple[str, int, int]] = field(default_factory=Counter)


def snapshot_html(source_id: str, text: str, spans: set[tuple[int, int]]) -> str:
    """The snapshot text as ``<pre>``, every cited span highlighted and anchored.

    Overlapping spans are split into segments at every span boundary; each covered segment is
    one ``<mark>`` carrying its own offsets and the spans covering it, so the markup nests
    correctly whatever the overlaps. A span's anchor ``span-<start>-<end>`` is the id of the
    mark where it starts (an empty anchor element when several spans start there).
    """
    bounds = sorted({0, len(text)} | {s for s, _ in spans} | {e for _, e in spans})
    starting: dict[int, list[tuple[int, int]]] = {}
    for span in sorted(spans, key=lambda se: (se[0], -se[1])):
        starting.setdefault(span[0], []).append(span)
    active: set[tuple[int, int]] = set()
    out = [f'<pre class="{SNAPSHOT_CLASS}" data-source-id="{source_id}">']
    for a, b in itertools.pairwise(bounds):
        active = {span for span in active if span[1] > a}
        opening = starting.get(a, [])
        active.update(opening)
        segment = escape_text(text[a:b])
        if not active:
            out.append(segment)
            continue
        anchor = ""
        if opening:
            first, *others = opening
            out.extend(f'<span class="evidence-anchor" id="span-{s}-{e}"></span>' for s, e in others)
            anchor = f' id="span-{first[0]}-{first[1]}"'
        covering = " ".join(f"{s}-{e}" for s, e in sorted(active))
        out.append(
            f'<mark class="evidence-span"{anchor} data-start="{a}" data-end="{b}" data-spans="{covering}">'
            f"{segment}</mark>"
        )
    out.append("</pre>")
    return "".join(out)


def _environment(templates_dir: Path, autoescape: bool) -> jinja2.Environment:
    return jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(templates_dir)),
        autoescape=autoescape,
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=True,
    )


class SiteModel:
    """Builds every generated page of a wiki from a passed preflight."""

    def __init__(
        self,
        pre: Preflight,
        *,
        use_directory_urls: bool,
        templates_dir: Path | None = None,
        report_body: Callable[[RunEvidence], str] | None = None,
    ) -> None:
        self.pre = pre
        self.use_directory_urls = use_directory_urls
        folder = templates_dir or TEMPLATES_DIR
        self._md = _environment(folder / "pages", autoescape=False)
        self._html = _environment(folder, autoescape=True)
        self._fragments: Any = None
        self._report_body = report_body
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

    # -- helpers -------------------------------------------------------------------------------

    def _slot(self, page: GeneratedPage, value: Slot) -> str:
        self._count += 1
        token = f"pubslot{self._token}n{self._count:06d}x"
        page.slots[token] = value
        return token

    def _frag(self) -> Any:
        if self._fragments is None:
            self._fragments = self._html.get_template("fragments.html.j2").make_module({})
        return self._fragments

    @staticmethod
    def _front(title: str) -> str:
        return yaml.safe_dump({"title": title}, allow_unicode=True, width=10_000).rstrip("\n")

    # -- pages ---------------------------------------------------------------------------------

    def build(self) -> list[GeneratedPage]:
        """Every generated page, indexes first."""
        pre = self.pre
        self.pages = {}
        for uri in INDEX_URIS:
            self.pages[uri] = GeneratedPage(uri, "index", "", in_nav=True)
        for ce in pre.concepts:
            self.pages[concept_uri(ce.slug)] = GeneratedPage(concept_uri(ce.slug), "concept", "")
        for sid in pre.sources:
            self.pages[source_uri(sid)] = GeneratedPage(source_uri(sid), "source", "")
        for ev in pre.runs:
            self.pages[report_uri(ev.slug)] = GeneratedPage(report_uri(ev.slug), "report", "")
        for ce in pre.concepts:
            self._concept(self.pages[concept_uri(ce.slug)], ce)
        for sid, info in sorted(pre.sources.items()):
            self._source(self.pages[source_uri(sid)], sid, info)
        for ev in pre.runs:
            self._report(self.pages[report_uri(ev.slug)], ev)
        self._indexes()
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
                        "href": self.href(page.src_uri, source_uri(ref.source_id), f"span-{ref.start}-{ref.end}"),
                        "source_id": ref.source_id,
                        "start": ref.start,
                        "end": ref.end,
                    }
                )
            token = self._slot(page, str(self._frag().evidence_note(items)))
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
        page.markdown = self._md.get_template("concept.md.j2").render(
            front_matter=self._front(doc.front.title),
            body="\n".join(lines),
            provenance_slot=self._slot(page, str(self._frag().provenance(runs))),
        )

    def _source(self, page: GeneratedPage, sid: str, info: SourceInfo) -> None:
        meta = info.meta
        uri = page.src_uri
        view = {
            "source_id": sid,
            "url": meta.url,
            "title": meta.title,
            "paper_ids": list(meta.paper.ids().items()) if meta.paper else [],
            "access": meta.access.value,
            "origin": meta.origin,
            "retrieved_at": meta.retrieved_at,
            "content_hash": meta.content_hash,
            "record_hash": meta.record_hash,
            "asset_path": meta.asset_path,
            "asset_sha256": meta.asset_sha256,
            "chars": meta.chars,
        }
        holders = [{"slug": s, "href": self.href(uri, report_uri(s))} for s in info.holders]
        events = []
        for ev in self.pre.runs:
            if ev.slug not in info.holders:
                continue
            for event in ev.events:
                if event.source_id == sid:
                    events.append(
                        {
                            "run": ev.slug,
                            "event_id": event.event_id,
                            "type": event.type.value,
                            "at": event.at,
                            "fresh": event.fresh,
                            "actor": event.actor,
                            "detail": event.detail,
                        }
                    )
        spans = []
        for start, end in sorted(info.spans):
            spans.append({"start": start, "end": end, "cited_by": self._cited_by(uri, sid, start, end)})
        expected = meta.content_hash
        folder = info.sources_dir

        def text_block() -> str:
            snap = SnapshotStore(folder).read(sid)
            if snap.content_hash != expected:
                raise IntegrityError(f"snapshot {sid} changed during the build", reason=Reason.SNAPSHOT_HASH_MISMATCH)
            return snapshot_html(sid, snap.text, info.spans)

        page.markdown = self._md.get_template("source.md.j2").render(
            front_matter=self._front(meta.title or sid),
            title=markdown_text(meta.title or sid),
            meta_slot=self._slot(page, str(self._frag().source_meta(view, holders))),
            events_slot=self._slot(page, str(self._frag().events(events))),
            spans_slot=self._slot(page, str(self._frag().spans(spans))),
            text_slot=self._slot(page, text_block),
        )

    def _cited_by(self, page: str, sid: str, start: int, end: int) -> list[dict[str, Any]]:
        out: list[dict[str, Any]] = []
        for ev in self.pre.runs:
            for aid, _ in ev.accepted.get((sid, start, end), []):
                out.append({"label": f"{ev.slug}: {aid}", "href": self.href(page, report_uri(ev.slug))})
        for ce in self.pre.concepts:
            for note in ce.doc.footnotes if ce.doc else ():
                if any((r.source_id, r.start, r.end) == (sid, start, end) for r in note.refs):
                    label = f"concept {ce.slug} [^{note.label}]"
                    out.append({"label": label, "href": self.href(page, concept_uri(ce.slug))})
        return out

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
            sources.append({"href": self.href(uri, source_uri(sid)), "text": title, "note": f"({sid[:16]}…)"})
        page.markdown = self._md.get_template("report.md.j2").render(
            front_matter=self._front(f"Report: {ev.slug}"),
            slug=markdown_text(ev.slug),
            report_slot=self._slot(page, report_block),
            sources_slot=self._slot(page, str(self._frag().links(sources))),
        )

    def _indexes(self) -> None:
        pre = self.pre
        frag = self._frag()

        page = self.pages[CONCEPTS_INDEX]
        rows = []
        for ce in pre.concepts:
            doc = ce.doc
            title = doc.front.title if doc else ce.slug
            rows.append(
                [
                    {"text": title, "href": self.href(page.src_uri, concept_uri(ce.slug))},
                    {"text": ce.slug, "code": True},
                    {"text": ", ".join(r.run for r in doc.front.runs) if doc else ""},
                    {"text": str(len(doc.footnotes)) if doc else "0"},
                ]
            )
        page.markdown = self._index(
            page,
            "Concepts",
            "Concepts promoted from verified runs.",
            frag.table(["Concept", "Slug", "Runs", "Evidence footnotes"], rows),
        )

        page = self.pages[SOURCES_INDEX]
        rows = []
        for sid, info in sorted(pre.sources.items()):
            ids = ", ".join(f"{k} {v}" for k, v in (info.meta.paper.ids().items() if info.meta.paper else ()))
            rows.append(
                [
                    {"text": info.meta.title or sid, "href": self.href(page.src_uri, source_uri(sid))},
                    {"text": sid, "code": True},
                    {"text": info.meta.access.value},
                    {"text": ids},
                    {"text": ", ".join(info.holders)},
                    {"text": str(len(info.spans))},
                ]
            )
        page.markdown = self._index(
            page,
            "Sources",
            "Every snapshot cited by accepted evidence.",
            frag.table(["Source", "Id", "Access", "Paper ids", "Runs", "Cited spans"], rows),
        )

        page = self.pages[RUNS_INDEX]
        rows = []
        for ev in pre.runs:
            result = ev.result
            rows.append(
                [
                    {"text": ev.slug, "href": self.href(page.src_uri, report_uri(ev.slug))},
                    {"text": ev.title if ev.title != ev.slug else ""},
                    {"text": result.gate.verdict if result else ""},
                    {"text": str(result.counts.accepted) if result else ""},
                ]
            )
        page.markdown = self._index(
            page,
            "Runs",
            "Research runs whose results this wiki publishes.",
            frag.table(["Run", "Question", "Gate verdict", "Accepted artifacts"], rows),
        )

    def _index(self, page: GeneratedPage, title: str, intro: str, table: Any) -> str:
        return str(
            self._md.get_template("index.md.j2").render(
                front_matter=self._front(title),
                title=markdown_text(title),
                intro=markdown_text(intro),
                table_slot=self._slot(page, str(table)),
            )
        )

    # -- filling -------------------------------------------------------------------------------

    def fill(self, uri: str, html: str) -> str:
        """Replace every slot token of page ``uri`` in its rendered HTML; each must appear once."""
        page = self.pages.get(uri)
        if page is None:
            return html
        for token, value in page.slots.items():
            block = f"<p>{token}</p>"
            count = html.count(token)
            if count != 1:
                raise IntegrityError(
                    f"page {uri}: slot {token} appears {count} times after Markdown; refusing to publish",
                    reason=Reason.EXCERPT_MISMATCH,
                )
            content = value() if callable(value) else value
            html = html.replace(block, content, 1) if block in html else html.replace(token, content, 1)
        return html
