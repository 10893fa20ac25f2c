"""Atomic publication of a built site: build into a staging folder, then swap it into place.

The staging folder sits beside the site folder (same file system, so renames are atomic) and is
named ``.<site>-staging-<pid>-<random>``. Before the swap every file and folder under it is made
durable (:func:`sync_tree`: one ``syncfs`` of its file system, else an fsync of each). A first
site is renamed into place; an existing one is replaced in one step, so a reader sees the old
site or the new one and never a moment without either, by the first of these the system offers:

1. ``renameat2(RENAME_EXCHANGE)`` (Linux): the two folders are exchanged;
2. ``renamex_np(RENAME_SWAP)`` (macOS): the same, through the C library;
3. a link: the site path is a symbolic link to a versioned folder ``.<site>-v-<random>``; a new
   build becomes the next version and a new link replaces the old one with one ``rename`` (atomic
   on POSIX), then the previous version is retired. A first site is published this way where no
   exchange exists, so that every later build can be. An existing real folder where no exchange
   exists cannot become a link without a moment with no site: publication is refused
   (:class:`NotAtomicError`, naming the one-time fix) and the old site stays.

Windows has neither exchange nor an atomic replacement of a link over a folder: there the first
site is renamed into place and a rebuild is refused in the same way; build into a fresh
``site_dir`` (or serve from a link you switch) there. ``PUBLISHER_PUBLISH_METHOD`` (``exchange``,
``swap`` or ``link``) forces one method, for tests. A folder left by a process that died
mid-build is swept at the next build.

Entries of the previous site whose names start with a dot (``.git`` of a ``gh-pages`` checkout,
``.nojekyll``) are no part of a site and are kept across builds, as MkDocs keeps them: each is
renamed into the new site just before the swap (one rename each, nothing copied), unless the
new site has an entry of that name, and renamed back if the swap fails (:func:`carry_over`).

The previous site is *retired* (:func:`retire`): renamed aside to ``.<site>-old-<pid>-<random>``
in one step and removed by a detached process, so the build does not wait on its files'
deletion (about a second for a thousand-page site whose files were just made durable). Where no
such process can be started it is removed before :func:`publish` returns; one left behind (a
machine that stopped meanwhile) goes to a remover again at a build after its builder ended,
never in that build's way. Nothing here imports MkDocs.
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import os
import re
import secrets
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

from ...kernel import _fs
from ..checks.manifest import kept_entry

__all__ = [
    "new_staging",
    "publish",
    "discard",
    "retire",
    "sweep_stale",
    "sync_tree",
    "carry_over",
    "NotAtomicError",
    "METHODS",
    "METHOD_ENV",
]

_AT_FDCWD = -100
_RENAME_EXCHANGE = 2
_RENAME_SWAP = 0x00000002  # macOS <stdio.h>: renamex_np flags
METHODS = ("exchange", "swap", "link")
"""The ways to replace a published site in one step, in the order they are tried."""
METHOD_ENV = "PUBLISHER_PUBLISH_METHOD"
"""Forces one method of :data:`METHODS` (the others are then not tried)."""


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


@contextlib.contextmanager
def _turn(site: Path) -> Iterator[None]:
    """Builds of one site take turns to sweep beside it and to publish it: one build's sweep
    never removes the version another has just published, or is about to (an advisory lock on
    the site's parent folder, held for those moments only; none where folders cannot be opened,
    as on Windows)."""
    if not hasattr(os, "O_DIRECTORY"):
        yield
        return
    with _fs.folder_lock(site.parent):
        yield


def _versions(site: Path) -> re.Pattern[str]:
    """The names of ``site``'s versioned folders (the ``link`` method): only these are ever
    retired as a previous version, never whatever else the site's link may name."""
    return re.compile(re.escape(f".{site.name}-v-") + r"[0-9a-f]{12}")


def sweep_stale(site: Path) -> list[Path]:
    """Remove staging and aside folders of ``site`` whose building process no longer runs.

    A retired previous site (``old``) goes to a detached remover again, as when it was retired
    (its own may still be at work), and its removal is best effort: a folder that cannot be
    removed never stops a build."""
    if not site.parent.is_dir():
        return []
    with _turn(site):
        return _sweep(site)


def _sweep(site: Path) -> list[Path]:
    removed: list[Path] = []
    pattern = re.compile(re.escape(f".{site.name}-") + r"(staging|old|link)-(\d+)-[0-9a-f]{12}")
    versions = _versions(site)
    current = os.readlink(site) if os.path.islink(site) else None
    for entry in site.parent.iterdir():
        match = pattern.fullmatch(entry.name)
        if match and int(match.group(2)) != os.getpid() and not _alive(int(match.group(2))):
            if match.group(1) == "old":
                with contextlib.suppress(OSError):  # best effort
                    _remove_aside(entry)
            else:
                _fs.remove_tree(entry)
            removed.append(entry)
        elif versions.fullmatch(entry.name) and entry.name != current and current is not None:
            _fs.remove_tree(entry)  # a version the site's link no longer names
            removed.append(entry)
    return removed


def _libc() -> ctypes.CDLL | None:
    try:
        return ctypes.CDLL(None, use_errno=True)
    except OSError:
        return None


def _failed(a: Path) -> bool:
    """False for a refusal that means "not supported here"; raises for any other failure."""
    code = ctypes.get_errno()
    if code in (errno.EINVAL, errno.ENOSYS, errno.ENOTSUP, errno.EOPNOTSUPP, errno.EPERM):
        return False
    raise OSError(code, os.strerror(code), str(a))


def _exchange(a: Path, b: Path) -> bool:
    """Swap two paths atomically with Linux's renameat2; False where the system cannot."""
    renameat2 = getattr(_libc(), "renameat2", None)
    if renameat2 is None:
        return False
    renameat2.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint]
    renameat2.restype = ctypes.c_int
    if renameat2(_AT_FDCWD, os.fsencode(a), _AT_FDCWD, os.fsencode(b), _RENAME_EXCHANGE) == 0:
        return True
    return _failed(a)


def _swap(a: Path, b: Path) -> bool:
    """Swap two paths atomically with macOS's renamex_np(RENAME_SWAP); False where it is missing."""
    renamex_np = getattr(_libc(), "renamex_np", None)
    if renamex_np is None:
        return False
    renamex_np.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_uint]
    renamex_np.restype = ctypes.c_int
    if renamex_np(os.fsencode(a), os.fsencode(b), _RENAME_SWAP) == 0:
        return True
    return _failed(a)


def _link_publish(staging: Path, site: Path) -> bool:
    """Publish ``staging`` as a new version behind the link at ``site``; False where ``site`` is a
    real folder (it cannot become a link without a moment with no site) or links cannot be made."""
    if os.path.lexists(site) and not os.path.islink(site):
        return False
    version = site.parent / f".{site.name}-v-{secrets.token_hex(6)}"
    previous = os.readlink(site) if os.path.islink(site) else None
    link = _scratch_name(site, "link")
    try:
        os.rename(staging, version)
        os.symlink(version.name, link, target_is_directory=True)
    except (OSError, NotImplementedError):  # os.symlink raises the latter where a platform has no links
        with contextlib.suppress(OSError):
            if version.exists() and not staging.exists():
                os.rename(version, staging)
        with contextlib.suppress(OSError):
            os.unlink(link)
        return False
    os.replace(link, site)  # one rename: the old link or the new one, never none
    _fs.fsync_dir(site.parent)
    if previous is not None and previous != version.name and _versions(site).fullmatch(previous):
        retire(site.parent / previous, site)  # a link made by hand (to ".", elsewhere) names none of ours
    return True


def _methods() -> tuple[str, ...]:
    forced = os.environ.get(METHOD_ENV)
    if forced:
        if forced not in METHODS:
            raise ValueError(f"{METHOD_ENV}={forced[:40]!r} is not one of {', '.join(METHODS)}")
        return (forced,)
    return METHODS


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
    """Make ``staging`` the site at ``site``; the old site, if any, is then retired (:func:`retire`:
    removed without this build waiting on it).

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
    with _turn(site):
        carried = carry_over(site, staging)
        try:
            _replace(staging, site)
        except BaseException:
            _carry_back(carried, staging, site)
            raise


def carry_over(site: Path, staging: Path) -> list[str]:
    """Rename each entry of the published site whose name starts with a dot into ``staging``
    (unless it has one of that name); the names moved. Only from a folder this publication
    retires: a real site folder, or the version of ours a site link names (never through a
    link made by hand, whose folder stays as it is), and never a folder of a build's own."""
    if not os.path.isdir(site):
        return []
    if os.path.islink(site) and not _versions(site).fullmatch(os.readlink(site)):
        return []
    ours = re.compile(re.escape(f".{site.name}-") + r"(?:staging|old|link|v)-")
    moved: list[str] = []
    for name in sorted(os.listdir(site)):
        if kept_entry(name) and not ours.match(name) and not os.path.lexists(staging / name):
            os.rename(site / name, staging / name)
            moved.append(name)
    if moved:
        _fs.fsync_dir(staging)
    return moved


def _carry_back(names: list[str], staging: Path, site: Path) -> None:
    """Return the entries :func:`carry_over` moved to a site that stayed where it was."""
    if not os.path.isdir(site) or not os.path.isdir(staging):
        return
    for name in names:
        with contextlib.suppress(OSError):
            if os.path.lexists(staging / name) and not os.path.lexists(site / name):
                os.rename(staging / name, site / name)


def _replace(staging: Path, site: Path) -> None:
    """:func:`publish` once ``staging`` is durable, in ``site``'s turn."""
    methods = _methods()
    exchanges = [m for m in methods if m != "link"]
    if not os.path.lexists(site):
        # A first site: renamed into place where a later build can exchange it, else published
        # behind a link so that the later builds can replace that.
        if exchanges and any(_can(m) for m in exchanges):
            os.rename(staging, site)
            _fs.fsync_dir(site.parent)
            return
        if "link" in methods and _link_publish(staging, site):
            return
        os.rename(staging, site)
        _fs.fsync_dir(site.parent)
        return
    for method in methods:
        if method == "link":
            if _link_publish(staging, site):
                return
            continue
        if (_exchange if method == "exchange" else _swap)(staging, site):
            _fs.fsync_dir(site.parent)
            # ``staging`` now holds the previous site (or the link that stood where the site goes).
            retire(staging, site)
            return
    raise NotAtomicError(
        errno.ENOTSUP,
        "this system cannot replace the site folder in one step (no folder exchange here); the previous "
        "site is left as it was. Remove it once: later builds then publish behind an atomically replaced link",
        str(site),
    )


_REMOVER = "import shutil, sys; shutil.rmtree(sys.argv[1], ignore_errors=True)"
"""What a remover runs. ``rmtree`` removes links inside the tree, never what they point to."""

_REMOVERS: list[subprocess.Popen[bytes]] = []
"""Removers this process started and has not reaped yet (each reaped at a later retirement, or
gone with this process)."""


def retire(folder: Path, site: Path) -> None:
    """Take a previous site (or version) ``folder`` out of the way of ``site`` and have it removed
    without waiting: renamed to ``.<site>-old-<pid>-<random>``, then removed by a detached
    process (:func:`_remove_detached`). Removed here where the rename or the start fails; a link
    (what an exchange swapped out where ``site`` was a link) is removed here at once, never
    what it points to."""
    if os.path.islink(folder) or not os.path.isdir(folder):
        _fs.remove_tree(folder)
        return
    aside = _scratch_name(site, "old")
    try:
        os.rename(folder, aside)
    except OSError:
        _fs.remove_tree(folder)
        return
    _remove_aside(aside)


def _remove_aside(aside: Path) -> None:
    """Have a detached process remove the folder ``aside``; here, where none can be started, or
    where ``aside`` is a link or a file (removed itself, never what a link points to)."""
    if os.path.islink(aside) or not os.path.isdir(aside) or not _remove_detached(aside):
        _fs.remove_tree(aside)


def _remove_detached(folder: Path) -> bool:
    """Start a process removing ``folder`` and return at once; False where none could be started
    (no ``fork``, as on Windows, where the folder is removed in place; a frozen Python, whose
    executable is not an interpreter).

    The remover leads a session of its own (a terminal's signals to the build do not reach it),
    its standard streams are ``/dev/null`` and no other descriptor of this process is passed on
    (a caller reading the build's output, on any descriptor, does not wait for it)."""
    if not hasattr(os, "fork") or not sys.executable or getattr(sys, "frozen", False):
        return False
    _reap()
    argv = [sys.executable, "-I", "-S", "-c", _REMOVER, os.path.abspath(folder)]
    try:
        remover = subprocess.Popen(
            argv,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            close_fds=True,
            start_new_session=True,
        )
    except (OSError, ValueError, subprocess.SubprocessError):
        return False
    _REMOVERS.append(remover)
    return True


def _reap() -> None:
    """Reap the removers that have finished (a long-lived process, such as a service that
    publishes again and again, keeps no zombie of them)."""
    _REMOVERS[:] = [remover for remover in _REMOVERS if remover.poll() is None]


def _can(method: str) -> bool:
    """Whether the C library offers the exchange ``method`` (``exchange`` or ``swap``)."""
    name = "renameat2" if method == "exchange" else "renamex_np"
    return getattr(_libc(), name, None) is not None


def discard(staging: Path | None) -> None:
    """Remove a staging folder (never fails the caller: this runs on error paths)."""
    if staging is None:
        return
    with contextlib.suppress(OSError):
        _fs.remove_tree(staging)
