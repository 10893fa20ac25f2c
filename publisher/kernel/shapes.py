"""Snapshot records and event lines checked without the validation library, never more leniently
than the models of :mod:`.models`.

Agents call the read-only ``source`` commands hundreds of times a session, and loading the
validation library costs more than everything else such a command does. These checks let a read
start without it: :func:`snapshot_shape` and :func:`event_shape` answer True only for a value
the model certainly accepts (every field's type, pattern, range and the models' cross-field
rules, written out here), and False for anything else, including what they are unsure of. A
False is never a refusal: the caller asks the model, which accepts or words the refusal, so the
outcome of a read is the model's in every case, only sooner in the usual one. Tests generate
records and mutations of them and hold both sides to it (``tests/test_shapes.py``).

Both checks look at exact types (``type(v) is int`` refuses ``True`` and ``1.0``, as strict
mode does), so a value they accept holds no float: a canonical file read without a walk for
floats is canonical once they accept it.
"""

from __future__ import annotations

import re
from itertools import pairwise
from typing import Any

from .canonical import DIGEST_RE, HEX64_RE, SOURCE_ID_RE, parse_ts
from .vocab import Access, Basis, EventType, Origin, SurfaceType

__all__ = [
    "snapshot_shape",
    "event_shape",
    "config_shape",
    "SnapshotView",
    "SectionView",
    "PageView",
    "ConfigView",
    "GatesView",
]

_ACCESS = frozenset(a.value for a in Access)
_ORIGIN = frozenset(o.value for o in Origin)
_EVENT_TYPES = frozenset(t.value for t in EventType)
_BASIS = frozenset(b.value for b in Basis)
_SURFACE_TYPES = frozenset(t.value for t in SurfaceType)

_EVENT_ID_RE = re.compile(r"ev-[0-9]{4,}")
"""The model's ``^ev-[0-9]{4,}$``: a counter of ASCII digits, as the contract writes it."""

_SNAPSHOT_REQUIRED = frozenset(
    ("schema_version", "source_id", "content_hash", "url", "title", "retrieved_at", "access", "origin")
) | frozenset(("paper", "asset", "text"))
_SNAPSHOT_KEYS = _SNAPSHOT_REQUIRED | frozenset(
    ("sections", "pages", "record_hash", "merkle_root", "merkle_size", "surface", "identity", "supersedes")
)
_EVENT_REQUIRED = frozenset(
    ("schema_version", "event_id", "type", "source_id", "url", "at", "fresh", "sha256", "actor", "detail")
)
_EVENT_KEYS = _EVENT_REQUIRED | frozenset(
    ("prev", "record_hash", "receipt", "sig", "merkle_root", "merkle_size", "surface", "supersedes")
)
_PAPER_KEYS = frozenset(("pmid", "doi", "pmcid"))
_IDENTITY_KEYS = frozenset(("pmid", "doi", "pmcid", "title"))
_ENTRY_KEYS = frozenset(("value", "basis", "via"))
_ASSET_KEYS = frozenset(("path", "sha256", "bytes"))
_SECTION_KEYS = frozenset(("title", "start", "end"))
_PAGE_KEYS = frozenset(("page", "start", "end"))
_SURFACE_KEYS = frozenset(
    ("type", "expected_pages", "extracted_pages", "missing_pages", "unexpected_pages", "complete")
) | frozenset(("excluded_modalities", "method", "manifest_hash"))
_RECEIPT_KEYS = frozenset(
    ("requested_url", "final_url", "redirects", "status", "media_type", "raw_sha256", "raw_bytes", "extractor")
)
_SIGNATURE_KEYS = frozenset(("alg", "key_id", "run", "value"))


def _str(value: Any) -> bool:
    return type(value) is str


def _opt_str(value: Any) -> bool:
    return value is None or type(value) is str


def _count(value: Any, least: int = 0) -> bool:
    """An integer (never a bool) of at least ``least``."""
    return type(value) is int and value >= least


def _matching(pattern: re.Pattern[str], value: Any) -> bool:
    return type(value) is str and pattern.fullmatch(value) is not None


def _opt_matching(pattern: re.Pattern[str], value: Any) -> bool:
    return value is None or _matching(pattern, value)


_SURROGATE_RE = re.compile("[\ud800-\udfff]")


def _encodable(value: str) -> bool:
    """No lone surrogate (a JSON ``"\\ud800"`` the strict reader lets through): a length or
    pattern limit of the models refuses such a string (``string_unicode``), a plain string field
    does not."""
    return value.isascii() or _SURROGATE_RE.search(value) is None


def _encodable_keys(value: Any) -> bool:
    """Every object's keys, at any depth, strings without a lone surrogate. A free-form object
    of the models (``dict[str, Any]``, extra fields) refuses such a key at its top or spells it
    otherwise in its JSON dump (U+FFFD per byte), and its dump fails on a deeper one. Walked
    without recursion (a parsed value may nest as deep as the reader allows)."""
    stack: list[Any] = [value]
    push, pop = stack.append, stack.pop
    while stack:
        node = pop()
        if type(node) is dict:
            for key in node:
                if type(key) is not str or not (key.isascii() or _SURROGATE_RE.search(key) is None):
                    return False
            node = node.values()
        elif type(node) is not list:
            continue
        for item in node:
            kind = type(item)
            if kind is dict or kind is list:
                push(item)
    return True


def _bounded(value: Any, least: int, most: int | None = None) -> bool:
    """A string of ``least`` to ``most`` code points, without a lone surrogate (a limited string
    of the models refuses one)."""
    return type(value) is str and least <= len(value) and (most is None or len(value) <= most) and _encodable(value)


def _timestamp(value: Any) -> bool:
    if type(value) is not str:
        return False
    try:
        parse_ts(value)
    except Exception:  # whatever the parser raises, the model decides
        return False
    return True


def _keys(value: Any, required: frozenset[str], allowed: frozenset[str]) -> bool:
    """A JSON object holding every ``required`` key and no key beyond ``allowed``."""
    if type(value) is not dict:
        return False
    keys = value.keys()
    return required <= keys and keys <= allowed


def _paper(value: Any) -> bool:
    return value is None or (_keys(value, frozenset(), _PAPER_KEYS) and all(_opt_str(v) for v in value.values()))


def _asset(value: Any) -> bool:
    if value is None:
        return True
    if not _keys(value, _ASSET_KEYS, _ASSET_KEYS):
        return False
    path = value["path"]
    if not _str(path) or not path or path.startswith("/") or ".." in path.replace("\\", "/").split("/"):
        return False
    return _matching(HEX64_RE, value["sha256"]) and _count(value["bytes"])


def _ranges(value: Any, keys: frozenset[str], label: str | None) -> bool:
    """None, or a list of sections (``label`` "title") or pages (``label`` None: a ``page`` number)."""
    if value is None:
        return True
    if type(value) is not list:
        return False
    for entry in value:
        if not _keys(entry, keys, keys) or not (_count(entry["start"]) and _count(entry["end"])):
            return False
        if not (_str(entry["title"]) if label else _count(entry["page"])):
            return False
    return True


def _pages(value: Any) -> bool:
    """A list of page numbers (each at least 1), strictly increasing (the surface's own rule)."""
    if type(value) is not list or not all(_count(p, 1) for p in value):
        return False
    return all(a < b for a, b in pairwise(value))


def _surface(value: Any) -> bool:
    if value is None:
        return True
    if not _keys(value, _SURFACE_KEYS, _SURFACE_KEYS):
        return False
    expected = value["expected_pages"]
    extracted, missing, unexpected = value["extracted_pages"], value["missing_pages"], value["unexpected_pages"]
    modalities = value["excluded_modalities"]
    if not (
        type(value["type"]) is str
        and value["type"] in _SURFACE_TYPES
        and (expected is None or _pages(expected))
        and _pages(extracted)
        and _pages(missing)
        and _pages(unexpected)
        and type(value["complete"]) is bool
        and type(modalities) is list
        and all(_str(m) for m in modalities)
        and _bounded(value["method"], 1, 200)
        and _matching(DIGEST_RE, value["manifest_hash"])
    ):
        return False
    if value["type"] == SurfaceType.WHOLE_TEXT.value:
        return expected is None and not extracted and not missing and not unexpected
    declared = expected is not None
    want_missing = sorted(set(expected) - set(extracted)) if declared else []
    want_unexpected = sorted(set(extracted) - set(expected)) if declared else []
    if missing != want_missing or unexpected != want_unexpected:
        return False
    return value["complete"] is (declared and not want_missing)


def _entry(value: Any) -> bool:
    return value is None or (
        _keys(value, _ENTRY_KEYS, _ENTRY_KEYS)
        and _bounded(value["value"], 1)
        and _str(value["basis"])
        and value["basis"] in _BASIS
        and _bounded(value["via"], 1, 200)
    )


def _identity(value: Any, paper: dict[str, Any] | None, title: str | None) -> bool:
    """None, or an identity whose ids are exactly the paper's (present, non-empty) ids and whose
    title entry is the record's title."""
    if value is None:
        return True
    if not _keys(value, frozenset(), _IDENTITY_KEYS) or not all(_entry(e) for e in value.values()):
        return False
    ids = {k: e["value"] for k in ("pmid", "doi", "pmcid") if (e := value.get(k)) is not None}
    given = {k: v for k in ("pmid", "doi", "pmcid") if (v := (paper or {}).get(k))}
    named = value.get("title")
    return ids == given and (named["value"] if named is not None else None) == title


def snapshot_shape(raw: Any) -> bool:
    """True only when :class:`~publisher.kernel.models.Snapshot` certainly accepts ``raw``, the
    parsed JSON of a record; False for anything else (ask the model: it accepts or says why)."""
    if not _keys(raw, _SNAPSHOT_REQUIRED, _SNAPSHOT_KEYS):
        return False
    get = raw.get
    source_id = raw["source_id"]
    surface = get("surface")
    if not (
        _count(raw["schema_version"], 1)
        and raw["schema_version"] == 1
        and _matching(SOURCE_ID_RE, source_id)
        and _matching(DIGEST_RE, raw["content_hash"])
        and _str(raw["url"])
        and _opt_str(raw["title"])
        and _timestamp(raw["retrieved_at"])
        and _str(raw["access"])
        and raw["access"] in _ACCESS
        and _str(raw["origin"])
        and raw["origin"] in _ORIGIN
        and _paper(raw["paper"])
        and _asset(raw["asset"])
        and _str(raw["text"])
        and _ranges(get("sections"), _SECTION_KEYS, "title")
        and _ranges(get("pages"), _PAGE_KEYS, None)
        and _opt_matching(DIGEST_RE, get("record_hash"))
        and _opt_matching(DIGEST_RE, get("merkle_root"))
        and (get("merkle_size") is None or _count(get("merkle_size")))
        and _surface(surface)
        and _opt_matching(SOURCE_ID_RE, get("supersedes"))
    ):
        return False
    if surface is not None and surface["complete"] and raw["access"] == Access.ABSTRACT.value:
        return False
    if get("supersedes") == source_id:
        return False
    return _identity(get("identity"), raw["paper"], raw["title"])


def _receipt(value: Any) -> bool:
    if value is None:
        return True
    if not _keys(value, _RECEIPT_KEYS, _RECEIPT_KEYS):
        return False
    redirects = value["redirects"]
    return (
        _str(value["requested_url"])
        and _opt_str(value["final_url"])
        and (redirects is None or (type(redirects) is list and all(_str(r) for r in redirects)))
        and (value["status"] is None or type(value["status"]) is int)
        and _opt_str(value["media_type"])
        and _opt_matching(HEX64_RE, value["raw_sha256"])
        and (value["raw_bytes"] is None or _count(value["raw_bytes"]))
        and _opt_str(value["extractor"])
    )


def _signature(value: Any) -> bool:
    return value is None or (
        _keys(value, _SIGNATURE_KEYS, _SIGNATURE_KEYS)
        and _str(value["alg"])
        and _matching(HEX64_RE, value["key_id"])
        and _str(value["run"])
        and _str(value["value"])
    )


def event_shape(raw: Any) -> bool:
    """True only when :class:`~publisher.kernel.models.Event` certainly accepts ``raw``, the
    parsed JSON of a log line; False for anything else (ask the model)."""
    if not _keys(raw, _EVENT_REQUIRED, _EVENT_KEYS):
        return False
    get = raw.get
    kind, source_id, detail = raw["type"], raw["source_id"], raw["detail"]
    if not (
        _count(raw["schema_version"], 1)
        and raw["schema_version"] == 1
        and _matching(_EVENT_ID_RE, raw["event_id"])
        and _str(kind)
        and kind in _EVENT_TYPES
        and _opt_matching(SOURCE_ID_RE, source_id)
        and _str(raw["url"])
        and _timestamp(raw["at"])
        and type(raw["fresh"]) is bool
        and _opt_matching(HEX64_RE, raw["sha256"])
        and _str(raw["actor"])
        and (detail is None or _bounded(detail, 0, 300))
        and _opt_matching(DIGEST_RE, get("prev"))
        and _opt_matching(DIGEST_RE, get("record_hash"))
        and _receipt(get("receipt"))
        and _signature(get("sig"))
        and _opt_matching(DIGEST_RE, get("merkle_root"))
        and (get("merkle_size") is None or _count(get("merkle_size")))
        and _surface(get("surface"))
        and _opt_matching(SOURCE_ID_RE, get("supersedes"))
    ):
        return False
    if kind == EventType.FETCH_FAILED.value:
        return source_id is None and raw["fresh"] is False
    return source_id is not None and raw["sha256"] is not None


def config_shape(raw: Any) -> bool:
    """True only when :class:`~publisher.kernel.models.RunConfig` certainly accepts ``raw``, a
    run's parsed ``config.json`` (fields beyond the schema are kept as they are, as the model
    keeps them); False for anything else (ask the model)."""
    if type(raw) is not dict or "schema_version" not in raw:
        return False
    gates = raw.get("gates", {})
    return (
        _count(raw["schema_version"], 1)
        and raw["schema_version"] == 1
        and _opt_str(raw.get("run_slug"))
        and (raw.get("created_at") is None or _timestamp(raw["created_at"]))
        and type(gates) is dict
        and type(gates.get("evidence_kernel", False)) is bool
        and _encodable_keys(raw)
    )


class GatesView:
    """The switches of ``config.json`` as the model's ``Gates`` holds them (extra switches kept)."""

    __slots__ = ("_extra", "evidence_kernel")

    def __init__(self, raw: dict[str, Any]) -> None:
        self.evidence_kernel: bool = raw.get("evidence_kernel", False)
        self._extra = {k: v for k, v in raw.items() if k != "evidence_kernel"}

    def model_dump(self, *, mode: str = "python") -> dict[str, Any]:
        """What the model's ``model_dump`` returns (the same in both modes): its field first, then the others."""
        return {"evidence_kernel": self.evidence_kernel, **self._extra}

    def __eq__(self, other: object) -> bool:
        return self.model_dump() == other.model_dump() if isinstance(other, GatesView) else NotImplemented

    __hash__ = None  # type: ignore[assignment]


_CONFIG_FIELDS = ("schema_version", "run_slug", "created_at", "gates")


class ConfigView:
    """A run's ``config.json`` as :class:`~publisher.kernel.models.RunConfig` holds it: the same
    fields (``gates`` a :class:`GatesView`), :meth:`extras` and the model's JSON dump, made only
    from a config :func:`config_shape` or the model accepted; fields beyond the schema are kept
    as they are, as the model keeps them."""

    __slots__ = ("_extra", "created_at", "gates", "run_slug", "schema_version")

    def __init__(self, raw: dict[str, Any]) -> None:
        self.schema_version: int = raw["schema_version"]
        self.run_slug: str | None = raw.get("run_slug")
        self.created_at: str | None = raw.get("created_at")
        self.gates = GatesView(raw.get("gates", {}))
        self._extra = {k: v for k, v in raw.items() if k not in _CONFIG_FIELDS}

    def extras(self) -> dict[str, Any]:
        """Fields beyond the schema (e.g. ``question``), shown but never required."""
        return dict(self._extra)

    def model_dump(self, *, mode: str = "python") -> dict[str, Any]:
        """What the model's ``model_dump`` returns (the same in both modes): the schema's fields
        in order (defaults filled in), then the others in the file's order."""
        return {
            "schema_version": self.schema_version,
            "run_slug": self.run_slug,
            "created_at": self.created_at,
            "gates": self.gates.model_dump(),
            **self._extra,
        }

    def __eq__(self, other: object) -> bool:
        """Equal to a view of the same config (the same values, extras included)."""
        return self.model_dump() == other.model_dump() if isinstance(other, ConfigView) else NotImplemented

    __hash__ = None  # type: ignore[assignment]


class SectionView:
    """A titled half-open range of a snapshot's text (the fields of the model's ``Section``)."""

    __slots__ = ("end", "start", "title")

    def __init__(self, title: str, start: int, end: int) -> None:
        self.title, self.start, self.end = title, start, end


class PageView:
    """A PDF page's half-open range of a snapshot's text (the fields of the model's ``Page``)."""

    __slots__ = ("end", "page", "start")

    def __init__(self, page: int, start: int, end: int) -> None:
        self.page, self.start, self.end = page, start, end


class SnapshotView:
    """A verified snapshot record as plain values, for the commands that read a text without
    loading the validation library: the text, its identity and its maps; the rest of the record
    (paper, asset, surface, identity) stays JSON in :attr:`record`. Plain slotted classes, not
    dataclasses: a dataclass compiles its methods when its module is imported, which a command
    that starts hundreds of times a session pays each time."""

    __slots__ = (
        "access",
        "content_hash",
        "origin",
        "pages",
        "record",
        "record_hash",
        "retrieved_at",
        "sections",
        "source_id",
        "supersedes",
        "text",
        "title",
        "url",
    )  # fmt: skip

    def __init__(self, record: dict[str, Any]) -> None:
        """The view of a record that :func:`snapshot_shape` or the model accepted."""
        sections, pages = record.get("sections"), record.get("pages")
        self.source_id: str = record["source_id"]
        self.url: str = record["url"]
        self.title: str | None = record["title"]
        self.content_hash: str = record["content_hash"]
        self.retrieved_at: str = record["retrieved_at"]
        self.access = Access(record["access"])
        self.origin = Origin(record["origin"])
        self.text: str = record["text"]
        self.sections: tuple[SectionView, ...] | None = (
            None if sections is None else tuple(SectionView(s["title"], s["start"], s["end"]) for s in sections)
        )
        self.pages: tuple[PageView, ...] | None = (
            None if pages is None else tuple(PageView(p["page"], p["start"], p["end"]) for p in pages)
        )
        self.supersedes: str | None = record.get("supersedes")
        self.record_hash: str | None = record.get("record_hash")
        self.record = record
