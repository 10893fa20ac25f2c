"""HTML: visible text, title, sections, charset."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from publisher.acquire import AcquireError, Extracted, extract
from publisher.acquire.html import sniff_html_charset


def _check_sections(doc: Extracted) -> None:
    size = len(doc.text)
    for title, start, end in doc.sections or ():
        assert 0 <= start <= end <= size
        assert doc.text[start:end].startswith(title)
        assert title.strip() and title == title.strip(" \t\n\r\f")


PAGE = b"""<!DOCTYPE html>
<html><head>
  <title>  The   Page &amp; Title </title>
  <style>body { color: red }</style>
  <script>var secret = "SCRIPT";</script>
  <meta charset="utf-8">
</head>
<body>
  <noscript>NOSCRIPT</noscript>
  <template><p>TEMPLATE</p></template>
  <h1>Main   heading</h1>
  <p>First   paragraph with <b>bold</b> and <i>italic</i>
     text &amp; entities &eacute; &#x1F600; &nbsp;here.</p>
  <div hidden>HIDDEN-ATTR</div>
  <span aria-hidden="true">ARIA-HIDDEN</span>
  <p style="display: none">DISPLAY-NONE</p>
  <!-- COMMENT -->
  <h2>Sub one</h2>
  <ul><li>item a</li><li>item <em>b</em></li></ul>
  <pre>  keep   this
    exactly  </pre>
  <h2>Sub two</h2>
  <table><tr><th>k</th><th>v</th></tr><tr><td>a</td><td>1</td></tr></table>
  <p>line<br>break</p>
  <h1>Second top</h1>
  <p>tail</p>
</body></html>
"""


def test_visible_text_title_and_sections() -> None:
    doc = extract(PAGE, "text/html")
    assert doc.kind == "html"
    assert doc.title == "The Page & Title"
    for hidden in ("SCRIPT", "NOSCRIPT", "TEMPLATE", "HIDDEN-ATTR", "ARIA-HIDDEN", "DISPLAY-NONE", "COMMENT", "color"):
        assert hidden not in doc.text
    lines = doc.text.split("\n")
    assert lines[0] == "Main heading"
    assert lines[1] == "First paragraph with bold and italic text & entities é \U0001f600 \u00a0here."
    assert "item a" in lines and "item b" in lines
    assert "  keep   this\n    exactly  " in doc.text
    assert "k | v" in lines and "a | 1" in lines
    assert "line" in lines and "break" in lines
    assert lines[-1] == "tail"
    _check_sections(doc)
    titles = [t for t, _, _ in doc.sections or ()]
    assert titles == ["Main heading", "Sub one", "Sub two", "Second top"]
    sections = {t: (s, e) for t, s, e in doc.sections or ()}
    main_start, main_end = sections["Main heading"]
    assert doc.text[main_start:main_end].endswith("break")
    assert sections["Sub one"][1] < sections["Sub two"][0]
    assert doc.text[slice(*sections["Sub two"])].endswith("break")
    assert sections["Second top"][1] == len(doc.text)
    assert doc.paper is None and doc.access is None and doc.origin is None


def test_xhtml_media_type_and_xml_declaration() -> None:
    body = (
        b'<?xml version="1.0" encoding="utf-8"?>\n'
        b'<html xmlns="http://www.w3.org/1999/xhtml"><head><title>X</title></head>'
        b"<body><p>caf\xc3\xa9</p></body></html>"
    )
    doc = extract(body, "application/xhtml+xml")
    assert doc.title == "X"
    assert doc.text == "café"


def test_charset_from_header_then_meta_then_utf8() -> None:
    latin = "<html><head><title>é</title></head><body><p>café</p></body></html>".encode("latin-1")
    assert extract(latin, "text/html", "iso-8859-1").text == "café"
    meta = b'<html><head><meta charset="windows-1252"><title>t</title></head><body>caf\xe9 \x93q\x94</body></html>'
    assert extract(meta, "text/html").text == "café \u201cq\u201d"
    equiv = (
        b'<html><head><meta http-equiv="Content-Type" content="text/html; charset=ISO-8859-1">'
        b"</head><body>caf\xe9</body></html>"
    )
    assert extract(equiv, "text/html").text == "café"
    assert extract("<p>café</p>".encode(), "text/html").text == "café"
    # The header beats the meta declaration.
    assert extract("<meta charset=latin-1><p>café</p>".encode(), "text/html", "utf-8").text == "café"


def test_sniff_order() -> None:
    assert sniff_html_charset(b"\xef\xbb\xbf<p>", "latin-1") == "utf-8"
    assert sniff_html_charset(b"<meta charset=koi8-r>", "latin-1") == "latin-1"
    assert sniff_html_charset(b"<meta charset='koi8-r'>", None) == "koi8-r"
    assert sniff_html_charset(b"<meta charset=utf-16>", None) == "utf-8"
    assert sniff_html_charset(b"<p>x</p>", None) == "utf-8"


def test_a_meta_charset_inside_a_comment_declares_nothing() -> None:
    # A browser's prescan skips comments and decodes this page as UTF-8; so must the snapshot.
    assert sniff_html_charset(b"<!-- <meta charset=koi8-r> --><p>x</p>", None) == "utf-8"
    assert sniff_html_charset(b"<!-- a --><meta charset=koi8-r><!-- <meta charset=big5> -->", None) == "koi8-r"
    assert sniff_html_charset(b"<!-- never closed <meta charset=koi8-r>", None) == "utf-8"
    page = "<!-- <meta charset=windows-1251> --><p>café</p>".encode()
    assert extract(page, "text/html", None).text == "café"


@pytest.mark.parametrize("comment", ["<!-->", "<!--->"])
def test_a_comment_closed_by_its_own_dashes_ends_before_a_meta_charset(comment: str) -> None:
    # The prescan ends a comment at the first '>' after two dashes, which may be those of '<!--'
    # itself, as the tokenizer does: the page below is windows-1252 to a browser.
    page = f"{comment}<meta charset=windows-1252><p>caf".encode() + b"\xe9</p>"
    assert sniff_html_charset(page, None) == "windows-1252"
    assert extract(page, "text/html", None).text == "café"


@pytest.mark.parametrize(
    ("head", "charset"),
    [
        (b'<meta name="description" content="text/html; charset=koi8-r">', "utf-8"),  # no http-equiv
        (b'<meta content="charset=koi8-r" http-equiv=refresh>', "utf-8"),
        (b"<metadata charset=koi8-r>", "utf-8"),  # another element
        (b'<meta data-charset="koi8-r">', "utf-8"),
        (b'<meta http-equiv="Content-Type" content="text/html; charset=koi8-r">', "koi8-r"),
        (b"<meta content='text/html;charset=\"KOI8-R\"' http-equiv=content-type>", "koi8-r"),
        (b"<META CHARSET = koi8-r >", "koi8-r"),
        (b'<meta name=x content="charset=big5"><meta charset="koi8-r">', "koi8-r"),
        (b"<meta charset=koi8-r charset=big5>", "koi8-r"),  # the first of an attribute given twice
    ],
)
def test_a_meta_declares_a_charset_only_as_a_browser_reads_one(head: bytes, charset: str) -> None:
    assert sniff_html_charset(head + b"<p>x</p>", None) == charset


def test_invalid_bytes_are_rejected() -> None:
    with pytest.raises(AcquireError):
        extract(b"<p>\xff\xfe</p>", "text/html", "utf-8")


def test_nesting_past_the_parser_limit_fails_instead_of_losing_text() -> None:
    assert extract(b"<span>" * 200 + b"deep", "text/html").text == "deep"
    with pytest.raises(AcquireError):
        extract(b"<span>" * 300 + b"deep", "text/html")


def test_empty_document() -> None:
    doc = extract(b"", "text/html")
    assert doc.text == "" and doc.title is None and doc.sections is None
    doc = extract(b"<html><head><title>Only</title></head><body></body></html>", "text/html")
    assert doc.text == "" and doc.title == "Only"


def test_pre_drops_only_the_newline_html_ignores() -> None:
    assert extract(b"<pre>\n\n a  b\n</pre>", "text/html").text == "\n a  b\n"
    assert extract(b"<pre>x<br>y <b>z</b></pre>", "text/html").text == "x\ny z"


def test_heading_levels_nest() -> None:
    body = b"<h2>A</h2><p>a</p><h3>B</h3><p>b</p><h4>C</h4><p>c</p><h3>D</h3><p>d</p><h2>E</h2><p>e</p>"
    doc = extract(body, "text/html")
    spans = {t: doc.text[s:e] for t, s, e in doc.sections or ()}
    assert spans == {
        "A": "A\na\nB\nb\nC\nc\nD\nd",
        "B": "B\nb\nC\nc",
        "C": "C\nc",
        "D": "D\nd",
        "E": "E\ne",
    }
    _check_sections(doc)


def test_heading_with_break_and_empty_heading() -> None:
    doc = extract(b"<h1>Two<br>lines</h1><h2>  </h2><p>x</p>", "text/html")
    assert doc.sections == (("Two lines", 0, len(doc.text)),)
    assert doc.text == "Two lines\nx"


_WORDS = st.text(alphabet=st.sampled_from(list("ab \t\n\u00a0é\u0301\U0001f600<>&\r")), min_size=0, max_size=12)


def _node(depth: int) -> st.SearchStrategy[str]:
    from html import escape

    text = _WORDS.map(escape)
    if depth <= 0:
        return text
    child = st.deferred(lambda: _node(depth - 1))
    tag = st.sampled_from(["p", "div", "span", "b", "h1", "h2", "h3", "h6", "li", "pre", "td", "tr", "section"])
    element = st.tuples(tag, st.lists(child, max_size=3)).map(lambda t: f"<{t[0]}>{''.join(t[1])}</{t[0]}>")
    extra = st.sampled_from(["<br>", "<script>S</script>", "<div hidden>H</div>", "<!-- c -->"])
    return st.one_of(text, element, extra)


@settings(max_examples=150, deadline=None)
@given(st.lists(_node(3), max_size=6))
def test_sections_are_valid_ranges_for_generated_html(parts: list[str]) -> None:
    body = ("<html><body>" + "".join(parts) + "</body></html>").encode("utf-8")
    doc = extract(body, "text/html")
    _check_sections(doc)
    assert "S" not in doc.text and "H" not in doc.text
    if doc.text and "<pre>" not in body.decode():
        for line in doc.text.split("\n"):
            assert line and line == line.strip(" \t\r\f")


# --- Text no reader sees never reaches the snapshot -------------------------------------------------


@pytest.mark.parametrize(
    "hiding",
    [
        "<dialog>{}</dialog>",
        "<datalist><option>{}</option></datalist>",
        "<noembed>{}</noembed>",
        "<noframes>{}</noframes>",
        "<video>{}</video>",
        "<audio>{}</audio>",
        "<meter value=0.5>{}</meter>",
        "<progress value=1>{}</progress>",
        "<ruby>x<rp>{}</rp><rt>y</rt></ruby>",
        "<title>{}</title>",
        "<svg:svg><svg:text>{}</svg:text></svg:svg>",
        "<math><semantics><mi>x</mi><annotation>{}</annotation></semantics></math>",
        "<select><option>{}</option></select>",
        "<bdo dir=rtl>{}</bdo>",
        "<span style='font-size:0'>{}</span>",
        "<span style='font-size: 0.1px'>{}</span>",
        "<span style='opacity:0'>{}</span>",
        "<span style='visibility:collapse'>{}</span>",
        "<span style='color:#fff'>{}</span>",
        "<span style='color: transparent'>{}</span>",
        "<span style='display:/**/none'>{}</span>",
        "<span style='display:n\\6f ne'>{}</span>",
        "<span style='DISPLAY : NONE !important'>{}</span>",
        "<span style='position:absolute;left:-9999px'>{}</span>",
        "<span style='text-indent:-9999px'>{}</span>",
        "<span style='clip-path: inset(50%)'>{}</span>",
        "<span style='transform:scale(0)'>{}</span>",
        "<div style='height:0;overflow:hidden'>{}</div>",
        "<span style='unicode-bidi:bidi-override;direction:rtl'>{}</span>",
        "<font color=white>{}</font>",
        "<span style='color:#fefefe'>{}</span>",
        "<span style='color: rgba(0, 0, 0, 0.2)'>{}</span>",
        "<span style='color: hsl(0, 0%, 100%)'>{}</span>",
        "<span style='color:'>{}</span>",
        "<span style='color'>{}</span>",
        "<div style='background:#000'><span>{}</span></div>",
        "<td bgcolor=black>{}</td>",
        "<div style='background-color:navy'><span style='color:#000080'>{}</span></div>",
        "<div style='color:#fff'><span style='background:#fff'>{}</span></div>",
        "<div style='background: url(white.png)'>{}</div>",
        # each passes on its own; nested, opacity multiplies and a relative size shrinks again
        "<span style='opacity:0.5'>" * 8 + "{}" + "</span>" * 8,
        "<span style='opacity:0.7'><span style='opacity:70%'>{}</span></span>",
        "<span style='font-size:50%'>" * 8 + "{}" + "</span>" * 8,
        "<span style='font-size:0.5em'><span style='font-size:0.5em'>{}</span></span>",
        "<span style='font-size:smaller'>" * 12 + "{}" + "</span>" * 12,
        "<span style='font-size:xx-small'><span style='font-size:60%'>{}</span></span>",
        "<span style='opacity:0.6; opacity:0.9'><span style='opacity:0.8'>{}</span></span>",
        "<small>" * 14 + "{}" + "</small>" * 14,  # a browser's style sheet: small { font-size: smaller }
        "<sub>" * 14 + "{}" + "</sub>" * 14,
        "<span style='font-size:6px'><sup>{}</sup></span>",
    ],
)
def test_text_no_reader_sees_is_not_extracted(hiding: str) -> None:
    page = f"<p>Shown.</p><p>{hiding.format('The drug cures everyone')}</p><p>Also shown.</p>"
    text = extract(page.encode(), "text/html", "utf-8").text
    assert "cures" not in text
    assert text.startswith("Shown.\n") and text.endswith("\nAlso shown.")


@pytest.mark.parametrize(
    "showing",
    [
        "<dialog open>{}</dialog>",
        "<span style='font-weight:bold; font-style: italic'>{}</span>",
        "<span style='font-size: 12px; display:inline-block; margin: 0 4px'>{}</span>",
        "<span style='font-size:0.8em;opacity:0.9;visibility:visible !important;'>{}</span>",
        "<div style='text-align:center; padding-left: 2em; border-bottom: 1px solid'>{}</div>",
        "<details><summary>S</summary>{}</details>",
        "<span style='color:red'>{}</span>",
        "<span style='color: #333 !important; background-color: #f5f5f5'>{}</span>",
        "<div style='background:#fff;margin:0'><p style='color:rgb(102, 102, 102)'>{}</p></div>",
        "<div style='background-color:black'><span style='color:white'>{}</span></div>",
        "<font color=navy>{}</font>",
        "<td bgcolor='#eeeeee'>{}</td>",
        "<span style='background: transparent'>{}</span>",
        "<span style='opacity:0.9'><span style='opacity:0.8'>{}</span></span>",
        "<span style='font-size:0.8em'><span style='font-size:90%'>{}</span></span>",
        "<span style='font-size:50%'>" * 8 + "<span style='font-size:12px'>{}</span>" + "</span>" * 8,
        "<span style='font-size:50%'>" * 8 + "<span style='font-size:1rem'>{}</span>" + "</span>" * 8,
        "<span style='font-size:xx-small'><span style='font-size:larger'>{}</span></span>",
        "<small><small>{}</small></small>",
        "<sup><sub>{}</sub></sup>",
        "<small>" * 14 + "<small style='font-size:12px'>{}</small>" + "</small>" * 14,
    ],
)
def test_styled_text_a_reader_sees_is_kept(showing: str) -> None:
    page = f"<p>{showing.format('The drug cures some')}</p>"
    assert "The drug cures some" in extract(page.encode(), "text/html", "utf-8").text
