"""Claims on the site (CONTRACT section 14): each claim on its concept page, the evidence matrix
page (claims × works, grouped by status) and ``claims.json`` for machines.

Every value here is data: it reaches HTML only through the autoescaped fragments of
``templates/site/fragments.html.j2``, and the Mermaid source of a lineage is built from ids
reduced to a safe alphabet (never from a statement), then escaped like any other string.
"""

from __future__ import annotations

import json
import re
from typing import Any

from ...kernel.refs import neutral_text
from ...wiki.claims.counts import WorkIndex, claim_view, claims_document
from ...wiki.claims.model import STATUS_CODES
from .markup import excerpt_html
from .model import GeneratedPage, PageModel
from .uris import concept_uri, source_uri

__all__ = [
    "MATRIX_URI",
    "CLAIMS_URI",
    "CLAIMS_JSON_URI",
    "ADMONITIONS",
    "WARRANT_WORDS",
    "warrant_words",
    "concept_claims",
    "claims_page",
    "matrix_page",
    "claims_json",
]

MATRIX_URI = "claims/index.md"
"""The evidence matrix page (generated in every wiki, so a navigation can always name it)."""
CLAIMS_URI = "claims/all.md"
"""Every claim of the wiki, by concept, each with its evidence in its sentence (generated in every wiki)."""
CLAIMS_JSON_URI = "claims.json"
"""Every claim for machines (published only when the wiki has claims)."""

ADMONITIONS = {"S": "success", "P": "warning", "C": "failure", "NS": "note", "NE": "question"}
"""Material's admonition kind (and so its icon) per status; the status is always written too."""

_SAFE = re.compile(r"[^A-Za-z0-9._:#-]+")


def _node(text: str) -> str:
    return _SAFE.sub("_", text)[:80]


def _mermaid(view: dict[str, Any]) -> tuple[str, list[str]]:
    """The lineage as Mermaid source and as plain sentences (the same facts, no diagram needed)."""
    lines = ["graph LR", f'  claim["claim {_node(view["id"])} ({view["code"]})"]']
    steps: list[str] = []
    lineage = view["lineage"]
    snap_nodes = {s["source_id"]: f"s{i}" for i, s in enumerate(lineage["snapshots"])}
    work_nodes = {w: f"w{i}" for i, w in enumerate(lineage["works"])}
    for i, ex in enumerate(lineage["excerpts"]):
        sid = ex["source_id"]
        lines.append(f'  e{i}["[^{_node(ex["label"])}] {sid[:16]}…#{ex["start"]}-{ex["end"]}"]')
        lines.append(f"  claim --> e{i} --> {snap_nodes[sid]}")
        steps.append(f"excerpt [^{ex['label']}] {sid[:16]}… code points {ex['start']}-{ex['end']} (run {ex['run']})")
    for snap in lineage["snapshots"]:
        node = snap_nodes[snap["source_id"]]
        lines.append(f'  {node}["snapshot {snap["source_id"][:16]}… ({_node(str(snap["access"]))})"]')
        lines.append(f"  {node} --> {work_nodes[snap['work']]}")
        steps.append(f"snapshot {snap['source_id'][:16]}… ({snap['access']}) of work {snap['work']}: {snap['url']}")
    for work, node in work_nodes.items():
        lines.append(f'  {node}["work {_node(work)}"]')
    for i, event in enumerate(lineage["events"]):
        lines.append(f'  v{i}["{_node(event["event_id"])} {event["type"]} in {_node(event["run"])}"]')
        lines.append(f"  {snap_nodes[event['source_id']]} --> v{i}")
        signed = f"signed by {event['signed_by'][:16]}…" if event["signed_by"] else "unsigned"
        steps.append(f"acquisition {event['event_id']} ({event['type']}, run {event['run']}, {signed})")
    for kind in ("review", "missingness"):
        bound = lineage[kind]
        if bound is not None:
            lines.append(f'  {kind}["{kind} in {_node(bound["run"])}"]')
            lines.append(f"  claim --> {kind}")
            rid = view[kind]["id"] if kind == "review" else view[kind]
            steps.append(f"{kind} {rid} in run {bound['run']}")
    return "\n".join(lines), steps


WARRANT_WORDS = {
    "author_proposal": "author's proposal, not independently reviewed",
    "confirmed": "independently confirmed by {reviewer} on {date}",
    "qualified": "qualified: {kind}: {text} (independently reviewed by {reviewer} on {date})",
    "rejected": "rejected: no credit (independently reviewed by {reviewer} on {date})",
    "stale": "stale: the claim changed since {reviewer} reviewed it on {date} ({changed}): no credit",
}
"""What a page says of each warrant state (CONTRACT section 17)."""


def warrant_words(warrant: dict[str, Any]) -> str:
    """One sentence for a claim's warrant state (data: escaped where it reaches HTML)."""
    correction = warrant["correction"] or {}
    return WARRANT_WORDS[warrant["state"]].format(
        reviewer=warrant["reviewer"],
        date=(warrant["at"] or "")[:10],
        kind=correction.get("kind"),
        text=correction.get("text"),
        changed=", ".join(warrant["changed"]),
    )


def _review(model: PageModel, page: GeneratedPage, view: dict[str, Any] | None) -> dict[str, Any] | None:
    """The review as shown: its terms and hit counts, each hit in its sentence linked to the
    source page, and the adjudication of each."""
    if view is None or not view["found"]:
        return view
    sid = view["source_id"]
    href = model.href(page.src_uri, source_uri(sid)) if sid in model.pre.sources else None
    hits = []
    for hit in view["hits"]:
        sentence = hit["sentence"]
        text = sentence["text"]
        a, b = hit["start"] - sentence["start"], hit["end"] - sentence["start"]
        hits.append({**hit, "before": text[:a], "match_text": text[a:b], "after": text[b:], "href": href})
    return {**view, "hits": hits}


def _item(model: PageModel, page: GeneratedPage, view: dict[str, Any]) -> dict[str, Any]:
    mermaid, steps = _mermaid(view)
    return {
        "id": view["id"],
        "kind": ADMONITIONS[view["code"]],
        "code": view["code"],
        "status": view["status"],
        "statement": neutral_text(view["statement"]),
        "admissibility": view["admissibility"],
        "assessment": view["assessment"]["id"],
        "assessed_at": view["assessment"]["at"],
        "signed_by": view["assessment"]["signed_by"],
        "conditions": [neutral_text(c) for c in view["conditions"]],
        "valid": view["provenance_now"]["valid"],
        "reasons": view["provenance_now"]["reasons"],
        "counts": view["counts"],
        "proposed_by": [
            f"run {p['run']}: model profile {p['requested_model_profile']}, prompt sha256 {p['prompt_sha256'][:16]}…"
            if p["agent_run_id"]
            else f"run {p['run']}: no agent recorded"
            for p in view["proposed_by"]
        ],
        "warrant": view["warrant"]["state"],
        "warrant_words": warrant_words(view["warrant"]),
        "warrant_id": view["warrant"]["warrant_id"],
        "reviewer_key_id": view["warrant"]["reviewer_key_id"],
        "evidence": view["evidence"],
        "review": _review(model, page, view["review"]),
        "missingness": view["missingness"],
        "mermaid": mermaid,
        "lineage": steps,
    }


def _views(model: PageModel) -> list[dict[str, Any]]:
    cached = getattr(model, "_claim_views", None)
    if cached is None:
        works = WorkIndex(model.pre)
        cached = [claim_view(model.pre, state, works) for state in model.pre.claims if state.entry is not None]
        model._claim_views = cached  # type: ignore[attr-defined]
    return cached


def _by_concept(model: PageModel) -> dict[str, list[dict[str, Any]]]:
    grouped = getattr(model, "_claims_by_concept", None)
    if grouped is None:
        grouped = {}
        for view in _views(model):
            grouped.setdefault(view["concept"], []).append(view)
        model._claims_by_concept = grouped  # type: ignore[attr-defined]
    return grouped


def _cited(model: PageModel, page: GeneratedPage, view: dict[str, Any]) -> list[dict[str, Any]]:
    """Each span the claim's assessment bound, as the verified excerpt it is now (linked to its
    place on the source page) or, when it no longer verifies, as its offsets only."""
    out: list[dict[str, Any]] = []
    for ex in view["lineage"]["excerpts"]:
        sid, start, end = ex["source_id"], ex["start"], ex["end"]
        text = model.pre.excerpts.get((sid, start, end))
        item: dict[str, Any] = {"label": ex["label"], "source_id": sid, "start": start, "end": end, "excerpt": None}
        if text is not None:
            page.excerpts[(sid, start, end)] += 1  # the seal requires it on the page
            item["excerpt"] = excerpt_html(sid, start, end, text)
            item["href"] = model.href(page.src_uri, source_uri(sid), f"span-{start}-{end}")
        out.append(item)
    return out


def _claims_slot(model: PageModel, page: GeneratedPage, views: Any, prefix: str = "") -> str:
    """A slot token for ``views``' claims, each with its evidence shown as the excerpts it rests
    on, each in its sentence (read when the page is filled, like a footnote's)."""
    items = []
    for view in views:
        item = _item(model, page, view)
        item["cited"] = _cited(model, page, view)
        items.append(item)

    def fill() -> str:
        for item in items:
            for cited in item["cited"]:
                if cited["excerpt"] is not None:
                    cited["context"] = model.contexts.around(cited["source_id"], cited["start"], cited["end"])
        return str(model.fragments().claims(items, prefix))

    return model.slot(page, fill)


def concept_claims(model: PageModel, page: GeneratedPage, slug: str) -> str:
    """A slot token for the claims of concept ``slug`` (empty when it has none)."""
    views = _by_concept(model).get(slug, ())
    if not views:
        return ""
    return _claims_slot(model, page, views)


def claims_page(model: PageModel, page: GeneratedPage) -> None:
    """Every claim of the wiki, concept by concept, as its concept page shows it."""
    parts = []
    for concept, views in sorted(_by_concept(model).items()):
        ce = next((c for c in model.pre.concepts if c.slug == concept), None)
        title = ce.label if ce is not None else concept
        href = model.href(page.src_uri, concept_uri(concept))
        parts.append(str(model.fragments().claims_heading(title, href)))
        parts.append(_claims_slot(model, page, views, prefix=f"{concept}-"))
    page.title = "Claims"
    intro = (
        "Every claim of the wiki with its status and the excerpts it rests on, each in its sentence. "
        "A status here is a structurally admissible proposal, not an adjudication."
    )
    if not parts:
        intro = "No claim has been assessed yet: 'publisher assess' proposes one (see the Claims guide)."
    page.markdown = str(
        model.markdown("index.md.j2").render(
            heading_slot=model.heading(page), intro=intro, table_slot="\n\n".join(parts)
        )
    )


def matrix_page(model: PageModel, page: GeneratedPage) -> None:
    """The evidence matrix: one table per status, a row per claim, and in each row the works its
    verified excerpts come from with the number of excerpts per work.

    The claims × works relation is written sparsely (each row lists only its own works): a dense
    grid would have a column for every work of the wiki on every row, and grow with the square
    of the wiki.
    """
    groups = []
    for code, status in STATUS_CODES.items():
        rows = []
        for v in _views(model):
            if v["code"] != code:
                continue
            work_of = {s["source_id"]: s["work"] for s in v["lineage"]["snapshots"]}
            retracted = {s["work"] for s in v["lineage"]["snapshots"] if s.get("retracted")}
            per_work: dict[str, int] = {}
            for ex in v["lineage"]["excerpts"]:
                work = work_of[ex["source_id"]]
                per_work[work] = per_work.get(work, 0) + 1
            rows.append(
                {
                    "statement": neutral_text(v["statement"]),
                    "href": model.href(page.src_uri, concept_uri(v["concept"]), f"claim-{v['id']}"),
                    "valid": v["provenance_now"]["valid"],
                    "warrant": v["warrant"]["state"].replace("_", " "),
                    "works": sorted((w, n) for w, n in per_work.items() if w not in retracted),
                    "retracted": sorted((w, n) for w, n in per_work.items() if w in retracted),
                }
            )
        groups.append({"code": code, "status": status.value, "rows": rows})
    page.title = "Evidence matrix"
    page.markdown = str(
        model.markdown("index.md.j2").render(
            heading_slot=model.heading(page),
            intro="Each claim against the works its verified excerpts come from (excerpts per work). "
            "A status here is a structurally admissible proposal, not an adjudication; the warrant column "
            "says whether someone other than its author has reviewed it.",
            table_slot=model.slot(page, str(model.fragments().matrix(groups))),
        )
    )


def claims_json(model: PageModel) -> str:
    """``claims.json``: canonical, sorted, so the same wiki gives the same bytes."""
    return json.dumps(claims_document(model.pre), ensure_ascii=False, sort_keys=True, indent=1) + "\n"
