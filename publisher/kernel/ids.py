"""Paper identifiers, normalised in one place: PMIDs, PMCIDs and DOIs as people write them.

Acquisition stores what a document states (or the caller gives) in one canonical form, and the
gate compares an ``evidence_id`` with a snapshot's paper through the same functions, so an id the
gate accepts is an id ``source fetch`` accepts too.
"""

from __future__ import annotations

import re
from typing import Protocol

__all__ = ["LITERATURE_KINDS", "IdError", "PaperIds", "canonical_id", "same_id", "paper_problem", "split_evidence_id"]

LITERATURE_KINDS = ("pmid", "doi", "pmcid")
"""Evidence id prefixes that make a literature claim (they need the paper id on the snapshot)."""

_PMID_RE = re.compile(r"(?:PMID:?\s*)?([0-9]{1,12})", re.IGNORECASE)
_PMCID_RE = re.compile(r"(?:PMCID:?\s*)?(?:PMC)?([0-9]{1,12})", re.IGNORECASE)
_DOI_PREFIXES = ("https://doi.org/", "http://doi.org/", "https://dx.doi.org/", "http://dx.doi.org/", "doi:")
_DOI_RE = re.compile(r"10\.[0-9]+(?:\.[0-9]+)*/[!-~]+")
"""A DOI: the ``10.`` directory, a registrant code of ASCII digits, a suffix of printable ASCII.
The registration agencies whose notices the wiki reads issue no other characters; a suffix with a
zero-width space, a bidi control or a Cyrillic letter would read as another DOI while being none."""


class IdError(ValueError):
    """A paper id that is not of its kind's form."""


def canonical_id(kind: str, value: str) -> str:
    """``value`` in the stored form of ``kind``: PMID digits, ``PMC`` + digits, a bare ``10.`` DOI.

    Digits are ASCII digits (another script's ``١٢٣`` is no PMID), and a DOI is printable ASCII
    (:data:`_DOI_RE`). A DOI keeps its case (DOIs compare case-insensitively, see :func:`same_id`)
    but loses any resolver prefix (``https://doi.org/``, ``doi:``). Raises :class:`IdError` for
    anything else.
    """
    text = value.strip()
    if kind == "pmid":
        match = _PMID_RE.fullmatch(text)
        if match is None:
            raise IdError(f"PMID {value[:60]!r} is not a number")
        return str(int(match.group(1)))
    if kind == "pmcid":
        match = _PMCID_RE.fullmatch(text)
        if match is None:
            raise IdError(f"PMCID {value[:60]!r} is not 'PMC' followed by digits")
        return "PMC" + str(int(match.group(1)))
    if kind == "doi":
        lowered = text.lower()
        for prefix in _DOI_PREFIXES:
            if lowered.startswith(prefix):
                text = text[len(prefix) :].strip()
                break
        if not _DOI_RE.fullmatch(text):
            raise IdError(f"DOI {value[:80]!r} is not of the form 10.<registrant>/<suffix>")
        return text
    raise IdError(f"unknown paper id kind {kind!r}")


def same_id(kind: str, a: str, b: str) -> bool:
    """Whether two spellings name the same paper (DOIs case-insensitively); malformed never match."""
    try:
        left, right = canonical_id(kind, a), canonical_id(kind, b)
    except IdError:
        return False
    return left.lower() == right.lower() if kind == "doi" else left == right


def split_evidence_id(evidence_id: str) -> tuple[str, str] | None:
    """``(kind, value)`` of a literature evidence id (``pmid:``, ``doi:``, ``pmcid:``), else None."""
    prefix, sep, value = evidence_id.partition(":")
    kind = prefix.strip().lower()
    if not sep or kind not in LITERATURE_KINDS:
        return None
    return kind, value.strip()


class PaperIds(Protocol):
    """Anything with ``pmid``, ``doi`` and ``pmcid`` (a snapshot's paper, a check's)."""

    @property
    def pmid(self) -> str | None: ...
    @property
    def doi(self) -> str | None: ...
    @property
    def pmcid(self) -> str | None: ...


def paper_problem(evidence_id: str, paper: PaperIds | None) -> str | None:
    """Why a snapshot's paper does not carry ``evidence_id`` (``NO_PAPER_ID``), or None.

    Only ``pmid:``, ``doi:`` and ``pmcid:`` ids are literature claims; other forms (``web:…``)
    need no paper.
    """
    split = split_evidence_id(evidence_id)
    if split is None:
        return None
    kind, value = split
    if not value:
        return f"evidence_id {evidence_id!r} names no {kind}"
    if paper is None:
        return f"snapshot has no paper ids; evidence_id {evidence_id}"
    stated = getattr(paper, kind)
    if not stated:
        return f"snapshot paper has no {kind}; evidence_id {evidence_id}"
    if not same_id(kind, stated, value):
        return f"snapshot paper {kind} {stated} contradicts evidence_id {evidence_id}"
    return None
