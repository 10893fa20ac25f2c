"""A Dask cluster as the wiki check's executor: ``publisher check --scheduler ADDRESS``, or the
``PUBLISHER_SCHEDULER`` environment variable a CI sets (the build reads only that).

The scheduler's results are trusted as the check's own, so it moves a trust boundary: it is
chosen by whoever runs the command, never by the wiki's configuration (a wiki naming
``extra.evidence.scheduler`` is refused, see :mod:`publisher.wiki.policy`).

The wiki check already runs on any :class:`concurrent.futures.Executor` (the snapshot checks and
concept parsing are plain functions of paths, see :mod:`.pool`); a Dask client's executor is
one. Every worker must see the wiki at the same path as this machine (a shared file system):
the tasks name files, never carry them. Dask is an optional dependency (``evidence-publisher[dask]``).
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping
from concurrent.futures import Executor
from contextlib import contextmanager

from ..kernel.errors import UsageError
from ..kernel.text import one_line

__all__ = ["SCHEDULER_ENV", "cluster_executor", "scheduler_from"]

SCHEDULER_ENV = "PUBLISHER_SCHEDULER"
"""Environment variable naming the Dask scheduler when ``--scheduler`` is not given."""


def scheduler_from(option: str | None, environ: Mapping[str, str] | None = None) -> str | None:
    """The scheduler address: ``--scheduler``, else ``$PUBLISHER_SCHEDULER``, else None (this machine)."""
    env = os.environ if environ is None else environ
    address = option if option else env.get(SCHEDULER_ENV) or None
    if address is not None and (not address.strip() or len(address) > 500):
        raise UsageError(f"{address[:80]!r} is not a scheduler address (tcp://host:port)")
    return address


_CONNECT_SECONDS = 10


@contextmanager
def cluster_executor(address: str) -> Iterator[tuple[Executor, int]]:
    """A client of the Dask scheduler at ``address`` for the block: its executor and the number
    of worker threads. A missing Dask or an unreachable scheduler is a one-line usage error."""
    try:
        import distributed
    except ImportError as exc:
        raise UsageError(
            f"a scheduler needs Dask: pip install 'evidence-publisher[dask]' (or drop --scheduler / {SCHEDULER_ENV})"
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
