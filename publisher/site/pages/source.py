"""A source page: the snapshot's metadata, its retrieval events, its cited spans (each with the
pages that cite it) and the snapshot text with every cited span highlighted, whole or in context
windows (:mod:`publisher.site.pages.highlight`)."""

from __future__ import annotations

from typing import Any

from ...acquire.notices import Notice
from ...gate.urls import followable
from ...kernel.models import Surface, SurfaceType
from ...kernel.refs import neutral_text
from ...kernel.store import read_snapshot
from ...kernel.views import SurfaceView
from ...parallel import SnapshotCheck
from ...wiki.evidence import SourceInfo
from ...wiki.notices import notice_index, retracted_sources, source_doi
from ...wiki.revisions import revision_index, window_change
from .highlight import source_job
from .markup import excerpt_html
from .model import GeneratedPage, PageModel
from .uris import source_uri

__all__ = ["source_page"]


def source_page(model: PageModel, page: GeneratedPage, sid: str, info: SourceInfo) -> None:
    """Fill ``page`` (a source page) from the verified snapshot ``sid``."""
    meta = info.meta
    uri = page.src_uri
    job = source_job(sid, info, model.source_text)
    view = {
        "source_id": sid,
        "url": meta.url,
        "url_text": neutral_text(meta.url) if meta.url is not None else None,
        "url_live": followable(meta.url or ""),
        "title": neutral_text(meta.title) if meta.title is not None else None,
        "paper_ids": _paper_ids(meta),
        "title_basis": _neutral(_title_basis(meta)),
        "notice": _neutral(_notice(model, sid)),
        "access": meta.access,
        "origin": meta.origin,
        "retrieved_at": meta.retrieved_at,
        "content_hash": meta.content_hash,
        "record_hash": meta.record_hash,
        "asset_path": meta.asset.path if meta.asset else None,
        "asset_sha256": meta.asset.sha256 if meta.asset else None,
        "chars": meta.text_length,
        "windows": job.mode in ("windows", "proofs"),
        "proofs": job.mode == "proofs",
        "surface": _surface(meta.surface),
    }
    holders = [{"slug": s, "href": model.href(uri, model.report_page(s))} for s in info.holders]
    events = [
        {
            "run": slug,
            "event_id": event.event_id,
            "type": event.type.value,
            "at": event.at,
            "fresh": event.fresh,
            "signed_by": event.sig.key_id if event.sig else None,
            "actor": neutral_text(event.actor) if event.actor else event.actor,
            "detail": neutral_text(event.detail) if event.detail else event.detail,
        }
        for slug, event in model.events_of(sid)
        if slug in info.holders
    ]
    spans = []
    for start, end in sorted(info.spans):
        text = model.pre.excerpts.get((sid, start, end))
        if text is not None:
            page.excerpts[(sid, start, end)] += 1  # the seal requires each cited excerpt on the page
        spans.append(
            {
                "start": start,
                "end": end,
                "excerpt": excerpt_html(sid, start, end, text) if text is not None else None,
                "cited_by": _cited_by(model, uri, sid, start, end),
            }
        )

    def text_block() -> str:
        body = model.source_body(job)
        page.windows.clear()
        page.windows.update(body.windows)
        return body.html

    frag = model.fragments()
    page.title = info.label
    page.markdown = model.markdown("source.md.j2").render(
        heading_slot=model.heading(page),
        meta_slot=model.slot(
            page, str(frag.source_meta(view, holders)) + str(frag.revision(_revision(model, uri, sid, info)))
        ),
        events_slot=model.slot(page, str(frag.events(events, model.signed()))),
        spans_slot=model.slot(page, str(frag.spans(spans))),
        text_slot=model.slot(page, text_block),
        windows=job.mode in ("windows", "proofs"),
    )


def _revision(model: PageModel, uri: str, sid: str, info: SourceInfo) -> dict[str, Any]:
    """This source's place among its revisions and, when a newer one supersedes it, how each
    cited window reads there (what a reader needs to judge whether a quotation still stands)."""
    index = revision_index(model.pre)
    out: dict[str, Any] = {"number": index.number(sid), "supersedes": info.meta.supersedes, "newer": None}
    newer = index.current(sid)
    if newer is None:
        return out
    published = newer.source_id in model.pre.sources
    out["newer"] = {
        "number": newer.number,
        "source_id": newer.source_id,
        "run": newer.run,
        "at": newer.at,
        "href": model.href(uri, source_uri(newer.source_id)) if published else None,
    }
    new = index.snapshot(newer)
    out["readable"] = new is not None
    out["windows"] = []
    if new is not None and info.spans:
        old_text = read_snapshot(info.sources_dir, sid).text
        for start, end in sorted(info.spans):
            change = window_change(old_text, start, end, new.text)
            out["windows"].append(
                {
                    "start": start,
                    "end": end,
                    "state": change["state"],
                    "new_start": change["start"],
                    "new_end": change["end"],
                    "diff": change["diff"],
                }
            )
    return out


def _paper_ids(meta: SnapshotCheck) -> list[dict[str, Any]]:
    """Each paper id with its basis; an id only asserted is marked (it joins no work)."""
    entries = meta.identity.ids() if meta.identity is not None else {}
    out = []
    for kind, value in (meta.paper.ids() if meta.paper else {}).items():
        entry = entries.get(kind)
        out.append(
            {
                "kind": kind,
                "value": neutral_text(value),
                "basis": entry.basis.value if entry is not None else None,
                "via": neutral_text(entry.via) if entry is not None else None,
                "asserted": entry is not None and not entry.derived,
            }
        )
    return out


def _notice(model: PageModel, sid: str) -> str | None:
    """What the registry said of this source's DOI when it was last asked, in one line (None: no
    DOI and nothing logged of its work).

    Absence is inconclusive: it reads "no notice found in <registry> on <date>", never "not
    retracted". A retraction logged for another DOI of the source's work (the article, of which
    this is a copy stating only its PMCID) is said first: the work gives no credit."""
    doi = source_doi(model.pre, sid)
    own = notice_index(model.pre).of(doi) if doi is not None else None
    work = retracted_sources(model.pre, [sid]).get(sid)
    if work is not None and (own is None or not own.retracted):
        said = _said(doi, own)
        return (
            f"RETRACTED: gives no credit. Its work's DOI {work.doi} has a logged retraction "
            f"(asked of {work.registry} on {work.at[:10]})" + (f"; this DOI: {said}" if said else "")
        )
    return _said(doi, own)


def _said(doi: str | None, notice: Notice | None) -> str | None:
    """The line of what was logged for ``doi`` (None: no DOI)."""
    if doi is None:
        return None
    if notice is None:
        return f"DOI {doi} not asked of a registry (publisher source notices)"
    if not notice.updates:
        return f"no notice found in {notice.registry} on {notice.at[:10]}"
    parts = []
    for u in notice.updates:
        what = u.kind.value.replace("_", " ")
        what += " of this work" if u.about_this_work else " of another work (this DOI is the notice)"
        parts.append(what + (f": notice {u.doi}" if u.doi else "") + (f" of {u.date}" if u.date else ""))
    flag = "RETRACTED: gives no credit. " if notice.retracted else ""
    return flag + "; ".join(parts) + f" (asked of {notice.registry} on {notice.at[:10]})"


def _neutral(text: str | None) -> str | None:
    """``text`` as :func:`~publisher.kernel.refs.neutral_text` shows it: words read from a document,
    a record or a registry never pass for the site's own marks."""
    return neutral_text(text) if text is not None else None


def _title_basis(meta: SnapshotCheck) -> str | None:
    """Where the title was read, in a few words (None when no basis is recorded)."""
    title = meta.identity.title if meta.identity is not None else None
    if title is None:
        return None
    return f"{title.basis.value}: {title.via}"


def _cited_by(model: PageModel, page: str, sid: str, start: int, end: int) -> list[dict[str, Any]]:
    """One link per citing page (a concept's first footnote, a report's artifact) citing this span."""
    out: list[dict[str, Any]] = []
    seen: dict[str, dict[str, Any]] = {}
    for citation in model.citations_of(sid, start, end):
        hit = seen.get(citation.target)
        if hit is not None:
            hit["detail"] += f", {citation.detail}"
            continue
        entry = {
            "label": citation.label,
            "detail": citation.detail,
            "href": model.href(page, citation.target, citation.fragment),
        }
        seen[citation.target] = entry
        out.append(entry)
    return out


def _pages_text(pages: tuple[int, ...]) -> str:
    runs: list[list[int]] = []
    for page in pages:
        if runs and runs[-1][1] == page - 1:
            runs[-1][1] = page
        else:
            runs.append([page, page])
    return ", ".join(f"{a}–{b}" if a != b else str(a) for a, b in runs)


def _surface(surface: Surface | SurfaceView | None) -> str | None:
    """The declared surface in one line: what was declared, what is missing, what is excluded."""
    if surface is None:
        return None
    if surface.type is SurfaceType.WHOLE_TEXT:
        state = "complete as declared at acquisition" if surface.complete else "not declared complete"
        head = f"whole text, {state}"
    elif surface.expected_pages is None:
        head = f"pages {_pages_text(surface.extracted_pages) or 'none'} extracted; no pages declared, so not complete"
    else:
        extracted = _pages_text(surface.extracted_pages) or "none"
        head = f"pages {_pages_text(surface.expected_pages)} declared, {extracted} extracted"
        head += f"; missing {_pages_text(surface.missing_pages)}" if surface.missing_pages else "; complete"
    excluded = ", ".join(m.lower().replace("_", " ") for m in surface.excluded_modalities)
    return f"{head} (never covers: {excluded}; method {surface.method})"
