"""``text/plain``: the body decoded exactly as served.

The charset comes from the Content-Type header, else UTF-8.  Decoding is
strict: a byte sequence that is not valid in that charset is an error, never
replaced.  Nothing is rewritten: CRLF, control characters, combining marks and
astral characters all stay as they are.

BOM decision: when the charset is UTF-8, one leading UTF-8 byte-order mark
(EF BB BF) is dropped, because it is an encoding signature rather than text
(as the WHATWG "UTF-8 decode" does).  Only the first one is dropped; a second
U+FEFF, or one anywhere else, is kept.  For other charsets Python's codec of
that name decides (``utf-16`` consumes its BOM, ``utf-16-le`` keeps it).

Charsets: only the text encodings a browser knows (the WHATWG Encoding Standard's, under
Python's aliases, plus ASCII and Latin-1) are accepted. Anything else is refused, one line:
``utf-7`` and the escape codecs would show the agent text a reader's browser never shows (``+ADw-``
decoded to ``<``), and Python's non-text codecs (``base64``, ``zlib``, ``rot13``...) are no charset.
"""

from __future__ import annotations

import codecs

from . import AcquireError, Extracted

__all__ = ["decode_text", "extract_plain"]

_CHARSETS = frozenset(
    {
        "utf-8", "utf-16", "utf-16-le", "utf-16-be", "ascii", "iso8859-1", "iso8859-2",
        "iso8859-3", "iso8859-4", "iso8859-5", "iso8859-6", "iso8859-7", "iso8859-8",
        "iso8859-10", "iso8859-13", "iso8859-14", "iso8859-15", "iso8859-16", "cp866",
        "cp874", "cp1250", "cp1251", "cp1252", "cp1253", "cp1254", "cp1255", "cp1256",
        "cp1257", "cp1258", "koi8-r", "koi8-u", "mac-roman", "mac-cyrillic", "gbk",
        "gb2312", "gb18030", "big5", "euc_jp", "iso2022_jp", "shift_jis", "euc_kr",
    }
)  # fmt: skip
"""Python's names of the charsets a browser decodes (see the module doc)."""


def decode_text(body: bytes, charset: str | None, *, kind: str = "plain") -> tuple[str, str]:
    """Decode ``body`` strictly; return (text, codec name used).

    A single leading UTF-8 BOM is dropped when the codec is UTF-8.
    """
    label = charset or "utf-8"
    try:
        codec = codecs.lookup(label).name
    except LookupError as exc:
        raise AcquireError(f"{kind}: unknown charset {label!r}", charset=label) from exc
    if codec not in _CHARSETS:
        raise AcquireError(
            f"{kind}: charset {label!r} is not one a browser decodes; the text would not be what a reader sees",
            charset=label,
        )
    if codec == "utf-8":
        codec = "utf-8-sig"  # strips one leading BOM, strict otherwise
    try:
        text = body.decode(codec, errors="strict")
    except UnicodeDecodeError as exc:
        raise AcquireError(
            f"{kind}: body is not valid {label} (byte {exc.start}: {exc.reason})",
            charset=label,
            offset=exc.start,
        ) from exc
    return text, ("utf-8" if codec == "utf-8-sig" else codec)


def extract_plain(body: bytes, charset: str | None) -> Extracted:
    """Decode a ``text/plain`` body; no title, sections or pages."""
    text, codec = decode_text(body, charset)
    return Extracted(
        text=text,
        title=None,
        paper=None,
        sections=None,
        pages=None,
        kind="plain",
        access=None,
        origin=None,
        detail=f"plain: {len(text)} chars ({codec})",
    )
