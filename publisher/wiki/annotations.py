"""The wiki's published excerpts as W3C Web Annotations, so annotation tools can anchor them.

Every excerpt the site publishes (each span of an accepted, verified claim, as the source pages
highlight them) becomes one ``Annotation`` of an ``AnnotationCollection`` (JSON-LD, the W3C Web
Annotation Data Model): ``@context``, a stable URI ``id``, ``type``, and a ``target`` whose
``source`` is the snapshot the offsets index, never the page it was fetched from (whose text
today may differ): the wiki's source page of it under ``site`` (the published site's address),
else the snapshot's text named by its digest (``ni:///sha-256;…``, RFC 6920); the page it was
fetched from is the target's ``via``. Two selectors:

* ``TextPositionSelector``: ``start``/``end`` in code points, as the model counts characters (and
  as the snapshot's offsets already are);
* ``TextQuoteSelector``: ``exact`` (the re-slice) with up to 32 code points of ``prefix`` and
  ``suffix``, so a tool such as Hypothesis can re-anchor the excerpt in a rendering of the page.

Nothing is exported from a wiki that does not pass its check: the export runs
:func:`publisher.wiki.check.check_wiki` and re-slices every excerpt from its verified snapshot.
Ids are ``<base>/<source_id>/<start>-<end>`` under a given base URI, else ``urn:uuid:`` UUIDv5
names of the same triple, so the same excerpt keeps its id from one export to the next.
"""

from __future__ import annotations

import base64
import re
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..kernel.canonical import dumps_written
from ..kernel.errors import IntegrityError, UsageError
from ..kernel.findings import Finding
from ..kernel.reasons import Reason
from ..kernel.store import read_snapshot
from .check import check_wiki
from .evidence import WikiCheck
from .policy import Policy

__all__ = [
    "AnnotationsRefused",
    "Collection",
    "annotation",
    "snapshot_uri",
    "export_annotations",
    "CONTEXT",
    "AFFIX",
]

CONTEXT = "http://www.w3.org/ns/anno.jsonld"
"""The Web Annotation JSON-LD context."""

AFFIX = 32
"""Code points of ``prefix`` and ``suffix`` in a TextQuoteSelector."""

_NAMESPACE = uuid.UUID("6f1c2a52-6d8b-5b7e-9a51-0c3f0e0d1a77")
"""Namespace of the ``urn:uuid:`` names this export gives (fixed: ids must not change)."""

_BASE_RE = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*:[^\s#?]*")


class AnnotationsRefused(IntegrityError):
    """The wiki does not pass its check: nothing is exported (exit status 1)."""

    def __init__(self, message: str, findings: list[Finding]) -> None:
        super().__init__(message)
        self.findings = findings


@dataclass(frozen=True)
class Collection:
    """An exported AnnotationCollection and how many annotations it holds."""

    data: dict[str, Any]
    total: int

    def to_bytes(self) -> bytes:
        """UTF-8 JSON-LD (not ASCII-escaped), two-space indented, one trailing newline."""
        return dumps_written(self.data)


def _id(base: str | None, *parts: str) -> str:
    if base is not None:
        return base.rstrip("/") + "/" + "/".join(parts)
    return "urn:uuid:" + str(uuid.uuid5(_NAMESPACE, "/".join(parts)))


def snapshot_uri(source_id: str, content_hash: str, site: str | None = None) -> str:
    """The address of a snapshot's text: its source page under ``site``, else its digest as an
    RFC 6920 name (``ni:///sha-256;<base64url>``), which names exactly the text the offsets index."""
    if site is not None:
        return f"{site.rstrip('/')}/sources/{source_id}/"
    digest = bytes.fromhex(content_hash.removeprefix("sha256:"))
    return "ni:///sha-256;" + base64.urlsafe_b64encode(digest).decode("ascii").rstrip("=")


def annotation(
    text: str,
    url: str,
    source_id: str,
    start: int,
    end: int,
    *,
    base: str | None = None,
    claims: tuple[str, ...] = (),
    via: str | None = None,
) -> dict[str, Any]:
    """One Web Annotation of ``text[start:end]`` of the snapshot at ``url`` (offsets in code
    points), fetched from ``via`` (the original page) when given."""
    out: dict[str, Any] = {
        "@context": CONTEXT,
        "id": _id(base, source_id, f"{start}-{end}"),
        "type": "Annotation",
        "motivation": "highlighting",
    }
    if claims:
        out["body"] = [
            {"type": "TextualBody", "purpose": "describing", "format": "text/plain", "value": claim} for claim in claims
        ]
    out["target"] = {
        "source": url,
        **({"via": via} if via is not None else {}),
        "selector": [
            {"type": "TextPositionSelector", "start": start, "end": end},
            {
                "type": "TextQuoteSelector",
                "exact": text[start:end],
                "prefix": text[max(0, start - AFFIX) : start],
                "suffix": text[end : end + AFFIX],
            },
        ],
    }
    return out


def _claims(wiki: WikiCheck) -> dict[tuple[str, int, int], list[str]]:
    """Claim labels citing each published span, in result order, each once."""
    labels: dict[tuple[str, int, int], list[str]] = {}
    for ev in wiki.runs:
        for _, verified in ev.claims(wiki):
            for claim in verified:
                bucket = labels.setdefault((claim.source_id, claim.start, claim.end), [])
                if claim.claim and claim.claim not in bucket:
                    bucket.append(claim.claim)
    return labels


def export_annotations(
    wiki_root: Path, *, base: str | None = None, site: str | None = None, policy: Policy
) -> Collection:
    """Every published excerpt of the wiki as an AnnotationCollection (see the module docstring).

    Raises :class:`AnnotationsRefused` when the wiki check finds anything, and
    :class:`UsageError` for a ``base`` that is not an absolute URI without query or fragment.
    """
    if base is not None and not _BASE_RE.fullmatch(base):
        raise UsageError(f"--base {base[:80]!r} is not an absolute URI without query or fragment")
    if site is not None and not _BASE_RE.fullmatch(site):
        raise UsageError(f"--site {site[:80]!r} is not an absolute URI without query or fragment")
    wiki = check_wiki(Path(wiki_root), policy=policy)
    if not wiki.ok:
        raise AnnotationsRefused(
            f"the wiki check found {len(wiki.findings)} problem(s): nothing exported", list(wiki.findings)
        )
    labels = _claims(wiki)
    items: list[dict[str, Any]] = []
    for sid in sorted(wiki.sources):
        info = wiki.sources[sid]
        snap = read_snapshot(info.sources_dir, sid)  # verified again; the excerpts come from this text
        for start, end in sorted(info.spans):
            published = wiki.excerpts.get((sid, start, end))
            if published != snap.text[start:end]:
                raise IntegrityError(
                    f"{sid}#{start}-{end} re-slices differently than the wiki check saw",
                    reason=Reason.EXCERPT_MISMATCH,
                )
            items.append(
                annotation(
                    snap.text,
                    snapshot_uri(sid, snap.content_hash, site),
                    sid,
                    start,
                    end,
                    base=base,
                    claims=tuple(labels.get((sid, start, end), ())),
                    via=snap.url,
                )
            )
    runs = ",".join(sorted(ev.slug for ev in wiki.runs))
    collection_id = _id(base, "annotations") if base is not None else _id(None, "collection", runs)
    data: dict[str, Any] = {
        "@context": CONTEXT,
        "id": collection_id,
        "type": "AnnotationCollection",
        "label": "Verified evidence excerpts",
        "total": len(items),
    }
    if items:
        data["first"] = {
            "id": collection_id + "/page1" if base is not None else _id(None, "page", runs, "1"),
            "type": "AnnotationPage",
            "partOf": collection_id,
            "startIndex": 0,
            "items": items,
        }
    return Collection(data, len(items))
