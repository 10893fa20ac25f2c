"""Progress of long work: a callback drawing a bar on a terminal, quiet everywhere else."""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Callable, Iterator
from typing import Any

__all__ = ["ProgressFn", "terminal_progress"]

ProgressFn = Callable[[int, int], None]
"""Called as ``progress(done, total)`` after each snapshot is checked."""


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
