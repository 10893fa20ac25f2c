"""Helpers shared by the command modules: ``--json`` output and human printing."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

__all__ = ["add_json", "emit", "say", "warn"]


def add_json(parser: argparse.ArgumentParser) -> None:
    """Add the ``--json`` switch."""
    parser.add_argument("--json", action="store_true", help="print machine-readable JSON")


def emit(args: argparse.Namespace, data: Any, human: str | None = None) -> None:
    """Print ``data`` as JSON with ``--json``, else the human text."""
    if getattr(args, "json", False):
        sys.stdout.write(json.dumps(data, ensure_ascii=False, indent=2) + "\n")
    elif human is not None:
        sys.stdout.write(human if human.endswith("\n") else human + "\n")


def say(message: str) -> None:
    """A line of human output on stdout."""
    sys.stdout.write(message + "\n")


def warn(message: str) -> None:
    """A warning line on stderr."""
    sys.stderr.write(f"publisher: warning: {message}\n")
