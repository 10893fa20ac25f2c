"""Event lines as plain values, read without the validation library.

Every command that reads a run reads its event log, and ``assemble`` and ``verify`` start
hundreds of times an agent's session: loading the validation library and building the event's
model costs more than the rest of such a command's reading. A line that
:func:`~publisher.kernel.shapes.event_shape` accepts is one the model
(:class:`~publisher.kernel.models.Event`) accepts, so :class:`EventView` holds it as the model
would (the same fields, values and methods), built straight from the parsed line; any other line
is judged by the model, and what it accepts is held the same way (:func:`view_of_event`). A view
is only ever made from a line one of the two accepted: it checks nothing itself.
"""

from __future__ import annotations

import sys
from typing import Any, Protocol

from .canonical import canonical_bytes
from .views import DumpMode, SurfaceView
from .vocab import EventType

__all__ = [
    "EventView",
    "ReceiptView",
    "SignatureView",
    "view_of_event",
    "signed_payload",
    "EVENT_FIELDS",
    "OPTIONAL_EXT",
]

EVENT_FIELDS = (
    "schema_version",
    "event_id",
    "type",
    "source_id",
    "url",
    "at",
    "fresh",
    "sha256",
    "actor",
    "detail",
    "prev",
    "record_hash",
    "receipt",
    "sig",
    "merkle_root",
    "merkle_size",
    "surface",
    "supersedes",
)
"""The event's fields in the model's order (a test holds them to it)."""

OPTIONAL_EXT = ("record_hash", "receipt", "sig", "surface", "merkle_root", "merkle_size", "supersedes")
"""The fields a line leaves out when they are null (the model's ``wire``)."""

RECEIPT_FIELDS = (
    "requested_url",
    "final_url",
    "redirects",
    "status",
    "media_type",
    "raw_sha256",
    "raw_bytes",
    "extractor",
)
SIGNATURE_FIELDS = ("alg", "key_id", "run", "value")


class ReceiptView:
    """What one acquisition attempt retrieved (the model's ``Receipt``), from an accepted line."""

    __slots__ = RECEIPT_FIELDS

    def __init__(self, raw: dict[str, Any]) -> None:
        redirects = raw["redirects"]
        self.requested_url: str = raw["requested_url"]
        self.final_url: str | None = raw["final_url"]
        self.redirects: tuple[str, ...] | None = None if redirects is None else tuple(redirects)
        self.status: int | None = raw["status"]
        self.media_type: str | None = raw["media_type"]
        self.raw_sha256: str | None = raw["raw_sha256"]
        self.raw_bytes: int | None = raw["raw_bytes"]
        self.extractor: str | None = raw["extractor"]

    def model_dump(self, *, mode: DumpMode = "python") -> dict[str, Any]:
        """What the model's ``model_dump`` returns (its fields in order; redirects a list in ``json`` mode)."""
        data = {name: getattr(self, name) for name in RECEIPT_FIELDS}
        if self.redirects is not None and mode == "json":
            data["redirects"] = list(self.redirects)
        return data

    def __eq__(self, other: object) -> bool:
        if isinstance(other, ReceiptView):
            return self.model_dump(mode="json") == other.model_dump(mode="json")
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]


class SignatureView:
    """An Ed25519 signature over an event (the model's ``Signature``), from an accepted line."""

    __slots__ = SIGNATURE_FIELDS

    def __init__(self, raw: dict[str, Any]) -> None:
        self.alg: str = raw["alg"]
        self.key_id: str = raw["key_id"]
        self.run: str = raw["run"]
        self.value: str = raw["value"]

    def model_dump(self, *, mode: DumpMode = "python") -> dict[str, Any]:
        """What the model's ``model_dump`` returns (the same in both modes)."""
        return {"alg": self.alg, "key_id": self.key_id, "run": self.run, "value": self.value}

    def __eq__(self, other: object) -> bool:
        if isinstance(other, SignatureView):
            return self.model_dump() == other.model_dump()
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]


class EventView:
    """One line of ``events.jsonl`` as the model holds it: the same fields (``type`` an
    :class:`EventType`, ``receipt``, ``sig`` and ``surface`` views), :attr:`number` and
    :meth:`wire`. Pickled as the line's JSON object, rebuilt without checks on the other side (a
    pool's worker sends what it read to the command that started it)."""

    __slots__ = (*EVENT_FIELDS, "_raw")

    def __init__(self, raw: dict[str, Any]) -> None:
        """The view of a parsed line that ``event_shape`` or the model accepted."""
        get = raw.get
        receipt, sig, surface = get("receipt"), get("sig"), get("surface")
        self.schema_version: int = raw["schema_version"]
        self.event_id: str = raw["event_id"]
        self.type = EventType(raw["type"])
        self.source_id: str | None = raw["source_id"]
        self.url: str = raw["url"]
        self.at: str = raw["at"]
        self.fresh: bool = raw["fresh"]
        self.sha256: str | None = raw["sha256"]
        self.actor: str = raw["actor"]
        self.detail: str | None = raw["detail"]
        self.prev: str | None = get("prev")
        self.record_hash: str | None = get("record_hash")
        self.receipt = None if receipt is None else ReceiptView(receipt)
        self.sig = None if sig is None else SignatureView(sig)
        self.merkle_root: str | None = get("merkle_root")
        self.merkle_size: int | None = get("merkle_size")
        self.surface = None if surface is None else SurfaceView.of(surface)
        self.supersedes: str | None = get("supersedes")
        self._raw = raw

    @property
    def number(self) -> int:
        """The counter in ``event_id``."""
        return int(self.event_id[3:])

    def model_dump(self, *, mode: DumpMode = "python") -> dict[str, Any]:
        """What the model's ``model_dump`` returns: every field in the model's order (nulls
        included), the type as its value and nested values as JSON in ``json`` mode."""
        data: dict[str, Any] = {name: getattr(self, name) for name in EVENT_FIELDS}
        if mode == "json":
            data["type"] = self.type.value
        for name in ("receipt", "sig", "surface"):
            if data[name] is not None:
                data[name] = data[name].model_dump(mode=mode)
        return data

    def wire(self) -> dict[str, Any]:
        """The JSON object of the event's line, as the model's ``wire`` gives it: the optional
        extension fields only when present."""
        data = self.model_dump(mode="json")
        for name in OPTIONAL_EXT:
            if data[name] is None:
                del data[name]
        return data

    def __eq__(self, other: object) -> bool:
        """Equal to a view or a model of the same event (the same values, field by field)."""
        if isinstance(other, EventView):
            return self.wire() == other.wire()
        models = sys.modules.get("publisher.kernel.models")  # a model exists only once its module is loaded
        if models is not None and isinstance(other, models.Event):
            return bool(self.wire() == other.wire())
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"EventView({self.event_id} {self.type.value} {self.source_id})"

    def __reduce__(self) -> tuple[Any, tuple[Any, ...]]:
        return EventView, (self._raw,)


class Dumped(Protocol):
    """A validated model (here the event's), which gives its values as JSON."""

    def model_dump(self, *, mode: str = ...) -> dict[str, Any]:
        """The model's values."""
        ...


def view_of_event(event: Dumped) -> EventView:
    """The view of an event the model accepted (a line the hand check was unsure of)."""
    return EventView(event.model_dump(mode="json"))


class Wired(Protocol):
    """A chained log's line that gives the JSON object it is written as (an event, its view, or a
    line of one of the other chained logs)."""

    def wire(self) -> dict[str, Any]:
        """The line's JSON object, ``sig`` included when signed."""
        ...


def signed_payload(line: Wired | dict[str, Any]) -> bytes:
    """The bytes a line's signature covers: canonical JSON of the line without ``sig.value``.

    The rest of ``sig`` (``alg``, ``key_id`` and the ``run`` it names) is covered too, so an
    event copied from another run cannot be relabelled for this one without breaking it. A line
    and its view give the same bytes (their ``wire`` is the same object).
    """
    data = dict(line) if isinstance(line, dict) else line.wire()
    sig = data.get("sig")
    if isinstance(sig, dict):
        data["sig"] = {k: v for k, v in sig.items() if k != "value"}
    return canonical_bytes(data)
