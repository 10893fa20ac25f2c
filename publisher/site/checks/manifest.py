"""The site seal: ``evidence-manifest.json``, the published snapshot records it names, every file.

The manifest lists every file of the published site (path, SHA-256, size) besides the sealed
excerpts, snapshot texts, context windows and records; its own SHA-256 (:func:`manifest_digest`)
names the whole site, so a reader can pin a site they rebuilt (``check-site --expect``).
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, StrictStr, ValidationError

from ...kernel import _fs
from ...kernel.canonical import StrictJSONError, loads_record
from ...kernel.errors import IntegrityError
from ...kernel.models import HexDigest, Offset, SourceId, first_error
from ...kernel.reasons import Reason
from ...kernel.store import verify_record

__all__ = [
    "MANIFEST_NAME",
    "MANIFEST_VERSION",
    "manifest_bytes",
    "manifest_digest",
    "manifest_problem",
    "record_uri",
    "check_record_copy",
    "site_files",
    "site_tree",
    "kept_entry",
    "SITE_FILE_LIMIT",
    "seal_files",
    "file_entry",
]


MANIFEST_NAME = "evidence-manifest.json"
MANIFEST_VERSION = 2
"""2: every published file is listed (``files``)."""


def manifest_digest(data: bytes) -> str:
    """The name of a site: ``sha256:`` + the SHA-256 of its manifest's bytes."""
    return "sha256:" + hashlib.sha256(data).hexdigest()


class _Shape(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", defer_build=True)


class _Sealed(_Shape):
    """An excerpt or a context window on a page (a window's offsets are its place in the text)."""

    page: StrictStr
    source_id: SourceId
    start: Offset
    end: Offset
    sha256: HexDigest


class _SealedSnapshot(_Shape):
    page: StrictStr
    source_id: SourceId
    sha256: HexDigest


class _Record(_Shape):
    source_id: SourceId
    sha256: HexDigest
    form: Literal["without_text"] | None = None


class _File(_Shape):
    path: StrictStr
    sha256: HexDigest
    size: Offset


class _Proof(_Shape):
    source_id: SourceId
    start: Offset
    end: Offset
    path: StrictStr
    sha256: HexDigest


class _Manifest(_Shape):
    """What :func:`manifest_bytes` writes, and nothing else (``proofs`` absent before proofs existed)."""

    schema_version: Literal[2]
    generator: StrictStr
    excerpts: tuple[_Sealed, ...]
    snapshots: tuple[_SealedSnapshot, ...]
    windows: tuple[_Sealed, ...]
    records: tuple[_Record, ...]
    files: tuple[_File, ...]
    proofs: tuple[_Proof, ...] = ()


def manifest_problem(raw: Any) -> str | None:
    """Why parsed JSON is not a manifest of this version's shape (the first problem, naming the
    entry, e.g. ``invalid field files.3.size``), or None. An allow-list: every section a list of
    entries with exactly the keys the build writes, each of its type (ids and digests in their
    one spelling, offsets and sizes non-negative integers, never ``true`` or ``1.0``)."""
    try:
        _Manifest.model_validate(raw)
    except ValidationError as exc:
        return first_error(exc, "manifest")
    return None


SITE_FILE_LIMIT = 1 << 30
"""The largest file a site may hold (1 GiB): larger ones are refused unread, never read whole."""


def site_files(site: Path) -> tuple[list[str], list[str]]:
    """Every regular file under ``site`` (POSIX paths relative to it, sorted, the manifest left
    out) and everything else there that is neither a file nor a folder (links, FIFOs ...)."""
    files, odd, _ = site_tree(site)
    return files, odd


def kept_entry(name: str) -> bool:
    """Whether an entry of the site folder itself (not of its subfolders) is kept across builds
    and is no part of the site: a name starting with a dot (``.git``, ``.nojekyll``), MkDocs'
    own rule. A build carries such entries over (:mod:`publisher.site.lifecycle.publish`); the
    manifest does not list them and ``check-site`` does not vouch for them."""
    return name.startswith(".")


def site_tree(site: Path) -> tuple[list[str], list[str], list[str]]:
    """:func:`site_files`, plus every folder under ``site`` (sorted POSIX paths; links to
    folders are not followed, and count among the odd entries). The entries of the site folder
    that :func:`kept_entry` names are left out, whatever they are.

    One ``scandir`` a folder: each entry's type comes from the folder listing, read without
    following a link (an ``lstat`` only where the listing does not say). A folder that cannot
    be read counts among the odd entries."""
    files: list[str] = []
    odd: list[str] = []
    folders: list[str] = []
    todo = [(os.fspath(site), "")]
    while todo:
        folder, prefix = todo.pop()
        try:
            listing = os.scandir(folder)
        except OSError:
            if not prefix:
                raise  # the site itself
            odd.append(prefix.rstrip("/"))  # a folder that cannot be read cannot be sealed
            continue
        with listing as entries:
            for entry in entries:
                if not prefix and kept_entry(entry.name):
                    continue
                rel = prefix + entry.name
                if entry.is_dir(follow_symlinks=False):
                    folders.append(rel)
                    todo.append((entry.path, rel + "/"))
                elif entry.is_file(follow_symlinks=False):
                    if rel != MANIFEST_NAME:
                        files.append(rel)
                else:
                    odd.append(rel)  # a link, a FIFO, a socket, a device
    return sorted(files), sorted(odd), sorted(folders)


def seal_files(site: Path) -> list[dict[str, Any]]:
    """The ``files`` of a site's manifest. Raises IntegrityError (EXCERPT_MISMATCH) when the site
    holds a link or special file, which the manifest cannot seal."""
    names, odd = site_files(site)
    if odd:
        raise IntegrityError(
            f"the built site holds links or special files: {', '.join(odd[:5])}", reason=Reason.EXCERPT_MISMATCH
        )
    return [file_entry(site, name) for name in names]


def file_entry(site: Path, rel: str) -> dict[str, Any]:
    """``{"path", "sha256", "size"}`` of one published file, read without following a link."""
    data = _fs.read_regular(site / rel, follow_symlinks=False, limit=SITE_FILE_LIMIT)
    return {"path": rel, "sha256": hashlib.sha256(data).hexdigest(), "size": len(data)}


def manifest_bytes(
    entries: Iterable[dict[str, Any]],
    snapshots: Iterable[dict[str, Any]],
    generator: str,
    *,
    windows: Iterable[dict[str, Any]] = (),
    records: Iterable[dict[str, Any]] = (),
    files: Iterable[dict[str, Any]] = (),
    proofs: Iterable[dict[str, Any]] = (),
) -> bytes:
    """The manifest file: sorted entries, so an unchanged wiki seals to the same bytes.

    ``excerpts``, ``snapshots`` and ``windows`` entries name the page, the source id, the offsets
    (a window's are its start and end in the whole text) and the sha256 of the text shown;
    ``records`` name each published ``sources/<id>/record.json`` and the sha256 of its bytes;
    ``files`` every file of the site but the manifest (path, sha256, size); ``proofs`` each
    excerpt proof file (source id, start, end, path, sha256; :mod:`publisher.site.pages.proofs`).
    """

    def key(e: dict[str, Any]) -> tuple[Any, ...]:
        return (e["page"], e["source_id"], e.get("start", -1), e.get("end", -1), e["sha256"])

    doc = {
        "schema_version": MANIFEST_VERSION,
        "generator": generator,
        "excerpts": sorted(entries, key=key),
        "snapshots": sorted(snapshots, key=key),
        "windows": sorted(windows, key=key),
        "records": sorted(records, key=lambda e: (e["source_id"], e["sha256"])),
        "files": sorted(files, key=lambda e: e["path"]),
        "proofs": sorted(proofs, key=lambda e: e["path"]),
    }
    return (json.dumps(doc, ensure_ascii=False, indent=1, sort_keys=True) + "\n").encode("utf-8")


def record_uri(source_id: str) -> str:
    """Where the site publishes a snapshot record, byte for byte, for readers to verify."""
    return f"sources/{source_id}/record.json"


def check_record_copy(path: Path, source_id: str) -> bytes:
    """Re-verify a published record file (every digest, its name); returns its bytes.

    Raises IntegrityError (SNAPSHOT_HASH_MISMATCH) when it is not strict JSON or does not verify.
    """
    data = _fs.read_regular(path, follow_symlinks=False, limit=SITE_FILE_LIMIT)
    try:
        raw, canonical = loads_record(data)
    except (StrictJSONError, ValueError) as exc:
        raise IntegrityError(
            f"published record of {source_id} is not strict JSON", reason=Reason.SNAPSHOT_HASH_MISMATCH
        ) from exc
    verify_record(raw, source_id, canonical_body=data if canonical else None)
    return data
