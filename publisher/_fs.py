"""The only code that writes files: exclusive creation, atomic replacement, folder fsync.

Every writer in the product goes through these helpers so that a crash at any instant leaves
either the old bytes or the new bytes under a name, never a mixture, and never a half-written
file under a final name.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import secrets
import shutil
from collections.abc import Iterator
from pathlib import Path

__all__ = [
    "create_exclusive",
    "write_atomic",
    "fsync_dir",
    "locked",
    "append_line",
    "temp_name",
    "remove_tree",
]


def temp_name(final: Path) -> Path:
    """A hidden, unique temporary name beside ``final`` (same folder, same file system)."""
    return final.with_name(f".{final.name}.{secrets.token_hex(6)}.tmp")


def fsync_dir(folder: Path) -> None:
    """Make a folder's entries (creations, renames) durable."""
    fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _write_temp(final: Path, data: bytes, mode: int) -> Path:
    tmp = temp_name(final)
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    try:
        view = memoryview(data)
        while view:
            written = os.write(fd, view)
            view = view[written:]
        os.fchmod(fd, mode)
        os.fsync(fd)
    except BaseException:
        os.close(fd)
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise
    os.close(fd)
    return tmp


def create_exclusive(final: Path, data: bytes, *, mode: int = 0o444) -> bool:
    """Publish ``data`` under ``final`` unless the name exists; never replaces anything.

    The bytes are written and fsynced under a temporary name, then hard-linked to the final
    name (``link`` fails if the name exists, so publication is atomic and exclusive), and the
    folder is fsynced. Returns False, writing nothing, when ``final`` already exists.
    """
    if os.path.lexists(final):
        return False
    tmp = _write_temp(final, data, mode)
    try:
        os.link(tmp, final, follow_symlinks=False)
    except FileExistsError:
        return False
    finally:
        with contextlib.suppress(OSError):
            tmp.unlink()
    fsync_dir(final.parent)
    return True


def write_atomic(final: Path, data: bytes, *, mode: int = 0o644) -> None:
    """Replace ``final`` with ``data`` atomically (temporary file, fsync, rename, folder fsync)."""
    tmp = _write_temp(final, data, mode)
    try:
        os.replace(tmp, final)
    except BaseException:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise
    fsync_dir(final.parent)


@contextlib.contextmanager
def locked(lock_path: Path) -> Iterator[None]:
    """Hold an exclusive advisory lock on ``lock_path`` (created if missing) for the block."""
    fd = os.open(lock_path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        try:
            fcntl.flock(fd, fcntl.LOCK_UN)
        finally:
            os.close(fd)


def append_line(path: Path, line: bytes) -> None:
    """Append one complete line in a single write and fsync it; the caller holds the lock."""
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW, 0o644)
    try:
        data = line if line.endswith(b"\n") else line + b"\n"
        written = os.write(fd, data)
        if written != len(data):
            raise OSError(f"short append to {path}: {written} of {len(data)} bytes")
        os.fsync(fd)
    finally:
        os.close(fd)


def remove_tree(path: Path) -> None:
    """Remove a folder tree if it exists (staging folders only)."""
    if path.is_symlink() or path.is_file():
        path.unlink()
    elif path.exists():
        shutil.rmtree(path)
