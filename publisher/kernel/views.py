"""A verified snapshot's paper, asset, identity and surface as plain values, without the
validation library.

A snapshot check (:mod:`.snapshots`) carries these parts of its record, and the commands that
check a run (``assemble``, ``verify``) would otherwise load the validation library only to hold
them. Each view holds exactly what the model of the same name in :mod:`.models` holds for the
same JSON (enums as their members, lists as tuples), offers the model's methods that callers use
(``ids()``, ``derived_ids()``, ``derived``) and a :meth:`model_dump` that returns what the
model's returns for the same arguments, key order included.

A view never validates: it is made only from a value the model or
:func:`~publisher.kernel.shapes.snapshot_shape` (:func:`~publisher.kernel.shapes.event_shape`
for an event's surface) has accepted already, or from a view's own ``model_dump(mode="json")``.
Tests build both sides from generated records and hold them equal (``tests/test_views.py``).

The views are :class:`~publisher.kernel.frozen.FrozenValue` classes: equal and hashed by their
fields, as the frozen models are (which keys the JSON gave is kept for ``exclude_unset`` but, as
for the models, never compared).
"""

from __future__ import annotations

from typing import Any, Literal

from .frozen import FrozenValue
from .vocab import Basis, SurfaceType

__all__ = ["PaperView", "AssetView", "IdentityEntryView", "IdentityView", "SurfaceView", "DumpMode"]

DumpMode = Literal["json", "python"]
"""``model_dump``'s modes: ``json`` gives enums as their values and tuples as lists."""

_PAPER_FIELDS = ("pmid", "doi", "pmcid")
_IDENTITY_FIELDS = ("pmid", "doi", "pmcid", "title")
_SURFACE_FIELDS = (
    "type",
    "expected_pages",
    "extracted_pages",
    "missing_pages",
    "unexpected_pages",
    "complete",
    "excluded_modalities",
    "method",
    "manifest_hash",
)
_PAGE_LISTS = ("expected_pages", "extracted_pages", "missing_pages", "unexpected_pages", "excluded_modalities")
_SET = object.__setattr__
"""Sets a field of a frozen view in its constructor (a view refuses assignment afterwards)."""


def _given(raw: dict[str, Any], names: tuple[str, ...]) -> tuple[str, ...]:
    """The fields of ``names`` that ``raw`` holds, in the model's order (what ``exclude_unset`` keeps)."""
    if len(raw) == len(names):
        return names
    return tuple(name for name in names if name in raw)


class PaperView(FrozenValue):
    """A snapshot's bibliographic ids (the fields of the model's ``Paper``).

    Made only from JSON that the model or ``snapshot_shape`` accepted (see the module docstring):
    the values are not checked again.
    """

    __slots__ = ("doi", "given", "pmcid", "pmid")
    _fields = ("pmid", "doi", "pmcid", "given")
    _compared = _PAPER_FIELDS
    _shown = _PAPER_FIELDS
    pmid: str | None
    doi: str | None
    pmcid: str | None
    given: tuple[str, ...]
    """The fields the JSON held, in the model's order (the model's ``model_fields_set``)."""

    def __init__(
        self,
        pmid: str | None = None,
        doi: str | None = None,
        pmcid: str | None = None,
        given: tuple[str, ...] = _PAPER_FIELDS,
    ) -> None:
        _SET(self, "pmid", pmid)
        _SET(self, "doi", doi)
        _SET(self, "pmcid", pmcid)
        _SET(self, "given", given)

    @classmethod
    def of(cls, raw: dict[str, Any]) -> PaperView:
        """The view of an accepted ``paper`` object (parsed JSON)."""
        get = raw.get
        return cls(get("pmid"), get("doi"), get("pmcid"), _given(raw, _PAPER_FIELDS))

    def ids(self) -> dict[str, str]:
        """The ids that are present, by kind."""
        return {k: v for k, v in (("pmid", self.pmid), ("doi", self.doi), ("pmcid", self.pmcid)) if v}

    def model_dump(
        self, *, mode: DumpMode = "python", exclude_unset: bool = False, exclude_none: bool = False
    ) -> dict[str, Any]:
        """What the model's ``model_dump`` returns with these arguments (the same in both modes)."""
        names = self.given if exclude_unset else _PAPER_FIELDS
        out = {name: getattr(self, name) for name in names}
        return {k: v for k, v in out.items() if v is not None} if exclude_none else out


class AssetView(FrozenValue):
    """A stored file a snapshot's text was derived from (the fields of the model's ``Asset``).

    Made only from JSON that the model or ``snapshot_shape`` accepted: the path is relative
    without ``..`` and the digest is 64 lowercase hex digits because that check said so, not
    because this class looks.
    """

    __slots__ = ("bytes", "path", "sha256")
    _fields = ("path", "sha256", "bytes")
    path: str
    sha256: str
    bytes: int

    def __init__(self, path: str, sha256: str, bytes: int) -> None:
        _SET(self, "path", path)
        _SET(self, "sha256", sha256)
        _SET(self, "bytes", bytes)

    @classmethod
    def of(cls, raw: dict[str, Any]) -> AssetView:
        """The view of an accepted ``asset`` object (parsed JSON)."""
        return cls(raw["path"], raw["sha256"], raw["bytes"])

    def model_dump(
        self, *, mode: DumpMode = "python", exclude_unset: bool = False, exclude_none: bool = False
    ) -> dict[str, Any]:
        """What the model's ``model_dump`` returns (every field is required and never None)."""
        return {"path": self.path, "sha256": self.sha256, "bytes": self.bytes}


class IdentityEntryView(FrozenValue):
    """One id (or the title) with its basis and where it was read (the model's ``IdentityEntry``).

    Made only from JSON that the model or ``snapshot_shape`` accepted (values not checked again).
    """

    __slots__ = ("basis", "value", "via")
    _fields = ("value", "basis", "via")
    value: str
    basis: Basis
    via: str

    def __init__(self, value: str, basis: Basis, via: str) -> None:
        _SET(self, "value", value)
        _SET(self, "basis", basis)
        _SET(self, "via", via)

    @classmethod
    def of(cls, raw: dict[str, Any]) -> IdentityEntryView:
        """The view of an accepted identity entry (parsed JSON: the basis is its string value)."""
        return cls(raw["value"], Basis(raw["basis"]), raw["via"])

    @property
    def derived(self) -> bool:
        """Whether the document or a registry's URL gives it (not the acquirer's word alone)."""
        return self.basis is not Basis.ASSERTED

    def model_dump(
        self, *, mode: DumpMode = "python", exclude_unset: bool = False, exclude_none: bool = False
    ) -> dict[str, Any]:
        """What the model's ``model_dump`` returns (the basis as its value in ``json`` mode)."""
        return {"value": self.value, "basis": self.basis.value if mode == "json" else self.basis, "via": self.via}


class IdentityView(FrozenValue):
    """A snapshot's ids and title, each with its basis (the fields of the model's ``Identity``).

    Made only from JSON that the model or ``snapshot_shape`` accepted (values not checked again).
    """

    __slots__ = ("doi", "given", "pmcid", "pmid", "title")
    _fields = ("pmid", "doi", "pmcid", "title", "given")
    _compared = _IDENTITY_FIELDS
    _shown = _IDENTITY_FIELDS
    pmid: IdentityEntryView | None
    doi: IdentityEntryView | None
    pmcid: IdentityEntryView | None
    title: IdentityEntryView | None
    given: tuple[str, ...]
    """The fields the JSON held, in the model's order (the model's ``model_fields_set``)."""

    def __init__(
        self,
        pmid: IdentityEntryView | None = None,
        doi: IdentityEntryView | None = None,
        pmcid: IdentityEntryView | None = None,
        title: IdentityEntryView | None = None,
        given: tuple[str, ...] = _IDENTITY_FIELDS,
    ) -> None:
        _SET(self, "pmid", pmid)
        _SET(self, "doi", doi)
        _SET(self, "pmcid", pmcid)
        _SET(self, "title", title)
        _SET(self, "given", given)

    @classmethod
    def of(cls, raw: dict[str, Any]) -> IdentityView:
        """The view of an accepted ``identity`` object (parsed JSON)."""
        get, entry = raw.get, IdentityEntryView.of
        pmid, doi, pmcid, title = get("pmid"), get("doi"), get("pmcid"), get("title")
        return cls(
            None if pmid is None else entry(pmid),
            None if doi is None else entry(doi),
            None if pmcid is None else entry(pmcid),
            None if title is None else entry(title),
            _given(raw, _IDENTITY_FIELDS),
        )

    def ids(self) -> dict[str, IdentityEntryView]:
        """The paper ids present, by kind (the title left out)."""
        return {k: e for k, e in (("pmid", self.pmid), ("doi", self.doi), ("pmcid", self.pmcid)) if e is not None}

    def derived_ids(self) -> dict[str, str]:
        """The paper ids that the document or a registry URL gives: what a work rests on."""
        return {k: e.value for k, e in self.ids().items() if e.derived}

    def model_dump(
        self, *, mode: DumpMode = "python", exclude_unset: bool = False, exclude_none: bool = False
    ) -> dict[str, Any]:
        """What the model's ``model_dump`` returns with these arguments, the entries dumped alike."""
        out: dict[str, Any] = {}
        for name in self.given if exclude_unset else _IDENTITY_FIELDS:
            entry: IdentityEntryView | None = getattr(self, name)
            if entry is not None:
                out[name] = entry.model_dump(mode=mode)
            elif not exclude_none:
                out[name] = None
        return out


class SurfaceView(FrozenValue):
    """The text surface declared at acquisition (the fields of the model's ``Surface``): page
    lists as tuples, ``type`` as its :class:`~publisher.kernel.vocab.SurfaceType`.

    Made only from JSON that the model, ``snapshot_shape`` or ``event_shape`` accepted: that the
    page lists follow from each other and ``complete`` from them is their check, not this class's.
    """

    __slots__ = _SURFACE_FIELDS
    _fields = _SURFACE_FIELDS
    type: SurfaceType
    expected_pages: tuple[int, ...] | None
    extracted_pages: tuple[int, ...]
    missing_pages: tuple[int, ...]
    unexpected_pages: tuple[int, ...]
    complete: bool
    excluded_modalities: tuple[str, ...]
    method: str
    manifest_hash: str

    def __init__(
        self,
        type: SurfaceType,
        expected_pages: tuple[int, ...] | None,
        extracted_pages: tuple[int, ...],
        missing_pages: tuple[int, ...],
        unexpected_pages: tuple[int, ...],
        complete: bool,
        excluded_modalities: tuple[str, ...],
        method: str,
        manifest_hash: str,
    ) -> None:
        _SET(self, "type", type)
        _SET(self, "expected_pages", expected_pages)
        _SET(self, "extracted_pages", extracted_pages)
        _SET(self, "missing_pages", missing_pages)
        _SET(self, "unexpected_pages", unexpected_pages)
        _SET(self, "complete", complete)
        _SET(self, "excluded_modalities", excluded_modalities)
        _SET(self, "method", method)
        _SET(self, "manifest_hash", manifest_hash)

    @classmethod
    def of(cls, raw: dict[str, Any]) -> SurfaceView:
        """The view of an accepted ``surface`` object (parsed JSON: lists, the type's string)."""
        expected = raw["expected_pages"]
        return cls(
            SurfaceType(raw["type"]),
            None if expected is None else tuple(expected),
            tuple(raw["extracted_pages"]),
            tuple(raw["missing_pages"]),
            tuple(raw["unexpected_pages"]),
            raw["complete"],
            tuple(raw["excluded_modalities"]),
            raw["method"],
            raw["manifest_hash"],
        )

    def model_dump(
        self, *, mode: DumpMode = "python", exclude_unset: bool = False, exclude_none: bool = False
    ) -> dict[str, Any]:
        """What the model's ``model_dump`` returns with these arguments (every field is required;
        only ``expected_pages`` may be None)."""
        out = {name: getattr(self, name) for name in _SURFACE_FIELDS}
        if mode == "json":
            out["type"] = self.type.value
            for name in _PAGE_LISTS:
                if out[name] is not None:
                    out[name] = list(out[name])
        if exclude_none and out["expected_pages"] is None:
            del out["expected_pages"]
        return out
