"""JATS back matter: acknowledgements, back sections, notes, footnotes and funding are citable sections."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from lxml import etree

from publisher.acquire import Extracted, extract

SHARED = Path(__file__).resolve().parents[2] / "shared"
CORPUS_DIRS = (SHARED / "corpus" / "evidence-inference" / "xml", SHARED / "corpus" / "jats")
CORPUS = sorted(p for d in CORPUS_DIRS if d.is_dir() for p in d.glob("*.nxml"))
_PARSER = etree.XMLParser(resolve_entities=False, load_dtd=False, no_network=True)


def _section_of(doc: Extracted, needle: str) -> str:
    """The innermost section whose range holds the whole of ``needle`` (which must occur once)."""
    start = doc.text.index(needle)
    holding = [(t, s, e) for t, s, e in doc.sections or () if s <= start and start + len(needle) <= e]
    assert holding, f"{needle[:40]!r} lies in no section"
    return max(holding, key=lambda entry: entry[1])[0]


ARTICLE = (
    "<article><front><article-meta><title-group><article-title>T</article-title></title-group>"
    "<funding-group>{funding}</funding-group></article-meta></front>"
    "<body><sec><title>Methods</title><p>Randomised.</p></sec></body>"
    "<back><ack><p>We thank the nurses.</p></ack>"
    "<sec><title>Competing interests</title><p>None declared.</p></sec>"
    "<ref-list><ref><mixed-citation>REFERENCE ONE</mixed-citation></ref></ref-list>"
    "<notes><title>Author contributions</title><p>AB wrote it.</p></notes>"
    "<fn-group><fn fn-type='financial-disclosure'><p>Paid by the council.</p></fn></fn-group>"
    "<ack><title>Acknowledgments</title></ack>"
    "</back></article>"
)


def test_back_matter_follows_the_body_as_titled_sections() -> None:
    funding = "<funding-statement>Funded by grant 42.</funding-statement>"
    doc = extract(ARTICLE.format(funding=funding).encode(), "application/xml")
    assert doc.text.split("\n\n") == [
        "T",
        "Methods",
        "Randomised.",
        "Acknowledgements",
        "We thank the nurses.",
        "Competing interests",
        "None declared.",
        "Author contributions",
        "AB wrote it.",
        "Footnotes",
        "Paid by the council.",
        "Funding",
        "Funded by grant 42.",
    ]
    assert "REFERENCE" not in doc.text
    titles = [t for t, _, _ in doc.sections or ()]
    back = ["Acknowledgements", "Competing interests", "Author contributions", "Footnotes", "Funding"]
    assert titles == ["Methods", *back]
    for title, start, end in doc.sections or ():
        assert doc.text[start : start + len(title)] == title
        assert end == len(doc.text) or doc.text[end : end + 2] == "\n\n"
    assert _section_of(doc, "Paid by the council.") == "Footnotes"
    assert _section_of(doc, "Funded by grant 42.") == "Funding"


def test_funding_without_a_statement_lists_its_awards() -> None:
    funding = (
        "<award-group><funding-source><institution-wrap><institution-id>https://ror.org/x</institution-id>"
        "<institution>NIH</institution></institution-wrap></funding-source><award-id>R01 123</award-id>"
        "<principal-award-recipient><name><surname>Moy</surname><given-names>Foong Ming</given-names></name>"
        "</principal-award-recipient></award-group>"
        "<award-group><funding-source>Wellcome<named-content content-type='fundref-id'>10.13039/1</named-content>"
        "</funding-source></award-group>"
    )
    doc = extract(ARTICLE.format(funding=funding).encode(), "application/xml")
    tail = "Funding\n\nNIH, R01 123, Moy Foong Ming\n\nWellcome"
    assert doc.text.endswith("\n\n" + tail)
    assert (doc.sections or ())[-1] == ("Funding", len(doc.text) - len(tail), len(doc.text))


def test_an_empty_funding_group_adds_nothing() -> None:
    doc = extract(ARTICLE.format(funding="").encode(), "application/xml")
    assert not doc.text.endswith("Funding") and "Funding" not in [t for t, _, _ in doc.sections or ()]


_NO_CORPUS = pytest.param(None, marks=pytest.mark.skip(reason=f"shared corpus not found under {SHARED}"))


@pytest.mark.parametrize(
    ("name", "needle", "title"),
    [
        ("1471-2180-11-174.nxml", "This work was supported by grant GM072815", "Acknowledgements"),
        ("1471-2180-11-174.nxml", "The authors declare that they have no competing interests.", "Competing interests"),
        ("ehp-116-1694.nxml", "This study was supported by the West Coast Center", "Footnotes"),
        ("1472-6831-8-11.nxml", "MM carried out the study", "Authors' contributions"),
    ],
)
def test_corpus_funding_and_thanks_are_citable(name: str, needle: str, title: str) -> None:
    path = SHARED / "corpus" / "jats" / name
    if not path.is_file():
        pytest.skip(f"{path} not found")
    doc = extract(path.read_bytes(), "application/xml")
    assert doc.text.count(needle) == 1
    assert _section_of(doc, needle) == title


def _flat(el: etree._Element) -> str:
    """The element's text with runs of XML whitespace as one space (NBSP and thin spaces kept)."""
    return re.sub(r"[ \t\r\n]+", " ", "".join(el.itertext())).strip(" ")


def _titled(el: etree._Element) -> bool:
    """ack, notes and fn-group are always titled (a default title if need be); a sec only by its own."""
    if etree.QName(el).localname != "sec":
        return True
    return any(_flat(c) for c in el if isinstance(c.tag, str) and etree.QName(c).localname in ("label", "title"))


@pytest.mark.parametrize("path", CORPUS or [_NO_CORPUS], ids=lambda p: p.name if p else "no-corpus")
def test_corpus_back_matter_and_funding_lie_in_their_sections(path: Path) -> None:
    """Every paragraph of an ack/notes/fn-group/back sec, and every funding statement, is in a section."""
    doc = extract(path.read_bytes(), "application/xml")
    root = etree.parse(str(path), _PARSER).getroot()
    back = root.find(".//{*}back")
    wanted = []
    for el in back if back is not None else ():
        if isinstance(el.tag, str) and etree.QName(el).localname in ("ack", "sec", "notes", "fn-group"):
            wanted += [(_flat(p), _titled(el)) for p in el.iter("{*}p") if len(_flat(p)) > 20]
    statements = [_flat(s) for s in root.iterfind(".//{*}funding-statement")]
    for paragraph, titled in wanted:
        assert paragraph in doc.text, paragraph[:60]
        start = doc.text.index(paragraph)
        in_section = any(s <= start and start + len(paragraph) <= e for _, s, e in doc.sections or ())
        assert in_section or not titled, paragraph[:60]
    for statement in statements:
        assert statement in doc.text
        start = doc.text.rindex(statement)
        assert any(t == "Funding" and s <= start < e for t, s, e in doc.sections or ())
