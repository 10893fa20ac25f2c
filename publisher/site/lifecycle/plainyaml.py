"""A configuration file read without PyYAML when it is written in plain block YAML.

Every command that reads a wiki resolves its policy from ``mkdocs.yml`` (CONTRACT section 12),
and PyYAML costs such a command more than its work on a small run: its import compiles the
scanner's character classes, and its pure-Python loader reads the file three times (two
compositions for duplicate keys and ``INHERIT``, one load). Most configuration files use a small
part of YAML: block mappings and sequences of one-line plain scalars, with comments.

:func:`read_plain` reads exactly that part and answers ``None`` for anything else, so the caller
reads the file with PyYAML as before. It is never more lenient than PyYAML and never reads a value
differently: what it accepts, ``yaml.load`` with MkDocs' loader accepts and constructs into an
equal value of the same types (``tests/test_plainyaml.py`` holds the two equal on generated
documents, on mutations of them and on every configuration file in the repository). Where it is
unsure it does not guess:

- the bytes are strict UTF-8 without a byte-order mark, made only of characters PyYAML reads as
  printable and of no line break but ``\\n`` (no tab, carriage return, ``\\x85``, ``\\u2028``,
  ``\\u2029`` or ``\\ufeff``);
- the document is a mapping at the first column; each line is blank, a comment, ``key: value``,
  ``key:`` (a nested block, an indentless sequence or null), ``- value`` or ``- key: value`` (a
  mapping in a sequence);
- a key starts with a letter or ``_`` and holds letters, digits, spaces, ``_ . - ( ) /``; it is
  not a word YAML reads as a boolean or null, and no mapping gives a key twice (PyYAML would keep
  the last; :func:`~publisher.site.lifecycle.policy.duplicate_keys` words that refusal);
- a value is a one-line plain scalar that starts with a letter, ``_``, ``/``, ``(`` or a
  character outside ASCII and holds no ``: `` (a comment after `` #`` is dropped, as YAML drops
  it), or a one-line quoted string (``"…"`` or ``'…'``, not empty) holding no backslash and no
  quotation mark of its kind, read as the string it spells (``publisher new`` quotes the site's
  name). It is read as YAML 1.1 resolves it: ``true``/``yes``/``on`` and their kin as booleans,
  ``null`` as None, anything else as a string; a value of digits alone (``0`` or no leading
  zero, up to 18 digits) as an integer;
- no tag, anchor, alias, escape, flow collection, block scalar, multi-line scalar, document marker
  or directive.
"""

from __future__ import annotations

import re
from typing import Any

__all__ = ["read_plain"]

# YAML 1.1's implicit booleans and nulls as PyYAML's resolver spells them (whole-word matches).
_TRUE = frozenset({"yes", "Yes", "YES", "true", "True", "TRUE", "on", "On", "ON"})
_FALSE = frozenset({"no", "No", "NO", "false", "False", "FALSE", "off", "Off", "OFF"})
_NULL = frozenset({"null", "Null", "NULL"})

# Characters outside ASCII that PyYAML's reader accepts as printable, less the line breaks
# "\u2028" and "\u2029" and the byte-order mark; in ASCII only "\n" and " " to "~" are taken
# (no tab: indentation and separation by tab differ in YAML).
_NON_ASCII_OK = ((0xA0, 0x2027), (0x202A, 0xD7FF), (0xE000, 0xFEFE), (0xFF00, 0xFFFD), (0x10000, 0x10FFFF))
_ASCII_OK = re.compile("[\n -~]*")

# Once the characters are known printable, any of them past ASCII is a plain character to YAML
# ("[^\x00-\x9f]": a class up to U+10FFFF written as a range costs milliseconds to compile).
_KEY_CHAR = "(?:[A-Za-z0-9_.()/-]|[^\\x00-\\x9f])"
_KEY = f"(?:[A-Za-z_]|[^\\x00-\\x9f])(?:(?:{_KEY_CHAR}| )*{_KEY_CHAR})?"
# "key:" then nothing, or at least one space and the rest of the line.
_ENTRY = re.compile(f"({_KEY}):(?: +(.*))?")
_VALUE_START = re.compile("[A-Za-z_/(]|[^\\x00-\\x9f]")
_DIGITS = re.compile("0|[1-9][0-9]{0,17}")  # well inside a 64-bit integer and int()'s digit limit

_MAX_KEY = 128  # PyYAML refuses a simple key over 1,024 characters; stay well inside
_MAX_DEPTH = 64


class _Unsure(Exception):
    """The document is outside the plain subset: PyYAML reads it."""


class _Line:
    __slots__ = ("dash", "indent", "key", "rest")

    def __init__(self, indent: int, dash: bool, key: str | None, rest: str) -> None:
        self.indent = indent  # the column of the entry (of the dash, or of the key)
        self.dash = dash  # a sequence item
        self.key = key  # a mapping entry's key (None: a scalar item)
        self.rest = rest  # the value as written after the key or dash, comment dropped


def read_plain(data: bytes) -> dict[str, Any] | None:
    """The configuration document in ``data`` as PyYAML's safe loading constructs it, when it is
    written in the plain subset (see the module's docstring); ``{}`` for a document of comments
    and blank lines only (which MkDocs loads as an empty configuration); None when unsure."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return None
    if not _printable(text):
        return None
    try:
        lines = _lines(text)
        if not lines:
            return {}
        if lines[0].indent != 0 or lines[0].dash:
            return None
        value, end = _mapping(lines, 0, 0, 0)
    except _Unsure:
        return None
    if end != len(lines):
        return None
    return value


def _printable(text: str) -> bool:
    if text.isascii():
        return _ASCII_OK.fullmatch(text) is not None
    for char in set(text):
        code = ord(char)
        if code < 0x80:
            if code != 0x0A and not 0x20 <= code <= 0x7E:
                return False
        elif not any(low <= code <= high for low, high in _NON_ASCII_OK):
            return False
    return True


def _lines(text: str) -> list[_Line]:
    out: list[_Line] = []
    for raw in text.split("\n"):
        body = raw.lstrip(" ")
        if not body or body[0] == "#":
            continue
        indent = len(raw) - len(body)
        if body[0] == "-" and (len(body) == 1 or body[1] == " "):
            item = body[1:].lstrip(" ")
            if not item or item[0] == "#":
                raise _Unsure  # "-" before a nested block or null
            column = indent + len(body) - len(item)
            out.append(_Line(indent, True, None, ""))
            entry = _entry(item)
            if entry is None:
                out[-1].rest = _scalar_text(item)
                if not out[-1].rest:
                    raise _Unsure
            else:
                out.append(_Line(column, False, *entry))
            continue
        entry = _entry(body)
        if entry is None:
            raise _Unsure
        out.append(_Line(indent, False, *entry))
    return out


def _entry(body: str) -> tuple[str, str] | None:
    """``key: value`` (the key and the value's text, "" for none), or None for a scalar."""
    found = _ENTRY.fullmatch(body)
    if found is None:
        if ": " in body or body.endswith(":"):
            raise _Unsure
        return None
    key = found.group(1)
    if len(key) > _MAX_KEY or key in _TRUE or key in _FALSE or key in _NULL:
        raise _Unsure
    rest = found.group(2)
    return key, ("" if rest is None else _scalar_text(rest))


class _Quoted(str):
    """A quoted scalar's content: a string as written, never resolved to another type."""

    __slots__ = ()


def _scalar_text(rest: str) -> str:
    """A value's text: leading spaces, a comment after `` #`` and trailing spaces dropped; a
    value that is not a one-line plain scalar of the subset, or a quoted one without escapes, is
    unsure."""
    rest = rest.lstrip(" ")
    if not rest or rest[0] == "#":
        return ""
    if rest[0] in "\"'":
        return _quoted(rest)
    cut = rest.find(" #")
    if cut >= 0:
        rest = rest[:cut]
    rest = rest.rstrip(" ")
    if ": " in rest or rest.endswith(":"):
        raise _Unsure
    if not _VALUE_START.match(rest) and not _DIGITS.fullmatch(rest):
        raise _Unsure
    return rest


def _quoted(rest: str) -> _Quoted:
    """``"text"`` or ``'text'`` (then nothing, or spaces and a comment): its text, when it holds no
    quotation mark of its kind, no backslash and is not empty, so that no escape or doubled quote
    can mean anything but what is written."""
    mark = rest[0]
    end = rest.find(mark, 1)
    inner = rest[1:end]
    after = rest[end + 1 :] if end > 0 else ""
    if end <= 1 or "\\" in inner or (after and not (after[0] == " " and after.lstrip(" ")[:1] in ("", "#"))):
        raise _Unsure
    return _Quoted(inner)


def _scalar(text: str) -> Any:
    if isinstance(text, _Quoted):
        return str(text)
    if text in _TRUE:
        return True
    if text in _FALSE:
        return False
    if text in _NULL:
        return None
    if _DIGITS.fullmatch(text):
        return int(text)
    return text


def _mapping(lines: list[_Line], at: int, indent: int, depth: int) -> tuple[dict[str, Any], int]:
    if depth > _MAX_DEPTH:
        raise _Unsure
    out: dict[str, Any] = {}
    while at < len(lines) and lines[at].indent == indent and not lines[at].dash:
        line = lines[at]
        key = line.key
        if key is None or key in out:
            raise _Unsure
        at += 1
        if line.rest:
            out[key] = _scalar(line.rest)
        else:
            out[key], at = _block_value(lines, at, indent, depth)
    if at < len(lines) and lines[at].indent >= indent:
        raise _Unsure  # a line deeper than its mapping, or an item where a key belongs
    return out, at


def _block_value(lines: list[_Line], at: int, indent: int, depth: int) -> tuple[Any, int]:
    """The value of ``key:`` with nothing after it: the block below it, an indentless sequence,
    or null."""
    if at < len(lines):
        nxt = lines[at]
        if nxt.indent > indent:
            if nxt.dash:
                return _sequence(lines, at, nxt.indent, depth + 1)
            return _mapping(lines, at, nxt.indent, depth + 1)
        if nxt.indent == indent and nxt.dash:
            return _sequence(lines, at, indent, depth + 1)
    return None, at


def _sequence(lines: list[_Line], at: int, indent: int, depth: int) -> tuple[list[Any], int]:
    if depth > _MAX_DEPTH:
        raise _Unsure
    out: list[Any] = []
    while at < len(lines) and lines[at].indent == indent and lines[at].dash:
        line = lines[at]
        at += 1
        if line.rest:
            out.append(_scalar(line.rest))
        else:  # "- key: ..." (its mapping's first line follows, at the key's column)
            value, at = _mapping(lines, at, lines[at].indent, depth + 1)
            out.append(value)
    if at < len(lines) and lines[at].indent > indent:
        raise _Unsure
    return out, at
