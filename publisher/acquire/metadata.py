"""Metadata of an acquisition: what the caller gave, merged with what the document states.

A contradiction between the two is an error, never a silent choice. Paper ids and the title are
derived with their basis by :mod:`publisher.acquire.identity`. A snapshot's metadata is
sealed when it is first stored; options that differ from a stored snapshot's are refused
(:func:`refuse_amendment`) rather than dropped.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..kernel.errors import UsageError
from ..kernel.ids import LITERATURE_KINDS, same_id
from ..kernel.models import Access, Origin
from ..runs import Run
from . import Extracted
from .identity import derive_identity

__all__ = ["Metadata", "resolve_metadata", "refuse_amendment"]


@dataclass(frozen=True)
class Metadata:
    """Metadata given on the command line; fills what the document does not state."""

    access: str | None = None
    origin: str | None = None
    pmid: str | None = None
    doi: str | None = None
    pmcid: str | None = None
    title: str | None = None


def _merge(field: str, stated: str | None, given: str | None, same: Any = None) -> str | None:
    if stated is None or stated == "":
        return given
    if given is None:
        return stated
    equal = same(stated, given) if same else stated == given
    if not equal:
        raise UsageError(f"--{field} {given!r} contradicts the document, which states {stated!r}")
    return stated


def _enum(value: str, enum: type[Access] | type[Origin], option: str) -> str:
    try:
        return enum(value).value
    except ValueError:
        choices = ", ".join(e.value for e in enum)
        raise UsageError(f"--{option} {value!r} is not one of: {choices}") from None


def resolve_metadata(
    doc: Extracted, meta: Metadata, *, default_origin: str, urls: tuple[str, ...]
) -> tuple[dict[str, Any], tuple[str, ...]]:
    """The record's metadata fields (``title``, ``paper``, ``identity``, ``access``, ``origin``)
    and notes on what could not be derived; a contradiction is an error.

    ``urls`` are the addresses whose registry form may name the paper (the one asked for and the
    one that answered); a text registered by hand passes none, its address being the caller's word.
    """
    derived = derive_identity(
        doc, urls=urls, given={kind: getattr(meta, kind) for kind in LITERATURE_KINDS}, given_title=meta.title
    )
    access = _enum(meta.access, Access, "access") if meta.access else None
    origin = _enum(meta.origin, Origin, "origin") if meta.origin else None
    fields = {
        "title": derived.title,
        "paper": derived.paper,
        "identity": derived.identity or None,
        "access": _merge("access", doc.access, access) or Access.WEB.value,
        "origin": _merge("origin", doc.origin, origin) or default_origin,
    }
    return fields, derived.notes


_GIVEN = (("pmid", "paper"), ("doi", "paper"), ("pmcid", "paper"), ("title", None), ("access", None), ("origin", None))


def refuse_amendment(run: Run, record: dict[str, Any], meta: Metadata) -> None:
    """Refuse options that would be dropped because the snapshot is already stored differently.

    The snapshot's name is ``sha256(url NUL text)``: the same URL and text with other metadata
    cannot be stored beside it, and the stored record is never rewritten.
    """
    source_id = record["source_id"]
    if not run.store.exists(source_id):
        return
    stored = run.store.read(source_id).model_dump(mode="json")
    differences, fields = [], []
    for option, parent in _GIVEN:
        if getattr(meta, option) is None:
            continue
        want = (record.get(parent) or {}).get(option) if parent else record.get(option)
        have = (stored.get(parent) or {}).get(option) if parent else stored.get(option)
        same = want == have or (
            parent is not None and isinstance(want, str) and isinstance(have, str) and same_id(option, want, have)
        )
        if not same:
            differences.append(f"--{option} {want!r} (stored: {have!r})")
            fields.append(f"{parent}.{option}" if parent else option)
    if differences:
        raise UsageError(
            f"{source_id} is already stored in this run with other metadata: {'; '.join(differences)}. "
            "Stored metadata is sealed, never amended: 'publisher source revise --run-dir LATER --source-id "
            f"{source_id} --url URL' records a revision acquired from another address (a registry's article URL "
            "gives a derived id), in a later run ('publisher run init LATER --slug S --from RUN')",
            source_id=source_id,
            field=fields[0],  # the record field the first differing option sets
        )
