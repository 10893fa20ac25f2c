"""``publisher schema``: the JSON Schemas of the records the product reads and writes."""

from __future__ import annotations

import argparse
import importlib
import json
import sys
from typing import Any

_MODELS = {
    "snapshot": ("publisher.kernel.models", "Snapshot"),
    "event": ("publisher.kernel.models", "Event"),
    "span": ("publisher.kernel.models", "Span"),
    "config": ("publisher.kernel.models", "RunConfig"),
    "extraction": ("publisher.gate.records", "Extraction"),
    "appraisal": ("publisher.gate.records", "Appraisal"),
    "result": ("publisher.gate.result", "Result"),
    "concept": ("publisher.wiki.concepts", "ConceptFrontMatter"),
}


def _schema(name: str) -> dict[str, Any]:
    module, attr = _MODELS[name]
    model = getattr(importlib.import_module(module), attr)
    schema: dict[str, Any] = model.model_json_schema()
    return schema


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Add ``schema``."""
    p = sub.add_parser("schema", help="print the JSON Schema of a record type")
    p.add_argument("name", nargs="?", choices=sorted(_MODELS), help="one record type (default: all)")
    p.set_defaults(func=_run)


def _run(args: argparse.Namespace) -> int:
    data = _schema(args.name) if args.name else {name: _schema(name) for name in _MODELS}
    sys.stdout.write(json.dumps(data, indent=2, ensure_ascii=False) + "\n")
    return 0
