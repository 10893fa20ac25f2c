"""Canonical JSON and digests: the one place that decides which bytes get hashed.

Canonical JSON here means: keys sorted, no insignificant whitespace, UTF-8, no ASCII escaping,
no NaN or Infinity. Python's ``json`` encoder with those settings produces it; every record hash
in the product goes through :func:`canonical_bytes`.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from datetime import UTC, datetime
from typing import Any

import orjson

_FAST = True
"""Take orjson's fast paths (a required dependency); the stdlib path decides every doubtful case.
Tests switch it off to compare the two paths on the same bytes."""

__all__ = [
    "canonical_bytes",
    "same_json",
    "sha256_hex",
    "prefixed",
    "source_id_for",
    "content_hash_for",
    "record_hash_for",
    "loads_strict",
    "loads_record",
    "loads_canonical_floats_unchecked",
    "loads_written",
    "dumps_written",
    "seal_of_canonical",
    "string_of_canonical",
    "StrictJSONError",
    "SOURCE_ID_RE",
    "HEX64_RE",
    "DIGEST_RE",
    "utc_now",
    "format_ts",
    "parse_ts",
]

SOURCE_ID_RE = re.compile(r"src-[0-9a-f]{64}")
HEX64_RE = re.compile(r"[0-9a-f]{64}")
DIGEST_RE = re.compile(r"sha256:[0-9a-f]{64}")
"""The one spelling of a prefixed digest (``sha256:`` and 64 lowercase hex digits), for fullmatch."""
_TS_RE = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(\.[0-9]+)?Z")


class StrictJSONError(ValueError):
    """JSON that is syntactically valid but not acceptable: duplicate keys, NaN, Infinity.

    ``kind`` says which rule refused it, for callers and tests that must not read the wording:
    ``duplicate_key``, ``non_finite``, ``too_large``, ``not_utf8``, ``lone_surrogate`` or
    ``too_deep``.
    """

    def __init__(self, message: str, kind: str) -> None:
        super().__init__(message)
        self.kind = kind


def canonical_bytes(obj: Any) -> bytes:
    """Canonical JSON encoding of ``obj`` (sorted keys, compact, UTF-8, no NaN).

    orjson writes it where it provably writes the same bytes: a tree of dicts, lists, tuples,
    strings, 64-bit ints, booleans and None (exact types, no float; keys sorted by code point,
    strings escaped alike; ``tests/test_canonical.py`` compares the two on generated trees). A
    float, a subclass, a non-string key, an int past 64 bits or a lone surrogate goes to the
    standard encoder, which spells or refuses it as the contract says."""
    if _FAST and _plain_without_float(obj):
        try:
            return orjson.dumps(obj, option=orjson.OPT_SORT_KEYS)
        except (TypeError, RecursionError):  # JSONEncodeError: a non-string key, an int past 64 bits
            pass
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False).encode("utf-8")


def same_json(a: Any, b: Any) -> bool:
    """Whether two JSON values have the same canonical encoding (``1``, ``1.0`` and ``true`` differ).

    Decided at orjson speed where orjson can encode both (a re-assembled result is compared with
    the stored one on every check, and the stdlib encoder is the slow part of that): one encoder
    spells one value one way, so equal encodings are equal values. Values outside what orjson
    encodes (integers past 64 bits, non-string keys) take :func:`canonical_bytes`. For parsed
    values only: strict parsing refuses NaN and infinities, which orjson would write as ``null``.
    """
    if _FAST:
        try:
            option = orjson.OPT_SORT_KEYS
            return bool(orjson.dumps(a, option=option) == orjson.dumps(b, option=option))
        except (TypeError, RecursionError):  # orjson.JSONEncodeError is a TypeError
            pass
    return canonical_bytes(a) == canonical_bytes(b)


def sha256_hex(data: bytes) -> str:
    """Lowercase hex SHA-256 of ``data``."""
    return hashlib.sha256(data).hexdigest()


def prefixed(hex_digest: str) -> str:
    """The ``sha256:`` form of a bare hex digest."""
    return "sha256:" + hex_digest


def source_id_for(url: str, text: str) -> str:
    """``src-`` + sha256(utf8(url) + NUL + utf8(text)) (CONTRACT section 2)."""
    h = hashlib.sha256(url.encode("utf-8"))
    h.update(b"\x00")
    h.update(text.encode("utf-8"))
    return "src-" + h.hexdigest()


def content_hash_for(text: str) -> str:
    """``sha256:`` + sha256(utf8(text)): the body alone."""
    return prefixed(sha256_hex(text.encode("utf-8")))


def record_hash_for(record: dict[str, Any]) -> str:
    """Seal over every field of a snapshot record except ``record_hash`` itself."""
    body = {k: v for k, v in record.items() if k != "record_hash"}
    return prefixed(sha256_hex(canonical_bytes(body)))


def _reject_constant(name: str) -> Any:
    raise StrictJSONError(f"non-finite number {name} is not allowed", "non_finite")


def _finite_float(literal: str) -> float:
    """A JSON number as a float, refusing one too large for a double (``1e999`` would be infinity)."""
    value = float(literal)
    if not math.isfinite(value):
        raise StrictJSONError(f"number {literal[:40]} is too large to represent", "too_large")
    return value


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out = dict(pairs)  # built in C; a duplicate key shows as a shorter dict
    if len(out) != len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise StrictJSONError(f"duplicate key {key!r}", "duplicate_key")
            seen.add(key)
    return out


def _text(data: bytes | str) -> str:
    """JSON text from bytes: strict UTF-8 only (no BOM, no UTF-16/32, no encoded surrogates).

    ``json.loads`` on bytes would sniff UTF-16 and UTF-32 and pass surrogates through; a record
    file is UTF-8 and nothing else.
    """
    if isinstance(data, str):
        return data
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise StrictJSONError(f"not UTF-8 (byte {exc.start})", "not_utf8") from exc


def _decode(text: str, **hooks: Any) -> Any:
    try:
        return json.loads(text, parse_constant=_reject_constant, parse_float=_finite_float, **hooks)
    except RecursionError as exc:
        raise StrictJSONError("nested too deeply", "too_deep") from exc


def loads_strict(data: bytes | str) -> Any:
    """Parse JSON refusing duplicate keys, NaN, Infinity and lone surrogates (any layout).

    Bytes are parsed at orjson speed when that provably gives the strict value (:func:`_fast_strict`);
    everything else, every refusal included, is decided by the stdlib path, which says why.
    """
    if _FAST and isinstance(data, bytes):
        value = _fast_strict(data)
        if value is not _NOT_STRICT:
            return value
    text = _text(data)
    value = _decode(text, object_pairs_hook=_no_duplicates)
    if _SURROGATE_ESCAPE.search(text) is not None:
        _refuse_lone_surrogates(value)
    return value


_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")
"""A ``\\u`` escape of a surrogate, paired or not: the one way JSON text can hold one (UTF-8
cannot encode a surrogate, and :func:`_text` refuses bytes that try)."""


def _refuse_lone_surrogates(value: Any) -> None:
    """Refuse a value with a lone surrogate in any string or key (``"\\ud800"`` alone).

    JSON's grammar lets an escape name half of a pair, but such a string is not Unicode text: it
    cannot be written as UTF-8, hashed or compared with what a reader sees, and every later
    encoding of the value would fail. Paired escapes decode to one character and pass."""
    try:
        json.dumps(value, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError as exc:
        raise StrictJSONError("a string holds a lone surrogate escape (not Unicode text)", "lone_surrogate") from exc
    except RecursionError as exc:
        raise StrictJSONError("nested too deeply", "too_deep") from exc


_NOT_STRICT = object()


def _fast_strict(data: bytes) -> Any:
    """The value of JSON ``data`` if orjson proves it is what the strict path gives, else ``_NOT_STRICT``.

    orjson refuses what the strict path refuses (invalid UTF-8, a BOM, NaN, infinities, control
    characters in strings, trailing data) but keeps the last of duplicate keys, turns integers
    past 64 bits into floats and refuses lone surrogates the strict path lets through. So any
    ``\\u`` escape and any float defer to the stdlib path (and every refusal, which it words),
    and duplicates are counted: without ``\\u`` escapes every colon of the file is either a key's
    (one per key written) or a character of a string, which orjson writes back as it is, never
    escaped; writing the value again therefore gives as many colons as the file has exactly when
    no key was dropped, and fewer when a duplicate was (its colon and any in its value are gone).
    """
    if b"\\u" in data:
        return _NOT_STRICT
    try:
        value = orjson.loads(data)
    except (ValueError, RecursionError):
        return _NOT_STRICT
    if _has_float(value):
        return _NOT_STRICT
    try:
        written = orjson.dumps(value)
    except (TypeError, RecursionError):
        return _NOT_STRICT
    if written.count(b":") != data.count(b":"):
        return _NOT_STRICT
    return value


def loads_record(data: bytes) -> tuple[Any, bool]:
    """Parse a record, preferring the fast path for canonical files.

    Returns the parsed value and whether the file was canonical. A file written by us is canonical
    JSON plus one trailing newline: it is parsed with the plain C decoder and confirmed by
    re-encoding, which also proves it had no duplicate keys (a duplicate would make the encoding
    shorter). Anything else (upstream records, hand-edited files) takes the strict slow path.
    orjson parses and re-encodes first; it only ever answers "canonical", and every other case
    (floats included) is decided by the stdlib path.
    """
    if _FAST:
        value = _fast_canonical(data)
        if value is not _NOT_CANONICAL:
            return value, True
    body = data[:-1] if data.endswith(b"\n") else data
    text = _text(body)
    value = _decode(text)
    try:
        if canonical_bytes(value) == body:
            return value, True
    except (ValueError, UnicodeEncodeError, RecursionError):
        pass
    return loads_strict(text), False


_NOT_CANONICAL = object()


def _plain_without_float(value: Any) -> bool:
    """Whether ``value`` is made only of dicts, lists, tuples, strings, ints, booleans and None
    (exact types, no float): what orjson writes as the standard encoder does. Unlike
    :func:`_has_float`, which walks a value parsed from JSON, this judges any Python value, so a
    subclass or another type counts as not plain."""
    stack = [value]
    while stack:
        item = stack.pop()
        kind = type(item)
        if kind is dict:
            stack.extend(item.values())
        elif kind is list or kind is tuple:
            stack.extend(item)
        elif not (kind is str or kind is int or kind is bool or item is None):
            return False  # a float, a subclass or another type: the standard encoder decides
    return True


def dumps_written(value: Any) -> bytes:
    """The bytes of a file people read (``result.json``): ``json.dumps(value, ensure_ascii=False,
    indent=2)`` plus a newline, in UTF-8, byte for byte.

    orjson writes it when it provably writes the same bytes: a tree of dicts with string keys,
    lists, strings, 64-bit ints, booleans, floats and None (``tests/test_canonical.py`` compares
    the two on generated trees). A float is handed to orjson already spelt as the standard
    encoder spells it (``float.__repr__``: ``1e-05``, where orjson writes ``0.00001``; ``NaN``,
    ``Infinity``), as a verbatim fragment. Any other type, a subclass, a non-string key or an int
    past 64 bits goes to the standard encoder, whose pure-Python indented encoder is ten times
    slower.
    """
    if _FAST:
        plain = _plain_without_float(value)
        try:
            if plain:
                return orjson.dumps(value, option=orjson.OPT_INDENT_2) + b"\n"
            spelt = _floats_spelt(value) if _FRAGMENT is not None else _NOT_PLAIN
            if spelt is not _NOT_PLAIN:
                return orjson.dumps(spelt, option=orjson.OPT_INDENT_2) + b"\n"
        except (TypeError, RecursionError):  # JSONEncodeError: a non-string key, an int past 64 bits
            pass
    return (json.dumps(value, ensure_ascii=False, indent=2) + "\n").encode("utf-8")


_NOT_PLAIN = object()
_FRAGMENT: Any = getattr(orjson, "Fragment", None)
"""orjson's verbatim fragment (orjson 3.10 and later); without it floats go to the standard encoder."""


def _float_text(number: float) -> str:
    """A float as the standard encoder writes it (``allow_nan`` is its default)."""
    if number != number:
        return "NaN"
    if number in (math.inf, -math.inf):
        return "Infinity" if number > 0 else "-Infinity"
    return float.__repr__(number)


def _floats_spelt(value: Any) -> Any:
    """A copy of ``value`` with each exact float replaced by an orjson fragment of its standard
    spelling, or ``_NOT_PLAIN`` when the tree holds any type but dicts, lists, tuples, strings,
    ints, booleans, floats and None (exact types): those are the standard encoder's to write."""
    kind = type(value)
    if kind is float:
        return _FRAGMENT(_float_text(value))
    if kind is dict:
        out: dict[Any, Any] = {}
        for key, item in value.items():
            spelt = _floats_spelt(item)
            if spelt is _NOT_PLAIN:
                return _NOT_PLAIN
            out[key] = spelt
        return out
    if kind is list or kind is tuple:
        items = []
        for item in value:
            spelt = _floats_spelt(item)
            if spelt is _NOT_PLAIN:
                return _NOT_PLAIN
            items.append(spelt)
        return items
    if kind is str or kind is int or kind is bool or value is None:
        return value
    return _NOT_PLAIN


def loads_written(data: bytes) -> Any:
    """:func:`loads_strict` for a file this product wrote with ``json.dumps(value, indent=2,
    ensure_ascii=False)`` plus a newline (``result.json``), at orjson speed when that is provable.

    orjson parses the file and writes the value again in the same layout; only a byte-for-byte
    match is taken. The match proves the value is exactly the file's: a duplicate key would
    make the writing shorter, an escape or number orjson spells differently would differ
    (floats that orjson writes its own way, ``1e-7``, take the slow path), and orjson refuses
    what the strict path refuses (invalid UTF-8, a BOM, NaN, lone surrogates, infinite
    numbers). Anything else (a hand-edited file, another layout) is parsed by :func:`loads_strict`.
    """
    if _FAST:
        try:
            value = orjson.loads(data)
            written = orjson.dumps(value, option=orjson.OPT_INDENT_2)
        except (ValueError, TypeError, RecursionError):  # JSONDecodeError / JSONEncodeError
            pass
        else:
            body = len(data) - 1 if data.endswith(b"\n") else len(data)
            if len(written) == body and data.startswith(written):
                return value
    return loads_strict(data)


def _has_float(value: Any) -> bool:
    """Whether a parsed JSON value holds a float anywhere (strings are not walked into).

    Only containers go on the stack; the scalars of a container are judged where they are met,
    so the many small ``{start, end, …}`` entries of a snapshot's maps cost one loop each.
    """
    if type(value) is float:
        return True
    stack = [value]
    while stack:
        item = stack.pop()
        for child in item.values() if type(item) is dict else item if type(item) is list else ():
            kind = type(child)
            if kind is float:
                return True
            if kind is dict or kind is list:
                stack.append(child)
    return False


def loads_canonical_floats_unchecked(data: bytes) -> Any:
    """The value of ``data`` if orjson writes it back byte for byte (plus an optional newline),
    floats not looked for; else None.

    For a caller whose schema refuses every float (a strict model with no float field and no
    extra keys): once the value validates it holds none, and the file was canonical, without
    walking the value. A value that does not validate must be judged again by
    :func:`loads_record`, which looks for floats (they are the one value the two encoders spell
    differently) and words every refusal.
    """
    if not _FAST:
        return None
    value = _fast_canonical(data, floats=False)
    return None if value is _NOT_CANONICAL else value


def _fast_canonical(data: bytes, *, floats: bool = True) -> Any:
    """The value of ``data`` if orjson proves it canonical (plus an optional newline), else ``_NOT_CANONICAL``.

    The file is parsed and compared in place, without copying it to drop the newline.

    orjson refuses what the strict path refuses (invalid UTF-8, a BOM, NaN, lone surrogates) and
    escapes strings exactly as :func:`canonical_bytes` does; a duplicate key makes its re-encoding
    shorter. Floats are the one place the two encoders spell values differently (``1e-07`` vs
    ``1e-7``), and integers past 64 bits parse as floats, so any float defers to the stdlib path
    (``floats=False`` leaves that to the caller's schema: :func:`loads_canonical_floats_unchecked`).
    """
    try:
        value = orjson.loads(data)
    except (ValueError, RecursionError):
        return _NOT_CANONICAL
    if floats and _has_float(value):
        return _NOT_CANONICAL
    try:
        encoded = orjson.dumps(value, option=orjson.OPT_SORT_KEYS)
    except (TypeError, RecursionError):
        return _NOT_CANONICAL
    body_length = len(data) - 1 if data.endswith(b"\n") else len(data)
    if len(encoded) != body_length or not data.startswith(encoded):
        return _NOT_CANONICAL
    return value


_SEAL_KEY = b'"record_hash":"'


def seal_of_canonical(body: bytes, record: dict[str, Any], *, flat: bool = False) -> str | None:
    """``record_hash_for(record)`` computed from the canonical bytes ``body`` without re-encoding.

    ``body`` must be ``canonical_bytes(record)``, optionally followed by one newline (a record
    file as written), which is not hashed. With sorted keys and no whitespace, removing the
    one ``"record_hash":"<value>"`` member and one adjacent comma leaves exactly the canonical
    bytes of the record without it. A quote inside a JSON string is always escaped, so the member
    can occur unescaped only as a key of an object: the top level's, or a nested one's, which is why
    the rest of the body is searched for a second occurrence; anything unexpected returns None (use
    the slow path). ``flat``: the caller has checked that no nested object of ``record`` has a
    ``record_hash`` member (a snapshot whose shape was checked), so the first occurrence is the
    member and the rest of the body, the text, is not searched again.
    """
    value = record.get("record_hash")
    if not isinstance(value, str) or not value.isascii() or '"' in value or "\\" in value:
        return None
    member = _SEAL_KEY + value.encode("ascii") + b'"'
    at = body.find(member)
    if at < 1 or (not flat and body.find(member, at + 1) != -1):
        return None
    end = at + len(member)
    h = hashlib.sha256()
    view = memoryview(body)
    if body.endswith(b"\n"):
        view = view[:-1]
    if body[at - 1 : at] == b",":
        h.update(view[: at - 1])
        h.update(view[end:])
    elif body[end : end + 1] == b",":
        h.update(view[:at])
        h.update(view[end + 1 :])
    else:
        h.update(view[:at])
        h.update(view[end:])
    return prefixed(h.hexdigest())


def string_of_canonical(spelt: bytes, *, checked: bool = True) -> str:
    """The string that ``spelt`` spells between the quotes of its canonical JSON (a piece of a long
    string value cut where no escape or UTF-8 sequence is split); ValueError unless ``spelt`` is
    exactly that spelling (a needless escape, a raw control character or a lone surrogate is not).
    ``checked=False`` only decodes: for bytes that passed the check before and are held unchanged."""
    quoted = b'"' + spelt + b'"'
    if _FAST:
        value = orjson.loads(quoted)  # orjson.JSONDecodeError is a ValueError
        if type(value) is not str or (checked and orjson.dumps(value) != quoted):
            raise ValueError("not the canonical spelling of a string")
        return value
    value = json.loads(quoted)
    if type(value) is not str or (checked and canonical_bytes(value) != quoted):
        raise ValueError("not the canonical spelling of a string")
    return value


def utc_now() -> datetime:
    """Now, in UTC, truncated to the second."""
    return datetime.now(UTC).replace(microsecond=0)


def format_ts(moment: datetime) -> str:
    """ISO-8601 UTC with a trailing ``Z`` in whole seconds."""
    m = moment.astimezone(UTC)
    # Not strftime: glibc writes year 999 as "999", which parse_ts rightly refuses.
    return f"{m.year:04d}-{m.month:02d}-{m.day:02d}T{m.hour:02d}:{m.minute:02d}:{m.second:02d}Z"


def parse_ts(value: str) -> datetime:
    """Parse a contract timestamp (``YYYY-MM-DDTHH:MM:SS[.f]Z``) into an aware UTC datetime."""
    if not isinstance(value, str) or not _TS_RE.fullmatch(value):
        raise ValueError(f"timestamp {value!r} is not ISO-8601 UTC with a trailing Z")
    return datetime.fromisoformat(value[:-1] + "+00:00").astimezone(UTC)
