"""The site seal: ``evidence-manifest.json`` and the published snapshot records it names."""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from ..kernel.canonical import StrictJSONError, loads_record
from ..kernel.errors import IntegrityError
from ..kernel.reasons import Reason
from ..kernel.store import verify_record

__all__ = ["MANIFEST_NAME", "manifest_bytes", "record_uri", "check_record_copy"]


MANIFEST_NAME = "evidence-manifest.json"


def manifest_bytes(
    entries: Iterable[dict[str, Any]],
    snapshots: Iterable[dict[str, Any]],
    generator: str,
    *,
    windows: Iterable[dict[str, Any]] = (),
    records: Iterable[dict[str, Any]] = (),
) -> bytes:
    """The manifest file: sorted entries, so an unchanged wiki seals to the same bytes.

    ``excerpts``, ``snapshots`` and ``windows`` entries name the page, the source id, the offsets
    (a window's are its start and end in the whole text) and the sha256 of the text shown;
    ``records`` name each published ``sources/<id>/record.json`` and the sha256 of its bytes.
    """

    def key(e: dict[str, Any]) -> tuple[Any, ...]:
        return (e["page"], e["source_id"], e.get("start", -1), e.get("end", -1), e["sha256"])

    doc = {
        "schema_version": 1,
        "generator": generator,
        "excerpts": sorted(entries, key=key),
        "snapshots": sorted(snapshots, key=key),
        "windows": sorted(windows, key=key),
        "records": sorted(records, key=lambda e: (e["source_id"], e["sha256"])),
    }
    return (json.dumps(doc, ensure_ascii=False, indent=1, sort_keys=True) + "\n").encode("utf-8")


def record_uri(source_id: str) -> str:
    """Where the site publishes a snapshot record, byte for byte, for readers to verify."""
    return f"sources/{source_id}/record.json"


def check_record_copy(path: Path, source_id: str) -> bytes:
    """Re-verify a published record file (every digest, its name); returns its bytes.

    Raises IntegrityError (SNAPSHOT_HASH_MISMATCH) when it is not strict JSON or does not verify.
    """
    data = path.read_bytes()
    try:
        raw, canonical = loads_record(data)
    except (StrictJSONError, ValueError) as exc:
        raise IntegrityError(
            f"published record of {source_id} is not strict JSON", reason=Reason.SNAPSHOT_HASH_MISMATCH
        ) from exc
    verify_record(raw, source_id, canonical_body=data if canonical else None)
    return data
