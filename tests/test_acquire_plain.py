"""text/plain decoding, media-type dispatch and Content-Type parsing."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from publisher.acquire import AcquireError, Extracted, extract, parse_content_type
from publisher.kernel.errors import PublisherError


def test_utf8_without_charset_is_decoded_exactly() -> None:
    text = "Line one\r\nline two\rthree\n\ttab\x07bell e\u0301 \U0001f600 \U00020000 \u00a0end"
    got = extract(text.encode("utf-8"), "text/plain")
    assert isinstance(got, Extracted)
    assert got.text == text
    assert got.kind == "plain"
    assert got.title is None and got.paper is None
    assert got.sections is None and got.pages is None
    assert got.access is None and got.origin is None
    assert "\n" not in got.detail


def test_combining_marks_are_not_composed() -> None:
    decomposed = "cafe\u0301 A\u030a"
    got = extract(decomposed.encode("utf-8"), "text/plain", "utf-8")
    assert got.text == decomposed
    assert len(got.text) == len(decomposed)


def test_latin1_charset_is_honoured() -> None:
    got = extract("Müller – naïve".encode("latin-1", errors="replace"), "text/plain", "iso-8859-1")
    assert got.text == "Müller ? naïve"
    assert extract(b"caf\xe9", "text/plain; charset=latin-1").text == "café"


def test_charset_parameter_argument_wins_over_media_type_parameter() -> None:
    assert extract(b"caf\xe9", "text/plain; charset=utf-8", "latin-1").text == "café"


def test_invalid_utf8_is_rejected() -> None:
    with pytest.raises(AcquireError) as info:
        extract(b"ok \xff\xfe bad", "text/plain")
    assert "\n" not in str(info.value)
    with pytest.raises(AcquireError):
        extract(b"\xed\xa0\x80", "text/plain", "utf-8")  # an encoded surrogate


def test_acquire_error_is_a_publisher_error() -> None:
    with pytest.raises(PublisherError):
        extract(b"\xff", "text/plain")


def test_unknown_charset_is_rejected() -> None:
    with pytest.raises(AcquireError):
        extract(b"abc", "text/plain", "no-such-charset")


def test_leading_utf8_bom_is_dropped_once_and_only_at_the_start() -> None:
    assert extract(b"\xef\xbb\xbfhello", "text/plain").text == "hello"
    assert extract(b"\xef\xbb\xbf\xef\xbb\xbfhi", "text/plain").text == "\ufeffhi"
    assert extract(b"a\xef\xbb\xbfb", "text/plain", "utf-8").text == "a\ufeffb"


def test_utf16_with_bom() -> None:
    body = "\ufeffhé \U0001f600".encode("utf-16-le")
    assert extract(body, "text/plain", "utf-16").text == "hé \U0001f600"


def test_unsupported_media_type() -> None:
    with pytest.raises(AcquireError) as info:
        extract(b"\x89PNG\r\n", "image/png", url="https://example.org/x.png")
    assert info.value.context["media_type"] == "image/png"
    assert "\n" not in str(info.value)


def test_octet_stream_without_pdf_magic_is_unsupported() -> None:
    with pytest.raises(AcquireError):
        extract(b"just bytes", "application/octet-stream")


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("text/plain", ("text/plain", None)),
        ("Text/HTML; Charset=UTF-8", ("text/html", "utf-8")),
        ('text/plain; format=flowed; charset="ISO-8859-1"', ("text/plain", "iso-8859-1")),
        ("application/xml;charset=utf-8;x=y", ("application/xml", "utf-8")),
        ("", ("application/octet-stream", None)),
        ("text/plain; charset=", ("text/plain", None)),
    ],
)
def test_parse_content_type(value: str, expected: tuple[str, str | None]) -> None:
    assert parse_content_type(value) == expected


@given(st.text())
def test_any_utf8_text_round_trips(text: str) -> None:
    body = text.encode("utf-8", errors="surrogatepass")
    try:
        body.decode("utf-8")
    except UnicodeDecodeError:
        with pytest.raises(AcquireError):
            extract(body, "text/plain")
        return
    expected = text[1:] if text.startswith("\ufeff") else text
    assert extract(body, "text/plain").text == expected


# --- the layer's boundaries ----------------------------------------------------------------

_ACQUIRE_DIR = Path(__file__).resolve().parents[1] / "publisher" / "acquire"
_WRITERS = {"open", "write_text", "write_bytes", "mkdir", "touch", "unlink", "rename", "replace", "mkstemp"}


_PURE = ("__init__.py", "plain.py", "html.py", "_inline_css.py", "jats.py", "_jats_flow.py", "pdf.py", "http.py")
"""The retrieval and extraction modules: bytes in, text out. ``sources.py`` is the one that stores."""


def _modules() -> list[Path]:
    return [_ACQUIRE_DIR / name for name in _PURE]


def test_acquire_imports_only_errors_and_text_from_publisher() -> None:
    for path in _modules():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            names: list[str] = []
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                # .x is publisher.acquire.x, ..x is publisher.x
                prefix = {0: "", 1: "publisher.acquire.", 2: "publisher."}[node.level]
                names = [(prefix + (node.module or "")).rstrip(".")]
            for name in names:
                if name == "publisher" or name.startswith("publisher."):
                    assert name in ("publisher.kernel.errors", "publisher.kernel.text") or name.startswith(
                        "publisher.acquire"
                    ), (
                        path.name,
                        name,
                    )


def test_acquire_writes_no_files() -> None:
    for path in _modules():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Call):
                func = node.func
                name = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""
                assert name not in _WRITERS, f"{path.name}:{node.lineno} calls {name}"


@pytest.mark.parametrize(
    "charset",
    [
        *("utf-7", "unicode_escape", "raw_unicode_escape", "idna", "punycode", "undefined", "cp037", "utf-32"),
        *("rot13", "base64", "zlib", "hex", "bz2", "uu", "quopri"),
    ],
)
@pytest.mark.parametrize("media_type", ["text/plain", "text/html"])
def test_a_charset_no_browser_decodes_is_a_clean_refusal(charset: str, media_type: str) -> None:
    # utf-7 turns "+ADw-" into "<" and unicode_escape turns "\\u202e" into a bidi override: text no
    # reader's browser shows; Python's bytes codecs (base64, zlib...) crashed with a LookupError.
    with pytest.raises(AcquireError) as info:
        extract(b"+ADw-script+AD4- \\u202e hi", media_type, charset)
    assert info.value.context["charset"] == charset
    assert "\n" not in str(info.value)


def test_an_html_meta_charset_no_browser_decodes_is_refused_too() -> None:
    with pytest.raises(AcquireError):
        extract(b'<meta charset="utf-7"><p>+ADw-b+AD4-bold</p>', "text/html", None)
