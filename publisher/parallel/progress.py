"""Progress of long work: the plain callback the library reports through, and who opens it.

The library draws nothing itself. Long work takes a :data:`ProgressFn`; the build is handed a
:class:`Reporter`, which opens one for each piece of work it names. The edges that talk to a
person supply the reporter that draws (:func:`publisher.cli.progress.terminal_progress`, a bar on
a terminal); :func:`no_progress` is the reporter of a caller that shows nothing.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager
from typing import Protocol

__all__ = ["ProgressFn", "Reporter", "no_progress"]

ProgressFn = Callable[[int, int], None]
"""Called as ``progress(done, total)`` after each snapshot is checked."""


class Reporter(Protocol):
    """Opens the report of one piece of long work named ``label``: a context whose value is the
    :data:`ProgressFn` to call, or None when nothing is to be shown."""

    def __call__(self, label: str) -> AbstractContextManager[ProgressFn | None]: ...


@contextlib.contextmanager
def no_progress(label: str) -> Iterator[ProgressFn | None]:
    """The reporter that shows nothing (a caller without a person watching)."""
    yield None
