"""The fresh-fetch rule (CONTRACT section 3), one clause at a time."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import pytest
from _policy import KeyRing
from conftest import make_record

from publisher.gate.freshness import freshness
from publisher.kernel.assets import AssetChecker
from publisher.kernel.models import Event, Snapshot
from publisher.kernel.reasons import Reason
from publisher.kernel.store import verify_record

CREATED = "2026-05-01T10:00:00Z"


def _snap(**kw: Any) -> Snapshot:
    record = make_record(**kw)
    return verify_record(record, record["source_id"])


def _event(snap: Snapshot, n: int = 1, **kw: Any) -> Event:
    raw: dict[str, Any] = {
        "schema_version": 1,
        "event_id": f"ev-{n:04d}",
        "type": "fetch",
        "source_id": snap.source_id,
        "url": snap.url,
        "at": "2026-05-01T10:00:05Z",
        "fresh": True,
        "sha256": snap.content_hash[7:],
        "actor": "main",
        "detail": None,
    }
    raw.update(kw)
    return Event.model_validate(raw)


@pytest.fixture
def snap() -> Snapshot:
    return _snap()


@pytest.fixture
def no_assets() -> AssetChecker:
    return AssetChecker(None)


def test_fresh_fetch_after_creation_is_fresh(snap: Snapshot, no_assets: AssetChecker) -> None:
    got = freshness(snap, [_event(snap)], CREATED, no_assets, trusted_keys=KeyRing())
    assert got.fresh and got.event_id == "ev-0001" and got.reason is None


def test_same_second_as_created_at_is_fresh(snap: Snapshot, no_assets: AssetChecker) -> None:
    assert freshness(snap, [_event(snap, at=CREATED)], CREATED, no_assets, trusted_keys=KeyRing()).fresh


def test_timestamps_are_compared_as_instants(snap: Snapshot, no_assets: AssetChecker) -> None:
    # As strings "2026-05-01T10:00:00.5Z" < "2026-05-01T10:00:00Z"; as instants it is later.
    assert freshness(
        snap, [_event(snap, at=CREATED)], "2026-05-01T10:00:00.000Z", no_assets, trusted_keys=KeyRing()
    ).fresh
    assert freshness(
        snap, [_event(snap, at="2026-05-01T10:00:00.5Z")], CREATED, no_assets, trusted_keys=KeyRing()
    ).fresh
    got = freshness(snap, [_event(snap, at="2026-05-01T09:59:59.999Z")], CREATED, no_assets, trusted_keys=KeyRing())
    assert not got.fresh and got.reason is Reason.NO_FRESH_FETCH


def test_fetch_before_created_at_is_not_fresh(snap: Snapshot, no_assets: AssetChecker) -> None:
    got = freshness(snap, [_event(snap, at="2026-05-01T09:59:59Z")], CREATED, no_assets, trusted_keys=KeyRing())
    assert not got.fresh and got.reason is Reason.NO_FRESH_FETCH and got.event_id is None


@pytest.mark.parametrize("kind", ["register", "read"])
def test_register_and_read_are_not_fresh(snap: Snapshot, no_assets: AssetChecker, kind: str) -> None:
    got = freshness(snap, [_event(snap, type=kind, fresh=False)], CREATED, no_assets, trusted_keys=KeyRing())
    assert not got.fresh and got.reason is Reason.NO_FRESH_FETCH
    # Even a hand-edited register line claiming fresh: true does not count.
    got = freshness(snap, [_event(snap, type=kind, fresh=True)], CREATED, no_assets, trusted_keys=KeyRing())
    assert not got.fresh and got.reason is Reason.NO_FRESH_FETCH


def test_fetch_flagged_not_fresh_is_not_fresh(snap: Snapshot, no_assets: AssetChecker) -> None:
    assert not freshness(snap, [_event(snap, fresh=False)], CREATED, no_assets, trusted_keys=KeyRing()).fresh


def test_fetch_whose_digest_no_longer_matches_is_not_fresh(snap: Snapshot, no_assets: AssetChecker) -> None:
    got = freshness(snap, [_event(snap, sha256="0" * 64)], CREATED, no_assets, trusted_keys=KeyRing())
    assert not got.fresh and got.reason is Reason.NO_FRESH_FETCH


def test_event_for_another_source_is_not_fresh(snap: Snapshot, no_assets: AssetChecker) -> None:
    other = _snap(text="another text")
    assert not freshness(snap, [_event(other)], CREATED, no_assets, trusted_keys=KeyRing()).fresh


def test_event_copied_from_another_run_is_not_fresh(snap: Snapshot, no_assets: AssetChecker) -> None:
    copied_early = _event(snap, at="2025-12-31T23:59:59Z")
    copied_other_url = _event(snap, url="https://mirror.example.org/paper")
    got = freshness(snap, [copied_early, copied_other_url], CREATED, no_assets, trusted_keys=KeyRing())
    assert not got.fresh and got.reason is Reason.NO_FRESH_FETCH


def test_any_one_qualifying_event_suffices(snap: Snapshot, no_assets: AssetChecker) -> None:
    events = [
        _event(snap, 1, type="register", fresh=False),
        _event(snap, 2, at="2020-01-01T00:00:00Z"),
        _event(snap, 3),
        _event(snap, 4, type="read", fresh=False),
    ]
    got = freshness(snap, events, CREATED, no_assets, trusted_keys=KeyRing())
    assert got.fresh and got.event_id == "ev-0003"


@pytest.mark.parametrize("created_at", [None, "", "2026-05-01 10:00:00", "2026-05-01T10:00:00+00:00", "yesterday"])
def test_run_without_a_usable_created_at_has_nothing_fresh(
    snap: Snapshot, no_assets: AssetChecker, created_at: str | None
) -> None:
    got = freshness(snap, [_event(snap)], created_at, no_assets, trusted_keys=KeyRing())
    assert not got.fresh and got.reason is Reason.NO_FRESH_FETCH


def test_no_events_is_not_fresh(snap: Snapshot, no_assets: AssetChecker) -> None:
    got = freshness(snap, [], CREATED, no_assets, trusted_keys=KeyRing())
    assert not got.fresh and got.reason is Reason.NO_FRESH_FETCH


# --- local PDFs ------------------------------------------------------------------------------

PDF = b"%PDF-1.4 pretend pdf bytes\n"
PDF_SHA = hashlib.sha256(PDF).hexdigest()


def _pdf_snapshot(wiki: Path, *, write: bytes | None = PDF, sha: str = PDF_SHA) -> Snapshot:
    relative = f"assets/papers/{PDF_SHA}.pdf"
    if write is not None:
        target = wiki / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(write)
    return _snap(
        url="file:///home/user/paper.pdf",
        origin="user-supplied-pdf",
        asset={"path": relative, "sha256": sha, "bytes": len(PDF)},
    )


def _pdf_event(snap: Snapshot, sha: str = PDF_SHA) -> Event:
    return _event(snap, type="local_pdf", sha256=sha)


def test_local_pdf_with_matching_asset_is_fresh(tmp_path: Path) -> None:
    snap = _pdf_snapshot(tmp_path)
    got = freshness(snap, [_pdf_event(snap)], CREATED, AssetChecker(tmp_path), trusted_keys=KeyRing())
    assert got.fresh and got.event_id == "ev-0001"


def test_local_pdf_with_missing_asset(tmp_path: Path) -> None:
    snap = _pdf_snapshot(tmp_path, write=None)
    got = freshness(snap, [_pdf_event(snap)], CREATED, AssetChecker(tmp_path), trusted_keys=KeyRing())
    assert not got.fresh and got.reason is Reason.ASSET_HASH_MISMATCH


def test_local_pdf_with_changed_asset(tmp_path: Path) -> None:
    snap = _pdf_snapshot(tmp_path, write=PDF + b"appended")
    got = freshness(snap, [_pdf_event(snap)], CREATED, AssetChecker(tmp_path), trusted_keys=KeyRing())
    assert not got.fresh and got.reason is Reason.ASSET_HASH_MISMATCH


def test_local_pdf_without_a_wiki_root(tmp_path: Path) -> None:
    snap = _pdf_snapshot(tmp_path)
    got = freshness(snap, [_pdf_event(snap)], CREATED, AssetChecker(None), trusted_keys=KeyRing())
    assert not got.fresh and got.reason is Reason.ASSET_HASH_MISMATCH


def test_local_pdf_asset_replaced_by_a_symlink(tmp_path: Path) -> None:
    snap = _pdf_snapshot(tmp_path, write=None)
    real = tmp_path / "real.pdf"
    real.write_bytes(PDF)
    link = tmp_path / (snap.asset.path if snap.asset else "")
    link.parent.mkdir(parents=True)
    link.symlink_to(real)
    got = freshness(snap, [_pdf_event(snap)], CREATED, AssetChecker(tmp_path), trusted_keys=KeyRing())
    assert not got.fresh and got.reason is Reason.ASSET_HASH_MISMATCH


def test_local_pdf_event_digest_must_equal_the_asset(tmp_path: Path) -> None:
    snap = _pdf_snapshot(tmp_path)
    got = freshness(snap, [_pdf_event(snap, sha="0" * 64)], CREATED, AssetChecker(tmp_path), trusted_keys=KeyRing())
    assert not got.fresh


def test_local_pdf_event_before_creation_is_not_fresh(tmp_path: Path) -> None:
    snap = _pdf_snapshot(tmp_path)
    event = _event(snap, type="local_pdf", sha256=PDF_SHA, at="2020-01-01T00:00:00Z")
    got = freshness(snap, [event], CREATED, AssetChecker(tmp_path), trusted_keys=KeyRing())
    assert not got.fresh and got.reason is Reason.NO_FRESH_FETCH


def test_local_pdf_event_on_snapshot_without_asset(snap: Snapshot, tmp_path: Path) -> None:
    got = freshness(snap, [_pdf_event(snap)], CREATED, AssetChecker(tmp_path), trusted_keys=KeyRing())
    assert not got.fresh and got.reason is Reason.ASSET_HASH_MISMATCH


def test_asset_checker_hashes_each_file_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    snap = _pdf_snapshot(tmp_path)
    checker = AssetChecker(tmp_path)
    calls: list[str] = []
    real = checker._hash

    def counting(relative: str) -> str | None:
        calls.append(relative)
        return real(relative)

    monkeypatch.setattr(checker, "_hash", counting)
    for _ in range(3):
        assert checker.check(snap) is None
    assert len(calls) == 1
