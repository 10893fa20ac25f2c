"""Write ``examples/sources/eoss-practice-statement.pdf``: a small, fictional guideline PDF.

The PDF is written by hand (no dependency beyond the standard library) so that the example wiki
has a user-supplied PDF whose bytes are fully reproducible: the same script always writes the
same bytes. Text uses the standard Helvetica font with WinAnsiEncoding, which covers the few
accented letters and typographic marks below; anything outside Windows-1252 is refused.

Usage: ``python examples/make_pdf.py [OUTPUT]``
"""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path

__all__ = ["PAGES", "TITLE", "build_pdf", "main"]

TITLE = "EOSS Practice Statement 2026/1: Timed light exposure for shift workers (fictional example)"

_WRAP = 92
_FONT_SIZE = 10
_LEADING = 13
_LEFT = 64
_TOP = 742

# Each page is a list of blocks: ("h", heading) or ("p", paragraph). Paragraphs are wrapped.
PAGES: list[list[tuple[str, str]]] = [
    [
        ("h", "Example Occupational Sleep Society (EOSS)"),
        ("h", "Practice Statement 2026/1 \u2014 Timed light exposure for shift workers"),
        (
            "p",
            "DOI 10.5555/eoss.2026.001. Fictional example document written for the evidence-publisher "
            "example wiki. The society, its panel and every statement below are invented.",
        ),
        ("h", "Scope"),
        (
            "p",
            "This statement covers adults who work rotating or permanent night shifts and who report "
            "difficulty falling asleep after a shift. It does not cover people with bipolar disorder, "
            "retinal disease or a diagnosed circadian rhythm disorder, who need specialist care.",
        ),
        ("h", "Summary of recommendations"),
        (
            "p",
            "R1. For shift workers with difficulty falling asleep, we suggest a structured, timed "
            "morning-light routine (conditional recommendation, low certainty of evidence).",
        ),
        (
            "p",
            "R2. A light box used for this purpose should deliver at least 10 000 lux at eye level "
            "for 20\u201330 minutes, at the same time (\u00b1 30 min) after the main wake period each day.",
        ),
        (
            "p",
            "R3. Workers should be told that mild headache or eye strain is common in the first weeks "
            "and usually settles; they should stop and seek advice if it does not.",
        ),
    ],
    [
        ("h", "Rationale for R1"),
        (
            "p",
            "Two randomised trials informed the panel. One, in rotating shift workers at three "
            "hospitals (Lyon, K\u00f6ln and a centre in Japan), found a shorter sleep-onset latency "
            "with morning light measured by actigraphy. The other, in "
            "night-shift nurses, found a smaller effect on diary-recorded sleep onset with an "
            "imprecise estimate.",
        ),
        (
            "p",
            "The panel judged the certainty of evidence to be low because of imprecision and because "
            "one trial relied on self-reported outcomes from participants who knew their allocation.",
        ),
        (
            "p",
            "The panel placed a high value on the low cost and low risk of the routine, and on the "
            "\u201csecond wind\u201d that many workers describe after a night shift.",
        ),
        ("h", "Rationale for R2"),
        (
            "p",
            "Laboratory studies use light boxes of 2 500 to 10 000 lux; intensity falls quickly with "
            "distance, so the panel recommends a box rated at eye level and a fixed seating "
            "position (about 50\u201370 cm, a little above the line of sight). At 10 000 lux a white "
            "box delivers roughly 250 \u00b5W/cm\u00b2 at the eye; the panel\u2019s members did not "
            "consider blue-enriched boxes separately.",
        ),
    ],
    [
        ("h", "How this statement was developed"),
        (
            "p",
            "A panel of seven members (sleep medicine, occupational health, nursing and one shift "
            "worker) met three times. Conflicts of interest were declared and none was judged to "
            "be relevant. Evidence was summarised with GRADE; the panel voted on each "
            "recommendation, and a recommendation needed at least 80 % agreement.",
        ),
        ("h", "Research priorities"),
        (
            "p",
            "An assessor-blinded trial with actigraphy in permanent night workers; the effect of "
            "outdoor daylight compared with a light box; adherence over more than three months.",
        ),
        ("h", "Disclaimer"),
        (
            "p",
            "This document is a fictional example (Zo\u00eb, Ren\u00e9e and Fran\u00e7ois wrote none "
            "of it). It must not be used for clinical decisions.",
        ),
    ],
]


def _pdf_string(text: str) -> bytes:
    """A PDF literal string in WinAnsiEncoding; octal escapes keep the file 7-bit clean."""
    try:
        raw = text.encode("cp1252")
    except UnicodeEncodeError as exc:
        raise ValueError(f"{text[exc.start : exc.end]!r} is not in WinAnsiEncoding") from exc
    out = bytearray(b"(")
    for byte in raw:
        if byte in b"()\\":
            out += b"\\" + bytes([byte])
        elif 32 <= byte < 127:
            out.append(byte)
        else:
            out += b"\\%03o" % byte
    out += b")"
    return bytes(out)


def _content(blocks: list[tuple[str, str]], number: int, total: int) -> bytes:
    """The content stream of one page: one text object, one line per ``T*``."""
    ops = [b"BT", b"%d TL" % _LEADING, b"%d %d Td" % (_LEFT, _TOP)]
    for kind, text in blocks:
        if kind == "h":
            ops += [b"/F2 %d Tf" % (_FONT_SIZE + 1), _pdf_string(text) + b" Tj", b"T*"]
        else:
            ops.append(b"/F1 %d Tf" % _FONT_SIZE)
            for line in textwrap.wrap(text, _WRAP):
                ops += [_pdf_string(line) + b" Tj", b"T*"]
        ops.append(b"T*")
    ops += [b"ET", b"BT", b"/F1 8 Tf", b"%d 40 Td" % _LEFT]
    ops += [_pdf_string(f"EOSS 2026/1 \u2013 page {number} of {total} \u2013 fictional example") + b" Tj", b"ET"]
    return b"\n".join(ops) + b"\n"


def build_pdf(pages: list[list[tuple[str, str]]] = PAGES, title: str = TITLE) -> bytes:
    """The bytes of the PDF: catalog, page tree, two fonts, pages, info dictionary, xref."""
    n = len(pages)
    # Object numbers: 1 catalog, 2 pages, 3 F1, 4 F2, 5 info, then (page, content) pairs.
    first_page = 6
    kids = b" ".join(b"%d 0 R" % (first_page + 2 * i) for i in range(n))
    objects: dict[int, bytes] = {
        1: b"<< /Type /Catalog /Pages 2 0 R >>",
        2: b"<< /Type /Pages /Kids [" + kids + b"] /Count %d >>" % n,
        3: b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>",
        4: b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica-Bold /Encoding /WinAnsiEncoding >>",
        5: b"<< /Title " + _pdf_string(title) + b" /Producer (examples/make_pdf.py) >>",
    }
    for i, blocks in enumerate(pages):
        page_no, content_no = first_page + 2 * i, first_page + 2 * i + 1
        stream = _content(blocks, i + 1, n)
        objects[page_no] = (
            b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] "
            b"/Resources << /Font << /F1 3 0 R /F2 4 0 R >> >> /Contents %d 0 R >>" % content_no
        )
        objects[content_no] = b"<< /Length %d >>\nstream\n" % len(stream) + stream + b"endstream"

    out = bytearray(b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n")
    offsets: dict[int, int] = {}
    for number in sorted(objects):
        offsets[number] = len(out)
        out += b"%d 0 obj\n" % number + objects[number] + b"\nendobj\n"
    xref_at = len(out)
    size = max(objects) + 1
    out += b"xref\n0 %d\n0000000000 65535 f \n" % size
    for number in range(1, size):
        out += b"%010d 00000 n \n" % offsets[number]
    out += b"trailer\n<< /Size %d /Root 1 0 R /Info 5 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (size, xref_at)
    return bytes(out)


def main(argv: list[str] | None = None) -> int:
    """Write the PDF to the given path, or beside this script under ``sources/``."""
    args = sys.argv[1:] if argv is None else argv
    target = Path(args[0]) if args else Path(__file__).resolve().parent / "sources" / "eoss-practice-statement.pdf"
    data = build_pdf()
    target.write_bytes(data)
    print(f"wrote {target} ({len(data)} bytes, {len(PAGES)} pages)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
