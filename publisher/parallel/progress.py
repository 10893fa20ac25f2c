"""Progress of long work: the plain callback the library reports through.

The library draws nothing itself: the edges that talk to a person hand it a callback
(:func:`publisher.site.terminal.terminal_progress` draws a bar on a terminal).
"""

from __future__ import annotations

from collections.abc import Callable

__all__ = ["ProgressFn"]

ProgressFn = Callable[[int, int], None]
"""Called as ``progress(done, total)`` after each snapshot is checked."""
