"""Files the build writes into its staging folder itself (proofs, records without text, offline scripts).

A staging folder is never read as the site before publication: a failed build discards it whole,
and publication (:func:`publisher.site.lifecycle.publish.publish`) makes every file under it durable
(one ``syncfs``, else an fsync of each) before swapping it in. A file written into it therefore
needs neither its own fsync nor a temporary name, exactly as MkDocs writes the pages beside it;
:func:`publisher.kernel._fs.write_atomic` (two fsyncs a file) is for files published one by one.
Writing never follows a link in place of the file.
"""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["write_staged"]


def write_staged(path: Path, data: bytes) -> None:
    """Write ``data`` as the file ``path`` of a staging folder (its folders made as needed),
    replacing one that is there; a link in its place is refused (``OSError``), never followed."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW | os.O_CLOEXEC
    try:
        fd = os.open(path, flags, 0o644)
    except FileNotFoundError:  # its folder is not there yet (one call, not one per file)
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, flags, 0o644)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
    finally:
        os.close(fd)
