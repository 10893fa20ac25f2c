"""Careful files: the one reader of input files and the one writer of output files.

:func:`read_regular` (over :func:`open_regular`) is how every module reads a file that comes from
a wiki, a run or a site: it never blocks on a FIFO, never reads a folder or device in place of a
file, refuses links where asked and stops at a size limit. :func:`hash_regular` is its streaming
twin for stored files too large to hold (PDF assets, raw blobs).

:func:`write_atomic` and :func:`create_exclusive` are the product's only temporary-file, fsync
and rename (or link) sequence, so that a crash at any instant leaves either the old bytes or the
new bytes under a name, never a mixture, and never a half-written file under a final name. Two
writers stand apart on purpose: the hash-chained logs append one line under an exclusive lock
(``kernel/eventlog.py``: a log is never rewritten), and a built site is published by swapping
whole folders (``site/lifecycle/publish.py``).
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import shutil
import stat
import sys
from collections.abc import Iterator
from pathlib import Path

__all__ = [
    "open_regular",
    "create_exclusive",
    "write_atomic",
    "fsync_dir",
    "temp_name",
    "remove_tree",
    "lock",
    "folder_lock",
    "read_regular",
    "hash_regular",
    "real_path",
    "own_folder",
    "real_folder",
    "NotAFolderError",
    "LinkedFolderError",
    "NotRegularFileError",
    "FileTooLargeError",
]


def real_path(path: Path | str) -> Path:
    """``path`` absolute with every link followed, as far as the links lead: a link loop (or a
    link that points nowhere) stays as named. ``Path.resolve`` raises ``RuntimeError`` on a loop
    before Python 3.13, which would end a command with an internal error where a run or wiki
    holds one; the reader that opens the path then reports it as the file it is."""
    return Path(os.path.realpath(path))


class NotRegularFileError(OSError):
    """A path names a symbolic link (when links are refused), folder, FIFO or device, not a file."""

    def __init__(self, path: Path, what: str) -> None:
        super().__init__(f"{path} is {what}, not a regular file")
        self.what = what


def _what(mode: int) -> str:
    """What a file system entry of ``mode`` (an ``lstat``'s or ``fstat``'s) is, in words."""
    if stat.S_ISREG(mode):
        return "a file"
    if stat.S_ISDIR(mode):
        return "a folder"
    if stat.S_ISLNK(mode):
        return "a symbolic link"
    return "a FIFO" if stat.S_ISFIFO(mode) else "a special file"


class NotAFolderError(OSError):
    """A path a command reads or writes as a folder (a wiki's ``concepts/``, a run's ``outputs/``)
    is something else: a file, a FIFO, a device or a symbolic link. ``what`` names it in words."""

    def __init__(self, path: Path, what: str, consequence: str = "") -> None:
        super().__init__(f"{path} is {what}, not a folder{consequence}")
        self.path = path
        self.what = what


class LinkedFolderError(NotAFolderError):
    """A folder a command reads or writes (a run's ``outputs/``, ``sources/``, a wiki's
    ``concepts/``) is a symbolic link, wherever it points (a folder, nothing, itself): reading or
    writing through it would take files from outside the run or wiki, or put them there."""

    def __init__(self, path: Path) -> None:
        try:
            what = f"a symbolic link to {os.readlink(path)}"
        except OSError:  # gone or replaced meanwhile
            what = "a symbolic link"
        super().__init__(
            path,
            what,
            ": nothing is read or written through it (fix: replace the link with a real folder)",
        )


def real_folder(path: Path) -> bool:
    """Whether a real folder is at ``path``: False when nothing is there. Anything else present is
    refused, never taken for an absent folder (whose files would then go unchecked in silence) nor
    followed out of the run or wiki: :class:`LinkedFolderError` for a symbolic link of any kind (to
    a folder, to nothing, a loop), :class:`NotAFolderError` for a file, FIFO or device."""
    try:
        mode = os.lstat(path).st_mode
    except FileNotFoundError:
        return False
    if stat.S_ISDIR(mode):
        return True
    if stat.S_ISLNK(mode):
        raise LinkedFolderError(path)
    raise NotAFolderError(path, _what(mode))


def own_folder(folder: Path, root: Path | None = None) -> Path:
    """Make ``folder`` (and its parents) if absent, and refuse it when it is a symbolic link
    (:class:`LinkedFolderError`) or a file, FIFO or device (:class:`NotAFolderError`, named as
    what it is): files a command writes into a run or wiki stay inside it, never land where a link
    in a received run or wiki points. With ``root`` (the run or wiki, which may itself be a link),
    every folder between it and ``folder`` is refused the same way (``workspace/`` of
    ``workspace/extractions/``); ``folder`` that is ``root`` itself is taken as given. Returns
    ``folder``."""
    between = [folder] if folder != root else []
    if root is not None:
        between += [p for p in folder.parents if p != root and root in p.parents]
    for path in between:
        try:
            real_folder(path)
        except NotADirectoryError:  # a parent is no folder: its own turn in ``between`` names it
            continue
    folder.mkdir(parents=True, exist_ok=True)
    return folder


class FileTooLargeError(OSError):
    """A file is larger than the reader accepts (it would stall or exhaust the reader).

    ``size`` is the size the file stated when opened, or None when it grew past ``limit`` while
    read.
    """

    def __init__(self, path: Path, limit: int, size: int | None = None) -> None:
        super().__init__(f"{path} is larger than {limit} bytes")
        self.limit = limit
        self.size = size


def open_regular(
    path: Path | str, flags: int = os.O_RDONLY, *, follow_symlinks: bool = True, mode: int = 0o644
) -> tuple[int, os.stat_result]:
    """Open a regular file fail-closed; returns the descriptor and its ``fstat``.

    The one careful ``open`` of a file that comes from a wiki, a run or a site: it never blocks
    on a FIFO (``O_NONBLOCK``), refuses a folder, FIFO or device (and a symbolic link, unless
    ``follow_symlinks``) with :class:`NotRegularFileError`, and leaves other failures as the
    OSError they are (FileNotFoundError when nothing is there). ``flags`` add to ``O_RDONLY``
    for the event log's appends (``O_RDWR | O_APPEND | O_CREAT``, created with ``mode``).
    """
    flags |= os.O_NONBLOCK | os.O_CLOEXEC | (0 if follow_symlinks else os.O_NOFOLLOW)
    try:
        fd = os.open(path, flags, mode)
    except OSError as exc:
        if not follow_symlinks and os.path.islink(path):
            raise NotRegularFileError(Path(path), "a symbolic link") from exc
        raise
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise NotRegularFileError(Path(path), _what(info.st_mode))
    except BaseException:
        os.close(fd)
        raise
    return fd, info


def read_regular(
    path: Path | str, *, follow_symlinks: bool = True, limit: int | None = None, shared_lock: bool = False
) -> bytes:
    """The bytes of a regular file, without blocking on a FIFO or reading a device.

    Raises FileNotFoundError when nothing is there, :class:`NotRegularFileError` for anything
    that is not a regular file (a symbolic link too, unless ``follow_symlinks``),
    :class:`FileTooLargeError` with ``limit`` for a file larger than ``limit`` bytes (also one
    that grows past it while read), and OSError for other failures. ``shared_lock`` holds a
    shared :func:`lock` while reading, so that an append under the exclusive one (the event log)
    is never seen half-written. One ``fstat`` per file, and no copy of the bytes: the first read
    asks for the stated size plus one byte (to notice growth), which usually returns the whole
    file, and joining a single chunk returns it as it is.
    """
    fd, info = open_regular(path, follow_symlinks=follow_symlinks)
    try:
        size = info.st_size
        if limit is not None and size > limit:
            raise FileTooLargeError(Path(path), limit, size)
        if shared_lock:
            lock(fd, shared=True)
        cap = limit + 1 if limit is not None else None  # one byte past the limit proves it exceeded
        step = max(size + 1, 1 << 16)
        chunks, total = [], 0
        while cap is None or total < cap:
            chunk = os.read(fd, step if cap is None else min(step, cap - total))
            if not chunk:
                break
            chunks.append(chunk)
            total += len(chunk)
        if limit is not None and total > limit:
            raise FileTooLargeError(Path(path), limit)
        return b"".join(chunks)
    finally:
        os.close(fd)


def hash_regular(path: Path | str) -> str | None:
    """Bare lowercase hex SHA-256 of the regular file at ``path``, read in 1 MB pieces.

    None when nothing is there, when the name is a symbolic link, a folder, a FIFO or a device,
    or when it cannot be read: the one hashing reader of stored files (PDF assets, raw blobs).
    It streams rather than calling :func:`read_regular`, so a large PDF is never held in memory.
    """
    try:
        fd, _info = open_regular(path, follow_symlinks=False)
    except (OSError, ValueError):  # ValueError: a NUL in a recorded path
        return None
    try:
        digest = hashlib.sha256()
        while chunk := os.read(fd, 1 << 20):
            digest.update(chunk)
        return digest.hexdigest()
    except OSError:
        return None
    finally:
        os.close(fd)


def temp_name(final: Path) -> Path:
    """A hidden, unique temporary name beside ``final`` (same folder, same file system): twelve hex
    digits from the system's random source (what ``secrets.token_hex`` reads, without loading
    ``secrets`` and ``random`` into every command that writes a file)."""
    return final.with_name(f".{final.name}.{os.urandom(6).hex()}.tmp")


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


def remove_tree(path: Path) -> None:
    """Remove a folder tree if it exists (staging and retired folders only).

    Links inside it are removed, never followed. An entry that vanishes meanwhile (another
    process removing the same retired folder) is not an error."""
    try:
        if path.is_symlink() or path.is_file():
            path.unlink()
        elif path.exists():
            if sys.version_info >= (3, 12):
                shutil.rmtree(path, onexc=_gone_is_fine)
            else:
                shutil.rmtree(path, onerror=lambda f, name, info: _gone_is_fine(f, name, info[1]))
    except FileNotFoundError:
        pass


def _gone_is_fine(function: object, name: str, exc: BaseException) -> None:
    if not isinstance(exc, FileNotFoundError):
        raise exc


def lock(fd: int, *, shared: bool = False) -> None:
    """Take an advisory lock on an open file, held until the descriptor is closed.

    The one locking primitive: the event log's appends (exclusive) and reads (shared), and
    promotion's folder lock, all go through it. POSIX ``flock``; on Windows (no ``fcntl``) an
    exclusive ``msvcrt`` lock on the first byte, shared or not (Windows has no shared one).
    """
    try:
        import fcntl
    except ImportError:  # Windows
        import msvcrt

        msvcrt.locking(fd, msvcrt.LK_LOCK, 1)  # type: ignore[attr-defined]
        return
    fcntl.flock(fd, fcntl.LOCK_SH if shared else fcntl.LOCK_EX)


@contextlib.contextmanager
def folder_lock(folder: Path) -> Iterator[None]:
    """An exclusive advisory lock on a folder itself for the block, so no lock file is left behind."""
    fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        lock(fd)
        yield
    finally:
        os.close(fd)
