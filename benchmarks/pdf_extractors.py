"""Compare PDF text extractors: the product's (PDFium via pypdfium2) against pypdf.

Usage::

    python -m benchmarks.pdf_extractors [--corpus N] [PDF ...]

With ``--corpus N`` it renders the first N corpus texts (``../shared/corpus``) as two-column
pages with a table through headless Chromium (``chromium`` on PATH) and scores each extractor
against the source: word recall (multiset of lower-cased ``\\w+`` words) and word-order
fidelity (share of the source's word 5-grams found contiguous in the extracted text). Other PDFs
given on the command line have no source text: the two extractors are compared with each other.
Timings are wall clock of one extraction. Needs ``pypdf`` (a test dependency). Writes only
under a temporary folder.
"""

from __future__ import annotations

import argparse
import html
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

_WORD = re.compile(r"\w+")
_CORPUS = Path(__file__).resolve().parents[2] / "shared" / "corpus" / "evidence-inference" / "texts"


def _words(text: str) -> Counter[str]:
    return Counter(w.lower() for w in _WORD.findall(text))


def _grams(text: str, n: int = 5) -> Counter[tuple[str, ...]]:
    w = [x.lower() for x in _WORD.findall(text)]
    return Counter(tuple(w[i : i + n]) for i in range(len(w) - n + 1))


def _share(source: Counter, got: Counter) -> float:  # type: ignore[type-arg]
    total = sum(source.values())
    return sum((source & got).values()) / total if total else 1.0


def _pdfium(data: bytes) -> str:
    from publisher.acquire.pdf import extract_pdf

    return extract_pdf(data).text


def _pypdf(path: Path) -> str:
    import pypdf

    return "\n".join(page.extract_text() or "" for page in pypdf.PdfReader(path).pages)


def _timed(func, *args):  # type: ignore[no-untyped-def]
    start = time.perf_counter()
    out = func(*args)
    return out, (time.perf_counter() - start) * 1000


def _render(text: str, folder: Path, index: int) -> tuple[Path, str] | None:
    body = text[:9000]
    paras = [p for p in body.split("\n") if p.strip()]
    words = body.split()
    rows = "".join(
        "<tr>" + "".join(f"<td>{html.escape(c)}</td>" for c in words[r * 5 : (r + 1) * 5]) + "</tr>" for r in range(8)
    )
    page = (
        '<html><head><meta charset="utf-8"><style>body{font:10pt serif}'
        ".cols{column-count:2;column-gap:1.2em;text-align:justify}"
        "td{border:1px solid #999;padding:2px 4px}</style></head><body>"
        f"<table>{rows}</table><div class='cols'>{''.join(f'<p>{html.escape(p)}</p>' for p in paras)}</div>"
        "</body></html>"
    )
    source = folder / f"doc{index}.html"
    source.write_text(page, encoding="utf-8")
    pdf = folder / f"doc{index}.pdf"
    subprocess.run(
        [
            "chromium",
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--no-pdf-header-footer",
            f"--print-to-pdf={pdf}",
            source.as_uri(),
        ],
        capture_output=True,
        timeout=120,
        check=False,
    )
    return (pdf, " ".join(words[:40]) + "\n" + "\n".join(paras)) if pdf.is_file() else None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=int, default=0, help="render this many corpus texts with Chromium")
    parser.add_argument("pdfs", nargs="*", type=Path)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        scored: list[tuple[Path, str]] = []
        if args.corpus:
            if shutil.which("chromium") is None or not _CORPUS.is_dir():
                print("needs chromium on PATH and ../shared/corpus", file=sys.stderr)
                return 2
            for index, text_file in enumerate(sorted(_CORPUS.glob("*.txt"))[: args.corpus]):
                made = _render(text_file.read_text(encoding="utf-8"), Path(tmp), index)
                if made is not None:
                    scored.append(made)
        for pdf, source in scored:
            a, ta = _timed(_pdfium, pdf.read_bytes())
            b, tb = _timed(_pypdf, pdf)
            print(
                f"{pdf.name}: word recall pdfium {_share(_words(source), _words(a)):.4f} "
                f"pypdf {_share(_words(source), _words(b)):.4f}; 5-gram order pdfium "
                f"{_share(_grams(source), _grams(a)):.4f} pypdf {_share(_grams(source), _grams(b)):.4f}; "
                f"{ta:.0f} ms vs {tb:.0f} ms"
            )
        for pdf in args.pdfs:
            a, ta = _timed(_pdfium, pdf.read_bytes())
            b, tb = _timed(_pypdf, pdf)
            wa, wb = _words(a), _words(b)
            print(
                f"{pdf.name}: words pdfium {sum(wa.values())} pypdf {sum(wb.values())}; "
                f"only pdfium {sum((wa - wb).values())}, only pypdf {sum((wb - wa).values())}; "
                f"{ta:.0f} ms vs {tb:.0f} ms"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
