"""Claim identity and the claim's front-matter shape (CONTRACT section 14)."""

from __future__ import annotations

import pytest

from publisher.kernel.errors import IntegrityError, UsageError
from publisher.kernel.reasons import Reason
from publisher.wiki.claims.model import EpistemicStatus, claim_hash, normalise_statement, parse_status
from publisher.wiki.concepts import parse_concept

FRONT = """---
schema_version: 1
title: T
concept: t
claims:
{claims}---
Body.
"""


def _claim(extra: str = "", cid: str = "c1") -> str:
    return f"  - id: {cid}\n    statement: CBT reduces symptoms.\n    status: supported\n{extra}"


def test_unicode_and_whitespace_variants_are_one_claim() -> None:
    composed = "Caf\u00e9 patients  improved\tat 12\u00a0weeks. "
    decomposed = "Cafe\u0301 patients improved\nat 12 weeks."
    assert normalise_statement(composed) == "Caf\u00e9 patients improved at 12 weeks."
    assert claim_hash(composed) == claim_hash(decomposed)
    assert claim_hash(composed).startswith("sha256:") and len(claim_hash(composed)) == 71
    # Meaning is never normalised: one word more is another claim.
    assert claim_hash("Patients improved.") != claim_hash("Patients improved slightly.")


def test_a_confidence_field_has_no_place() -> None:
    with pytest.raises(IntegrityError) as info:
        parse_concept(FRONT.format(claims=_claim("    confidence: 0.97\n")), where="concepts/t.md")
    found = info.value.finding()
    assert (found.reason, found.file, found.field) == (Reason.SCHEMA_ERROR, "concepts/t.md", "claims.0.confidence")


def test_claim_ids_are_unique_slugs() -> None:
    twice = _claim() + _claim()
    with pytest.raises(IntegrityError) as info:
        parse_concept(FRONT.format(claims=twice), where="concepts/t.md")
    assert info.value.reason is Reason.SCHEMA_ERROR
    with pytest.raises(IntegrityError):
        parse_concept(FRONT.format(claims=_claim(cid="../x")), where="concepts/t.md")


def test_a_claim_carries_its_assessment_id() -> None:
    doc = parse_concept(FRONT.format(claims=_claim("    assessment: as-0001\n")), where="concepts/t.md")
    assert doc.front.claims[0].assessment == "as-0001"
    assert doc.front.claims[0].status is EpistemicStatus.SUPPORTED


def test_status_names_and_codes() -> None:
    assert parse_status("NS") is EpistemicStatus.NOT_SUPPORTED
    assert parse_status("partially_supported") is EpistemicStatus.PARTIALLY_SUPPORTED
    with pytest.raises(UsageError):
        parse_status("likely")
