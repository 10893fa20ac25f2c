"""Retrieval receipts, anchored metadata, raw bytes, no ambient authority and stable identities (issue 12).

Every server here listens on 127.0.0.1 only; the "proxy" is a loopback server that would serve
forged content if it were ever used.
"""

from __future__ import annotations

import hashlib
import json
import os
import stat
from collections.abc import Callable
from pathlib import Path

import pytest
from _policy import KeyRing, options_of
from _provenance_helpers import PAGE, Pages, forge_fetch, make_wiki, serve, write_extraction
from conftest import CliResult, minimal_pdf

from publisher.acquire.sources import Metadata, add_local_pdf, fetch
from publisher.gate.assemble import assemble_run
from publisher.gate.freshness import freshness
from publisher.kernel.assets import AssetChecker
from publisher.kernel.blobs import BlobChecker
from publisher.kernel.canonical import canonical_bytes
from publisher.kernel.errors import UsageError
from publisher.kernel.eventlog import read_log
from publisher.kernel.models import EventType
from publisher.kernel.store import build_record
from publisher.runs import Run, init_run

Cli = Callable[..., CliResult]
PROXY_VARS = ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy")


@pytest.fixture(autouse=True)
def _loopback_only(no_proxy: None) -> None:
    return None


def _codes(run: Run) -> set[tuple[str, str | None]]:
    return {(f.code, f.source_id) for f in assemble_run(run, options_of(run), write=False).findings}


def _fetched(tmp_path: Path, pages: Pages) -> tuple[Run, str]:
    """A wiki run that fetched PAGE (through a redirect) and cites a span of it."""
    _, run = make_wiki(tmp_path / "wiki")
    pages.pages["/page"] = ("text/plain; charset=utf-8", PAGE.encode())
    pages.redirects["/go"] = "/page"
    outcome = fetch(run, pages.url("/go"))
    start = PAGE.index("The effect")
    write_extraction(run, outcome.snapshot.source_id, start, start + 20)
    return run, outcome.snapshot.source_id


# --- receipts --------------------------------------------------------------------------------


def test_fetch_receipt_binds_the_raw_bytes_and_the_record(tmp_path: Path) -> None:
    with serve() as pages:
        run, sid = _fetched(tmp_path, pages)
        base = pages.base
    [event] = read_log(run.events_path).events
    snap = run.store.read(sid)
    receipt = event.receipt
    assert receipt is not None
    assert receipt.requested_url == f"{base}/go" and receipt.final_url == f"{base}/page" == snap.url
    assert receipt.redirects == (f"{base}/go",)
    assert (receipt.status, receipt.media_type) == (200, "text/plain")
    assert receipt.raw_sha256 == hashlib.sha256(PAGE.encode()).hexdigest() and receipt.raw_bytes == len(PAGE.encode())
    assert receipt.extractor is not None and receipt.extractor.startswith("publisher-plain/")
    assert event.record_hash == snap.record_hash
    raw = run.raw_dir / receipt.raw_sha256
    assert raw.read_bytes() == PAGE.encode()
    assert stat.S_IMODE(raw.stat().st_mode) == 0o444
    assert _codes(run) == set()


def test_a_failed_attempt_is_logged_with_its_receipt(tmp_path: Path) -> None:
    run = init_run(tmp_path / "r", "r")
    with serve() as pages, pytest.raises(UsageError):
        fetch(run, pages.url("/missing"))
    [event] = read_log(run.events_path).events
    assert event.type is EventType.FETCH_FAILED and event.source_id is None and event.fresh is False
    assert event.receipt is not None and event.receipt.status == 404 and event.receipt.raw_sha256 is None
    assert run.store.ids() == []


def test_a_body_that_cannot_be_read_is_kept_and_logged(tmp_path: Path) -> None:
    run = init_run(tmp_path / "r", "r")
    with serve() as pages, pytest.raises(UsageError):
        pages.pages["/bin"] = ("image/png", b"\x89PNG not text")
        fetch(run, pages.url("/bin"))
    [event] = read_log(run.events_path).events
    assert event.type is EventType.FETCH_FAILED and event.receipt is not None
    assert event.receipt.status == 200 and event.receipt.media_type == "image/png"
    assert event.receipt.raw_sha256 and (run.raw_dir / event.receipt.raw_sha256).read_bytes() == b"\x89PNG not text"


# --- metadata anchored to the acquisition ------------------------------------------------------


def _reseal(run: Run, sid: str, **changes: object) -> None:
    """Rewrite a snapshot's metadata and reseal it, as someone with write access to the run could."""
    snap = run.store.read(sid)
    record = build_record(
        url=snap.url,
        text=snap.text,
        title=str(changes.get("title", snap.title)),
        retrieved_at=snap.retrieved_at,
        access=snap.access.value,
        origin=snap.origin.value,
        paper=changes.get("paper", snap.paper.model_dump() if snap.paper else None),  # type: ignore[arg-type]
    )
    path = run.store.path_for(sid)
    os.chmod(path, 0o644)
    path.write_bytes(canonical_bytes(record) + b"\n")


def test_resealed_metadata_is_no_fresh_fetch(tmp_path: Path) -> None:
    with serve() as pages:
        run, sid = _fetched(tmp_path, pages)
    _reseal(run, sid, title="A better title", paper={"pmid": "1", "doi": "10.1/forged", "pmcid": None})
    assert run.store.read(sid).sealed  # the record itself verifies: only the receipt can tell
    assert _codes(run) == {("NO_FRESH_FETCH", sid)}
    got = assemble_run(run, options_of(run), write=False).freshness[sid]
    assert (got.fresh, got.field) == (False, "record_hash")  # the resealed metadata, not the bytes or the key


def test_missing_or_corrupt_raw_bytes_are_no_fresh_fetch(tmp_path: Path) -> None:
    with serve() as pages:
        run, sid = _fetched(tmp_path, pages)
    [raw] = list(run.raw_dir.iterdir())
    os.chmod(raw, 0o644)
    raw.write_bytes(b"other bytes")
    assert _codes(run) == {("NO_FRESH_FETCH", sid)}
    raw.unlink()
    assert _codes(run) == {("NO_FRESH_FETCH", sid)}


def test_raw_bytes_enter_the_inputs_hash(tmp_path: Path) -> None:
    with serve() as pages:
        run, _ = _fetched(tmp_path, pages)
    before = assemble_run(run, options_of(run), write=False).inputs_hash
    [raw] = list(run.raw_dir.iterdir())
    raw.unlink()
    assert assemble_run(run, options_of(run), write=False).inputs_hash != before


def test_a_forged_chained_event_without_trusted_keys_is_accepted(tmp_path: Path) -> None:
    """Documented limit (docs/provenance.md): without trusted keys the log is an unkeyed chain.

    Anyone who can write the run can append a correctly chained fetch event for invented text;
    only a signature by a key the agent cannot read tells a real retrieval from a forged one.
    """
    _, run = make_wiki(tmp_path / "wiki")
    source_id = forge_fetch(run, "https://journal.example/article", "Invented text that was never retrieved.")
    write_extraction(run, source_id, 0, 12)
    assert _codes(run) == set()


# --- no ambient authority ----------------------------------------------------------------------


def test_a_proxy_in_the_environment_is_not_used(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    run = init_run(tmp_path / "r", "r")
    with serve() as proxy, serve() as origin:
        proxy.pages["/"] = ("text/plain", b"forged by the proxy")
        origin.pages["/page"] = ("text/plain; charset=utf-8", PAGE.encode())
        monkeypatch.delenv("NO_PROXY", raising=False)
        monkeypatch.delenv("no_proxy", raising=False)
        for name in PROXY_VARS:
            monkeypatch.setenv(name, proxy.base)
        netrc = tmp_path / "netrc"
        netrc.write_text("machine 127.0.0.1 login user password secret\n")
        monkeypatch.setenv("NETRC", str(netrc))
        outcome = fetch(run, origin.url("/page"))
        assert proxy.hits == [] and origin.hits == ["/page"]
    assert outcome.snapshot.text == PAGE
    assert outcome.event.detail is not None and "HTTP_PROXY" in outcome.event.detail


def test_credentials_in_a_url_are_refused_and_never_logged(tmp_path: Path, cli: Cli) -> None:
    run = init_run(tmp_path / "r", "r")
    with serve() as pages:
        pages.pages["/page"] = ("text/plain", b"x")
        url = pages.url("/page").replace("http://", "http://user:s3cret@")
        result = cli("source", "fetch", "--run-dir", run.path, "--url", url)
        assert pages.hits == []
        pages.redirects["/to-creds"] = url
        again = cli("source", "fetch", "--run-dir", run.path, "--url", pages.url("/to-creds"))
    assert result.status == 2 and len(result.err_lines) == 1 and "Traceback" not in result.err
    assert again.status == 2 and len(again.err_lines) == 1
    assert "s3cret" not in result.err + again.err
    assert b"s3cret" not in run.events_path.read_bytes()
    events = read_log(run.events_path).events
    assert [e.type for e in events] == [EventType.FETCH_FAILED, EventType.FETCH_FAILED]


# --- stable identities -------------------------------------------------------------------------


def test_the_same_pdf_from_two_folders_is_one_source(tmp_path: Path) -> None:
    wiki, run = make_wiki(tmp_path / "wiki")
    data = minimal_pdf(["A page of a paper"])
    one, two = tmp_path / "a" / "paper.pdf", tmp_path / "b" / "copy.pdf"
    for path in (one, two):
        path.parent.mkdir()
        path.write_bytes(data)
    first = add_local_pdf(run, one, wiki)
    second = add_local_pdf(run, two, wiki)
    digest = hashlib.sha256(data).hexdigest()
    assert first.snapshot.source_id == second.snapshot.source_id and second.created is False
    assert first.snapshot.url == f"urn:sha256:{digest}"
    assert first.event.receipt is not None and first.event.receipt.raw_sha256 == digest
    assert first.event.receipt.status is None and first.event.receipt.redirects is None
    stored = run.store.path_for(first.snapshot.source_id).read_bytes() + run.events_path.read_bytes()
    assert str(tmp_path).encode() not in stored


def test_an_upstream_file_url_record_stays_readable(run: Run) -> None:
    record = build_record(
        url="file:///home/someone/paper.pdf",
        text="upstream text",
        title=None,
        retrieved_at="2026-01-01T00:00:00Z",
        access="full_text",
        origin="user-supplied-pdf",
        paper=None,
        asset={"path": "assets/papers/x.pdf", "sha256": "0" * 64, "bytes": 1},
    )
    snap, _ = run.store.put(record)
    assert run.store.read(snap.source_id).url.startswith("file://")


def test_reacquiring_with_other_paper_ids_is_refused_not_dropped(tmp_path: Path, cli: Cli) -> None:
    wiki, run = make_wiki(tmp_path / "wiki")
    pdf = tmp_path / "paper.pdf"
    pdf.write_bytes(minimal_pdf(["Results of the trial"]))
    first = add_local_pdf(run, pdf, wiki)
    source_before = run.store.path_for(first.snapshot.source_id).read_bytes()
    result = cli("source", "local", "--run-dir", run.path, "--file", pdf, "--wiki", wiki, "--pmcid", "PMC123", "--json")
    assert result.status == 2 and len(result.err_lines) == 1
    error = result.json()["error"]
    assert (error["file"], error["source_id"], error["field"]) == (str(pdf), first.snapshot.source_id, "paper.pmcid")
    assert run.store.path_for(first.snapshot.source_id).read_bytes() == source_before
    events = read_log(run.events_path).events
    assert [e.type for e in events] == [EventType.LOCAL_PDF, EventType.FETCH_FAILED]
    # The same options as stored (or none) are no amendment: the record stands, the event is logged.
    again = add_local_pdf(run, pdf, wiki, Metadata(origin="user-supplied-pdf"))
    assert again.created is False and again.event.fresh


def test_a_fetch_with_a_new_pmcid_for_a_stored_page_is_refused(tmp_path: Path) -> None:
    with serve() as pages:
        run, sid = _fetched(tmp_path, pages)
        with pytest.raises(UsageError) as info:
            fetch(run, pages.url("/page"), Metadata(pmcid="PMC42"))
    found = info.value.finding()  # the stored snapshot and the record field the option would change
    assert (found.source_id, found.field) == (sid, "paper.pmcid")
    assert run.store.ids() == [sid]
    assert read_log(run.events_path).events[-1].type is EventType.FETCH_FAILED


def test_freshness_keeps_working_on_events_without_receipts(run: Run) -> None:
    """Upstream and earlier logs carry no record_hash or receipt: the rule of section 3 applies."""
    record = build_record(
        url="https://e.org/x",
        text="t",
        title=None,
        retrieved_at="2026-01-01T00:00:00Z",
        access="web",
        origin="web",
        paper=None,
    )
    snap, _ = run.store.put(record)
    line = {
        "schema_version": 1,
        "event_id": "ev-0001",
        "type": "fetch",
        "source_id": snap.source_id,
        "url": snap.url,
        "at": "2099-01-01T00:00:00Z",
        "fresh": True,
        "sha256": snap.content_hash[7:],
        "actor": "main",
        "detail": None,
    }
    run.events_path.write_text(json.dumps(line) + "\n")
    events = read_log(run.events_path).events
    got = freshness(
        snap,
        events,
        run.load_config().created_at,
        AssetChecker(None),
        raw=BlobChecker(run.raw_dir),
        trusted_keys=KeyRing(),
    )
    assert got.fresh
