"""Atomic publication of a built site: build into a staging folder, then swap it into place.

The staging folder sits beside the site folder (same file system, so renames are atomic) and is
named ``.<site>-staging-<pid>-<random>``. Before the swap every file and folder under it is made
durable (:func:`sync_tree`: one ``syncfs`` of its file system, else an fsync of each). A first
site is renamed into place; an existing one is exchanged with the staging folder in one
``renameat2(RENAME_EXCHANGE)``, so a reader sees the old site or the new one and never a moment
without either. Where the system or file system cannot exchange two folders, publication is
refused (:class:`NotAtomicError`) and the old site stays: renaming it aside first would leave a
moment with no site. A folder left by a process that died mid-build is swept at the next build.
Nothing here imports MkDocs.
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import os
import re
import secrets
from pathlib import Path

from ..kernel import _fs

__all__ = ["new_staging", "publish", "discard", "sweep_stale", "sync_tree", "NotAtomicError"]

_AT_FDCWD = -100
_RENAME_EXCHANGE = 2


class NotAtomicError(OSError):
    """The site folder cannot be replaced in one step here; the old site was left as it was."""


def _scratch_name(site: Path, kind: str) -> Path:
    return site.parent / f".{site.name}-{kind}-{os.getpid()}-{secrets.token_hex(6)}"


def new_staging(site: Path) -> Path:
    """A fresh, empty staging folder beside ``site`` (its parent is created if needed)."""
    site.parent.mkdir(parents=True, exist_ok=True)
    staging = _scratch_name(site, "staging")
    staging.mkdir(mode=0o755)
    return staging


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def sweep_stale(site: Path) -> list[Path]:
    """Remove staging and aside folders of ``site`` whose building process no longer runs."""
    removed: list[Path] = []
    if not site.parent.is_dir():
        return removed
    pattern = re.compile(re.escape(f".{site.name}-") + r"(?:staging|old)-(\d+)-[0-9a-f]{12}")
    for entry in site.parent.iterdir():
        match = pattern.fullmatch(entry.name)
        if match and int(match.group(1)) != os.getpid() and not _alive(int(match.group(1))):
            _fs.remove_tree(entry)
            removed.append(entry)
    return removed


def _libc() -> ctypes.CDLL | None:
    try:
        return ctypes.CDLL(None, use_errno=True)
    except OSError:
        return None


def _exchange(a: Path, b: Path) -> bool:
    """Swap two paths atomically with renameat2; False where the system cannot."""
    libc = _libc()
    renameat2 = getattr(libc, "renameat2", None)
    if renameat2 is None:
        return False
    renameat2.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint]
    renameat2.restype = ctypes.c_int
    if renameat2(_AT_FDCWD, os.fsencode(a), _AT_FDCWD, os.fsencode(b), _RENAME_EXCHANGE) == 0:
        return True
    code = ctypes.get_errno()
    if code in (errno.EINVAL, errno.ENOSYS, errno.ENOTSUP, errno.EOPNOTSUPP, errno.EPERM):
        return False
    raise OSError(code, os.strerror(code), str(a))


def sync_tree(root: Path) -> None:
    """Make every file and folder under ``root`` durable before it is published.

    One ``syncfs`` flushes the whole file system that holds ``root`` (one call, whatever the
    number of pages, and it reports write-back errors); where it is missing, each file and
    folder is fsynced in turn.
    """
    syncfs = getattr(_libc(), "syncfs", None)
    if syncfs is not None:
        fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        try:
            if syncfs(fd) == 0:
                return
        finally:
            os.close(fd)
    for folder, _dirs, names in os.walk(root):
        for name in names:
            path = os.path.join(folder, name)
            if os.path.islink(path):
                continue
            fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC | os.O_NOFOLLOW)
            try:
                os.fsync(fd)
            finally:
                os.close(fd)
        _fs.fsync_dir(Path(folder))


def publish(staging: Path, site: Path) -> None:
    """Make ``staging`` the site at ``site``; the old site, if any, is removed afterwards.

    Readers see the old site or the new one, never a mixture and never none. Raises
    :class:`NotAtomicError`, changing nothing, where an existing site cannot be exchanged in one
    step.
    """
    if not staging.is_dir():
        raise FileNotFoundError(f"staging folder {staging} is gone")
    if os.path.lexists(site) and not site.is_dir():
        # A file (or a link to one) where the site goes is not ours to replace.
        raise NotADirectoryError(errno.ENOTDIR, "exists and is not a folder; refusing to replace it", str(site))
    sync_tree(staging)
    if not os.path.lexists(site):
        os.rename(staging, site)
        _fs.fsync_dir(site.parent)
        return
    if not _exchange(staging, site):
        raise NotAtomicError(
            errno.ENOTSUP,
            "this system or file system cannot exchange two folders in one step (renameat2 RENAME_EXCHANGE); "
            "the previous site is left as it was, since replacing it otherwise leaves a moment with no site",
            str(site),
        )
    _fs.fsync_dir(site.parent)
    # ``staging`` now holds the previous site (or the link that stood where the site goes).
    _fs.remove_tree(staging)


def discard(staging: Path | None) -> None:
    """Remove a staging folder (never fails the caller: this runs on error paths)."""
    if staging is None:
        return
    with contextlib.suppress(OSError):
        _fs.remove_tree(staging)
