"""One snapshot checked: read, verified and sliced, in whichever process runs it.

A :class:`SnapshotCheck` is what a check of one snapshot file gives: the verified metadata and
the excerpts of the requested spans, never the text, so memory stays bounded by the largest
snapshot in flight. It is also the one "snapshot facts" type the layers above use. It travels
between processes as plain values (:meth:`SnapshotCheck.__reduce__`): a pool's worker sends a
batch of checks back as tuples of strings and ints, and the receiving process makes the
metadata's views (:mod:`.views`) from their fields: holding a check loads no validation library.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any, NamedTuple

from .assets import hash_asset
from .errors import IntegrityError, PublisherError, ResourceError
from .reasons import Reason
from .spans import locator, slice_span
from .store import read_view
from .text import one_line
from .views import AssetView, IdentityView, PaperView, SurfaceView

__all__ = [
    "Task",
    "SpanCheck",
    "SnapshotCheck",
    "PackedCheck",
    "check_snapshot",
    "check_snapshots",
    "packed_check",
    "unpacked",
    "as_error",
]

Task = tuple[str, str, Sequence[tuple[int, int]]]
"""``(sources folder, source_id, [(start, end), ...])``: one snapshot and the spans to slice from it."""


class SpanCheck(NamedTuple):
    """One requested span: its excerpt when in range, else the reason it is unusable."""

    start: int
    end: int
    excerpt: str | None
    reason: Reason | None
    section: str | None
    page: int | None

    @property
    def ok(self) -> bool:
        """Whether the span lies in the text (its excerpt is set)."""
        return self.reason is None


_SPAN = partial(tuple.__new__, SpanCheck)
"""``SpanCheck`` from one tuple of its six fields, without a Python call per span."""


@dataclass(frozen=True, slots=True)
class SnapshotCheck:
    """The outcome of reading and verifying one snapshot file, without its text.

    ``location`` is the sources folder the snapshot was read from. When ``ok`` is false,
    ``reason`` is ``UNKNOWN_SOURCE`` or ``SNAPSHOT_HASH_MISMATCH`` (None: the machine failed,
    see :func:`as_error`), ``detail`` says why in one line, the metadata fields are None and
    ``spans`` is empty.
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
    paper: PaperView | None = None
    asset: AssetView | None = None
    retrieved_at: str | None = None
    content_hash: str | None = None
    record_hash: str | None = None
    sealed: bool = False
    text_length: int = 0
    asset_digest: str | None = None
    """The bare sha256 of the asset file as it is now, under ``assets_root`` (None: missing)."""
    assets_root: str | None = None
    """The folder the asset was hashed under; None when it was not hashed."""
    surface: SurfaceView | None = None
    """The text surface declared at acquisition (sealed in the record), when it has one."""
    identity: IdentityView | None = None
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

    def __reduce__(self) -> tuple[Any, tuple[Any, ...]]:
        """Pickled as plain values: a batch of checks crosses a process boundary as tuples of
        strings and ints, with no view or enum object (their own pickling runs Python code
        per object, on both sides); :func:`_rebuilt` makes the check again."""
        if not self.ok:
            return _failed, (self.location, self.source_id, self.reason.value if self.reason else None, self.detail)
        spans = tuple(
            tuple(item) if item.reason is None else (*item[:3], item.reason.value, *item[4:]) for item in self.spans
        )
        return _rebuilt, (
            self.location,
            self.source_id,
            self.detail,
            spans,
            self.url,
            self.title,
            self.access,
            self.origin,
            _fields(self.paper),
            _fields(self.asset),
            self.retrieved_at,
            self.content_hash,
            self.record_hash,
            self.sealed,
            self.text_length,
            self.asset_digest,
            self.assets_root,
            _fields(self.surface),
            _fields(self.identity),
            self.supersedes,
        )


def _fields(view: PaperView | AssetView | SurfaceView | IdentityView | None) -> dict[str, Any] | None:
    """A view's fields as the JSON gave them (what was absent left out): its ``of`` makes an equal view."""
    return view.model_dump(mode="json", exclude_unset=True) if view is not None else None


def _failed(location: str, source_id: str, reason: str | None, detail: str) -> SnapshotCheck:
    """A failed check from its pickled values."""
    return SnapshotCheck(location, source_id, False, Reason(reason) if reason is not None else None, detail)


def _rebuilt(
    location: str,
    source_id: str,
    detail: str,
    spans: tuple[tuple[Any, ...], ...],
    url: str,
    title: str | None,
    access: str,
    origin: str,
    paper: dict[str, Any] | None,
    asset: dict[str, Any] | None,
    retrieved_at: str,
    content_hash: str,
    record_hash: str | None,
    sealed: bool,
    text_length: int,
    asset_digest: str | None,
    assets_root: str | None,
    surface: dict[str, Any] | None,
    identity: dict[str, Any] | None,
    supersedes: str | None,
) -> SnapshotCheck:
    """A verified check from its pickled values (or a worker's, unpacked in this process).

    The metadata's fields are what :func:`~publisher.kernel.store.read_view` accepted (through
    :func:`~publisher.kernel.shapes.snapshot_shape` or the model) where the snapshot was checked,
    or a view's own fields: the views are made from them without validating again.
    """
    return SnapshotCheck(
        location,
        source_id,
        True,
        None,
        detail,
        tuple(_SPAN(item if item[3] is None else (*item[:3], Reason(item[3]), *item[4:])) for item in spans),
        url=url,
        title=title,
        access=access,
        origin=origin,
        paper=PaperView.of(paper) if paper is not None else None,
        asset=AssetView.of(asset) if asset is not None else None,
        retrieved_at=retrieved_at,
        content_hash=content_hash,
        record_hash=record_hash,
        sealed=sealed,
        text_length=text_length,
        asset_digest=asset_digest,
        assets_root=assets_root,
        surface=SurfaceView.of(surface) if surface is not None else None,
        identity=IdentityView.of(identity) if identity is not None else None,
        supersedes=supersedes,
    )


class PackedCheck:
    """A snapshot check as the plain values it travels as, made where the snapshot was checked: a
    pool's worker sends these, and each arrives (unpickled) as the :class:`SnapshotCheck` it stands
    for, its metadata views made on the receiving side only. :meth:`unpack` makes it where no
    pickling happens (the check ran in this process, or an executor of threads ran it)."""

    __slots__ = ("_args", "_make")

    def __init__(self, make: Callable[..., SnapshotCheck], args: tuple[Any, ...]) -> None:
        self._make = make
        self._args = args

    def unpack(self) -> SnapshotCheck:
        """The check these values stand for."""
        return self._make(*self._args)

    def __reduce__(self) -> tuple[Any, tuple[Any, ...]]:
        return self._make, self._args


def unpacked(check: SnapshotCheck | PackedCheck) -> SnapshotCheck:
    """``check`` as a :class:`SnapshotCheck`, whichever form it came back in."""
    return check.unpack() if isinstance(check, PackedCheck) else check


def check_snapshot(task: Task, assets_root: str | None = None) -> SnapshotCheck:
    """Read, verify and slice one snapshot; hash its asset under ``assets_root``.

    A bad snapshot is a failed check, never an exception: its reason code and one-line detail
    are what :func:`~publisher.kernel.store.read_snapshot` raised.
    """
    return packed_check(task, assets_root).unpack()


def packed_check(task: Task, assets_root: str | None = None) -> PackedCheck:
    """:func:`check_snapshot` as plain values (see :class:`PackedCheck`): the record is read through
    :func:`~publisher.kernel.store.read_view`, which accepts and refuses exactly what
    :func:`~publisher.kernel.store.read_snapshot` does, with the same reason codes and wording,
    and builds no model for the usual record."""
    folder, source_id, wanted = task
    try:
        snap = read_view(folder, source_id)
    except ResourceError as exc:
        return PackedCheck(_failed, (folder, source_id, None, exc.one_line()))
    except PublisherError as exc:
        reason = exc.reason if exc.reason is not None else Reason.SNAPSHOT_HASH_MISMATCH
        return PackedCheck(_failed, (folder, source_id, reason.value, exc.one_line()))
    except (OSError, MemoryError) as exc:
        # The machine failed (an I/O error, no memory): an error to report, never a tamper code.
        detail = one_line(f"snapshot {source_id[:80]} cannot be read: {type(exc).__name__}: {exc}")
        return PackedCheck(_failed, (folder, source_id, None, detail))
    except ValueError as exc:
        detail = one_line(f"snapshot {source_id[:80]} cannot be verified: {type(exc).__name__}: {exc}")
        return PackedCheck(_failed, (folder, source_id, Reason.SNAPSHOT_HASH_MISMATCH.value, detail))
    text, record = snap.text, snap.record
    spans: list[tuple[Any, ...]] = []
    if wanted:
        section_at = locator(snap.sections)
        page_at = locator(snap.pages)
        add = spans.append
        for start, end in wanted:
            excerpt, bad = slice_span(text, start, end)
            if excerpt is None:
                add((start, end, None, bad.value if bad is not None else None, None, None))
                continue
            section = section_at(start)
            page = page_at(start)
            add(
                (
                    start,
                    end,
                    excerpt,
                    None,
                    section.title if section is not None else None,
                    page.page if page is not None else None,
                )
            )
    asset = record["asset"]
    hashed = assets_root if assets_root and asset is not None else None
    sealed = record.get("record_hash") is not None
    return PackedCheck(
        _rebuilt,
        (
            folder,
            source_id,
            "sealed" if sealed else "metadata unsealed",
            tuple(spans),
            snap.url,
            snap.title,
            record["access"],
            record["origin"],
            record["paper"],
            asset,
            snap.retrieved_at,
            snap.content_hash,
            record.get("record_hash"),
            sealed,
            len(text),
            hash_asset(hashed, asset["path"]) if hashed is not None and asset is not None else None,
            hashed,
            record.get("surface"),
            record.get("identity"),
            snap.supersedes,
        ),
    )


def check_snapshots(tasks: Sequence[Task], assets_root: str | None = None) -> list[SnapshotCheck]:
    """:func:`check_snapshot` of each task, in order (a pool's unit of work: many small files or one large)."""
    return [check_snapshot(task, assets_root) for task in tasks]


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
