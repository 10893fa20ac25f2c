"""The fresh-fetch rule (CONTRACT sections 3 and 12): which sources were really retrieved in this run.

Beyond the rule of section 3, an acquisition event only counts when

* its ``record_hash`` (when it carries one) equals the snapshot's: metadata edited and resealed
  after acquisition is ``NO_FRESH_FETCH`` ("metadata changed since acquisition");
* the raw bytes its receipt names (a ``fetch`` with a ``receipt.raw_sha256``) are still under
  ``<run>/raw/`` and hash to that digest: without them the retrieval can no longer be audited,
  so freshness cannot be established (``NO_FRESH_FETCH``; the snapshot itself still verifies,
  so this is not ``SNAPSHOT_HASH_MISMATCH``). A local PDF's raw bytes are its asset
  (``ASSET_HASH_MISMATCH``, as before);
* when the wiki lists trusted keys, it carries a valid signature by one of them naming this run
  (``<run_slug>@<created_at>``); unsigned, foreign-run, untrusted or altered events never count.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any, Protocol

from ..kernel.assets import AssetChecker
from ..kernel.blobs import BlobChecker
from ..kernel.canonical import parse_ts
from ..kernel.eventviews import EventView
from ..kernel.frozen import FrozenValue
from ..kernel.reasons import Reason
from ..kernel.trust import KeyRing, Role, event_signature_problem
from ..kernel.vocab import ACQUISITIONS, EventType

if TYPE_CHECKING:
    from ..kernel.models import Asset, Snapshot
    from ..kernel.views import AssetView
    from .result import ResultPolicy

__all__ = ["Freshness", "Provenance", "SnapshotFacts", "freshness"]


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
    def asset(self) -> Asset | AssetView | None: ...
    @property
    def origin(self) -> object: ...
    @property
    def record_hash(self) -> str | None: ...


class Freshness(FrozenValue):
    """Outcome of the fresh-fetch rule for one snapshot in one run (compared by value: the same
    rule over a text and over its digest must agree; :class:`~publisher.kernel.frozen.FrozenValue`).

    ``field``: what on a matching acquisition event kept it from counting: ``sig``,
    ``record_hash`` (the metadata changed since acquisition) or ``receipt`` (its raw bytes); None
    otherwise."""

    __slots__ = ("detail", "event_id", "field", "fresh", "reason")
    _fields = ("fresh", "event_id", "reason", "detail", "field")
    fresh: bool
    event_id: str | None
    reason: Reason | None
    detail: str
    field: str | None

    def __init__(
        self, fresh: bool, event_id: str | None, reason: Reason | None, detail: str, field: str | None = None
    ) -> None:
        self._init(fresh, event_id, reason, detail, field)


class Provenance:
    """What the fresh-fetch rule needs beyond the log (CONTRACT section 12), one per assembly. A
    plain slotted class: a dataclass compiles its methods each time its module is imported, which
    every ``assemble`` and ``verify`` pays, and nothing compares these."""

    __slots__ = ("raw", "run_name", "trusted_keys")

    def __init__(self, trusted_keys: KeyRing, run_name: str, raw: BlobChecker) -> None:
        self.trusted_keys, self.run_name, self.raw = trusted_keys, run_name, raw

    def freshness(
        self, snap: Snapshot | SnapshotFacts, events: list[EventView], created_at: str | None, assets: AssetChecker
    ) -> Freshness:
        """:func:`freshness` with this run's keys, name and raw bytes."""
        return freshness(
            snap,
            events,
            created_at,
            assets,
            text_sha256=getattr(snap, "text_sha256", None),
            trusted_keys=self.trusted_keys,
            run_name=self.run_name,
            raw=self.raw,
        )

    def inputs(self) -> list[list[Any]]:
        """Entry 11 of ``inputs_hash`` (see :mod:`.inputs`): the raw bytes consulted."""
        checked = self.raw.checked()
        return [["raw", digest, checked[digest] or "ok"] for digest in sorted(checked)]

    def declared(self, events: Iterable[EventView]) -> ResultPolicy | None:
        """The trust policy the result declares (``policy``), or None for unsigned provenance.

        The wiki's trusted keys are a declared input of the check, not of the run: they are not
        hashed into ``inputs_hash``, so a run's identity does not depend on the wiki around it,
        and a result assembled under other keys is named as such (C-ASSEMBLER), never "edited".
        Only the keys that can decide something are declared: those trusted for ``acquire`` that
        signed one of the run's acquisition ``events``. A key trusted for review only, or one that
        signed nothing here, leaves every result as it is; trusting or dropping a key that signed
        one of its events makes it stale.
        """
        if not self.trusted_keys:
            return None
        from .result import ResultPolicy  # the result's models: an unsigned wiki's assembly never needs them

        signers = {e.sig.key_id for e in events if e.sig is not None and e.type in ACQUISITIONS}
        deciding = [kid for kid in self.trusted_keys.ids_for(Role.ACQUIRE) if kid in signers]
        return ResultPolicy(trusted_keys=tuple(deciding))


def freshness(
    snap: Snapshot | SnapshotFacts,
    events: Iterable[EventView],
    created_at: str | None,
    assets: AssetChecker,
    *,
    trusted_keys: KeyRing,
    text_sha256: str | None = None,
    run_name: str | None = None,
    raw: BlobChecker | None = None,
) -> Freshness:
    """Apply the fresh-fetch rule (CONTRACT sections 3 and 12) to one snapshot.

    Fresh iff some ``fetch`` or ``local_pdf`` event for this source, ``fresh: true``, at or after
    ``created_at``, carries a digest that still matches what is recomputed now: the text for a
    fetch; for a local PDF, the asset file's bytes, which must also equal ``asset.sha256``; and
    passes the checks of the module docstring (record hash, raw bytes, signature). A run
    without ``created_at`` has no fresh sources.

    ``text_sha256`` is the bare hex digest of the text as just verified (a reader that keeps no
    text passes it); without it the digest is computed from ``snap.text``. ``trusted_keys`` (a
    non-empty ring) requires a signature naming ``run_name``; ``raw`` checks receipts' raw bytes
    (None: not checked).
    """
    if created_at is None:
        return Freshness(False, None, Reason.NO_FRESH_FETCH, "run config has no created_at")
    try:
        since = parse_ts(created_at)
    except ValueError:
        return Freshness(False, None, Reason.NO_FRESH_FETCH, "run created_at is not a timestamp")
    signed = bool(trusted_keys)
    text_digest = text_sha256
    asset_problem: str | None = None
    problem: tuple[str, str] | None = None
    saw_local = False
    for event in events:
        if event.source_id != snap.source_id or not event.fresh:
            continue
        if event.type not in (EventType.FETCH, EventType.LOCAL_PDF):
            continue
        if parse_ts(event.at) < since or event.url != snap.url:
            continue
        why = _provenance_problem(event, snap, trusted_keys, run_name, raw)
        if why is not None:
            problem = problem or why
            continue
        how = f" (signed by key {event.sig.key_id[:16]}…)" if signed and event.sig else ""
        if event.type is EventType.FETCH:
            if text_digest is None:
                text = getattr(snap, "text", None)  # a record read whole has it; a check passes the digest
                if not isinstance(text, str):
                    raise TypeError("freshness needs the snapshot's text or its text_sha256")
                text_digest = hashlib.sha256(text.encode("utf-8")).hexdigest()
            if event.sha256 == text_digest:
                return Freshness(True, event.event_id, None, f"fetched in {event.event_id}{how}")
            continue
        saw_local = True
        if snap.asset is None:
            asset_problem = f"{event.event_id} is a local_pdf event on a snapshot without an asset"
            continue
        trouble = assets.check(snap)
        if trouble is not None:
            asset_problem = trouble
            continue
        if event.sha256 == snap.asset.sha256:
            return Freshness(True, event.event_id, None, f"local PDF verified in {event.event_id}{how}")
    if saw_local and asset_problem:
        return Freshness(False, None, Reason.ASSET_HASH_MISMATCH, asset_problem)
    if problem is not None:
        return Freshness(False, None, Reason.NO_FRESH_FETCH, problem[1], field=problem[0])
    return Freshness(False, None, Reason.NO_FRESH_FETCH, f"no fresh fetch of {snap.source_id} since {created_at}")


def _provenance_problem(
    event: EventView,
    snap: Snapshot | SnapshotFacts,
    trusted_keys: KeyRing,
    run_name: str | None,
    raw: BlobChecker | None,
) -> tuple[str, str] | None:
    """Why an otherwise matching acquisition event cannot make ``snap`` fresh (section 12): the
    event's field at fault (:attr:`Freshness.field`) and one line of detail."""
    if trusted_keys:
        why = event_signature_problem(event, trusted_keys, run_name or "", Role.ACQUIRE)
        if why is not None:
            return "sig", why
    if event.record_hash is not None and event.record_hash != snap.record_hash:
        now = snap.record_hash or "unsealed"
        return (
            "record_hash",
            f"metadata changed since acquisition: {event.event_id} recorded {event.record_hash}, the snapshot is {now}",
        )
    receipt = event.receipt
    if raw is not None and event.type is EventType.FETCH and receipt is not None and receipt.raw_sha256:
        trouble = raw.problem(receipt.raw_sha256)
        if trouble is not None:
            return "receipt", f"{event.event_id}: {trouble}; the retrieval cannot be audited"
    return None
