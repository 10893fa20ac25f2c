"""Agent records checked without the validation library, never more leniently than the models of
:mod:`.recordschema`.

``assemble`` and ``verify`` read every extraction and appraisal of a run, and loading the
validation library to do so costs more than the rest of a small run's check. :func:`record_shape`
answers True only for a record the model (``Extraction`` or ``Appraisal``) certainly accepts,
every field's type written out here, and False for anything else, including what it is unsure
of. A False is never a refusal: the reader then asks the model, which accepts or words each
problem, so what a record reads as is the model's in every case, only sooner in the usual one.
:func:`record_data` and :class:`SpanView` hold the values the model would hold for a record
:func:`record_shape` takes. Tests generate records and mutations of them and hold both sides to
it (``tests/test_recordshape.py``), and hold the field lists here to the models' own.

Types are exact (``type(v) is int`` refuses ``True`` and ``1.0``, as strict fields do); a number
field takes a float, or an integer small enough to be one exactly (the model stores it as one).
"""

from __future__ import annotations

from typing import Any, Literal

from ..kernel.shapes import _encodable, _encodable_keys, _opt_str

__all__ = [
    "SpanView",
    "record_shape",
    "record_data",
    "span_view",
    "SPAN_FIELDS",
    "OUTCOME_FIELDS",
    "DOMAIN_FIELDS",
    "EXTRACTION_FIELDS",
    "APPRAISAL_FIELDS",
    "OUTCOME_DATA",
    "DOMAIN_DATA",
    "EXTRACTION_DATA",
    "APPRAISAL_DATA",
    "NARRATIVE_FIELDS",
    "NUMERIC_OUTCOME_FIELDS",
]

SPAN_FIELDS = ("claim", "evidence_id", "source_id", "start", "end", "access", "text", "excerpt")
"""The fields of :class:`~publisher.kernel.models.Span`, in its order."""
OUTCOME_FIELDS = (
    "name", "timepoint", "effect_measure", "effect", "ci_low", "ci_high", "p_value", "direction", "spans",
)  # fmt: skip
"""The fields of ``Outcome``, in its order."""
DOMAIN_FIELDS = ("domain", "judgement", "rationale", "spans")
"""The fields of ``Domain``, in its order."""
_RECORD_FIELDS = ("schema_version", "pmid", "evidence_id")
EXTRACTION_FIELDS = (
    *_RECORD_FIELDS, "design", "n_total", "n_arms", "population", "intervention", "comparator", "outcomes",
    "funding", "coi", "limitations", "evidence_basis", "extractor_notes", "spans", "quotes",
)  # fmt: skip
"""The fields of ``Extraction``, in its order (its base's first)."""
APPRAISAL_FIELDS = (*_RECORD_FIELDS, "tool", "domains", "overall_judgement", "grade", "evidence_basis")
"""The fields of ``Appraisal``, in its order (its base's first)."""

OUTCOME_DATA = tuple(name for name in OUTCOME_FIELDS if name != "spans")
DOMAIN_DATA = tuple(name for name in DOMAIN_FIELDS if name != "spans")
EXTRACTION_DATA = tuple(name for name in EXTRACTION_FIELDS if name not in ("spans", "quotes", "outcomes"))
APPRAISAL_DATA = tuple(name for name in APPRAISAL_FIELDS if name != "domains")
"""What a record's ``data`` keeps of each: the schema fields less spans, the agent's quotes and,
at the top, the nested list (which the reader puts last)."""

NARRATIVE_FIELDS = (
    "design",
    "n_total",
    "n_arms",
    "population",
    "intervention",
    "comparator",
    "funding",
    "coi",
    "limitations",
)
"""Extraction fields that record-level spans back; empty spans are legal only when all are null."""

NUMERIC_OUTCOME_FIELDS = ("effect", "ci_low", "ci_high", "p_value")
"""Outcome fields whose non-null value makes the outcome owe a span."""

_TEXT_OUTCOME = ("name", "timepoint", "effect_measure")
_DIRECTIONS = frozenset(("favors_intervention", "favors_comparator", "null_effect", "unclear"))
_BASES = frozenset(("fulltext", "abstract_only"))
_TOOLS = frozenset(("RoB2", "ROBINS-I", "Newcastle-Ottawa", "AMSTAR-2", "none"))
_TEXT_EXTRACTION = (
    "design", "population", "intervention", "comparator", "funding", "coi", "limitations", "extractor_notes",
)  # fmt: skip
_SPAN_TEXT = ("claim", "evidence_id", "access", "text", "excerpt")

_EXACT_FLOAT = 2**53
"""An integer within this of zero is a float exactly, as the model stores it."""
_ID_BITS = 4000
"""An integer identifier (``pmid``) of fewer bits is written as a string without the interpreter's
digit limit; a longer one goes to the model."""


class SpanView:
    """A span as the model :class:`~publisher.kernel.models.Span` holds it, without the library:
    the same attribute names and values (unknown keys left out, as the model ignores them)."""

    __slots__ = SPAN_FIELDS

    def __init__(
        self,
        claim: str | None,
        evidence_id: str | None,
        source_id: str,
        start: int,
        end: int,
        access: str | None,
        text: str | None,
        excerpt: str | None,
    ) -> None:
        self.claim, self.evidence_id, self.source_id, self.start, self.end = claim, evidence_id, source_id, start, end
        self.access, self.text, self.excerpt = access, text, excerpt

    def __repr__(self) -> str:
        return "SpanView(" + ", ".join(f"{name}={getattr(self, name)!r}" for name in SPAN_FIELDS) + ")"


def span_view(raw: dict[str, Any]) -> SpanView:
    """The view of a span that :func:`record_shape` took as part of its record."""
    get = raw.get
    return SpanView(
        get("claim"), get("evidence_id"), raw["source_id"], raw["start"], raw["end"],
        get("access"), get("text"), get("excerpt"),
    )  # fmt: skip


def _opt_strs(get: Any, names: tuple[str, ...]) -> bool:
    """Each of the fields ``names`` (read with ``get``) null or a string."""
    for name in names:
        value = get(name)
        if value is not None and type(value) is not str:
            return False
    return True


def _number(value: Any) -> bool:
    """A strict float: a float, or an integer (never a bool) that is one exactly."""
    kind = type(value)
    return value is None or kind is float or (kind is int and -_EXACT_FLOAT <= value <= _EXACT_FLOAT)


def _spans(value: Any) -> bool:
    """None, or a list of span objects each with a string ``source_id``, integer offsets and
    optional strings (other keys are ignored by the model)."""
    if value is None:
        return True
    if type(value) is not list:
        return False
    for span in value:
        if type(span) is not dict:
            return False
        get = span.get
        if not (type(get("source_id")) is str and type(get("start")) is int and type(get("end")) is int):
            return False
        if not _opt_strs(get, _SPAN_TEXT):
            return False
    return True


def _plain_keys(value: dict[Any, Any]) -> bool:
    """An object's own keys strings without a lone surrogate: the model refuses an unknown field
    named with one (``string_unicode``), though it takes the field otherwise."""
    try:
        return _encodable("".join(value))
    except TypeError:  # a key that is not a string: the model decides
        return False


def _outcome(value: Any) -> bool:
    if type(value) is not dict or not _plain_keys(value):
        return False
    get = value.get
    direction = get("direction")
    return (
        _opt_strs(get, _TEXT_OUTCOME)
        and all(_number(get(name)) for name in NUMERIC_OUTCOME_FIELDS)
        and (direction is None or (type(direction) is str and direction in _DIRECTIONS))
        and _spans(get("spans"))
    )


def _domain(value: Any) -> bool:
    if type(value) is not dict or not _plain_keys(value):
        return False
    get = value.get
    return (
        _opt_str(get("domain")) and _opt_str(get("judgement")) and _opt_str(get("rationale")) and _spans(get("spans"))
    )


def _grade(value: Any) -> bool:
    """None, or an object whose keys, at any depth, are strings without a lone surrogate (the
    model's JSON dump spells a top key with one as U+FFFD per byte and fails on a deeper one)."""
    return value is None or (type(value) is dict and _encodable_keys(value))


def _listed(value: Any, check: Any) -> bool:
    """None, or a list each of whose items ``check`` takes."""
    return value is None or (type(value) is list and all(check(item) for item in value))


def _literal(value: Any, allowed: frozenset[str]) -> bool:
    return value is None or (type(value) is str and value in allowed)


def _head(get: Any) -> bool:
    """What every record starts with: an integer version, an id-like ``pmid`` and a string ``evidence_id``."""
    version, pmid = get("schema_version"), get("pmid")
    return (
        type(get("evidence_id")) is str
        and (version is None or type(version) is int)
        and (pmid is None or type(pmid) is str or (type(pmid) is int and pmid.bit_length() < _ID_BITS))
    )


def record_shape(kind: Literal["extraction", "appraisal"], raw: Any) -> bool:
    """True only when the record model of ``kind`` (``Extraction`` or ``Appraisal``) certainly
    accepts ``raw``, a parsed JSON value; False for anything else (ask the model: it accepts or
    says why)."""
    if type(raw) is not dict:
        return False
    get = raw.get
    if not (_head(get) and _plain_keys(raw)):
        return False
    if kind == "extraction":
        n_total, n_arms = get("n_total"), get("n_arms")
        return (
            _opt_strs(get, _TEXT_EXTRACTION)
            and (n_total is None or type(n_total) is int)
            and (n_arms is None or (type(n_arms) is list and all(type(n) is int for n in n_arms)))
            and _literal(get("evidence_basis"), _BASES)
            and _listed(get("outcomes"), _outcome)
            and _spans(get("spans"))
            and (get("quotes") is None or type(get("quotes")) is list)
        )
    if kind == "appraisal":
        return (
            _literal(get("tool"), _TOOLS)
            and _listed(get("domains"), _domain)
            and _opt_str(get("overall_judgement"))
            and _grade(get("grade"))
            and _literal(get("evidence_basis"), _BASES)
        )
    return False


def _float(value: Any) -> float | None:
    return value if value is None or type(value) is float else float(value)


def record_data(kind: Literal["extraction", "appraisal"], raw: dict[str, Any]) -> dict[str, Any]:
    """A record's ``data`` as the model path gives it, for a record :func:`record_shape` took:
    the top fields in schema order (missing ones null, an integer ``pmid`` as its string), then
    ``outcomes`` (``domains``) with each entry's fields likewise (an integer number as a float).

    Values are the parsed record's own (lists and objects not copied): the reader owns them."""
    get = raw.get
    pmid = get("pmid")
    if kind == "extraction":
        out = {name: get(name) for name in EXTRACTION_DATA}
        out["outcomes"] = [
            {
                "name": o.get("name"),
                "timepoint": o.get("timepoint"),
                "effect_measure": o.get("effect_measure"),
                "effect": _float(o.get("effect")),
                "ci_low": _float(o.get("ci_low")),
                "ci_high": _float(o.get("ci_high")),
                "p_value": _float(o.get("p_value")),
                "direction": o.get("direction"),
            }
            for o in get("outcomes") or ()
        ]
    else:
        out = {name: get(name) for name in APPRAISAL_DATA}
        out["domains"] = [
            {"domain": d.get("domain"), "judgement": d.get("judgement"), "rationale": d.get("rationale")}
            for d in get("domains") or ()
        ]
    if type(pmid) is int:
        out["pmid"] = str(pmid)
    return out
