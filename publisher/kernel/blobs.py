"""Write-once, content-addressed byte stores: a run's ``raw/<sha256>`` and the wiki's PDF library.

A blob's name is the lowercase hex SHA-256 of its bytes. Writing follows the snapshot rules
(temporary file, fsync, mode 0444, link without replacing, folder fsync); an existing name is
never replaced, and one whose bytes hash to something else is a conflict left for a person.
Reading re-hashes the bytes without following links and never blocks on a special file.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

from . import _fs
from .canonical import HEX64_RE
from .errors import ConflictError, UsageError

__all__ = ["put_blob", "hash_file", "blob_problem", "BlobChecker"]


def hash_file(path: Path | str) -> str | None:
    """Bare hex SHA-256 of the regular file at ``path``; None when missing, a link or not a file."""
    return _fs.hash_regular(path)


def put_blob(folder: Path, data: bytes, *, suffix: str = "") -> tuple[str, Path, bool]:
    """Store ``data`` under ``folder/<sha256><suffix>`` unless there; ``(digest, path, created)``.

    An existing file with the same bytes stands (created False); one with other bytes (or a link,
    folder or FIFO in its place) raises :class:`ConflictError` and is left untouched.
    """
    digest = hashlib.sha256(data).hexdigest()
    target = folder / f"{digest}{suffix}"
    _fs.own_folder(folder)
    if _fs.create_exclusive(target, data, mode=0o444):
        return digest, target, True
    found = hash_file(target)
    if found != digest:
        what = "cannot be read as a regular file" if found is None else f"holds other bytes (sha256 {found})"
        raise ConflictError(
            f"{target} exists but {what}; left untouched (inspect or remove it by hand)", path=str(target)
        )
    return digest, target, False


def blob_problem(folder: Path, digest: str, *, suffix: str = "") -> str | None:
    """Why ``folder/<digest><suffix>`` does not back ``digest`` (one line), or None when it does."""
    if not HEX64_RE.fullmatch(digest):
        raise UsageError(f"{digest[:80]!r} is not a bare sha256 digest")
    name = f"{folder.name}/{digest}{suffix}"
    if not os.path.lexists(folder / f"{digest}{suffix}"):
        return f"raw bytes {name} are missing"
    found = hash_file(folder / f"{digest}{suffix}")
    if found is None:
        return f"raw bytes {name} are not a readable regular file"
    if found != digest:
        return f"raw bytes {name} hash to {found}"
    return None


class BlobChecker:
    """Checks each blob of one folder once per command (a receipt's raw bytes)."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self._seen: dict[str, str | None] = {}

    def problem(self, digest: str) -> str | None:
        """Why the blob named ``digest`` is missing or corrupt, or None when it verifies."""
        if digest not in self._seen:
            self._seen[digest] = blob_problem(self.folder, digest)
        return self._seen[digest]

    def checked(self) -> dict[str, str | None]:
        """Every digest checked so far and its problem (None: verified), for the inputs hash."""
        return dict(self._seen)
