"""The agent record schema (CONTRACT sections 4-6): extractions and appraisals as agents write them.

The models are lenient on purpose (:mod:`.records` reads them): a missing optional field is null
and a field nobody defined is allowed (the reader lists it as a warning); only a wrong type, a
missing ``evidence_id`` or a span without ``source_id``/``start``/``end`` fails. ``publisher
schema extraction|appraisal`` prints these models' JSON Schema.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, Strict, StrictInt, StrictStr

from ..kernel.models import Span
from .recordshape import NARRATIVE_FIELDS, NUMERIC_OUTCOME_FIELDS

__all__ = [
    "Outcome",
    "Extraction",
    "Domain",
    "Appraisal",
    "NARRATIVE_FIELDS",
    "NUMERIC_OUTCOME_FIELDS",
]

_AGENT = ConfigDict(frozen=True, extra="allow", defer_build=True)


def _int_to_str(value: Any) -> Any:
    """Upstream writers sometimes store a PMID as a number; it is an identifier either way."""
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    return value


Text = StrictStr | None
Number = Annotated[float, Strict()] | None
IdLike = Annotated[StrictStr | None, BeforeValidator(_int_to_str)]
Spans = tuple[Span, ...] | None


class Outcome(BaseModel):
    """One outcome of an extraction; a number in it must be backed by a span."""

    model_config = _AGENT
    name: Text = None
    timepoint: Text = None
    effect_measure: Text = None
    effect: Number = None
    ci_low: Number = None
    ci_high: Number = None
    p_value: Number = None
    direction: Literal["favors_intervention", "favors_comparator", "null_effect", "unclear"] | None = None
    spans: Spans = None


class _Record(BaseModel):
    """What every agent record starts with: its version and the paper it is about."""

    model_config = _AGENT
    schema_version: StrictInt | None = None
    pmid: IdLike = None
    evidence_id: StrictStr


class Extraction(_Record):
    """``workspace/extractions/<name>.json`` as an agent writes it (upstream ``schema_version`` 1)."""

    design: Text = None
    n_total: StrictInt | None = None
    n_arms: tuple[StrictInt, ...] | None = None
    population: Text = None
    intervention: Text = None
    comparator: Text = None
    outcomes: tuple[Outcome, ...] | None = None
    funding: Text = None
    coi: Text = None
    limitations: Text = None
    evidence_basis: Literal["fulltext", "abstract_only"] | None = None
    extractor_notes: Text = None
    spans: Spans = None
    quotes: list[Any] | None = Field(default=None, description="derived by the assembler; agent content is discarded")


class Domain(BaseModel):
    """One appraisal domain; a judgement other than ``unclear`` must be backed by a span."""

    model_config = _AGENT
    domain: Text = None
    judgement: Text = None
    rationale: Text = None
    spans: Spans = None


class Appraisal(_Record):
    """``workspace/appraisals/<name>.json`` as an agent writes it (no ``quotes`` field)."""

    tool: Literal["RoB2", "ROBINS-I", "Newcastle-Ottawa", "AMSTAR-2", "none"] | None = None
    domains: tuple[Domain, ...] | None = None
    overall_judgement: Text = None
    grade: dict[str, Any] | None = None
    evidence_basis: Literal["fulltext", "abstract_only"] | None = None
