"""The pool's side of a snapshot check: requests grouped by snapshot, and a worker's unit of work.

Checking one snapshot (read, verify, slice) is the kernel's job
(:mod:`publisher.kernel.snapshots`); its names are also importable from here, the path they had
before they moved.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from pathlib import Path, PurePath

from ..kernel import snapshots as _snapshots
from ..kernel.snapshots import PackedCheck, SnapshotCheck, SpanCheck, Task, as_error, check_snapshot
from .gcpause import fewer_collections

__all__ = ["Request", "SpanCheck", "SnapshotCheck", "check_snapshot", "check_chunk", "normalise", "as_error", "Task"]

Request = tuple[Path | str, str, Sequence[tuple[int, int]]]
"""``(sources_dir or snapshot file, source_id, [(start, end), ...])``."""


def normalise(requests: Iterable[Request]) -> list[Task]:
    """Group requests by (sources folder, source id), keeping first-seen order and unique spans."""
    groups: dict[tuple[str, str], dict[tuple[int, int], None]] = {}
    spelled: dict[str, str] = {}  # one Path parse per distinct spelling, not per request
    for item in requests:
        location, source_id, spans = item
        # A Path is spelled in normal form already: its string is what Path() would give again.
        # Keyed by that string, not the Path, whose hash costs a parse of its parts each time.
        given = location if type(location) is str else os.fspath(location)
        folder = spelled.get(given)
        if folder is None:
            folder = spelled[given] = given if isinstance(location, PurePath) else os.fspath(Path(given))
        if folder.endswith(".json") and os.path.basename(folder) == f"{source_id}.json":
            folder = os.fspath(Path(folder).parent)
        key = (folder, source_id)
        bucket = groups.setdefault(key, {})
        for pair in spans:
            start, end = pair
            if type(start) is not int or type(end) is not int:
                raise TypeError(f"span offsets must be int, got {start!r}, {end!r} for {source_id}")
            bucket[(start, end)] = None
    return [(folder, sid, tuple(spans)) for (folder, sid), spans in groups.items()]


def check_chunk(chunk: list[Task], assets_root: str | None = None) -> list[SnapshotCheck | PackedCheck]:
    """A worker's unit of work: several small snapshots or one large one, each check as plain values
    (:class:`~publisher.kernel.snapshots.PackedCheck`: it arrives as a :class:`SnapshotCheck`
    through a process pool; :func:`~publisher.kernel.snapshots.unpacked` makes one otherwise).

    The collector is held back meanwhile (:func:`~.gcpause.fewer_collections`): each snapshot's
    parsed record is many small objects that die together, none in a cycle.
    """
    with fewer_collections():
        return [_snapshots.packed_check(task, assets_root) for task in chunk]
