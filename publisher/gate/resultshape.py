"""A stored ``outputs/result.json`` checked and held without the validation library, never more
leniently than its model (:class:`~publisher.gate.result.Result`).

``publisher verify`` and the wiki check read every run's stored result, and loading the
validation library and building the result's thirteen models costs more than comparing the
result with the run's assembly. :func:`result_shape` answers True only for a value the model
certainly accepts (every field's type, range, pattern and literal, written out here) and False
for anything else, including what it is unsure of. A False is never a refusal: the caller asks
the model, which accepts or words the refusal, so what a read concludes is the model's in every
case, only sooner in the usual one. Tests mutate written results and hold both sides to it
(``tests/test_resultshape.py``).

The views (:class:`ResultView` and the classes it holds) hold exactly what the model holds for
the same JSON: enums as their members (:class:`~publisher.kernel.vocab.Access`,
:class:`~publisher.kernel.reasons.Reason`), arrays as tuples where the model keeps tuples,
``paper`` and ``asset`` as :mod:`publisher.kernel.views`' values, and a ``model_dump`` that
returns what the model's returns, key order included. The free-form objects (``config``, an
artifact's ``data``) are the JSON's own, not copies: nothing changes them. A view never validates: it is made only
from JSON that :func:`result_shape` or the model accepted
(:func:`~publisher.gate.checks.assembler.valid_result` asks the model when the check is unsure). They are
plain slotted classes: a dataclass compiles its methods when its module is imported, which every
``verify`` would pay.
"""

from __future__ import annotations

import sys
from enum import Enum
from typing import Any, Literal

from ..kernel.canonical import DIGEST_RE, HEX64_RE, SOURCE_ID_RE
from ..kernel.reasons import Reason
from ..kernel.shapes import (
    _asset,
    _encodable,
    _encodable_keys,
    _keys,
    _matching,
    _opt_matching,
    _opt_str,
    _paper,
    _str,
    _timestamp,
)
from ..kernel.views import AssetView, DumpMode, PaperView
from ..kernel.vocab import Access
from ..runs import SLUG_RE

__all__ = [
    "result_shape",
    "accepted_shape",
    "result_view",
    "accepted_views",
    "ResultView",
    "ResultGateView",
    "ResultCountsView",
    "ResultClaimView",
    "ResultQuoteView",
    "AcceptedArtifactView",
    "UnresolvedEntryView",
    "WarningEntryView",
    "DiagnosticsView",
    "ResultSourceView",
    "LogRefView",
    "ResultPolicyView",
    "Kind",
]

Kind = Literal["extraction", "appraisal", "report_claim", "synthesis_claim"]
"""What an accepted or unresolved artifact is."""

_ACCESS_OF = {a.value: a for a in Access}
_REASON_OF = {r.value: r for r in Reason}
"""Each member by its value: a look-up costs a fraction of calling the enum (a result holds an
access per claim)."""
_ACCESS = frozenset(_ACCESS_OF)
_REASONS = frozenset(_REASON_OF)
_KINDS = frozenset(("extraction", "appraisal", "report_claim", "synthesis_claim"))
_VERDICTS = frozenset(("pass", "fail", "warn"))
_FLAGS = frozenset(("--gate", "gates.evidence_kernel"))
_STATUSES = frozenset(("ok", "UNKNOWN_SOURCE", "SNAPSHOT_HASH_MISMATCH"))
_DETAIL_MOST = 300
"""The longest ``detail`` of a finding or a warning, in code points (the model's ``max_length``)."""

_GATE_FIELDS = ("enabled", "verdict", "flag")
_COUNTS_FIELDS = ("artifacts_seen", "accepted", "unresolved", "spans_checked", "sources")
_CLAIM_FIELDS = ("claim", "field", "source_id", "start", "end", "access", "excerpt", "section", "page")
_QUOTE_FIELDS = ("text", "source_id", "start", "end", "url", "fresh", "section", "page")
_ACCEPTED_FIELDS = (
    "artifact_id",
    "kind",
    "evidence_id",
    "record",
    "source_ids",
    "paper",
    "url",
    "access",
    "fresh",
    "claims",
    "quotes",
    "data",
)
_UNRESOLVED_FIELDS = (
    "artifact_id",
    "kind",
    "evidence_id",
    "field",
    "reason_code",
    "detail",
    "source_id",
    "record",
)
_WARNING_FIELDS = ("artifact_id", "record", "field", "detail")
_DIAGNOSTICS_FIELDS = ("unresolved", "counts_by_reason", "warnings")
_SOURCE_FIELDS = (
    "source_id",
    "status",
    "url",
    "title",
    "retrieved_at",
    "access",
    "origin",
    "paper",
    "asset",
    "content_hash",
    "record_hash",
    "sealed",
    "chars",
    "fresh",
    "fresh_event_id",
    "fresh_detail",
)
_LOG_FIELDS = ("events", "head")
_POLICY_FIELDS = ("trusted_keys",)
_RESULT_FIELDS = (
    "schema_version",
    "run_slug",
    "generated_at",
    "config",
    "gate",
    "counts",
    "accepted",
    "diagnostics",
    "sources",
    "log",
    "inputs",
    "inputs_hash",
    "policy",
)
"""Each model's fields in its order (``model_dump``'s key order; a test holds them to it)."""

_RESULT_KEYS = frozenset(_RESULT_FIELDS)
_RESULT_REQUIRED = _RESULT_KEYS - {"inputs", "policy"}
"""Every field of every model is required but the result's ``inputs`` and ``policy`` (None when absent)."""


# --- the check -------------------------------------------------------------------------------


def _int(value: Any) -> bool:
    """An integer, never a bool (strict mode)."""
    return type(value) is int


def _opt_int(value: Any) -> bool:
    return value is None or type(value) is int


def _count(value: Any) -> bool:
    """An integer of at least 0 (never a bool)."""
    return type(value) is int and value >= 0


def _bool(value: Any) -> bool:
    return type(value) is bool


def _one_of(choices: frozenset[str], value: Any) -> bool:
    """A string among ``choices`` (a literal, or an enum's value, which lax mode takes)."""
    return type(value) is str and value in choices


def _detail(value: Any) -> bool:
    """A string of at most ``_DETAIL_MOST`` code points, without a lone surrogate (the model's
    ``max_length`` refuses one)."""
    return type(value) is str and len(value) <= _DETAIL_MOST and _encodable(value)


def _array(value: Any) -> bool:
    return type(value) is list


def _sized(value: Any, fields: tuple[str, ...]) -> bool:
    """A JSON object of as many keys as ``fields``. Each check then asks for every field, so the
    object holds exactly them or a ``KeyError`` says it does not (:func:`result_shape` catches
    it: not taken); a key count is cheaper than comparing key sets, item by item."""
    return type(value) is dict and len(value) == len(fields)


def _object(value: Any) -> bool:
    """A JSON object with string keys (the model's ``dict[str, Any]``), none at any depth holding a
    lone surrogate (the model's JSON dump spells a top one otherwise and fails on a deeper one)."""
    return type(value) is dict and _encodable_keys(value)


def _gate(value: Any) -> bool:
    return (
        _sized(value, _GATE_FIELDS)
        and _bool(value["enabled"])
        and _one_of(_VERDICTS, value["verdict"])
        and (value["flag"] is None or _one_of(_FLAGS, value["flag"]))
    )


def _counts(value: Any) -> bool:
    return _sized(value, _COUNTS_FIELDS) and all(_count(value[name]) for name in _COUNTS_FIELDS)


def _source_id(value: Any, seen: set[str]) -> bool:
    """A source id (``src-`` and 64 lowercase hex digits); ``seen`` holds those already matched
    (an artifact's claims and quotes name the same few sources again and again)."""
    if type(value) is not str:
        return False
    if value in seen:
        return True
    if SOURCE_ID_RE.fullmatch(value) is None:
        return False
    seen.add(value)
    return True


def _claims(claims: Any, seen: set[str]) -> bool:
    """An accepted artifact's claims, written out in one loop (a result holds many); their keys
    as :func:`_sized` checks them."""
    if type(claims) is not list:
        return False
    count = len(_CLAIM_FIELDS)
    for claim in claims:
        if type(claim) is not dict or len(claim) != count:  # see _sized
            return False
        said, start, end, access = claim["claim"], claim["start"], claim["end"], claim["access"]
        source_id, section, page = claim["source_id"], claim["section"], claim["page"]
        if not (
            (said is None or type(said) is str)
            and type(claim["field"]) is str
            and type(start) is int
            and start >= 0
            and type(end) is int
            and end >= 0
            and type(access) is str
            and access in _ACCESS
            and type(claim["excerpt"]) is str
            and (section is None or type(section) is str)
            and (page is None or type(page) is int)
            and type(source_id) is str
            and (source_id in seen or _source_id(source_id, seen))
        ):
            return False
    return True


def _quotes(quotes: Any, seen: set[str]) -> bool:
    """An accepted artifact's quotes, one per claim (checked as :func:`_claims` checks claims)."""
    if type(quotes) is not list:
        return False
    count = len(_QUOTE_FIELDS)
    for quote in quotes:
        if type(quote) is not dict or len(quote) != count:
            return False
        start, end, url, section, page = quote["start"], quote["end"], quote["url"], quote["section"], quote["page"]
        source_id = quote["source_id"]
        if not (
            type(quote["text"]) is str
            and type(start) is int
            and start >= 0
            and type(end) is int
            and end >= 0
            and (url is None or type(url) is str)
            and type(quote["fresh"]) is bool
            and (section is None or type(section) is str)
            and (page is None or type(page) is int)
            and type(source_id) is str
            and (source_id in seen or _source_id(source_id, seen))
        ):
            return False
    return True


def _accepted(value: Any, seen: set[str]) -> bool:
    if not _sized(value, _ACCEPTED_FIELDS):
        return False
    source_ids, access, data = value["source_ids"], value["access"], value["data"]
    return (
        _str(value["artifact_id"])
        and _one_of(_KINDS, value["kind"])
        and _opt_str(value["evidence_id"])
        and _opt_str(value["record"])
        and type(source_ids) is list
        and all(_source_id(s, seen) for s in source_ids)
        and _paper(value["paper"])
        and _opt_str(value["url"])
        and (access is None or _one_of(_ACCESS, access))
        and type(value["fresh"]) is bool
        and _claims(value["claims"], seen)
        and _quotes(value["quotes"], seen)
        and type(data) is dict
        and _encodable_keys(data)
    )


def _unresolved(value: Any) -> bool:
    return (
        _sized(value, _UNRESOLVED_FIELDS)
        and _str(value["artifact_id"])
        and _one_of(_KINDS, value["kind"])
        and _opt_str(value["evidence_id"])
        and _str(value["field"])
        and _one_of(_REASONS, value["reason_code"])
        and _detail(value["detail"])
        and _opt_str(value["source_id"])
        and _opt_str(value["record"])
    )


def _warning(value: Any) -> bool:
    return (
        _sized(value, _WARNING_FIELDS)
        and _opt_str(value["artifact_id"])
        and _opt_str(value["record"])
        and _str(value["field"])
        and _detail(value["detail"])
    )


def _diagnostics(value: Any) -> bool:
    if not _sized(value, _DIAGNOSTICS_FIELDS):
        return False
    unresolved, by_reason, warnings = value["unresolved"], value["counts_by_reason"], value["warnings"]
    return (
        _array(unresolved)
        and all(_unresolved(u) for u in unresolved)
        and type(by_reason) is dict
        and all(_one_of(_REASONS, k) and _count(n) and n >= 1 for k, n in by_reason.items())
        and _array(warnings)
        and all(_warning(w) for w in warnings)
    )


def _source(value: Any) -> bool:
    if not _sized(value, _SOURCE_FIELDS):
        return False
    url, title, retrieved_at, access = value["url"], value["title"], value["retrieved_at"], value["access"]
    origin, content_hash, record_hash = value["origin"], value["content_hash"], value["record_hash"]
    chars, event_id, status = value["chars"], value["fresh_event_id"], value["status"]
    return (
        type(value["source_id"]) is str
        and type(status) is str
        and status in _STATUSES
        and (url is None or type(url) is str)
        and (title is None or type(title) is str)
        and (retrieved_at is None or _timestamp(retrieved_at))
        and (access is None or (type(access) is str and access in _ACCESS))
        and (origin is None or type(origin) is str)
        and _paper(value["paper"])
        and _asset(value["asset"])
        and (content_hash is None or _matching(DIGEST_RE, content_hash))
        and (record_hash is None or _matching(DIGEST_RE, record_hash))
        and type(value["sealed"]) is bool
        and (chars is None or type(chars) is int)
        and type(value["fresh"]) is bool
        and (event_id is None or type(event_id) is str)
        and type(value["fresh_detail"]) is str
    )


def _log(value: Any) -> bool:
    return _sized(value, _LOG_FIELDS) and _count(value["events"]) and _opt_matching(DIGEST_RE, value["head"])


def _policy(value: Any) -> bool:
    if value is None:
        return True
    if not _sized(value, _POLICY_FIELDS):
        return False
    keys = value["trusted_keys"]
    return _array(keys) and all(_matching(HEX64_RE, k) for k in keys)


def _inputs(value: Any) -> bool:
    """None, or a list of lists (no object key in them holding a lone surrogate: the model's JSON
    dump fails on one)."""
    return value is None or (_array(value) and all(_array(entry) for entry in value) and _encodable_keys(value))


def result_shape(raw: Any) -> bool:
    """True only when :class:`~publisher.gate.result.Result` certainly accepts ``raw``, the parsed
    JSON of a stored result (or an assembly's result, which holds JSON values only); False for
    anything else (ask the model: it accepts or says why)."""
    if not _keys(raw, _RESULT_REQUIRED, _RESULT_KEYS):
        return False
    try:
        return _result(raw)
    except KeyError:  # an object without a field its key count promised (see _sized)
        return False


def accepted_shape(raw: Any) -> bool:
    """True only when the model certainly accepts ``raw`` as a result's ``accepted`` on its own
    (a JSON array of accepted artifacts); False for anything else (ask the model)."""
    seen: set[str] = set()
    try:
        return type(raw) is list and all(_accepted(a, seen) for a in raw)
    except KeyError:  # see _sized
        return False


def _result(raw: dict[str, Any]) -> bool:
    """:func:`result_shape` of an object holding every required key and no unknown one."""
    get = raw.get
    accepted, sources = raw["accepted"], raw["sources"]
    seen: set[str] = set()
    return (
        _int(raw["schema_version"])
        and raw["schema_version"] == 1
        and _matching(SLUG_RE, raw["run_slug"])
        and _timestamp(raw["generated_at"])
        and _object(raw["config"])
        and _gate(raw["gate"])
        and _counts(raw["counts"])
        and _array(accepted)
        and all(_accepted(a, seen) for a in accepted)
        and _diagnostics(raw["diagnostics"])
        and _array(sources)
        and all(_source(s) for s in sources)
        and _log(raw["log"])
        and _inputs(get("inputs"))
        and _matching(DIGEST_RE, raw["inputs_hash"])
        and _policy(get("policy"))
    )


# --- the views -------------------------------------------------------------------------------


def _dumped(value: Any, mode: DumpMode) -> Any:
    """A field's value as the model's ``model_dump`` gives it: nested values dumped alike, enums
    as their values and tuples as lists in ``json`` mode, containers copied."""
    dump = getattr(value, "model_dump", None)
    if dump is not None:
        return dump(mode=mode)
    kind = type(value)
    if kind is tuple:
        items = [_dumped(v, mode) for v in value]
        return items if mode == "json" else tuple(items)
    if kind is list:
        return [_dumped(v, mode) for v in value]
    if kind is dict:
        return {_dumped(k, mode): _dumped(v, mode) for k, v in value.items()}
    if mode == "json" and isinstance(value, Enum):
        return value.value
    return value


class _View:
    """What every view of a result's part does: dump its fields in the model's order, and compare
    equal to a view or a model (:mod:`publisher.gate.result`) of the same part holding the same
    values."""

    __slots__ = ()
    _fields: tuple[str, ...] = ()
    _model = ""
    """The name of the model in :mod:`publisher.gate.result` this view holds the values of."""

    def model_dump(self, *, mode: DumpMode = "python") -> dict[str, Any]:
        """What the model's ``model_dump`` returns (its fields in order; enums as values and
        tuples as lists in ``json`` mode)."""
        return {name: _dumped(getattr(self, name), mode) for name in self._fields}

    def __eq__(self, other: object) -> bool:
        if isinstance(other, _View) and other.__class__ is self.__class__:
            return self.model_dump(mode="json") == other.model_dump(mode="json")
        models = sys.modules.get("publisher.gate.result")  # a model exists only once its module is loaded
        if models is not None and isinstance(other, getattr(models, self._model)):
            return bool(self.model_dump(mode="json") == other.model_dump(mode="json"))
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        shown = ", ".join(f"{name}={getattr(self, name)!r}" for name in self._fields)
        return f"{self.__class__.__qualname__}({shown})"


class ResultGateView(_View):
    """Whether the gate was on, what it decided, and what turned it on (the model's ``ResultGate``)."""

    __slots__ = _GATE_FIELDS
    _fields = _GATE_FIELDS
    _model = "ResultGate"

    def __init__(self, raw: dict[str, Any]) -> None:
        self.enabled: bool = raw["enabled"]
        self.verdict: Literal["pass", "fail", "warn"] = raw["verdict"]
        self.flag: Literal["--gate", "gates.evidence_kernel"] | None = raw["flag"]


class ResultCountsView(_View):
    """The result's totals (the model's ``ResultCounts``)."""

    __slots__ = _COUNTS_FIELDS
    _fields = _COUNTS_FIELDS
    _model = "ResultCounts"

    def __init__(self, raw: dict[str, Any]) -> None:
        self.artifacts_seen: int = raw["artifacts_seen"]
        self.accepted: int = raw["accepted"]
        self.unresolved: int = raw["unresolved"]
        self.spans_checked: int = raw["spans_checked"]
        self.sources: int = raw["sources"]


class ResultClaimView(_View):
    """One verified span of an accepted artifact (the model's ``ResultClaim``)."""

    __slots__ = _CLAIM_FIELDS
    _fields = _CLAIM_FIELDS
    _model = "ResultClaim"

    def __init__(self, raw: dict[str, Any]) -> None:
        self.claim: str | None = raw["claim"]
        self.field: str = raw["field"]
        self.source_id: str = raw["source_id"]
        self.start: int = raw["start"]
        self.end: int = raw["end"]
        self.access = _ACCESS_OF[raw["access"]]
        self.excerpt: str = raw["excerpt"]
        self.section: str | None = raw["section"]
        self.page: int | None = raw["page"]


class ResultQuoteView(_View):
    """Upstream's view of one claim (the model's ``ResultQuote``)."""

    __slots__ = _QUOTE_FIELDS
    _fields = _QUOTE_FIELDS
    _model = "ResultQuote"

    def __init__(self, raw: dict[str, Any]) -> None:
        self.text: str = raw["text"]
        self.source_id: str = raw["source_id"]
        self.start: int = raw["start"]
        self.end: int = raw["end"]
        self.url: str | None = raw["url"]
        self.fresh: bool = raw["fresh"]
        self.section: str | None = raw["section"]
        self.page: int | None = raw["page"]


class AcceptedArtifactView(_View):
    """An artifact that survived every check (the model's ``AcceptedArtifact``)."""

    __slots__ = _ACCEPTED_FIELDS
    _fields = _ACCEPTED_FIELDS
    _model = "AcceptedArtifact"

    def __init__(self, raw: dict[str, Any]) -> None:
        paper, access = raw["paper"], raw["access"]
        self.artifact_id: str = raw["artifact_id"]
        self.kind: Kind = raw["kind"]
        self.evidence_id: str | None = raw["evidence_id"]
        self.record: str | None = raw["record"]
        self.source_ids: tuple[str, ...] = tuple(raw["source_ids"])
        self.paper = None if paper is None else PaperView.of(paper)
        self.url: str | None = raw["url"]
        self.access = None if access is None else _ACCESS_OF[access]
        self.fresh: bool = raw["fresh"]
        self.claims = tuple(ResultClaimView(c) for c in raw["claims"])
        self.quotes = tuple(ResultQuoteView(q) for q in raw["quotes"])
        self.data: dict[str, Any] = raw["data"]


class UnresolvedEntryView(_View):
    """One finding against one artifact (the model's ``UnresolvedEntry``)."""

    __slots__ = _UNRESOLVED_FIELDS
    _fields = _UNRESOLVED_FIELDS
    _model = "UnresolvedEntry"

    def __init__(self, raw: dict[str, Any]) -> None:
        self.artifact_id: str = raw["artifact_id"]
        self.kind: Kind = raw["kind"]
        self.evidence_id: str | None = raw["evidence_id"]
        self.field: str = raw["field"]
        self.reason_code = _REASON_OF[raw["reason_code"]]
        self.detail: str = raw["detail"]
        self.source_id: str | None = raw["source_id"]
        self.record: str | None = raw["record"]


class WarningEntryView(_View):
    """Something ignored on purpose (the model's ``WarningEntry``)."""

    __slots__ = _WARNING_FIELDS
    _fields = _WARNING_FIELDS
    _model = "WarningEntry"

    def __init__(self, raw: dict[str, Any]) -> None:
        self.artifact_id: str | None = raw["artifact_id"]
        self.record: str | None = raw["record"]
        self.field: str = raw["field"]
        self.detail: str = raw["detail"]


class DiagnosticsView(_View):
    """Every finding, totals by reason code, and the warnings (the model's ``Diagnostics``)."""

    __slots__ = _DIAGNOSTICS_FIELDS
    _fields = _DIAGNOSTICS_FIELDS
    _model = "Diagnostics"

    def __init__(self, raw: dict[str, Any]) -> None:
        self.unresolved = tuple(UnresolvedEntryView(u) for u in raw["unresolved"])
        self.counts_by_reason = {_REASON_OF[k]: n for k, n in raw["counts_by_reason"].items()}
        self.warnings = tuple(WarningEntryView(w) for w in raw["warnings"])


class ResultSourceView(_View):
    """Metadata of one referenced snapshot (the model's ``ResultSource``)."""

    __slots__ = _SOURCE_FIELDS
    _fields = _SOURCE_FIELDS
    _model = "ResultSource"

    def __init__(self, raw: dict[str, Any]) -> None:
        access, paper, asset = raw["access"], raw["paper"], raw["asset"]
        self.source_id: str = raw["source_id"]
        self.status: Literal["ok", "UNKNOWN_SOURCE", "SNAPSHOT_HASH_MISMATCH"] = raw["status"]
        self.url: str | None = raw["url"]
        self.title: str | None = raw["title"]
        self.retrieved_at: str | None = raw["retrieved_at"]
        self.access = None if access is None else _ACCESS_OF[access]
        self.origin: str | None = raw["origin"]
        self.paper = None if paper is None else PaperView.of(paper)
        self.asset = None if asset is None else AssetView.of(asset)
        self.content_hash: str | None = raw["content_hash"]
        self.record_hash: str | None = raw["record_hash"]
        self.sealed: bool = raw["sealed"]
        self.chars: int | None = raw["chars"]
        self.fresh: bool = raw["fresh"]
        self.fresh_event_id: str | None = raw["fresh_event_id"]
        self.fresh_detail: str = raw["fresh_detail"]


class LogRefView(_View):
    """How much of the event log the assembly read (the model's ``LogRef``)."""

    __slots__ = _LOG_FIELDS
    _fields = _LOG_FIELDS
    _model = "LogRef"

    def __init__(self, raw: dict[str, Any]) -> None:
        self.events: int = raw["events"]
        self.head: str | None = raw["head"]


class ResultPolicyView(_View):
    """The trusted key ids the result was assembled under (the model's ``ResultPolicy``)."""

    __slots__ = _POLICY_FIELDS
    _fields = _POLICY_FIELDS
    _model = "ResultPolicy"

    def __init__(self, raw: dict[str, Any]) -> None:
        self.trusted_keys: tuple[str, ...] = tuple(raw["trusted_keys"])


class ResultView(_View):
    """A stored ``outputs/result.json`` as :class:`~publisher.gate.result.Result` holds it."""

    __slots__ = _RESULT_FIELDS
    _fields = _RESULT_FIELDS
    _model = "Result"

    def __init__(self, raw: dict[str, Any]) -> None:
        """The view of a result that :func:`result_shape` or the model accepted (parsed JSON)."""
        get = raw.get
        inputs, policy = get("inputs"), get("policy")
        self.schema_version: int = raw["schema_version"]
        self.run_slug: str = raw["run_slug"]
        self.generated_at: str = raw["generated_at"]
        self.config: dict[str, Any] = raw["config"]
        self.gate = ResultGateView(raw["gate"])
        self.counts = ResultCountsView(raw["counts"])
        self.accepted = tuple(AcceptedArtifactView(a) for a in raw["accepted"])
        self.diagnostics = DiagnosticsView(raw["diagnostics"])
        self.sources = tuple(ResultSourceView(s) for s in raw["sources"])
        self.log = LogRefView(raw["log"])
        self.inputs: list[list[Any]] | None = None if inputs is None else [list(entry) for entry in inputs]
        self.inputs_hash: str = raw["inputs_hash"]
        self.policy = None if policy is None else ResultPolicyView(policy)


def result_view(raw: Any) -> ResultView:
    """The view of a result (parsed JSON, or an assembly's result) that must be valid: taken by
    :func:`result_shape`, else validated by the model, which raises its ``ValidationError`` for
    one that is not (the validation library is loaded only then)."""
    if result_shape(raw):
        return ResultView(raw)
    from .result import Result  # only for a result the hand check is unsure of

    return ResultView(Result.model_validate(raw).model_dump(mode="json"))


def accepted_views(raw: Any) -> tuple[AcceptedArtifactView, ...]:
    """The views of a result's ``accepted`` on its own (parsed JSON), validated as the whole result
    validates it: by :func:`accepted_shape`, else by the model, which raises for what it refuses."""
    if accepted_shape(raw):
        return tuple(AcceptedArtifactView(entry) for entry in raw)
    from pydantic import TypeAdapter

    from .result import AcceptedArtifact  # only for artifacts the hand check is unsure of

    models = TypeAdapter(tuple[AcceptedArtifact, ...]).validate_python(raw)
    return tuple(AcceptedArtifactView(model.model_dump(mode="json")) for model in models)
