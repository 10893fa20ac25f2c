"""``publisher check-site``'s published records: every ``sources/<id>/record.json`` (and an offline
site's ``record.js``) against the snapshots the wiki stores, byte for byte.

:class:`WikiTexts` reads each verified snapshot text of the wiki once; :mod:`.checksite` also
re-slices the pages' excerpts, snapshots and windows from it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ...kernel import _fs
from ...kernel.canonical import SOURCE_ID_RE, sha256_hex
from ...kernel.errors import PublisherError
from ...kernel.eventlog import read_log
from ...kernel.eventviews import EventView
from ...kernel.findings import Finding
from ...kernel.reasons import Reason
from ...kernel.sentences import Sentences
from ...kernel.store import SnapshotStore
from ...kernel.trust import KeyRing
from ...runs import Run
from ...wiki.discover import discover_runs
from ..pages.offline import record_js, record_js_uri
from ..pages.proofs import LIGHT, check_proofs, light_record
from .manifest import SITE_FILE_LIMIT, check_record_copy, record_uri

__all__ = ["WikiTexts", "check_records", "check_site_proofs"]


class WikiTexts:
    """Verified snapshot texts by source id, read once each from whichever run holds the file."""

    def __init__(self, wiki_root: Path) -> None:
        self._dirs: dict[str, list[Path]] = {}
        for path in discover_runs(wiki_root):
            store = Run(path).store
            for sid in store.ids():
                self._dirs.setdefault(sid, []).append(store.folder)
        self._cache: dict[str, str | PublisherError] = {}
        self._wrapped: dict[str, bool] = {}
        self._sentences: dict[str, Sentences] = {}

    def get(self, source_id: str) -> str:
        hit = self._cache.get(source_id)
        if hit is None:
            folders = self._dirs.get(source_id)
            if not SOURCE_ID_RE.fullmatch(source_id) or not folders:
                hit = PublisherError(f"no snapshot {source_id} in any run of the wiki", reason=Reason.UNKNOWN_SOURCE)
            else:
                try:
                    snap = SnapshotStore(folders[0]).read(source_id)
                    hit, self._wrapped[source_id] = snap.text, snap.pages is not None
                except PublisherError as exc:
                    hit = exc
            self._cache[source_id] = hit
        if isinstance(hit, PublisherError):
            raise hit
        return hit

    def sentences(self, source_id: str) -> Sentences:
        """The sentences of the verified text of ``source_id`` (as :meth:`get`, split once)."""
        found = self._sentences.get(source_id)
        if found is None:
            text = self.get(source_id)
            found = self._sentences[source_id] = Sentences(text, wrapped=self._wrapped[source_id])
        return found

    def known(self) -> list[str]:
        """Every source id some run of the wiki holds a file for."""
        return sorted(self._dirs)

    def stored_files(self, source_id: str) -> list[Path]:
        """The snapshot file of ``source_id`` in each run that holds it (after :meth:`get`)."""
        return [SnapshotStore(folder).path_for(source_id) for folder in self._dirs.get(source_id, [])]


def check_records(site: Path, manifest: dict[str, Any], texts: WikiTexts) -> tuple[list[Finding], int]:
    """Every published ``sources/<id>/record.json`` is the stored snapshot file, byte for byte, and verifies.

    Expected: each record the manifest names, and one for every source whose text or excerpts
    the site shows. Any record file found in the site is checked as well. Returns the findings
    and the number of records read.
    """
    findings: list[Finding] = []
    add = findings.append
    count = 0
    expected = {e["source_id"] for e in manifest["records"]}
    for entry in manifest["excerpts"] + manifest["snapshots"] + manifest["windows"]:
        if isinstance(entry.get("source_id"), str):
            expected.add(entry["source_id"])
    folder = site / "sources"
    present = {p.parent.name for p in folder.glob("*/record.json")} if folder.is_dir() else set()
    scripts = {p.parent.name for p in folder.glob("*/record.js")} if folder.is_dir() else set()
    expected |= scripts
    sealed = {e["source_id"]: e.get("sha256") for e in manifest["records"]}
    light = {e["source_id"] for e in manifest["records"] if e.get("form") == LIGHT}
    for sid in sorted(expected | present):
        rel = record_uri(sid)

        def finding(detail: str, sid: str = sid, rel: str = rel) -> Finding:
            return Finding(Reason.SNAPSHOT_HASH_MISMATCH, rel, detail, source_id=sid)

        path = site / rel
        if sid not in present or path.is_symlink() or not path.is_file():
            add(finding("published snapshot record is missing or not a plain file"))
            continue
        count += 1
        if sid in light:
            _check_light_record(path, rel, sid, sealed.get(sid), texts, add)
            continue
        try:
            texts.get(sid)
            data = check_record_copy(path, sid)
        except PublisherError as exc:
            add(Finding(exc.reason or Reason.SNAPSHOT_HASH_MISMATCH, rel, exc.one_line(), source_id=sid))
            continue
        except OSError as exc:
            add(finding(f"cannot read the published record ({exc.strerror or exc})"))
            continue
        if sid in scripts:
            _check_record_script(site, sid, data, add)
        try:
            files = texts.stored_files(sid)
            stored = [_fs.read_regular(p, follow_symlinks=False, limit=SITE_FILE_LIMIT) for p in files]
        except OSError as exc:
            add(finding(f"cannot read the stored snapshot file ({exc.strerror or exc})"))
            continue
        if data not in stored:
            add(finding("published record differs from the stored snapshot file"))
        elif sid in sealed and sealed[sid] != sha256_hex(data):
            add(finding("published record differs from the seal"))
        elif sid not in sealed:
            add(finding("published record is not in the seal"))
    return findings, count


def _check_record_script(site: Path, sid: str, record: bytes, add: Any) -> None:
    """An offline site's ``record.js`` hands the verifier exactly the published record."""
    rel = record_js_uri(sid)
    try:
        data = _fs.read_regular(site / rel, follow_symlinks=False, limit=SITE_FILE_LIMIT)
    except OSError as exc:
        add(Finding(Reason.SNAPSHOT_HASH_MISMATCH, rel, f"cannot read the record script ({exc})", source_id=sid))
        return
    if data != record_js(sid, record):
        add(Finding(Reason.SNAPSHOT_HASH_MISMATCH, rel, "record script differs from the record", source_id=sid))


def _check_light_record(path: Path, rel: str, sid: str, sealed: str | None, texts: WikiTexts, add: Any) -> None:
    """A record published without its text (``proofs`` mode) is the stored record less ``text``."""
    try:
        texts.get(sid)
        data = _fs.read_regular(path, follow_symlinks=False, limit=SITE_FILE_LIMIT)
        stored = [_fs.read_regular(p, follow_symlinks=False, limit=SITE_FILE_LIMIT) for p in texts.stored_files(sid)]
        expected = [light_record(b) for b in stored]
    except PublisherError as exc:
        add(Finding(exc.reason or Reason.SNAPSHOT_HASH_MISMATCH, rel, exc.one_line(), source_id=sid))
        return
    except (OSError, ValueError) as exc:
        add(Finding(Reason.SNAPSHOT_HASH_MISMATCH, rel, f"cannot read the published record ({exc})", source_id=sid))
        return
    if data not in expected:
        detail = "published record differs from the stored snapshot less its text"
        add(Finding(Reason.SNAPSHOT_HASH_MISMATCH, rel, detail, source_id=sid))
    elif sealed != sha256_hex(data):
        add(Finding(Reason.SNAPSHOT_HASH_MISMATCH, rel, "published record differs from the seal", source_id=sid))


def check_site_proofs(site: Path, manifest: dict[str, Any], texts: WikiTexts, keys: KeyRing) -> list[Finding]:
    """:func:`publisher.site.pages.proofs.check_proofs` with the wiki's stored records, signed events
    and trusted keys."""
    stored: dict[str, bytes] = {}
    events: dict[str, list[EventView]] = {}
    logs: dict[Path, list[EventView]] = {}
    entries = manifest.get("proofs", [])
    wanted = {str(e.get("source_id")) for e in (entries if isinstance(entries, list) else []) if isinstance(e, dict)}
    folder = site / "sources"
    wanted |= {p.parent.parent.name for p in folder.glob("*/proofs/*")} if folder.is_dir() else set()
    for sid in sorted(wanted & set(texts.known())):
        try:
            texts.get(sid)
        except PublisherError:
            continue
        files = texts.stored_files(sid)
        try:  # verified a moment ago; a name swapped since then holds no snapshot
            stored[sid] = _fs.read_regular(files[0], follow_symlinks=False, limit=SITE_FILE_LIMIT)
        except OSError:
            continue
        for file in files:
            log = file.parent.parent / "events.jsonl"
            if log not in logs:
                try:
                    logs[log] = list(read_log(log).events) if log.is_file() else []
                except PublisherError:
                    logs[log] = []
            events.setdefault(sid, []).extend(e for e in logs[log] if e.source_id == sid)
    return check_proofs(site, manifest, stored, keys, events)
