"""The roles a trusted key may hold (CONTRACT section 12): what its signature counts for.

A trusted key entry of ``extra.evidence.trusted_keys`` is a bare path (roles ``acquire`` and
``assess``, the meaning a bare path always had) or ``{path, roles: [...]}``. A signature counts
only for the roles of its key: a ``warrant`` review signed by a key without that role is no
review, an acquisition signed by a key that only reviews is no acquisition.
"""

from __future__ import annotations

from enum import StrEnum

__all__ = ["Role", "DEFAULT_ROLES", "parse_roles"]


class Role(StrEnum):
    """What a trusted key's signature may stand for."""

    ACQUIRE = "acquire"
    """Acquisition events: fetch, local, register, revisions."""
    ASSESS = "assess"
    """Assessments, reviews, adjudications, missingness."""
    WARRANT = "warrant"
    """Warrant reviews (section 17): a person's judgement that a claim's excerpts say what it says."""


DEFAULT_ROLES = frozenset({Role.ACQUIRE, Role.ASSESS})
"""The roles of a key listed as a bare path."""


def parse_roles(value: object) -> frozenset[Role] | None:
    """The roles a ``roles:`` list names, or None when it is not a non-empty list of known roles."""
    if not isinstance(value, list) or not value or not all(isinstance(v, str) for v in value):
        return None
    try:
        return frozenset(Role(v) for v in value)
    except ValueError:
        return None
