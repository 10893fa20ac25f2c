"""corpus.jsonl read strictly, and footnote labels resolved through it."""

from __future__ import annotations

import json

import pytest

from publisher.gate.corpus import parse_corpus
from publisher.kernel.errors import UsageError


def _lines(*records: dict[str, object]) -> bytes:
    return "".join(json.dumps(r) + "\n" for r in records).encode()


def test_labels_resolve_in_the_usual_shapes() -> None:
    corpus = parse_corpus(_lines({"evidence_id": "pmid:123", "pmid": 123, "doi": "10.1/X.y", "pmcid": "pmc77"}))
    for label in ("pmid:123", "pmid-123", "pubmed-123", "fulltext-123", "123", "PMC77", "pmc-77", "doi-10-1-x-y"):
        assert corpus.resolve_label(label) == ("pmid:123", None), label
    assert corpus.resolve_label("smith2024")[0] is None
    assert corpus.record("pmid:123") is not None and corpus.record("pmid:123").ids["pmcid"] == "PMC77"  # type: ignore[union-attr]


def test_an_ambiguous_label_resolves_to_nothing() -> None:
    corpus = parse_corpus(_lines({"evidence_id": "doi:10.1/a-b"}, {"evidence_id": "doi:10.1/ab"}))
    evidence_id, problem = corpus.resolve_label("doi-10-1-ab")
    assert evidence_id is None and problem is not None and "2 corpus records" in problem


def test_identical_repeated_lines_are_one_record_and_differing_ones_are_refused() -> None:
    same = {"evidence_id": "pmid:1", "pmid": "1"}
    assert list(parse_corpus(_lines(same, same)).records) == ["pmid:1"]
    with pytest.raises(UsageError) as caught:
        parse_corpus(_lines(same, {"evidence_id": "pmid:1", "pmid": "2"}))
    assert caught.value.reason is not None and caught.value.reason.value == "SCHEMA_ERROR"


def test_source_ids_and_blank_lines() -> None:
    sid = "src-" + "a" * 64
    corpus = parse_corpus(b"\n" + _lines({"evidence_id": "web:x", "source_ids": [sid, sid]}) + b"\n")
    assert corpus.record("web:x").source_ids == (sid,)  # type: ignore[union-attr]
    with pytest.raises(UsageError):
        parse_corpus(_lines({"evidence_id": "web:x", "source_ids": ["src-ABC"]}))
    assert not parse_corpus(None) and not parse_corpus(b"")
