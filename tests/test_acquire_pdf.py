"""PDF: per-page text, page map, metadata title, damaged and encrypted files."""

from __future__ import annotations

import io
import zlib

import pypdfium2 as pdfium
import pytest
from pypdf import PdfReader, PdfWriter

from publisher import __version__
from publisher.acquire import AcquireError, Extracted, extract
from publisher.acquire.pdf import PAGE_SEPARATOR, render_page_text
from publisher.acquire.receipts import extractor_id


def _escape(text: str) -> str:
    return text.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)")


def make_pdf(pages: list[list[str]], *, title: str | None = None) -> bytes:
    """A minimal valid PDF: one Helvetica text line per string, an empty list is a blank page."""
    objects: list[bytes] = []  # object n is objects[n - 1]

    def add(body: bytes) -> int:
        objects.append(body)
        return len(objects)

    catalog = add(b"")  # filled in below
    pages_obj = add(b"")
    font = add(b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>")
    kids = []
    for lines in pages:
        ops = ["BT", "/F1 12 Tf", "14 TL", "72 720 Td"]
        for i, line in enumerate(lines):
            ops.append(f"({_escape(line)}) Tj" if i == 0 else f"T* ({_escape(line)}) Tj")
        ops.append("ET")
        stream = "\n".join(ops).encode("latin-1") if lines else b""
        content = add(b"<< /Length %d >>\nstream\n" % len(stream) + stream + b"\nendstream")
        kids.append(
            add(
                b"<< /Type /Page /Parent %d 0 R /MediaBox [0 0 612 792] "
                b"/Resources << /Font << /F1 %d 0 R >> >> /Contents %d 0 R >>" % (pages_obj, font, content)
            )
        )
    objects[catalog - 1] = b"<< /Type /Catalog /Pages %d 0 R >>" % pages_obj
    objects[pages_obj - 1] = b"<< /Type /Pages /Kids [%s] /Count %d >>" % (
        b" ".join(b"%d 0 R" % k for k in kids),
        len(kids),
    )
    info = add(b"<< /Title (%s) >>" % _escape(title).encode("latin-1")) if title is not None else None

    out = io.BytesIO()
    out.write(b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(out.tell())
        out.write(b"%d 0 obj\n" % number + body + b"\nendobj\n")
    xref = out.tell()
    out.write(b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1))
    for offset in offsets:
        out.write(b"%010d 00000 n \n" % offset)
    trailer = b"<< /Size %d /Root %d 0 R" % (len(objects) + 1, catalog)
    if info is not None:
        trailer += b" /Info %d 0 R" % info
    out.write(b"trailer\n" + trailer + b" >>\nstartxref\n%d\n%%%%EOF\n" % xref)
    return out.getvalue()


def _check_pages(doc: Extracted) -> None:
    assert doc.pages is not None
    size = len(doc.text)
    previous_end = 0
    for index, (number, start, end) in enumerate(doc.pages):
        assert number == index + 1
        assert 0 <= start <= end <= size
        if index:
            assert doc.text[previous_end:start] == PAGE_SEPARATOR
        previous_end = end
    assert doc.pages[0][1] == 0 and doc.pages[-1][2] == size


def test_pages_map_and_text() -> None:
    body = make_pdf([["Hello first page", "second line"], [], ["Third (page) text"]], title="A Title")
    doc = extract(body, "application/pdf")
    assert doc.kind == "pdf"
    assert doc.title == "A Title"
    assert doc.paper is None and doc.sections is None and doc.access is None and doc.origin is None
    _check_pages(doc)
    assert doc.pages is not None and len(doc.pages) == 3
    texts = [doc.text[s:e] for _, s, e in doc.pages]
    assert "Hello first page" in texts[0] and "second line" in texts[0]
    assert texts[1] == ""
    assert "Third (page) text" in texts[2]
    assert doc.text == PAGE_SEPARATOR.join(texts)
    assert "3 pages" in doc.detail


def test_page_text_is_what_pdfium_extracts() -> None:
    body = make_pdf([["Alpha", "second line"], ["Beta"]])
    document = pdfium.PdfDocument(body)
    expected = [render_page_text(document[i].get_textpage().get_text_range()) for i in range(len(document))]
    document.close()
    doc = extract(body, "application/pdf")
    assert [doc.text[s:e] for _, s, e in doc.pages or ()] == expected
    assert "\r" not in doc.text and "Alpha\nsecond line" in doc.text


def test_rendering_is_exact_and_only_what_is_documented() -> None:
    assert render_page_text("a\r\nb") == "a\nb"
    assert render_page_text("manip\ufffeulation") == "manip-ulation"
    assert render_page_text("x\ry") == "x\ry"  # a lone carriage return stays
    assert render_page_text("bad \ud800 pair") == "bad \ufffd pair"
    assert render_page_text("  spaced\ttext \n") == "  spaced\ttext \n"


def test_extractor_is_named_with_its_version() -> None:
    from importlib.metadata import version

    assert extractor_id("pdf") == f"publisher-pdf/{__version__}+pypdfium2.{version('pypdfium2')}"
    assert extractor_id("plain") == f"publisher-plain/{__version__}"


def test_no_title_is_never_inferred() -> None:
    doc = extract(make_pdf([["Big Heading Looks Like A Title"]]), "application/pdf")
    assert doc.title is None
    assert extract(make_pdf([["x"]], title="   "), "application/pdf").title is None


def test_octet_stream_is_sniffed() -> None:
    doc = extract(make_pdf([["Sniffed"]]), "application/octet-stream")
    assert doc.kind == "pdf" and "Sniffed" in doc.text


def test_single_blank_page() -> None:
    doc = extract(make_pdf([[]]), "application/pdf")
    assert doc.text == "" and doc.pages == ((1, 0, 0),)


@pytest.mark.parametrize(
    "body",
    [
        b"%PDF-1.4\nthis is not a pdf at all",
        b"not even a header",
        b"",
    ],
)
def test_malformed_pdf_is_one_line_error(body: bytes) -> None:
    with pytest.raises(AcquireError) as info:
        extract(body, "application/pdf")
    assert "\n" not in str(info.value)


def test_truncated_pdf_fails_or_stays_consistent() -> None:
    body = make_pdf([["Some text"], ["More text"]])
    for cut in (len(body) // 3, len(body) // 2, len(body) - 30):
        try:
            doc = extract(body[:cut], "application/pdf")
        except AcquireError as exc:
            assert "\n" not in str(exc)
        else:
            _check_pages(doc)


def _encrypted(user_password: str) -> bytes:
    writer = PdfWriter(clone_from=PdfReader(io.BytesIO(make_pdf([["Secret text"]]))))
    writer.encrypt(user_password=user_password, owner_password="owner", algorithm="RC4-128")
    out = io.BytesIO()
    writer.write(out)
    return out.getvalue()


def test_encrypted_pdf_needs_password() -> None:
    with pytest.raises(AcquireError) as info:
        extract(_encrypted("secret"), "application/pdf")
    assert info.value.context.get("password_needed") is True


def test_empty_user_password_opens() -> None:
    doc = extract(_encrypted(""), "application/pdf")
    assert "Secret text" in doc.text


def _page_tree_bomb(depth: int, fan: int, content: bytes = b"") -> bytes:
    """A PDF whose page tree lists the same node ``fan`` times at each of ``depth`` levels; its
    one page shows ``content`` (Helvetica text), kept in one compressed stream."""
    stream = zlib.compress(b"BT /F1 1 Tf 0 0 Td (%s) Tj ET" % content)
    objects: dict[int, bytes] = {
        1: b"<< /Type /Catalog /Pages %d 0 R >>" % (2 + depth),
        2: b"<< /Type /Page /Parent 3 0 R /MediaBox [0 0 100 100] /Contents %d 0 R"
        b" /Resources << /Font << /F1 %d 0 R >> >> >>" % (3 + depth, 4 + depth),
        3 + depth: b"<< /Length %d /Filter /FlateDecode >>\nstream\n%s\nendstream" % (len(stream), stream),
        4 + depth: b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
    }
    below, count = 2, 1
    for level in range(depth):
        count *= fan
        kids = b" ".join(b"%d 0 R" % below for _ in range(fan))
        objects[3 + level] = b"<< /Type /Pages /Kids [%s] /Count %d >>" % (kids, count)
        below = 3 + level
    out = bytearray(b"%PDF-1.4\n")
    offsets = {}
    for number in sorted(objects):
        offsets[number] = len(out)
        out += b"%d 0 obj\n%s\nendobj\n" % (number, objects[number])
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % offsets[n] for n in sorted(objects))
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objects) + 1, xref)
    return bytes(out)


def test_a_page_tree_bomb_is_refused_before_any_page_is_read() -> None:
    from publisher.acquire.pdf import MAX_PAGES

    assert len(extract(_page_tree_bomb(2, 10), "application/pdf").pages or ()) == 100  # the shape reads
    body = _page_tree_bomb(6, 10)  # a million pages (as many as PDFium opens) in about a kilobyte
    assert len(body) < 2_000
    with pytest.raises(AcquireError) as info:
        extract(body, "application/pdf")
    assert info.value.context == {"pages": 1_000_000, "max_pages": MAX_PAGES}
    assert "\n" not in str(info.value)


def test_text_shown_on_many_pages_is_cut_off_at_the_text_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    # A kilobyte-sized file showing one compressed page of text on 20,000 pages gives far more
    # text than its bytes; extraction stops at MAX_TEXT instead of filling memory.
    from publisher.acquire import pdf as pdf_module

    body = _page_tree_bomb(4, 10, b"x" * 2_000)  # 10,000 pages of 2,000 characters
    assert len(body) < 2_000
    monkeypatch.setattr(pdf_module, "MAX_TEXT", 200_000)
    with pytest.raises(AcquireError) as info:
        extract(body, "application/pdf")
    assert info.value.context["max_text"] == 200_000 and info.value.context["page"] < 150
    assert "\n" not in str(info.value)


def _one_page(content: bytes) -> bytes:
    """A 200pt square page drawing ``content`` (PDF operators; font /F1 is Helvetica)."""
    objects = {
        1: b"<< /Type /Catalog /Pages 2 0 R >>",
        2: b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        3: b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 200 200] /Contents 4 0 R"
        b" /Resources << /Font << /F1 5 0 R >> >> >>",
        4: b"<< /Length %d >>\nstream\n%s\nendstream" % (len(content), content),
        5: b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
    }
    out = bytearray(b"%PDF-1.4\n")
    offsets = {}
    for number in sorted(objects):
        offsets[number] = len(out)
        out += b"%d 0 obj\n%s\nendobj\n" % (number, objects[number])
    xref = len(out)
    out += b"xref\n0 6\n0000000000 65535 f \n" + b"".join(b"%010d 00000 n \n" % offsets[n] for n in sorted(objects))
    out += b"trailer\n<< /Size 6 /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % xref
    return bytes(out)


@pytest.mark.parametrize(
    "hidden",
    [
        b"BT /F1 12 Tf -5000 100 Td (cures everyone) Tj ET",  # left of the page
        b"BT /F1 12 Tf 10 900 Td (cures everyone) Tj ET",  # above it
        b"BT /F1 0.01 Tf 10 60 Td (cures everyone) Tj ET",  # a hundredth of a point
        b"q 0.001 0 0 0.001 10 60 cm BT /F1 12 Tf 0 0 Td (cures everyone) Tj ET Q",  # scaled down
    ],
)
def test_text_a_reader_cannot_see_on_the_page_is_left_out(hidden: bytes) -> None:
    shown = b"BT /F1 12 Tf 10 150 Td (The drug) Tj ET "
    doc = extract(_one_page(shown + hidden + b" BT /F1 12 Tf 10 20 Td (helps some.) Tj ET"), "application/pdf")
    assert "cures" not in doc.text
    assert doc.text.startswith("The drug") and doc.text.endswith("helps some.")


def test_invisible_ocr_text_over_a_scan_stays() -> None:
    # Render mode 3 is how a scanned page carries its recognised text over the image a reader sees.
    doc = extract(_one_page(b"BT 3 Tr /F1 12 Tf 10 100 Td (Recognised words) Tj ET"), "application/pdf")
    assert doc.text == "Recognised words"
