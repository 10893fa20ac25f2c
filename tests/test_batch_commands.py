"""The commands read through ``batch``: one read per snapshot, the same results on any executor."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from _gate_helpers import make_run
from _policy import KeyRing, keys_of, options_of, run_keys

from publisher.gate.assemble import assemble_run
from publisher.gate.freshness import freshness
from publisher.gate.inputs import RunOptions
from publisher.gate.pipeline import verify_run
from publisher.kernel import snapshots as checks
from publisher.kernel import store
from publisher.kernel.assets import AssetChecker
from publisher.kernel.eventlog import read_log
from publisher.kernel.reasons import Reason
from publisher.parallel import CheckedSnapshots, verify_many


def _without_time(result: dict) -> dict:
    return {k: v for k, v in result.items() if k != "generated_at"}


@pytest.fixture
def counted(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every snapshot id the store reads, in order."""
    seen: list[str] = []
    original, original_view = store.read_snapshot, store.read_view

    def read(folder: Path | str, source_id: str, *args: object):  # type: ignore[no-untyped-def]
        seen.append(source_id)
        return original(folder, source_id, *args)  # type: ignore[arg-type]

    def read_view(folder: Path | str, source_id: str, *args: object):  # type: ignore[no-untyped-def]
        seen.append(source_id)
        return original_view(folder, source_id, *args)  # type: ignore[arg-type]

    # The batch reader reads through store.read_view, SnapshotStore.read through store.read_snapshot.
    monkeypatch.setattr(store, "read_snapshot", read)
    monkeypatch.setattr(store, "read_view", read_view)
    monkeypatch.setattr(checks, "read_view", read_view)
    return seen


def test_assemble_reads_each_snapshot_once(tmp_path: Path, counted: list[str]) -> None:
    fx = make_run(tmp_path, articles=2)
    assembly = assemble_run(fx.run, options_of(fx.run), write=False)
    assert assembly.findings == []
    assert sorted(counted) == sorted(set(counted)) == sorted(assembly.referenced)


def test_verify_reads_each_snapshot_once(tmp_path: Path, counted: list[str]) -> None:
    fx = make_run(tmp_path, articles=2)
    assemble_run(fx.run, options_of(fx.run))
    counted.clear()
    verification = verify_run(fx.run, options_of(fx.run), write=False)
    assert verification.verdict == "Verified"
    assert sorted(counted) == sorted(set(counted))


def test_assemble_and_verify_agree_on_any_executor(tmp_path: Path) -> None:
    fx = make_run(tmp_path, articles=3)
    serial = assemble_run(fx.run, RunOptions(run_keys(fx.run), workers=1), write=False).result
    with ThreadPoolExecutor(max_workers=3) as pool:
        threaded = assemble_run(fx.run, RunOptions(run_keys(fx.run), executor=pool), write=False).result
        assemble_run(fx.run, RunOptions(run_keys(fx.run), executor=pool))
        verification = verify_run(fx.run, RunOptions(run_keys(fx.run), executor=pool), write=False)
    assert _without_time(serial) == _without_time(threaded)
    assert verification.verdict == "Verified"


def test_progress_is_reported_per_snapshot(tmp_path: Path) -> None:
    fx = make_run(tmp_path, articles=2)
    calls: list[tuple[int, int]] = []
    assembly = assemble_run(
        fx.run, RunOptions(run_keys(fx.run), progress=lambda done, total: calls.append((done, total))), write=False
    )
    total = len(assembly.referenced)
    assert calls and calls[-1] == (total, total)


def test_reader_keeps_excerpts_and_raises_the_serial_readers_error(tmp_path: Path) -> None:
    fx = make_run(tmp_path, articles=1, report=False)
    article = fx.articles[0]
    sid = article.source_id
    missing = "src-" + "0" * 64
    reader = CheckedSnapshots(fx.run.sources_dir, workers=1)
    reader.want(sid, [(0, 10), (5, 10**7)])
    reader.want(missing, [(0, 1)])
    reader.load()
    assert reader.span(sid, 0, 10).excerpt == article.text[:10]
    assert reader.span(sid, 5, 10**7).reason is Reason.SPAN_OUT_OF_RANGE
    # A span nobody declared is read on demand, and is still the re-slice.
    assert reader.span(sid, 20, 40).excerpt == article.text[20:40]
    assert not hasattr(reader.get(sid), "text")
    serial = fx.run.store
    with pytest.raises(Exception) as expected:
        serial.read(missing)
    for _ in range(2):
        with pytest.raises(type(expected.value)) as got:
            reader.get(missing)
        assert got.value.reason is Reason.UNKNOWN_SOURCE
        assert got.value.one_line() == expected.value.one_line()


def test_freshness_from_the_text_digest_equals_freshness_from_the_text(tmp_path: Path) -> None:
    fx = make_run(tmp_path, articles=2)
    events = read_log(fx.run.events_path).events
    created = fx.run.load_config().created_at
    (check,) = verify_many([(fx.run.sources_dir, a.source_id, ()) for a in fx.articles[:1]], workers=1)
    snap = fx.run.store.read(fx.articles[0].source_id)
    assets = AssetChecker(None)
    by_text = freshness(snap, events, created, assets, trusted_keys=KeyRing())
    by_digest = freshness(check, events, created, assets, text_sha256=check.text_sha256, trusted_keys=KeyRing())
    assert by_text == by_digest and by_text.fresh
    stale = freshness(check, events, created, assets, text_sha256="0" * 64, trusted_keys=KeyRing())
    assert not stale.fresh and stale.reason is Reason.NO_FRESH_FETCH


def test_assemble_and_verify_take_asset_digests_from_the_workers(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A stored PDF is hashed by the worker that verified its snapshot, not again by the assembler;
    a changed PDF is still found."""
    from _wiki_helpers import count_asset_hashes, make_wiki, sample_run, tamper

    wiki = make_wiki(tmp_path / "wiki")
    rb = sample_run(wiki)
    hashed = count_asset_hashes(monkeypatch)
    assembly = assemble_run(rb.run, RunOptions(keys_of(wiki), wiki_root=wiki), write=False)
    assert assembly.findings == [] and len(hashed) == 1
    assert verify_run(rb.run, RunOptions(keys_of(wiki), wiki_root=wiki), write=False).verdict == "Verified"
    monkeypatch.undo()
    tamper("pdf-asset", rb)
    codes = {f.code for f in assemble_run(rb.run, RunOptions(keys_of(wiki), wiki_root=wiki), write=False).findings}
    assert codes == {"ASSET_HASH_MISMATCH"}


def test_checks_hashed_under_another_root_are_not_taken(tmp_path: Path) -> None:
    from _wiki_helpers import make_wiki, sample_run

    wiki = make_wiki(tmp_path / "wiki")
    rb = sample_run(wiki)
    reader = CheckedSnapshots(rb.run.sources_dir, assets_root=tmp_path)
    for sid in rb.texts:
        reader.want(sid)
    reader.load()
    assert reader.asset_digests(wiki) == {}, "hashed under another folder"
    (digest,) = reader.asset_digests(tmp_path).values()
    assert digest is None, "no such file under that folder"
    assert reader.asset_digests(None) == {}
