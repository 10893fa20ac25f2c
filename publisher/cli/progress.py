"""A progress bar on a terminal, for the commands and the MkDocs build a person starts.

The library below draws nothing: long work takes a plain
:data:`~publisher.parallel.progress.ProgressFn` callback, and the build is handed a
:class:`~publisher.parallel.progress.Reporter`. :func:`terminal_progress` is such a reporter: it
draws a ``rich`` bar on stderr, or hands ``None`` where nothing should be drawn.
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Iterator
from typing import Any

from ..parallel.progress import ProgressFn

__all__ = ["terminal_progress"]


@contextlib.contextmanager
def terminal_progress(label: str, *, quiet: bool = False) -> Iterator[ProgressFn | None]:
    """A ``progress`` callback drawing a rich bar on stderr, or None when it should stay quiet.

    Quiet when asked (``--json``), when stderr is not a terminal, or when ``CI=true``.
    """
    if quiet or os.environ.get("CI", "").lower() == "true" or not sys.stderr.isatty():
        yield None
        return
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    bar = Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=Console(stderr=True),
        transient=True,
    )
    task_id: Any = None

    def update(done: int, total: int) -> None:
        nonlocal task_id
        if task_id is None:
            task_id = bar.add_task(label, total=total)
        bar.update(task_id, completed=done, total=total)  # the total grows as work is handed over

    with bar:
        yield update
