"""Atomic publication of a built site: build into a staging folder, then swap it into place.

The staging folder sits beside the site folder (same file system, so renames are atomic) and is
named ``.<site>-staging-<pid>-<random>``. Publication exchanges the two folders in one
``renameat2(RENAME_EXCHANGE)`` where the system offers it, else renames the old site aside,
renames the staging folder in (renaming the old one back if that fails), and removes the old
one; the parent folder is fsynced either way. A folder left by a process that died mid-build is
swept at the next build. Nothing here imports MkDocs.
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

__all__ = ["new_staging", "publish", "discard", "sweep_stale"]

_AT_FDCWD = -100
_RENAME_EXCHANGE = 2


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


def _exchange(a: Path, b: Path) -> bool:
    """Swap two paths atomically with renameat2; False where the system cannot."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        renameat2 = libc.renameat2
    except (OSError, AttributeError):
        return False
    renameat2.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint]
    renameat2.restype = ctypes.c_int
    if renameat2(_AT_FDCWD, os.fsencode(a), _AT_FDCWD, os.fsencode(b), _RENAME_EXCHANGE) == 0:
        return True
    code = ctypes.get_errno()
    if code in (errno.EINVAL, errno.ENOSYS, errno.ENOTSUP, errno.EOPNOTSUPP, errno.EPERM):
        return False
    raise OSError(code, os.strerror(code), str(a))


def publish(staging: Path, site: Path) -> None:
    """Make ``staging`` the site at ``site``; the old site, if any, is removed afterwards.

    Readers see the old site or the new one, never a mixture.
    """
    if not staging.is_dir():
        raise FileNotFoundError(f"staging folder {staging} is gone")
    if os.path.lexists(site) and not site.is_dir():
        # A file (or a link to one) where the site goes is not ours to replace.
        raise NotADirectoryError(errno.ENOTDIR, "exists and is not a folder; refusing to replace it", str(site))
    if not os.path.lexists(site):
        os.rename(staging, site)
        _fs.fsync_dir(site.parent)
        return
    if site.is_dir() and not site.is_symlink() and _exchange(staging, site):
        _fs.fsync_dir(site.parent)
        _fs.remove_tree(staging)
        return
    aside = _scratch_name(site, "old")
    os.rename(site, aside)
    try:
        os.rename(staging, site)
    except BaseException:
        os.rename(aside, site)
        raise
    _fs.fsync_dir(site.parent)
    _fs.remove_tree(aside)


def discard(staging: Path | None) -> None:
    """Remove a staging folder (never fails the caller: this runs on error paths)."""
    if staging is None:
        return
    with contextlib.suppress(OSError):
        _fs.remove_tree(staging)
