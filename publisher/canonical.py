"""Canonical JSON and digests: the one place that decides which bytes get hashed.

Canonical JSON here means: keys sorted, no insignificant whitespace, UTF-8, no ASCII escaping,
no NaN or Infinity. Python's ``json`` encoder with those settings produces it; every record hash
in the product goes through :func:`canonical_bytes`.
"""

from __future__ import annotations

import hashlib
import json
import re
from datetime import UTC, datetime
from typing import Any

__all__ = [
    "canonical_bytes",
    "sha256_hex",
    "prefixed",
    "source_id_for",
    "content_hash_for",
    "record_hash_for",
    "loads_strict",
    "loads_record",
    "StrictJSONError",
    "SOURCE_ID_RE",
    "HEX64_RE",
    "utc_now",
    "format_ts",
    "parse_ts",
]

SOURCE_ID_RE = re.compile(r"src-[0-9a-f]{64}")
HEX64_RE = re.compile(r"[0-9a-f]{64}")
_TS_RE = re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z")


class StrictJSONError(ValueError):
    """JSON that is syntactically valid but not acceptable: duplicate keys, NaN, Infinity."""


def canonical_bytes(obj: Any) -> bytes:
    """Canonical JSON encoding of ``obj`` (sorted keys, compact, UTF-8, no NaN)."""
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False).encode("utf-8")


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
    raise StrictJSONError(f"non-finite number {name} is not allowed")


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise StrictJSONError(f"duplicate key {key!r}")
        out[key] = value
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
        raise StrictJSONError(f"not UTF-8 (byte {exc.start})") from exc


def _decode(text: str, **hooks: Any) -> Any:
    try:
        return json.loads(text, parse_constant=_reject_constant, **hooks)
    except RecursionError as exc:
        raise StrictJSONError("nested too deeply") from exc


def loads_strict(data: bytes | str) -> Any:
    """Parse JSON refusing duplicate keys, NaN and Infinity (slow path, any layout)."""
    return _decode(_text(data), object_pairs_hook=_no_duplicates)


def loads_record(data: bytes) -> tuple[Any, bool]:
    """Parse a record, preferring the fast path for canonical files.

    Returns the parsed value and whether the file was canonical. A file written by us is canonical
    JSON plus one trailing newline: it is parsed with the plain C decoder and confirmed by
    re-encoding, which also proves it had no duplicate keys (a duplicate would make the encoding
    shorter). Anything else (upstream records, hand-edited files) takes the strict slow path.
    """
    body = data[:-1] if data.endswith(b"\n") else data
    text = _text(body)
    value = _decode(text)
    try:
        if canonical_bytes(value) == body:
            return value, True
    except (ValueError, UnicodeEncodeError, RecursionError):
        pass
    return loads_strict(text), False


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
