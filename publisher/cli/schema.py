"""``publisher schema``: what each record is and where it lives, its JSON Schema, or a complete example."""

from __future__ import annotations

import argparse
import importlib
import json
import sys
from typing import Any

from ..kernel.errors import UsageError
from .examples import EXAMPLES, example

_MODELS = {
    "snapshot": ("publisher.kernel.models", "Snapshot"),
    "event": ("publisher.kernel.models", "Event"),
    "span": ("publisher.kernel.models", "Span"),
    "config": ("publisher.kernel.models", "RunConfig"),
    "extraction": ("publisher.gate.recordschema", "Extraction"),
    "appraisal": ("publisher.gate.recordschema", "Appraisal"),
    "result": ("publisher.gate.result", "Result"),
    "concept": ("publisher.wiki.concepts", "ConceptFrontMatter"),
    "claim": ("publisher.wiki.concepts", "ConceptClaim"),
    "assessment": ("publisher.wiki.claims.log", "Assessment"),
    "review": ("publisher.wiki.claims.records", "ReviewRecord"),
    "missingness": ("publisher.wiki.claims.records", "MissingnessRecord"),
}

_SUMMARY = """\
The records of an evidence wiki. An agent writes only extractions, appraisals and the report;
everything else is written by the commands named.

  config      runs/<run>/config.json                   run init (--slug, --question, --gate)
  snapshot    runs/<run>/sources/src-<64 hex>.json     source fetch | register | local; write-once
  event       runs/<run>/events.jsonl, one a line      every acquisition and read; hash-chained
  span        inside extractions and appraisals        claim, source_id, start, end (code points)
  extraction  runs/<run>/workspace/extractions/*.json  the agent: a study's design, arms, outcomes
  appraisal   runs/<run>/workspace/appraisals/*.json   the agent: risk of bias, domain by domain
  report      runs/<run>/outputs/report.md             the agent: Markdown, footnotes src-…#start-end
  result      runs/<run>/outputs/result.json           assemble
  concept     concepts/<slug>.md (YAML front matter)   you, then promote
  claim       claims[] in a concept's front matter     assess (an admitted proposal; see docs/claims.md)
  assessment  assessments.jsonl, one a line            assess: every attempt, admitted or rejected; chained
  review      runs/<run>/reviews/rev-<64 hex>.json     review: the tool's search for a claim's terms
  missingness runs/<run>/missingness/mis-<64 hex>.json missing: why a claim cannot be evaluated

Evidence ids: pmid:N, doi:X, pmcid:PMCN (checked against the snapshot's paper ids), or
web:<slug> for sources that are not literature.

  publisher schema NAME            the JSON Schema of one record (all of them: --all)
  publisher schema --example NAME  a complete, valid example: {examples}
"""


def _schema(name: str) -> dict[str, Any]:
    module, attr = _MODELS[name]
    model = getattr(importlib.import_module(module), attr)
    schema: dict[str, Any] = model.model_json_schema()
    return schema


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Add ``schema``."""
    p = sub.add_parser("schema", help="what each record is, its JSON Schema, or a complete example")
    p.add_argument("name", nargs="?", choices=sorted(_MODELS), help="print the JSON Schema of one record type")
    p.add_argument("--all", action="store_true", help="print every JSON Schema, keyed by record type")
    p.add_argument("--example", choices=list(EXAMPLES), metavar="NAME", help=f"one of: {', '.join(EXAMPLES)}")
    p.set_defaults(func=_run)


def _run(args: argparse.Namespace) -> int:
    if sum(bool(x) for x in (args.name, args.all, args.example)) > 1:
        raise UsageError("give one of NAME, --all or --example NAME")
    if args.example:
        sys.stdout.write(example(args.example))
    elif args.name or args.all:
        data = _schema(args.name) if args.name else {name: _schema(name) for name in _MODELS}
        sys.stdout.write(json.dumps(data, indent=2, ensure_ascii=False) + "\n")
    else:
        sys.stdout.write(_SUMMARY.format(examples=", ".join(EXAMPLES)))
    return 0
