"""The end of a build, before publication: the published records re-verified, the files of an
offline site written, and the seal (``evidence-manifest.json``) over every file of the site.

The hook calls these in its last ``on_post_build`` (and asks :func:`warnings_counted` whether
``--strict`` fails the build); they raise :class:`PublisherError` or ``OSError`` and the hook
turns either into a failed build (the published site untouched).
"""

from __future__ import annotations

import logging
import os
from pathlib import Path
from typing import Any, Protocol

import mkdocs
from mkdocs.utils import CountHandler

import publisher

from ...kernel.canonical import sha256_hex
from ...kernel.errors import IntegrityError
from ...kernel.reasons import Reason
from ...kernel.trust import KeyRing
from ..checks.manifest import MANIFEST_NAME, manifest_bytes, record_uri, seal_files
from ..pages.offline import record_js_uri, write_search_files
from ..pages.proofs import LIGHT, ProofSource, write_proofs
from ..pages.staged import write_staged
from .workers import BuildHelper, check_record_chunk

__all__ = ["Sealed", "mkdocs_logger", "publish_proofs", "publish_records", "warnings_counted", "write_manifest"]


class _Digests(Protocol):
    def record_digests(self, items: list[tuple[str, str]], scripts: bool = False) -> list[str]: ...


class Sealed(Protocol):
    """What the pages of a build sealed (see :class:`publisher.site.lifecycle.events.EvidenceBuild`)."""

    sealed: list[dict[str, Any]]
    sealed_snapshots: list[dict[str, Any]]
    sealed_windows: list[dict[str, Any]]


def publish_records(
    staging: Path, source_ids: list[str], helper: _Digests | None, *, offline: bool
) -> list[dict[str, Any]]:
    """Re-verify every published ``sources/<id>/record.json`` (and, offline, write its ``record.js``
    and the offline search files); the manifest's ``records``."""
    sids = sorted(source_ids)
    items = [(os.fspath(staging / record_uri(sid)), sid) for sid in sids]
    if helper is not None:
        digests = helper.record_digests(items, scripts=offline)
    else:
        digests = check_record_chunk(items, offline)
    if offline:
        write_search_files(staging)
    return [{"source_id": sid, "sha256": digest} for sid, digest in zip(sids, digests, strict=True)]


def publish_proofs(
    staging: Path,
    sources: list[ProofSource],
    ring: KeyRing,
    records: list[dict[str, Any]],
    helper: BuildHelper | None = None,
) -> list[dict[str, Any]]:
    """Write every cited span's proof (:mod:`.proofs`; the helpers may have written them while
    the pages were built); a source in ``proofs`` mode gets its record without text, its
    manifest record entry updated in place. Returns the manifest's ``proofs``.

    ``records`` are the manifest's record entries of the published, re-verified ``record.json``
    copies: each source's proofs must have been derived from exactly those bytes, else the
    snapshot changed during the build and the build is refused (SNAPSHOT_HASH_MISMATCH).

    The text is never published twice: an offline site's ``record.js`` (the record again, as a
    script) is left out where the record has no text, and where a signed root anchors every
    excerpt's proof (whole-record verification from disk then reads a record.json the reader
    chooses; served, it fetches record.json)."""
    by_sid = {entry["source_id"]: entry for entry in records}
    out: list[dict[str, Any]] = []
    written = (
        helper.proofs(staging, sources, ring)
        if helper is not None
        else [write_proofs(staging, source, ring) for source in sources]
    )
    for source, done in zip(sources, written, strict=True):
        entry = by_sid.get(source.source_id)
        if entry is None or entry.get("sha256") != done.record:
            raise IntegrityError(
                f"snapshot {source.source_id} changed during the build: its published record is not "
                "the one its excerpt proofs were derived from",
                reason=Reason.SNAPSHOT_HASH_MISMATCH,
            )
        out += done.entries
        if done.light is not None:
            write_staged(staging / record_uri(source.source_id), done.light)
            entry.update(sha256=sha256_hex(done.light), form=LIGHT)
            if not done.signed and done.entries:
                logging.getLogger("mkdocs.plugins.publisher").warning(
                    f"evidence: {source.source_id} is published without its text, but no acquisition event "
                    "signed by a trusted key anchors its Merkle root: readers cannot verify its excerpts "
                    "(sign its acquisition, or publish it whole)"
                )
        script = staging / record_js_uri(source.source_id)
        if (done.light is not None or done.signed) and script.is_file():
            script.unlink()
    return out


def write_manifest(
    staging: Path, build: Sealed, records: list[dict[str, Any]], proofs: list[dict[str, Any]] | None = None
) -> None:
    """Write ``evidence-manifest.json``: the sealed elements and every file of the site.

    Each record and proof file must still be the bytes the build verified or wrote (the proofs
    are written while the pages are rendered, before other plugins' ``on_post_build``): one
    changed since is refused (SNAPSHOT_HASH_MISMATCH), never sealed as it is now."""
    files = seal_files(staging)
    found = {entry["path"]: entry["sha256"] for entry in files}
    written = [(record_uri(e["source_id"]), e["sha256"]) for e in records]
    written += [(e["path"], e["sha256"]) for e in proofs or []]
    changed = [path for path, digest in written if found.get(path) != digest]
    if changed:
        raise IntegrityError(
            f"{changed[0]} changed after the build verified or wrote it ({len(changed)} file(s))",
            reason=Reason.SNAPSHOT_HASH_MISMATCH,
        )
    data = manifest_bytes(
        build.sealed,
        build.sealed_snapshots,
        f"publisher {publisher.__version__}",
        windows=build.sealed_windows,
        records=records,
        files=files,
        proofs=proofs or [],
    )
    (staging / MANIFEST_NAME).write_bytes(data)


def mkdocs_logger() -> logging.Logger:
    """The logger MkDocs counts strict-mode warnings on (``properdocs`` under ProperDocs)."""
    return logging.getLogger(mkdocs.__name__)


def warnings_counted() -> bool:
    """Whether any warning counter on the ``mkdocs`` logger (MkDocs' strict counter, ours) counted:
    under ``--strict`` such a build fails, so it is never published."""
    loggers = {mkdocs_logger(), logging.getLogger("mkdocs")}
    return any(isinstance(h, CountHandler) and h.get_counts() for lg in loggers for h in lg.handlers)
