"""A Dask cluster as the wiki check's executor: ``publisher check --scheduler ADDRESS`` and
``extra: evidence: scheduler:``.

The wiki check already runs on any :class:`concurrent.futures.Executor` (the snapshot checks and
concept parsing are plain functions of paths, see :mod:`.pool`); a Dask client's executor is
one. Every worker must see the wiki at the same path as this machine (a shared file system):
the tasks name files, never carry them. Dask is an optional dependency (``publisher[dask]``).
"""

from __future__ import annotations

from collections.abc import Iterator
from concurrent.futures import Executor
from contextlib import contextmanager

from ..kernel.errors import UsageError
from ..kernel.text import one_line

__all__ = ["cluster_executor"]

_CONNECT_SECONDS = 10


@contextmanager
def cluster_executor(address: str) -> Iterator[tuple[Executor, int]]:
    """A client of the Dask scheduler at ``address`` for the block: its executor and the number
    of worker threads. A missing Dask or an unreachable scheduler is a one-line usage error."""
    try:
        import distributed
    except ImportError as exc:
        raise UsageError(
            "a scheduler needs Dask: pip install 'publisher[dask]' (or drop --scheduler / extra.evidence.scheduler)"
        ) from exc
    try:
        client = distributed.Client(address, timeout=_CONNECT_SECONDS, set_as_default=False)
    except (OSError, TimeoutError, ValueError) as exc:
        raise UsageError(f"cannot reach the Dask scheduler at {address[:200]}: {one_line(exc, 160)}") from exc
    try:
        threads = sum(client.nthreads().values()) or 1
        yield client.get_executor(), threads
    finally:
        client.close()
