"""Revisions of a source (CONTRACT section 18): which stored snapshot a new acquisition supersedes.

A snapshot is immutable, so a changed page or a corrected article is a new snapshot whose sealed
``supersedes`` names the one it revises. An acquisition in a later run of the same wiki that finds
the same work there (the same URL, or a paper id both derive) supersedes the newest revision of
it; ``publisher source revise`` names the snapshot itself. Only snapshots that verify are ever
named; nothing here writes.

On a wiki that trusts keys, a snapshot is a revision only when an acquisition event of its run,
signed for that run by a key trusted for ``acquire``, sealed it (its ``record_hash``), as the
site's revision index reads signed events only. A snapshot anyone could drop into a run folder
(content-addressed and self-sealed, so it verifies) would otherwise be the newest revision a new
fetch supersedes, leaving the cited one current, and ``source revisions`` would name it current.
"""

from __future__ import annotations

import glob
import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Generic, Protocol, TypeVar

from ..kernel._fs import real_path
from ..kernel.canonical import parse_ts
from ..kernel.errors import PublisherError, UsageError
from ..kernel.eventlog import read_log
from ..kernel.ids import same_id
from ..kernel.shapes import SnapshotView
from ..kernel.store import read_snapshot, read_view
from ..kernel.trust import KeyRing, Role, event_signature_problem
from ..kernel.vocab import EventType
from ..runs import RUN_LAYOUTS, Run

if TYPE_CHECKING:
    from ..kernel.models import Snapshot

__all__ = [
    "Stored",
    "wiki_snapshots",
    "wiki_views",
    "find_snapshot",
    "prior_revision",
    "refuse_other_work",
    "chain",
]


class _Revision(Protocol):
    """What a revision chain reads of a snapshot (a model or a view)."""

    @property
    def source_id(self) -> str: ...
    @property
    def supersedes(self) -> str | None: ...
    @property
    def retrieved_at(self) -> str: ...
    @property
    def record_hash(self) -> str | None: ...


S = TypeVar("S", bound=_Revision)


@dataclass(frozen=True)
class Stored(Generic[S]):
    """A verified snapshot of one of the wiki's runs, with the run's folder and creation time."""

    run: Path
    created_at: str | None
    snapshot: S


def _runs(wiki_root: Path) -> list[Path]:
    """Every run folder of the wiki (any folder of a run layout holding ``config.json``)."""
    found: dict[Path, Path] = {}
    for pattern in RUN_LAYOUTS:
        for name in sorted(glob.glob(os.path.join(glob.escape(str(wiki_root)), pattern))):
            path = Path(name)
            if path.is_dir() and (path / "config.json").is_file():
                found.setdefault(real_path(path), path)
    return list(found.values())


def wiki_snapshots(
    wiki_root: Path, *, trusted_keys: KeyRing, before: str | None = None, skip: Path | None = None
) -> Iterator[Stored[Snapshot]]:
    """Every snapshot of the wiki's runs that verifies and, with ``trusted_keys``, that a trusted
    key acquired (:func:`acquired_seals`); any other is skipped (the wiki check reports one that
    does not verify), never named as a revision. ``before``: only runs created earlier than that
    instant (a run without ``created_at`` has none); ``skip``: a run folder left out."""
    return _stored(wiki_root, read_snapshot, trusted_keys, before, skip)


def wiki_views(wiki_root: Path, *, trusted_keys: KeyRing) -> Iterator[Stored[SnapshotView]]:
    """:func:`wiki_snapshots` as plain values (:class:`~publisher.kernel.shapes.SnapshotView`):
    the same snapshots, verified alike, without the validation library (``source revisions``)."""
    return _stored(wiki_root, read_view, trusted_keys, None, None)


def acquired_seals(run: Run, trusted_keys: KeyRing) -> dict[str, set[str]]:
    """The ``record_hash`` of each snapshot that an acquisition event of ``run`` (a fetch or a local
    PDF) sealed under a valid signature for the run by a key of ``trusted_keys`` holding the
    ``acquire`` role, by source id. A log that does not read, or whose chain is broken, seals
    nothing."""
    try:
        log = read_log(run.events_path)
        name = run.name()
    except (PublisherError, OSError, ValueError):
        return {}
    if log.findings:
        return {}
    out: dict[str, set[str]] = {}
    for event in log.events:
        if event.type not in (EventType.FETCH, EventType.LOCAL_PDF) or event.source_id is None:
            continue
        if event.record_hash is None or event_signature_problem(event, trusted_keys, name, Role.ACQUIRE) is not None:
            continue
        out.setdefault(event.source_id, set()).add(event.record_hash)
    return out


def _trusted(snap: _Revision, seals: dict[str, set[str]] | None) -> bool:
    """Whether ``snap`` counts as a revision: on an unsigned wiki (``seals`` None) any snapshot
    that verifies, else one a trusted acquisition sealed as it stands."""
    return seals is None or (snap.record_hash is not None and snap.record_hash in seals.get(snap.source_id, ()))


def _stored(
    wiki_root: Path, read: Callable[[Path, str], S], ring: KeyRing, before: str | None, skip: Path | None
) -> Iterator[Stored[S]]:
    for folder in _runs(wiki_root):
        if skip is not None and real_path(folder) == real_path(skip):
            continue
        try:
            run = Run.open(folder)
            created = run.created_at()
        except PublisherError:
            continue
        if before is not None and not _before(before, created):
            continue
        sources = folder / "sources"
        if not sources.is_dir():
            continue
        seals = acquired_seals(run, ring) if ring else None
        for entry in sorted(sources.glob("src-*.json")):
            try:
                snap = read(sources, entry.name[: -len(".json")])
            except (PublisherError, OSError, ValueError):
                continue
            if _trusted(snap, seals):
                yield Stored(folder, created, snap)


def find_snapshot(run: Run, source_id: str, wiki_root: Path | None, *, trusted_keys: KeyRing) -> Stored[Snapshot]:
    """The snapshot ``source_id`` of ``run``, else of another run of its wiki (with
    ``trusted_keys``, one a trusted key acquired); else a usage error."""
    if run.store.exists(source_id):
        snap = run.store.read(source_id)
        if _trusted(snap, acquired_seals(run, trusted_keys) if trusted_keys else None):
            return Stored(run.path, run.load_config().created_at, snap)
    if wiki_root is not None:
        for stored in wiki_snapshots(wiki_root, trusted_keys=trusted_keys):
            if stored.snapshot.source_id == source_id:
                return stored
    signed = " acquired under the wiki's trusted keys" if trusted_keys else ""
    raise UsageError(f"no snapshot {source_id}{signed} in {run.path} or the runs of its wiki", source_id=source_id)


def _same_work(a: Snapshot, b: Snapshot) -> bool:
    """The same URL, or a paper id both derive (an asserted id joins nothing)."""
    if a.url == b.url:
        return True
    mine = a.derived_ids()
    return any(k in mine and same_id(k, mine[k], v) for k, v in b.derived_ids().items())


def _contradicts(old: Snapshot, new: Snapshot) -> bool:
    """Whether the two derive different values of one paper id kind (two works at one URL)."""
    theirs = old.derived_ids()
    return any(k in theirs and not same_id(k, theirs[k], v) for k, v in new.derived_ids().items())


def _before(created: str | None, other: str | None) -> bool:
    return created is not None and other is not None and parse_ts(other) < parse_ts(created)


def prior_revision(run: Run, record: dict[str, Any], wiki_root: Path | None, *, trusted_keys: KeyRing) -> str | None:
    """The snapshot an acquisition of ``record`` in ``run`` supersedes, or None.

    The newest revision (a snapshot nothing supersedes) of the same work in a run of the wiki
    created before this one; None when none is, or when the same snapshot is already stored there
    (the same URL and text are no revision).
    """
    if wiki_root is None:
        return None
    from ..kernel.models import Snapshot  # an acquisition's, which validates anyway

    mine = Snapshot.model_validate(record)
    created = run.load_config().created_at
    if created is None:
        return None
    candidates: list[Snapshot] = []
    superseded: set[str] = set()
    for stored in wiki_snapshots(wiki_root, trusted_keys=trusted_keys, before=created, skip=run.path):
        snap = stored.snapshot
        if snap.supersedes is not None:
            superseded.add(snap.supersedes)
        if snap.source_id == mine.source_id:
            return None
        if _same_work(mine, snap) and not _contradicts(snap, mine):
            candidates.append(snap)
    heads = [s for s in candidates if s.source_id not in superseded]
    if not heads:
        return None
    return max(heads, key=lambda s: (parse_ts(s.retrieved_at), s.source_id)).source_id


def refuse_other_work(old: Snapshot, record: dict[str, Any]) -> None:
    """Refuse a revision whose derived ids contradict those of the snapshot it supersedes."""
    from ..kernel.models import Snapshot

    new = Snapshot.model_validate(record)
    if new.source_id == old.source_id:
        raise UsageError(
            f"{old.source_id} is unchanged (same URL and text): nothing to revise", source_id=old.source_id
        )
    theirs = old.derived_ids()
    for kind, value in new.derived_ids().items():
        if kind in theirs and not same_id(kind, theirs[kind], value):
            raise UsageError(
                f"the new text derives {kind} {value!r} but {old.source_id} derives {theirs[kind]!r}: "
                "another work is no revision of it",
                field=kind,
                source_id=old.source_id,
            )


def chain(snapshots: list[Stored[S]], source_id: str) -> list[Stored[S]]:
    """The revisions of ``source_id``'s chain, first to newest (each the newest one superseding
    the previous); a usage error when no snapshot has that id."""
    by_id = {s.snapshot.source_id: s for s in snapshots}
    if source_id not in by_id:
        raise UsageError(f"no snapshot {source_id} in the wiki's runs", source_id=source_id)
    later: dict[str, list[Stored[S]]] = {}
    for stored in snapshots:
        if stored.snapshot.supersedes is not None:
            later.setdefault(stored.snapshot.supersedes, []).append(stored)
    first = by_id[source_id]
    seen = {source_id}
    while first.snapshot.supersedes in by_id and first.snapshot.supersedes not in seen:
        first = by_id[first.snapshot.supersedes]
        seen.add(first.snapshot.source_id)
    out = [first]
    while (nxt := later.get(out[-1].snapshot.source_id)) and len(out) <= len(by_id):
        newest = max(nxt, key=lambda s: (parse_ts(s.snapshot.retrieved_at), s.snapshot.source_id))
        if any(o.snapshot.source_id == newest.snapshot.source_id for o in out):
            break
        out.append(newest)
    return out
