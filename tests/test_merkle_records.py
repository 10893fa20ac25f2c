"""``merkle_root`` and ``merkle_size`` on snapshots (sealed by ``record_hash``) and on acquisition
events (signed with them), CONTRACT sections 2, 3, 12 and 16."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import pytest
from _provenance_helpers import PAGE, serve
from conftest import make_record

from publisher.acquire.signing import KeyRing, load_public_key, load_signer, new_key_pair, signature_problem
from publisher.acquire.sources import fetch
from publisher.kernel.canonical import canonical_bytes, record_hash_for
from publisher.kernel.errors import IntegrityError
from publisher.kernel.merkle import merkle_root
from publisher.kernel.reasons import Reason
from publisher.kernel.store import SnapshotStore, verify_record
from publisher.runs import init_run


def _resealed(record: dict[str, Any], **change: Any) -> dict[str, Any]:
    out = {k: v for k, v in record.items() if k != "record_hash"}
    out.update(change)
    out = {k: v for k, v in out.items() if v is not None or not k.startswith("merkle_")}
    out["record_hash"] = record_hash_for(out)
    return out


def test_new_records_carry_the_root_and_size_of_their_text() -> None:
    text = "x" * 3000
    record = make_record(text=text)
    assert record["merkle_root"] == merkle_root(text)
    assert record["merkle_size"] == 3
    snap = verify_record(record, record["source_id"])
    assert (snap.merkle_root, snap.merkle_size) == (record["merkle_root"], 3)
    empty = make_record(text="")
    assert empty["merkle_root"] == "sha256:" + hashlib.sha256(b"").hexdigest() and empty["merkle_size"] == 0


def test_the_root_is_sealed_by_record_hash() -> None:
    record = make_record(text="y" * 2000)
    edited = dict(record, merkle_root="sha256:" + "0" * 64)
    with pytest.raises(IntegrityError) as info:
        verify_record(edited, record["source_id"])
    assert info.value.reason is Reason.SNAPSHOT_HASH_MISMATCH


@pytest.mark.parametrize(
    "change",
    [
        {"merkle_root": "sha256:" + "0" * 64},
        {"merkle_size": 3},
        {"merkle_size": None},
        {"merkle_root": None},
    ],
)
def test_a_resealed_wrong_root_or_size_is_refused(change: dict[str, Any]) -> None:
    record = make_record(text="y" * 2000)
    with pytest.raises(IntegrityError) as info:
        verify_record(_resealed(record, **change), record["source_id"])
    assert info.value.reason is Reason.SNAPSHOT_HASH_MISMATCH


def test_records_written_before_carry_none_and_still_read(tmp_path: Path) -> None:
    legacy = _resealed(make_record(), merkle_root=None, merkle_size=None)
    assert "merkle_root" not in legacy
    store = SnapshotStore(tmp_path / "sources")
    snap, created = store.put(legacy)
    assert created and snap.merkle_root is None and snap.merkle_size is None
    assert store.read(snap.source_id).merkle_root is None
    assert b"merkle" not in canonical_bytes(legacy)


def test_acquisition_events_carry_the_root_under_the_signature(tmp_path: Path, no_proxy: None) -> None:
    private, public, key_id = new_key_pair(tmp_path / "keys", "ci")
    run = init_run(tmp_path / "runs" / "r", "r")
    with serve() as pages:
        pages.pages["/p"] = ("text/plain; charset=utf-8", PAGE.encode())
        outcome = fetch(run, pages.url("/p"), signer=load_signer(private, run.name()))
    event, snap = outcome.event, outcome.snapshot
    assert event.merkle_root == snap.merkle_root == merkle_root(PAGE)
    assert event.merkle_size == snap.merkle_size == 1
    ring = KeyRing({key_id: load_public_key(public)})
    assert signature_problem(event, ring, run.name()) is None
    for change in ({"merkle_root": "sha256:" + "1" * 64}, {"merkle_size": 2}):
        assert signature_problem(event.model_copy(update=change), ring, run.name()) is not None


@pytest.mark.parametrize("change", [{"merkle_root": "sha256:" + "0" * 64}, {"merkle_size": 4}])
def test_the_proof_builder_refuses_a_resealed_wrong_root_with_the_tree_it_builds(change: dict[str, Any]) -> None:
    """The build's proofs verify the record with the tree they build (one Merkle pass, not two):
    a resealed wrong root or size is still refused there, and a good record gives that tree's root."""
    from publisher.site.pages.proofs import ProofSource, _bundles

    record = make_record(text="y" * 2500)
    source = ProofSource(record["source_id"], [(10, 20)], False)
    bundles, _ = _bundles(canonical_bytes(record) + b"\n", source, KeyRing())
    assert [b["record"]["merkle_root"] for b in bundles.values()] == [record["merkle_root"]]
    with pytest.raises(IntegrityError) as info:
        _bundles(canonical_bytes(_resealed(record, **change)) + b"\n", source, KeyRing())
    assert info.value.reason is Reason.SNAPSHOT_HASH_MISMATCH
