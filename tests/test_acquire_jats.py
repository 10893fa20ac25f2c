"""JATS: text layout, section map, paper ids, hostile XML, and the shared corpus."""

from __future__ import annotations

import re
from pathlib import Path
from xml.sax.saxutils import escape

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from lxml import etree

from publisher.acquire import AcquireError, Extracted, extract

SHARED = Path(__file__).resolve().parents[2] / "shared"
CORPUS_DIRS = (SHARED / "corpus" / "evidence-inference" / "xml", SHARED / "corpus" / "jats")
CORPUS = sorted(p for d in CORPUS_DIRS if d.is_dir() for p in d.glob("*.nxml"))


def _check_sections(doc: Extracted) -> None:
    size = len(doc.text)
    ranges = []
    for title, start, end in doc.sections or ():
        assert 0 <= start <= end <= size
        assert title.strip() and title == title.strip(" \t\r\n")
        assert doc.text[start : start + len(title)] == title
        assert start == 0 or doc.text[start - 2 : start] == "\n\n"
        assert end == size or doc.text[end : end + 2] == "\n\n"
        ranges.append((start, end))
    # Ranges nest or are disjoint, and appear parent first in document order.
    for i, (s1, e1) in enumerate(ranges):
        for s2, e2 in ranges[i + 1 :]:
            assert s1 <= s2
            assert e2 <= e1 or s2 >= e1


def _article(*, front: str = "", body: str | None = "<p>Body text.</p>", wrapper: bool = False) -> bytes:
    body_xml = "" if body is None else f"<body>{body}</body>"
    xml = f"<article><front><article-meta>{front}</article-meta></front>{body_xml}</article>"
    if wrapper:
        xml = f"<pmc-articleset>{xml}</pmc-articleset>"
    return ('<?xml version="1.0" encoding="UTF-8"?>\n' + xml).encode("utf-8")


FRONT = (
    '<article-id pub-id-type="pmid">123</article-id>'
    '<article-id pub-id-type="doi">10.1/abc</article-id>'
    '<article-id pub-id-type="pmc">PMC456</article-id>'
    "<title-group><article-title>A <italic>study</italic>\n  of X</article-title></title-group>"
    "<abstract><sec><title>Background</title><p>Why.</p></sec><sec><title>Results</title><p>What.</p></sec></abstract>"
)


def test_layout_ids_and_sections() -> None:
    body = (
        "<p>Lead paragraph<xref ref-type='bibr' rid='b1'>1</xref>.</p>"
        "<sec><label>1</label><title>Methods</title><p>M one.</p>"
        "<sec><title>Design</title><p>Randomised <bold>trial</bold>.</p></sec>"
        "<sec><title>Stats</title><p>t-test, p<sup>a</sup> &lt; 0.05.</p></sec></sec>"
        "<sec><title>Results</title>"
        "<table-wrap><label>Table 1</label><caption><title>Outcomes</title></caption>"
        "<table><thead><tr><th>Arm</th><th>n</th></tr></thead>"
        "<tbody><tr><td>A</td><td>10</td></tr><tr><td>B</td><td>12</td></tr></tbody></table>"
        "<table-wrap-foot><fn><p>a Footnote.</p></fn></table-wrap-foot></table-wrap>"
        "<fig><label>Figure 1</label><caption><p>Flow chart.</p></caption><graphic/></fig>"
        "<p>Inline <inline-formula><alternatives><tex-math>\\alpha</tex-math>"
        "<mml:math xmlns:mml='http://www.w3.org/1998/Math/MathML'><mml:mi>α</mml:mi></mml:math>"
        "</alternatives></inline-formula> value.</p>"
        "</sec>"
    )
    doc = extract(_article(front=FRONT, body=body), "application/xml")
    assert doc.kind == "jats"
    assert doc.title == "A study of X"
    assert doc.paper == {"pmid": "123", "doi": "10.1/abc", "pmcid": "PMC456"}
    assert doc.access == "full_text" and doc.origin == "pmc"
    assert doc.text.split("\n\n") == [
        "A study of X",
        "Abstract",
        "Background",
        "Why.",
        "Results",
        "What.",
        "Lead paragraph1.",
        "1 Methods",
        "M one.",
        "Design",
        "Randomised trial.",
        "Stats",
        "t-test, pa < 0.05.",
        "Results",
        "Table 1 Outcomes",
        "Arm | n\nA | 10\nB | 12",
        "a Footnote.",
        "Figure 1 Flow chart.",
        "Inline α value.",
    ]
    _check_sections(doc)
    titled = {title: doc.text[s:e] for title, s, e in (doc.sections or ())}
    assert [t for t, _, _ in doc.sections or ()] == [
        "Abstract",
        "Background",
        "Results",
        "1 Methods",
        "Design",
        "Stats",
        "Results",
    ]
    assert titled["Abstract"] == "Abstract\n\nBackground\n\nWhy.\n\nResults\n\nWhat."
    assert titled["1 Methods"].endswith("t-test, pa < 0.05.")
    assert titled["Design"] == "Design\n\nRandomised trial."
    assert doc.sections and doc.sections[-1][2] == len(doc.text)


def test_wrapper_no_body_and_pmcid_forms() -> None:
    front = (
        '<article-id pub-id-type="pmcid">pmc789</article-id>'
        "<title-group><article-title>T</article-title></title-group><abstract><p>Only abstract.</p></abstract>"
    )
    doc = extract(_article(front=front, body=None, wrapper=True), "text/xml")
    assert doc.paper == {"pmid": None, "doi": None, "pmcid": "PMC789"}
    assert doc.access == "abstract"
    assert doc.text == "T\n\nAbstract\n\nOnly abstract."
    assert doc.sections == (("Abstract", 3, len(doc.text)),)


def test_abstract_types_and_own_titles() -> None:
    front = (
        "<abstract><title>Summary</title><p>S.</p></abstract>"
        '<abstract abstract-type="editor"><p>E.</p></abstract>'
        '<trans-abstract xml:lang="fr"><p>Résumé.</p></trans-abstract>'
    )
    doc = extract(_article(front=front), "application/jats+xml")
    assert [t for t, _, _ in doc.sections or ()] == ["Summary", "Abstract (editor)"]
    assert "Résumé" not in doc.text
    assert doc.title is None and doc.paper is None


def test_no_ids_no_title_no_abstract_no_body() -> None:
    doc = extract(_article(body=None), "application/xml")
    assert doc.text == "" and doc.paper is None and doc.access is None and doc.sections is None


def test_bad_pmcid_is_ignored_and_first_id_wins() -> None:
    front = (
        '<article-id pub-id-type="pmc">not-a-number</article-id>'
        '<article-id pub-id-type="pmid"> 11 </article-id><article-id pub-id-type="pmid">22</article-id>'
    )
    doc = extract(_article(front=front), "application/xml")
    assert doc.paper == {"pmid": "11", "doi": None, "pmcid": None}


def test_preformat_is_verbatim_and_labels_without_captions_stand_alone() -> None:
    body = "<sec><title>S</title><preformat>  a   b\n c</preformat><fig><label>Figure 9</label></fig></sec>"
    doc = extract(_article(body=body), "application/xml")
    assert doc.text.split("\n\n") == ["S", "  a   b\n c", "Figure 9"]
    _check_sections(doc)


def test_floats_group_follows_the_body() -> None:
    xml = (
        b"<article><body><sec><title>R</title><p>See Table 2.</p></sec></body>"
        b"<back><ref-list><ref><mixed-citation>REFERENCE</mixed-citation></ref></ref-list></back>"
        b"<floats-group><table-wrap><label>Table 2</label><caption><p>Doses.</p></caption>"
        b"<table><tr><td>x</td><td>1</td></tr></table></table-wrap></floats-group></article>"
    )
    doc = extract(xml, "application/xml")
    assert doc.text.split("\n\n") == ["R", "See Table 2.", "Table 2 Doses.", "x | 1"]
    assert doc.sections == (("R", 0, len("R\n\nSee Table 2.")),)
    assert "REFERENCE" not in doc.text


def test_charset_header_overrides_declaration() -> None:
    xml = "<article><front><article-meta><title-group><article-title>Café</article-title></title-group>"
    xml += "</article-meta></front></article>"
    doc = extract(xml.encode("latin-1"), "application/xml", "iso-8859-1")
    assert doc.title == "Café"
    with pytest.raises(AcquireError):
        extract(xml.encode("latin-1"), "application/xml")  # undeclared: UTF-8, and invalid


def test_not_jats_and_malformed() -> None:
    with pytest.raises(AcquireError) as info:
        extract(b"<html><body/></html>", "application/xml")
    assert info.value.context["root"] == "html"
    with pytest.raises(AcquireError):
        extract(b"<article><body><p>unclosed</body></article>", "application/xml")
    with pytest.raises(AcquireError):
        extract(b"<pmc-articleset/>", "application/xml")
    with pytest.raises(AcquireError):
        extract(b"<svg/>", "image/svg+xml")
    for bad in (b"", b"\xff\xfe<", b"<article>&undeclared;</article>"):
        with pytest.raises(AcquireError) as info:
            extract(bad, "application/xml")
        assert "\n" not in str(info.value)


def test_external_entity_is_not_resolved(tmp_path: Path) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("TOPSECRET-CONTENT")
    xml = f"""<?xml version="1.0"?>
<!DOCTYPE article [
  <!ENTITY xxe SYSTEM "file:///etc/passwd">
  <!ENTITY local SYSTEM "{secret.as_uri()}">
  <!ENTITY % pe SYSTEM "{secret.as_uri()}">
  %pe;
]>
<article><front><article-meta><title-group><article-title>T &xxe;</article-title></title-group>
<abstract><p>Abstract &local; end.</p></abstract></article-meta></front>
<body><p>Body &xxe; &local;</p></body></article>""".encode()
    try:
        doc = extract(xml, "application/xml")
    except AcquireError:
        return  # refusing the document is also safe
    assert "root:" not in doc.text and "TOPSECRET" not in doc.text
    assert doc.title is not None and "root:" not in doc.title
    assert "&xxe;" in doc.text  # the unresolved reference is kept literally


def test_remote_dtd_is_not_fetched() -> None:
    xml = b'<!DOCTYPE article SYSTEM "http://127.0.0.1:9/never.dtd"><article><body><p>x &ent;</p></body></article>'
    doc = extract(xml, "application/xml")
    assert doc.text == "x &ent;"


def test_billion_laughs_stays_small() -> None:
    lines = ['<!ENTITY lol0 "lollollollollollollollollollol">']
    lines += [f'<!ENTITY lol{i} "{("&lol" + str(i - 1) + ";") * 10}">' for i in range(1, 10)]
    xml = (
        '<?xml version="1.0"?><!DOCTYPE article [' + "".join(lines) + "]><article><body><p>&lol9;</p></body></article>"
    ).encode()
    try:
        doc = extract(xml, "application/xml")
    except AcquireError:
        return
    assert len(doc.text) < 1000


# --- generated articles --------------------------------------------------------------------

_TEXT = st.text(alphabet=st.sampled_from(list("ab \n\t\u00a0é\u0301\U0001f600<&")), max_size=10).map(escape)


def _sec(depth: int) -> st.SearchStrategy[str]:
    para = _TEXT.map(lambda t: f"<p>{t}</p>")
    inline = _TEXT.map(lambda t: f"<p>x<italic>{t}</italic><xref>1</xref></p>")
    leaf = st.one_of(para, inline)
    if depth <= 0:
        children = st.lists(leaf, max_size=3)
    else:
        children = st.lists(st.one_of(leaf, st.deferred(lambda: _sec(depth - 1))), max_size=3)
    title = st.one_of(st.just(""), _TEXT.map(lambda t: f"<title>{t}</title>"))
    label = st.one_of(st.just(""), _TEXT.map(lambda t: f"<label>{t}</label>"))
    return st.tuples(label, title, children).map(lambda t: f"<sec>{t[0]}{t[1]}{''.join(t[2])}</sec>")


@settings(max_examples=150, deadline=None)
@given(
    st.lists(_sec(3), max_size=4),
    st.one_of(st.none(), st.lists(_sec(1), max_size=2)),
    _TEXT,
)
def test_generated_articles_have_valid_section_maps(body: list[str], abstract: list[str] | None, title: str) -> None:
    front = f"<title-group><article-title>{title}</article-title></title-group>"
    if abstract is not None:
        front += f"<abstract>{''.join(abstract)}</abstract>"
    doc = extract(_article(front=front, body="".join(body)), "application/xml")
    _check_sections(doc)
    for block in doc.text.split("\n\n") if doc.text else ():
        assert block.strip(" \n\t")


# --- the shared corpus ---------------------------------------------------------------------


def _stated_ids(path: Path) -> dict[str, str | None]:
    parser = etree.XMLParser(resolve_entities=False, no_network=True, load_dtd=False)
    root = etree.parse(str(path), parser).getroot()
    ids: dict[str, str | None] = {"pmid": None, "doi": None, "pmcid": None}
    for el in root.iterfind(".//article-meta/article-id"):
        value = "".join(el.itertext()).strip()
        kind = el.get("pub-id-type")
        if kind == "pmid":
            ids["pmid"] = ids["pmid"] or value
        elif kind == "doi":
            ids["doi"] = ids["doi"] or value
        elif kind in ("pmc", "pmcid"):
            ids["pmcid"] = ids["pmcid"] or "PMC" + re.sub(r"^PMC", "", value)
    return ids


_NO_CORPUS = pytest.param(
    None, marks=pytest.mark.skip(reason=f"shared corpus not found under {SHARED}; JATS corpus checks need it")
)


@pytest.mark.parametrize("path", CORPUS or [_NO_CORPUS], ids=lambda p: p.name if p else "no-corpus")
def test_corpus_article(path: Path) -> None:
    doc = extract(path.read_bytes(), "application/xml", url=path.as_uri())
    assert doc.kind == "jats" and doc.origin == "pmc"
    assert doc.paper == _stated_ids(path)
    assert doc.access == "full_text"
    assert doc.title and doc.text.startswith(doc.title + "\n\n")
    assert doc.sections
    _check_sections(doc)
    root = etree.fromstring(path.read_bytes(), etree.XMLParser(resolve_entities=False, load_dtd=False, no_network=True))
    if root.find(".//article-meta/abstract") is not None:
        assert any(start > 0 for _, start, _ in doc.sections)
    titled = [
        s for s in root.iter("sec") if s.find("title") is not None and "".join(s.find("title").itertext()).strip()
    ]
    in_scope = [s for s in titled if next(s.iterancestors("body", "abstract"), None) is not None]
    assert len(doc.sections) >= len(in_scope)
    assert f"{len(doc.sections)} sections" in doc.detail


@pytest.mark.parametrize(
    "hidden",
    [
        "<fig><caption><p>Caption.</p></caption><alt-text>{}</alt-text><graphic/></fig>",
        "<fig><caption><p>Caption.</p></caption><long-desc>{}</long-desc><graphic/></fig>",
        "<inline-formula><mml:math><mml:mi>x</mml:mi><mml:annotation>{}</mml:annotation></mml:math></inline-formula>",
        "<mml:math><mml:semantics><mml:mi>x</mml:mi><mml:annotation-xml>{}</mml:annotation-xml></mml:semantics></mml:math>",
        "<private-char><glyph-data>{}</glyph-data></private-char>",
        "<h:script>{}</h:script>",
        "<h:span style='display:none'>{}</h:span>",
        "<svg:text>{}</svg:text>",
    ],
)
def test_text_the_page_does_not_show_is_not_extracted(hidden: str) -> None:
    xml = (
        '<article xmlns:mml="http://www.w3.org/1998/Math/MathML" xmlns:h="http://www.w3.org/1999/xhtml"'
        ' xmlns:svg="http://www.w3.org/2000/svg"><body><sec><title>S</title>'
        f"<p>Shown {hidden.format('The drug cures everyone')} too.</p></sec></body></article>"
    )
    text = extract(xml.encode(), "application/xml").text
    assert "cures" not in text
    assert "Shown" in text and "too." in text


def test_mathml_still_renders_its_text() -> None:
    xml = (
        '<article xmlns:mml="http://www.w3.org/1998/Math/MathML"><body><p>Let '
        "<inline-formula><mml:math><mml:mi>x</mml:mi><mml:mo>+</mml:mo><mml:mn>1</mml:mn></mml:math>"
        "</inline-formula> be.</p></body></article>"
    )
    assert extract(xml.encode(), "application/xml").text == "Let x+1 be."
