"""Helpers shared by the command modules: ``--json`` output and human printing.

Human output is the one place text reaches a terminal: every control character in it (an escape
sequence in a fetched page, a title or a snapshot) is shown as an escape, never acted on.
``--json`` output stays exact (JSON escapes control characters itself).
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from ..kernel.text import terminal_safe

__all__ = ["add_json", "emit", "say", "warn", "error_line"]


def add_json(parser: argparse.ArgumentParser) -> None:
    """Add the ``--json`` switch."""
    parser.add_argument("--json", action="store_true", help="print machine-readable JSON")


def emit(args: argparse.Namespace, data: Any, human: str | None = None) -> None:
    """Print ``data`` as JSON with ``--json``, else the human text."""
    if getattr(args, "json", False):
        sys.stdout.write(json.dumps(data, ensure_ascii=False, indent=2) + "\n")
    elif human is not None:
        text = terminal_safe(human)
        sys.stdout.write(text if text.endswith("\n") else text + "\n")


def say(message: str) -> None:
    """A line of human output on stdout."""
    sys.stdout.write(terminal_safe(message) + "\n")


def warn(message: str) -> None:
    """A warning line on stderr."""
    sys.stderr.write(f"publisher: warning: {terminal_safe(message, keep_newlines=False)}\n")


def error_line(message: str) -> None:
    """One line on stderr (a finding or an error), control characters shown, never acted on."""
    sys.stderr.write(terminal_safe(message, keep_newlines=False) + "\n")
