"""The fresh-fetch rule (CONTRACT section 3): which sources were really retrieved in this run."""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Protocol

from ..kernel.assets import AssetChecker
from ..kernel.canonical import parse_ts
from ..kernel.models import Asset, Event, EventType, Snapshot
from ..kernel.reasons import Reason

__all__ = ["Freshness", "SnapshotFacts", "freshness"]


class SnapshotFacts(Protocol):
    """What the fresh-fetch rule needs of a verified snapshot besides its text's digest.

    A :class:`~publisher.models.Snapshot` has all of it; so does a ``batch.SnapshotCheck``,
    which carries the text's digest instead of the text.
    """

    @property
    def source_id(self) -> str: ...
    @property
    def url(self) -> str | None: ...
    @property
    def asset(self) -> Asset | None: ...
    @property
    def origin(self) -> object: ...


@dataclass(frozen=True)
class Freshness:
    """Outcome of the fresh-fetch rule for one snapshot in one run."""

    fresh: bool
    event_id: str | None
    reason: Reason | None
    detail: str


def freshness(
    snap: Snapshot | SnapshotFacts,
    events: Iterable[Event],
    created_at: str | None,
    assets: AssetChecker,
    *,
    text_sha256: str | None = None,
) -> Freshness:
    """Apply the fresh-fetch rule (CONTRACT section 3) to one snapshot.

    Fresh iff some ``fetch`` or ``local_pdf`` event for this source, ``fresh: true``, at or after
    ``created_at``, carries a digest that still matches what is recomputed now: the text for a
    fetch; for a local PDF, the asset file's bytes, which must also equal ``asset.sha256``.
    A run without ``created_at`` has no fresh sources.

    ``text_sha256`` is the bare hex digest of the text as just verified (a reader that keeps no
    text passes it); without it the digest is computed from ``snap.text``.
    """
    if created_at is None:
        return Freshness(False, None, Reason.NO_FRESH_FETCH, "run config has no created_at")
    try:
        since = parse_ts(created_at)
    except ValueError:
        return Freshness(False, None, Reason.NO_FRESH_FETCH, "run created_at is not a timestamp")
    text_digest = text_sha256
    asset_problem: str | None = None
    saw_local = False
    for event in events:
        if event.source_id != snap.source_id or not event.fresh:
            continue
        if event.type not in (EventType.FETCH, EventType.LOCAL_PDF):
            continue
        if parse_ts(event.at) < since or event.url != snap.url:
            continue
        if event.type is EventType.FETCH:
            if text_digest is None:
                if not isinstance(snap, Snapshot):
                    raise TypeError("freshness needs the snapshot's text or its text_sha256")
                text_digest = hashlib.sha256(snap.text.encode("utf-8")).hexdigest()
            if event.sha256 == text_digest:
                return Freshness(True, event.event_id, None, f"fetched in {event.event_id}")
            continue
        saw_local = True
        if snap.asset is None:
            asset_problem = f"{event.event_id} is a local_pdf event on a snapshot without an asset"
            continue
        problem = assets.check(snap)
        if problem is not None:
            asset_problem = problem
            continue
        if event.sha256 == snap.asset.sha256:
            return Freshness(True, event.event_id, None, f"local PDF verified in {event.event_id}")
    if saw_local and asset_problem:
        return Freshness(False, None, Reason.ASSET_HASH_MISMATCH, asset_problem)
    return Freshness(False, None, Reason.NO_FRESH_FETCH, f"no fresh fetch of {snap.source_id} since {created_at}")
