"""One snapshot checked: read, verified and sliced in whichever process runs it.

A :class:`SnapshotCheck` is the outcome a worker sends back: the verified metadata and the
excerpts of the requested spans, never the text, so memory stays bounded by the largest snapshot
in flight. It is also the one "snapshot facts" type the layers above use.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from ..kernel.assets import hash_asset
from ..kernel.errors import IntegrityError, PublisherError, ResourceError
from ..kernel.models import Asset, Identity, Paper, Surface
from ..kernel.reasons import Reason
from ..kernel.spans import locator, slice_span
from ..kernel.store import read_snapshot
from ..kernel.text import one_line

__all__ = ["Request", "SpanCheck", "SnapshotCheck", "check_snapshot", "check_chunk", "normalise", "as_error", "Task"]

Request = tuple[Path | str, str, Sequence[tuple[int, int]]]
"""``(sources_dir or snapshot file, source_id, [(start, end), ...])``."""


@dataclass(frozen=True, slots=True)
class SpanCheck:
    """One requested span: its excerpt when in range, else the reason it is unusable."""

    start: int
    end: int
    excerpt: str | None
    reason: Reason | None
    section: str | None
    page: int | None

    @property
    def ok(self) -> bool:
        return self.reason is None


@dataclass(frozen=True, slots=True)
class SnapshotCheck:
    """The outcome of reading and verifying one snapshot file, without its text.

    ``location`` is the sources folder the snapshot was read from. When ``ok`` is false,
    ``reason`` is ``UNKNOWN_SOURCE`` or ``SNAPSHOT_HASH_MISMATCH``, ``detail`` says why in one
    line, the metadata fields are None and ``spans`` is empty.
    """

    location: str
    source_id: str
    ok: bool
    reason: Reason | None
    detail: str
    spans: tuple[SpanCheck, ...] = ()
    url: str | None = None
    title: str | None = None
    access: str | None = None
    origin: str | None = None
    paper: Paper | None = None
    asset: Asset | None = None
    retrieved_at: str | None = None
    content_hash: str | None = None
    record_hash: str | None = None
    sealed: bool = False
    text_length: int = 0
    asset_digest: str | None = None
    """The bare sha256 of the asset file as it is now, under ``assets_root`` (None: missing)."""
    assets_root: str | None = None
    """The folder the asset was hashed under; None when it was not hashed."""
    surface: Surface | None = None
    """The text surface declared at acquisition (sealed in the record), when it has one."""
    identity: Identity | None = None
    """Each paper id and the title with its basis (sealed in the record), when recorded."""
    supersedes: str | None = None
    """The snapshot this one revises (sealed in the record), when it is a revision."""

    def derived_ids(self) -> dict[str, str]:
        """The paper ids a work rests on (see :meth:`publisher.kernel.models.Snapshot.derived_ids`)."""
        if self.identity is not None:
            return self.identity.derived_ids()
        return self.paper.ids() if self.paper is not None else {}

    @property
    def key(self) -> tuple[str, str]:
        """``(location, source_id)``: what requests are grouped by."""
        return (self.location, self.source_id)

    @property
    def text_sha256(self) -> str | None:
        """Bare hex digest of the text (verified), as events carry it."""
        return self.content_hash[7:] if self.content_hash else None

    def span(self, start: int, end: int) -> SpanCheck | None:
        """The check of a requested span, or None if it was not requested."""
        for item in self.spans:
            if item.start == start and item.end == end:
                return item
        return None


Task = tuple[str, str, tuple[tuple[int, int], ...]]


def normalise(requests: Iterable[Request]) -> list[Task]:
    """Group requests by (sources folder, source id), keeping first-seen order and unique spans."""
    groups: dict[tuple[str, str], dict[tuple[int, int], None]] = {}
    spelled: dict[Path | str, str] = {}  # one Path parse per distinct location, not per request
    for item in requests:
        location, source_id, spans = item
        folder = spelled.get(location)
        if folder is None:
            folder = spelled[location] = os.fspath(Path(location))
        if os.path.basename(folder) == f"{source_id}.json":
            folder = os.fspath(Path(folder).parent)
        key = (folder, source_id)
        bucket = groups.setdefault(key, {})
        for pair in spans:
            start, end = pair
            if type(start) is not int or type(end) is not int:
                raise TypeError(f"span offsets must be int, got {start!r}, {end!r} for {source_id}")
            bucket[(start, end)] = None
    return [(folder, sid, tuple(spans)) for (folder, sid), spans in groups.items()]


def check_snapshot(task: Task, assets_root: str | None = None) -> SnapshotCheck:
    """Read, verify and slice one snapshot (runs in a worker); hash its asset under ``assets_root``."""
    folder, source_id, wanted = task
    try:
        snap = read_snapshot(folder, source_id)
    except ResourceError as exc:
        return SnapshotCheck(folder, source_id, False, None, exc.one_line())
    except PublisherError as exc:
        reason = exc.reason if exc.reason is not None else Reason.SNAPSHOT_HASH_MISMATCH
        return SnapshotCheck(folder, source_id, False, reason, exc.one_line())
    except (OSError, MemoryError) as exc:
        # The machine failed (an I/O error, no memory): an error to report, never a tamper code.
        detail = one_line(f"snapshot {source_id[:80]} cannot be read: {type(exc).__name__}: {exc}")
        return SnapshotCheck(folder, source_id, False, None, detail)
    except ValueError as exc:
        detail = one_line(f"snapshot {source_id[:80]} cannot be verified: {type(exc).__name__}: {exc}")
        return SnapshotCheck(folder, source_id, False, Reason.SNAPSHOT_HASH_MISMATCH, detail)
    text = snap.text
    n = len(text)
    spans = []
    section_at = locator(snap.sections)
    page_at = locator(snap.pages)
    for start, end in wanted:
        excerpt, bad = slice_span(text, start, end)
        if excerpt is None:
            spans.append(SpanCheck(start, end, None, bad, None, None))
            continue
        section = section_at(start)
        page = page_at(start)
        spans.append(
            SpanCheck(
                start,
                end,
                excerpt,
                None,
                section.title if section is not None else None,
                page.page if page is not None else None,
            )
        )
    return SnapshotCheck(
        folder,
        source_id,
        True,
        None,
        "sealed" if snap.sealed else "metadata unsealed",
        tuple(spans),
        url=snap.url,
        title=snap.title,
        access=snap.access.value,
        origin=snap.origin.value,
        paper=snap.paper,
        asset=snap.asset,
        retrieved_at=snap.retrieved_at,
        content_hash=snap.content_hash,
        record_hash=snap.record_hash,
        sealed=snap.sealed,
        text_length=n,
        asset_digest=hash_asset(assets_root, snap.asset.path) if assets_root and snap.asset else None,
        assets_root=assets_root if assets_root and snap.asset else None,
        surface=snap.surface,
        identity=snap.identity,
        supersedes=snap.supersedes,
    )


def check_chunk(chunk: list[Task], assets_root: str | None = None) -> list[SnapshotCheck]:
    """A worker's unit of work: several small snapshots or one large one."""
    return [check_snapshot(task, assets_root) for task in chunk]


def as_error(check: SnapshotCheck) -> PublisherError:
    """The error a serial read would have raised, with the same reason and one-line message.

    A check without a reason failed for want of resources (I/O, memory): a
    :class:`~publisher.kernel.errors.ResourceError`, never a tamper code.
    """
    if check.reason is None:
        return ResourceError(check.detail, source_id=check.source_id)
    reason = check.reason
    prefix = f"{reason.value}: "
    if check.detail.startswith(prefix):
        return IntegrityError(check.detail[len(prefix) :], reason=reason, source_id=check.source_id)
    return IntegrityError(check.detail, reason=reason, source_id=check.source_id)
