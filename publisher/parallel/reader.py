"""A per-command snapshot reader that keeps checks, never texts."""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from ..kernel import snapshots as _snapshots
from ..kernel.errors import PublisherError
from ..kernel.reasons import Reason
from ..kernel.snapshots import SnapshotCheck, SpanCheck, as_error
from .pool import verify_many
from .progress import ProgressFn

if TYPE_CHECKING:
    from concurrent.futures import Executor

__all__ = ["CheckedSnapshots"]


class CheckedSnapshots:
    """A per-command snapshot reader over one sources folder that keeps checks, never texts.

    A command declares what it will ask for (:meth:`want`), :meth:`load` verifies all of it in
    one :func:`verify_many` pass (every core, one read per snapshot), and :meth:`get` and
    :meth:`span` then answer from the small checks. A failure is
    remembered and raised again, as the same :class:`~publisher.errors.PublisherError`, every
    time the snapshot is asked for. A snapshot or span nobody declared is read on demand, alone:
    correct, only slower.

    A caller may also take the work out in steps (:meth:`pending`), run it elsewhere and hand
    the checks back (:meth:`keep`): what was taken out is not taken out again, and two checks of
    one snapshot (one per step) are merged, their spans united. Two checks that disagree on the
    snapshot's digests mean it changed while it was read: that is a failed check, never a mix.
    """

    def __init__(
        self,
        folder: Path | str,
        *,
        executor: Executor | None = None,
        workers: int | None = None,
        progress: ProgressFn | None = None,
        assets_root: Path | str | None = None,
    ) -> None:
        self.folder = Path(folder)
        self.executor = executor
        self.workers = workers
        self.progress = progress
        self.assets_root = os.fspath(assets_root) if assets_root is not None else None
        self._wanted: dict[str, set[tuple[int, int]]] = {}
        self._checks: dict[str, SnapshotCheck] = {}
        self._spans: dict[str, dict[tuple[int, int], SpanCheck]] = {}
        self._errors: dict[str, PublisherError] = {}
        self._handed: dict[str, set[tuple[int, int]]] = {}

    def want(self, source_id: str, spans: Iterable[tuple[int, int]] = ()) -> None:
        """Declare a snapshot (and spans of it) that :meth:`load` should verify."""
        bucket = self._wanted.setdefault(source_id, set())
        for start, end in spans:
            if type(start) is int and type(end) is int:
                bucket.add((start, end))

    def seed(self, checks: Iterable[SnapshotCheck]) -> None:
        """Adopt checks this command already made of this folder's snapshots (others are ignored).

        The build hook hands over its preflight's checks, so a report page re-assembling a run
        reads no snapshot a second time; a span the checks do not hold is still read on demand.
        """
        folder = os.fspath(self.folder)
        for check in checks:
            if check.location == folder:
                self._keep(check)

    def pending(self) -> list[tuple[Path, str, list[tuple[int, int]]]]:
        """The work :meth:`load` would do: declared snapshots neither checked nor handed out yet,
        or the declared spans of them that were not; clears the declarations and counts the work
        as handed out."""
        tasks = []
        for source_id, spans in self._wanted.items():
            known = self._checks.get(source_id)
            if known is not None and not known.ok:
                continue
            handed = self._handed.get(source_id)
            have = self._spans.get(source_id, {})
            missing = spans - have.keys()
            if handed is not None:
                missing -= handed
            if (known is not None or handed is not None) and not missing:
                continue
            self._handed.setdefault(source_id, set()).update(missing)
            tasks.append((self.folder, source_id, sorted(missing)))
        self._wanted = {}
        return tasks

    def load(self) -> None:
        """Verify every declared snapshot not checked yet, or checked without a declared span."""
        checks = verify_many(
            self.pending(),
            executor=self.executor,
            workers=self.workers,
            progress=self.progress,
            assets_root=self.assets_root,
        )
        for check in checks:
            self._keep(check)

    def keep(self, check: SnapshotCheck) -> None:
        """Adopt one check of this folder's snapshots (made by a pass over several folders)."""
        self._keep(check)

    def _keep(self, check: SnapshotCheck) -> None:
        sid = check.source_id
        known = self._checks.get(sid)
        if known is not None and known is not check:
            check = _merged(known, check)
        self._checks[sid] = check
        self._spans[sid] = {(item.start, item.end): item for item in check.spans}
        if not check.ok:
            self._errors[sid] = as_error(check)

    def check(self, source_id: str) -> SnapshotCheck:
        """The check of ``source_id``, good or bad (read now if it was never declared)."""
        hit = self._checks.get(source_id)
        if hit is None:
            self._keep(_snapshots.check_snapshot((os.fspath(self.folder), source_id, ())))
            hit = self._checks[source_id]
        return hit

    def get(self, source_id: str) -> SnapshotCheck:
        """The verified snapshot's check, or the same error every time it is asked for."""
        hit = self.check(source_id)
        if not hit.ok:
            raise self._errors[source_id]
        return hit

    def span(self, source_id: str, start: int, end: int) -> SpanCheck:
        """The excerpt (or range reason) of one span of a verified snapshot."""
        self.get(source_id)
        item = self._spans[source_id].get((start, end))
        if item is None:
            wanted = (*self._spans[source_id], (start, end))
            self._keep(_snapshots.check_snapshot((os.fspath(self.folder), source_id, wanted)))
            self.get(source_id)
            item = self._spans[source_id][(start, end)]
        return item

    def held_span(self, source_id: str, start: int, end: int) -> SpanCheck | None:
        """The span's check when this reader holds it already (never reads a snapshot)."""
        spans = self._spans.get(source_id)
        return spans.get((start, end)) if spans is not None else None

    def failures(self) -> CheckedSnapshots:
        """A reader over the same folder that holds only the checks that failed, with their errors:
        what a kept run's check still needs (why a source is refused); any other snapshot asked
        for is read again on demand. A wiki check keeps every run's check until its site is built,
        and the verified ones' spans are held once already, in the wiki's excerpt table."""
        kept = CheckedSnapshots(self.folder, assets_root=self.assets_root)
        for check in self._checks.values():
            if not check.ok:
                kept._keep(check)
        return kept

    def checks(self) -> dict[str, SnapshotCheck]:
        """Every check held so far, by source id."""
        return dict(self._checks)

    def asset_digests(self, root: Path | str | None) -> dict[str, str | None]:
        """The digests of the assets the checks hashed under ``root``, by asset path."""
        if root is None:
            return {}
        folder = os.fspath(root)
        return {
            c.asset.path: c.asset_digest
            for c in self._checks.values()
            if c.ok and c.asset is not None and c.assets_root == folder
        }


_SAME_SNAPSHOT = ("content_hash", "record_hash", "asset_digest", "assets_root", "text_length")


def _merged(known: SnapshotCheck, new: SnapshotCheck) -> SnapshotCheck:
    """One check of a snapshot checked twice: the spans of both, or the failure.

    A failure stands whichever check saw it; two good checks must describe the same bytes
    (same digests), else the snapshot changed between the reads.
    """
    if not known.ok:
        return known
    if not new.ok:
        return new
    if any(getattr(known, name) != getattr(new, name) for name in _SAME_SNAPSHOT):
        return SnapshotCheck(
            new.location,
            new.source_id,
            False,
            Reason.SNAPSHOT_HASH_MISMATCH,
            f"snapshot {new.source_id[:80]} changed while it was being checked (two reads gave different digests)",
        )
    spans = {(item.start, item.end): item for item in known.spans}
    for item in new.spans:
        spans.setdefault((item.start, item.end), item)
    return replace(known, spans=tuple(spans.values()))
