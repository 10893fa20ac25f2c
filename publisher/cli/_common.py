"""Helpers shared by the command modules: ``--json`` output and human printing.

Human output is the one place text reaches a terminal: every control character in it (an escape
sequence in a fetched page, a title or a snapshot) is shown as an escape, never acted on.
``--json`` output stays exact (JSON escapes control characters itself).
"""

from __future__ import annotations

import argparse
import math
import os
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..kernel.findings import Finding, grouped_lines
from ..kernel.text import terminal_safe

if TYPE_CHECKING:
    from ..runs import Run
    from ..wiki.policy import Policy

__all__ = [
    "add_json",
    "add_config",
    "source_id_arg",
    "seconds_arg",
    "byte_count_arg",
    "wiki_policy",
    "open_run",
    "emit",
    "say",
    "warn",
    "error_line",
    "refusal_lines",
]


def add_json(parser: argparse.ArgumentParser) -> None:
    """Add the ``--json`` switch."""
    parser.add_argument("--json", action="store_true", help="print machine-readable JSON")


def source_id_arg(value: str) -> str:
    """``--source-id``: ``src-`` and 64 lowercase hex, else a usage error (exit 2) naming the fix."""
    from ..kernel.canonical import SOURCE_ID_RE

    if not SOURCE_ID_RE.fullmatch(value):
        raise argparse.ArgumentTypeError(
            f"{value[:80]!r} is not a source id ('src-' and 64 lowercase hex, as 'publisher source fetch' prints it)"
        )
    return value


def seconds_arg(value: str) -> float:
    """``--timeout``: a finite number of seconds above 0 and at most a day, else a usage error."""
    try:
        seconds = float(value)
    except ValueError:
        seconds = math.nan
    if not (math.isfinite(seconds) and 0 < seconds <= 86_400):
        raise argparse.ArgumentTypeError(f"{value[:40]!r} is not a number of seconds above 0 and at most 86400")
    return seconds


def byte_count_arg(value: str) -> int:
    """``--max-bytes``: a whole number of bytes, 0 or more, else a usage error."""
    text = value.strip()
    if not (text.isascii() and text.isdigit()):
        raise argparse.ArgumentTypeError(f"{value[:40]!r} is not a whole number of bytes (0 or more)")
    return int(text)


def add_config(parser: argparse.ArgumentParser) -> None:
    """Add ``--config FILE``: the wiki's configuration, as ``mkdocs build -f FILE`` would read it."""
    parser.add_argument(
        "--config",
        type=Path,
        metavar="FILE",
        help="the wiki's MkDocs configuration (default: WIKI/mkdocs.yml), as 'mkdocs build -f FILE' reads it",
    )


def missing_folder(path: Path | str, what: str) -> str:
    """Why ``path`` is not the ``what`` folder a command needs: absent, or something else there."""
    return f"{what} folder {path} does not exist" if not os.path.lexists(path) else f"{what} {path} is not a folder"


def wiki_policy(wiki_root: Path | None, config: Path | None) -> Policy:
    """The wiki's policy, resolved once through MkDocs' loader and passed down by the command."""
    from ..site.lifecycle.policy import resolve_policy

    return resolve_policy(wiki_root, config)


def open_run(run_dir: Path) -> Run:
    """The run at ``run_dir``, its library loaded only by the commands that open one."""
    from ..runs import Run

    return Run.open(run_dir)


def emit(args: argparse.Namespace, data: Any, human: str | None = None) -> None:
    """Print ``data`` as JSON with ``--json``, else the human text."""
    if getattr(args, "json", False):
        from ..kernel.canonical import dumps_written

        sys.stdout.write(dumps_written(data).decode("utf-8"))
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


def refusal_lines(findings: Iterable[Finding], error: str) -> None:
    """Every finding on stderr (consequences under their cause), then the one ``error:`` line."""
    for line in grouped_lines(findings, indent=""):
        error_line(f"publisher: {line}")
    error_line(f"publisher: error: {error}")
