"""The three generated index pages: concepts, sources and runs, each a table of links."""

from __future__ import annotations

from typing import Any

from ...kernel.refs import neutral_text
from ...wiki.markdown import markdown_text
from .model import GeneratedPage, PageModel
from .uris import concept_uri, report_uri, source_uri

__all__ = ["index_pages"]


def _head(*names: str, numbers: tuple[str, ...] = ()) -> list[dict[str, Any]]:
    return [{"text": name, "num": name in numbers} for name in names]


def index_pages(model: PageModel) -> None:
    """Fill ``concepts/index.md``, ``sources/index.md`` and ``runs/index.md``."""
    pre = model.pre
    frag = model.fragments()

    page = model.pages["concepts/index.md"]
    rows = []
    for ce in pre.concepts:
        doc = ce.doc
        rows.append(
            [
                {"text": ce.label, "href": model.href(page.src_uri, concept_uri(ce.slug))},
                {"text": ce.slug, "code": True},
                {"text": ", ".join(r.run for r in doc.front.runs) if doc else ""},
                {"text": str(len(doc.footnotes)) if doc else "0", "num": True},
            ]
        )
    head = _head("Concept", "Slug", "Runs", "Evidence footnotes", numbers=("Evidence footnotes",))
    _index(model, page, "Concepts", "Concepts promoted from verified runs.", frag.table(head, rows))

    page = model.pages["sources/index.md"]
    rows = []
    for sid, info in sorted(pre.sources.items()):
        ids = ", ".join(f"{k} {v}" for k, v in (info.meta.paper.ids().items() if info.meta.paper else ()))
        rows.append(
            [
                {"text": info.label, "href": model.href(page.src_uri, source_uri(sid)), "sub": ids},
                {"text": sid, "code": True},
                {"text": info.meta.access},
                {"text": ", ".join(info.holders)},
                {"text": str(len(info.spans)), "num": True},
            ]
        )
    head = _head("Source", "Id", "Access", "Runs", "Cited spans", numbers=("Cited spans",))
    _index(model, page, "Sources", "Every snapshot cited by accepted evidence.", frag.table(head, rows))

    page = model.pages["runs/index.md"]
    rows = []
    for ev in pre.runs:  # what the check recorded of each result: no result is read again here
        accepted = ev.accepted_count
        rows.append(
            [
                {"text": ev.slug, "href": model.href(page.src_uri, report_uri(ev.slug))},
                {"text": neutral_text(ev.title) if ev.title != ev.slug else ""},
                {"text": ev.verdict or ""},
                {"text": str(accepted) if accepted is not None else "", "num": True},
            ]
        )
    head = _head("Run", "Question", "Gate verdict", "Accepted artifacts", numbers=("Accepted artifacts",))
    _index(model, page, "Runs", "Research runs whose results this wiki publishes.", frag.table(head, rows))


def _index(model: PageModel, page: GeneratedPage, title: str, intro: str, table: Any) -> None:
    page.title = title
    page.markdown = str(
        model.markdown("index.md.j2").render(
            heading_slot=model.heading(page),
            intro=markdown_text(intro),
            table_slot=model.slot(page, str(table)),
        )
    )
