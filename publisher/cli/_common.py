"""Helpers shared by the command modules: ``--json`` output and human printing.

Human output is the terminal's one boundary: every line passes through
:func:`~publisher.kernel.text.terminal_safe`, so escape sequences, carriage returns or bidi
overrides in a snapshot, a title or a URL are shown as escapes and never act on the terminal.
``--json`` stays exact (JSON escapes C0 controls itself).
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from ..kernel.text import terminal_safe

__all__ = ["add_json", "emit", "say", "warn"]


def add_json(parser: argparse.ArgumentParser) -> None:
    """Add the ``--json`` switch."""
    parser.add_argument("--json", action="store_true", help="print machine-readable JSON")


def emit(args: argparse.Namespace, data: Any, human: str | None = None) -> None:
    """Print ``data`` as JSON with ``--json``, else the human text."""
    if getattr(args, "json", False):
        sys.stdout.write(json.dumps(data, ensure_ascii=False, indent=2) + "\n")
    elif human is not None:
        safe = terminal_safe(human)
        sys.stdout.write(safe if safe.endswith("\n") else safe + "\n")


def say(message: str) -> None:
    """A line of human output on stdout."""
    sys.stdout.write(terminal_safe(message) + "\n")


def warn(message: str) -> None:
    """A warning line on stderr."""
    sys.stderr.write(f"publisher: warning: {terminal_safe(message, keep_newlines=False)}\n")
