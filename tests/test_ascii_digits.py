"""Counters, offsets, DOI prefixes and registry paths are ASCII digits, as the contract writes them.

Python's and the validation library's ``\\d`` also match every other script's decimal digits
(Arabic-Indic ``١٢٣٤``, fullwidth ``１２３４``, mathematical ``𝟏𝟐𝟑𝟒``). A log line numbered
``ev-١٢٣٤``, a DOI ``10.１２３４/x`` or a PubMed path ``/１２３４５/`` is not what the contract
means by a zero-padded counter, a DOI or a registry's article URL: each is refused or names
nothing, never read as the ASCII one it looks like.
"""

from __future__ import annotations

from typing import Annotated, Any

import pytest
from pydantic import BaseModel, TypeAdapter, ValidationError

from publisher.acquire.agentrun import AgentRun
from publisher.acquire.identity import printed_dois, registry_ids
from publisher.acquire.notices import Notice
from publisher.gate.reportmd import paper_ids_in
from publisher.kernel.canonical import parse_ts
from publisher.kernel.ids import IdError, canonical_id, same_id
from publisher.kernel.models import Event
from publisher.kernel.refs import parse_refs
from publisher.wiki.claims.adjudications import Adjudication
from publisher.wiki.claims.log import Assessment
from publisher.wiki.claims.warrant import Warrant

OTHER_DIGITS = ["\u0661\u0662\u0663\u0664", "\uff11\uff12\uff13\uff14", "\U0001d7cf\U0001d7d0\U0001d7d1\U0001d7d2"]
"""``1234`` in Arabic-Indic, fullwidth and mathematical bold digits: each ``str.isdecimal``."""

SOURCE = "src-" + "a" * 64


def _field(model: type[BaseModel], name: str) -> TypeAdapter[Any]:
    info = model.model_fields[name]
    return TypeAdapter(Annotated[info.annotation, info])  # type: ignore[name-defined]


@pytest.mark.parametrize(
    ("model", "name", "prefix"),
    [
        (Event, "event_id", "ev-"),
        (Notice, "notice_id", "nt-"),
        (AgentRun, "agent_run_id", "ar-"),
        (Adjudication, "adjudication_id", "adj-"),
        (Assessment, "assessment_id", "as-"),
        (Warrant, "warrant_id", "wr-"),
    ],
)
def test_a_log_counter_is_ascii_digits(model: type[BaseModel], name: str, prefix: str) -> None:
    field = _field(model, name)
    assert field.validate_python(prefix + "1234") == prefix + "1234"
    for digits in OTHER_DIGITS:
        assert digits.isdecimal() and int(digits) == 1234
        with pytest.raises(ValidationError):
            field.validate_python(prefix + digits)


@pytest.mark.parametrize("digits", OTHER_DIGITS)
def test_a_doi_prefix_of_other_digits_is_no_doi(digits: str) -> None:
    assert canonical_id("doi", "10.1234/abc") == "10.1234/abc"
    with pytest.raises(IdError):
        canonical_id("doi", f"10.{digits}/abc")
    assert not same_id("doi", f"10.{digits}/abc", "10.1234/abc")
    assert printed_dois(f"doi: 10.{digits}/abc") == []
    assert paper_ids_in(f"DOI 10.{digits}/abc") == ()
    assert paper_ids_in("DOI 10.1234/abc") == (("doi", "10.1234/abc"),)


@pytest.mark.parametrize("digits", OTHER_DIGITS)
def test_a_registry_path_of_other_digits_names_no_paper(digits: str) -> None:
    from urllib.parse import quote

    assert registry_ids("https://pubmed.ncbi.nlm.nih.gov/12345/")[0][:2] == ("pmid", "12345")
    for url in (
        f"https://pubmed.ncbi.nlm.nih.gov/{digits}/",
        f"https://pubmed.ncbi.nlm.nih.gov/{quote(digits)}/",
        f"https://pmc.ncbi.nlm.nih.gov/articles/PMC{quote(digits)}/",
        f"https://europepmc.org/article/MED/{quote(digits)}",
        f"https://europepmc.org/articles/PMC{quote(digits)}",
        f"https://www.ebi.ac.uk/europepmc/webservices/rest/PMC{quote(digits)}/fullTextXML",
    ):
        assert registry_ids(url) == [], url


@pytest.mark.parametrize("digits", OTHER_DIGITS)
def test_span_offsets_of_other_digits_are_a_malformed_reference(digits: str) -> None:
    assert parse_refs(f"{SOURCE}#12-40").refs[0].start == 12
    parsed = parse_refs(f"{SOURCE}#{digits}-{digits}9")
    assert parsed.refs == () and parsed.error is not None


@pytest.mark.parametrize("digits", OTHER_DIGITS)
def test_a_timestamp_of_other_digits_is_refused(digits: str) -> None:
    parse_ts("1234-01-02T03:04:05Z")
    with pytest.raises(ValueError):
        parse_ts(f"{digits}-01-02T03:04:05Z")
