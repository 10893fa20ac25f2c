"""The evidence plugin as MkDocs loads it: the build, drawing its progress on a terminal.

The ``mkdocs.plugins`` entry point (``plugins: - evidence``) and the hook file
``hooks/evidence.py`` name this class. It is :class:`publisher.site.lifecycle.plugin.EvidencePlugin`
handed :func:`~publisher.cli.progress.terminal_progress` as its reporter, so the build itself
imports nothing of the command line: the bar is drawn on stderr only when it is a terminal, and
never under ``CI=true``.
"""

from __future__ import annotations

from ..site.lifecycle.plugin import EvidencePlugin as _Build
from .progress import terminal_progress

__all__ = ["EvidencePlugin"]


class EvidencePlugin(_Build):  # type: ignore[no-untyped-call]  # MkDocs' BasePlugin is untyped
    """The evidence build with the terminal's progress bar."""

    def __init__(self) -> None:
        super().__init__(reporter=terminal_progress)
