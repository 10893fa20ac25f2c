"""One snapshot checked in the kernel: what crosses a process boundary, and the fast read of a
file this product wrote (its schema proves it canonical) against the strict reading of any other."""

from __future__ import annotations

import hashlib
import os
import pickle
import pickletools
from pathlib import Path
from typing import Any

import orjson
import pytest

from publisher.kernel import canonical, snapshots
from publisher.kernel.canonical import canonical_bytes
from publisher.kernel.models import DEFAULT_EXCLUDED_MODALITIES
from publisher.kernel.reasons import Reason
from publisher.kernel.snapshots import SnapshotCheck, SpanCheck, check_snapshot
from publisher.kernel.store import SnapshotStore, build_record

TEXT = "Κλινική δοκιμή — étude randomisée.\nPatients (n = 120) 𝛽-cell ≤ 0.05; 治疗 结果.\n" * 30
PDF = b"%PDF-1.7 a stored paper\n"


def _record(url: str = "https://example.org/a", **extra: Any) -> dict[str, Any]:
    n = len(TEXT)
    fields: dict[str, Any] = {
        "url": url,
        "text": TEXT,
        "title": "Trial",
        "retrieved_at": "2026-01-02T03:04:05Z",
        "access": "full_text",
        "origin": "pmc",
        "paper": {"pmid": "123", "doi": None, "pmcid": None},
        "sections": [{"title": "Body", "start": 0, "end": n}, {"title": "Results", "start": 100, "end": 300}],
        "pages": [{"page": 1, "start": 0, "end": 150}, {"page": 2, "start": 150, "end": n}],
    }
    fields.update(extra)
    return build_record(**fields)


def _rich(tmp_path: Path) -> tuple[str, str]:
    """A snapshot with every optional part (asset, surface, identity, supersedes); its folder and id."""
    (tmp_path / "assets").mkdir()
    (tmp_path / "assets" / "paper.pdf").write_bytes(PDF)
    store = SnapshotStore(tmp_path / "sources")
    older, _ = store.put(_record("https://example.org/old"))
    identity = {
        "pmid": {"value": "123", "basis": "document", "via": "front matter"},
        "title": {"value": "Trial", "basis": "asserted", "via": "acquirer"},
    }
    surface = {
        "type": "WHOLE_TEXT",
        "expected_pages": None,
        "extracted_pages": [],
        "missing_pages": [],
        "unexpected_pages": [],
        "complete": True,
        "excluded_modalities": list(DEFAULT_EXCLUDED_MODALITIES),
        "method": "publisher-jats/test",
    }
    asset = {"path": "assets/paper.pdf", "sha256": hashlib.sha256(PDF).hexdigest(), "bytes": len(PDF)}
    snap, _ = store.put(_record(identity=identity, surface=surface, asset=asset, supersedes=older.source_id))
    return os.fspath(store.folder), snap.source_id


def test_a_check_crosses_processes_as_plain_values_and_comes_back_equal(tmp_path: Path) -> None:
    folder, sid = _rich(tmp_path)
    n = len(TEXT)
    check = check_snapshot((folder, sid, ((120, 160), (10, 20), (n - 5, n + 5), (0, 0))), os.fspath(tmp_path))
    assert check.ok and check.asset is not None and check.surface is not None and check.identity is not None
    assert check.asset_digest == hashlib.sha256(PDF).hexdigest() and check.supersedes is not None
    assert [span.reason for span in check.spans] == [None, None, Reason.SPAN_OUT_OF_RANGE, Reason.SPAN_OUT_OF_RANGE]
    failed = check_snapshot((folder, "src-" + "0" * 64, ()))
    assert not failed.ok and failed.reason is Reason.UNKNOWN_SOURCE
    for original in (check, failed):
        blob = pickle.dumps(original, protocol=pickle.HIGHEST_PROTOCOL)
        again = pickle.loads(blob)
        assert again == original
        assert type(again) is SnapshotCheck and all(type(span) is SpanCheck for span in again.spans)
        assert again.paper == original.paper and again.derived_ids() == original.derived_ids()
        assert again.identity == original.identity and again.surface == original.surface
        assert again.reason is original.reason
        assert [span.reason for span in again.spans] == [span.reason for span in original.spans]
        # Nothing but the kernel's two rebuilders is named in the pickle: no model, no enum,
        # no dataclass (their own pickling runs Python code per object, on both sides).
        strings = {arg for _, arg, _ in pickletools.genops(blob) if isinstance(arg, str)}
        modules = {s for s in strings if s.startswith(("publisher.", "pydantic", "enum", "copyreg", "builtins"))}
        assert modules == {"publisher.kernel.snapshots"}
        assert not {"Paper", "Asset", "Surface", "Identity", "Reason", "SpanCheck", "SnapshotCheck"} & strings


def test_a_batch_of_checks_pickles_smaller_than_the_objects(tmp_path: Path) -> None:
    """What a worker sends back for a batch is plain values: no per-check class or state dict."""
    store = SnapshotStore(tmp_path / "sources")
    sids = [store.put(_record(f"https://example.org/{i}"))[0].source_id for i in range(20)]
    checks = [check_snapshot((os.fspath(store.folder), sid, ((10, 20),))) for sid in sids]
    blob = pickle.dumps(checks, protocol=pickle.HIGHEST_PROTOCOL)
    assert pickle.loads(blob) == checks
    assert blob.count(b"pydantic") == 0 and blob.count(b"__dict__") == 0


def _with_a_float(tmp_path: Path) -> tuple[str, str]:
    """A file exactly as orjson writes it back, but holding a float where the schema wants an int."""
    record = _record()
    record["merkle_size"] = 1e-7  # orjson writes 1e-7, the strict encoder 1e-07
    record["record_hash"] = canonical.record_hash_for(record)
    folder = tmp_path / "sources"
    folder.mkdir()
    data = orjson.dumps(record, option=orjson.OPT_SORT_KEYS) + b"\n"
    assert canonical.loads_canonical_floats_unchecked(data) is not None, "orjson takes it as canonical"
    assert data != canonical_bytes(record) + b"\n", "the strict encoder spells the float otherwise"
    (folder / f"{record['source_id']}.json").write_bytes(data)
    return os.fspath(folder), record["source_id"]


def test_a_float_the_fast_read_takes_as_canonical_fails_as_the_strict_read_says(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The fast read skips the walk for floats only because a valid snapshot holds none; a record
    that holds one fails validation and is judged again by the strict path: same reason, same words."""
    folder, sid = _with_a_float(tmp_path)
    fast = check_snapshot((folder, sid, ()))
    monkeypatch.setattr(canonical, "_FAST", False)
    strict = check_snapshot((folder, sid, ()))
    assert not fast.ok and fast.reason is Reason.SNAPSHOT_HASH_MISMATCH
    assert (fast.reason, fast.detail) == (strict.reason, strict.detail)


def test_the_fast_read_gives_what_the_strict_read_gives(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    folder, sid = _rich(tmp_path)
    task = (folder, sid, ((120, 160), (10, 20)))
    fast = check_snapshot(task, os.fspath(tmp_path))
    monkeypatch.setattr(canonical, "_FAST", False)
    assert check_snapshot(task, os.fspath(tmp_path)) == fast


def test_the_old_import_path_names_the_kernel_objects() -> None:
    from publisher.parallel import SnapshotCheck as exported
    from publisher.parallel import checks

    assert checks.SnapshotCheck is exported is snapshots.SnapshotCheck
    assert checks.check_snapshot is snapshots.check_snapshot and checks.as_error is snapshots.as_error
