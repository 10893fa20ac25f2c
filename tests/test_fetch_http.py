"""``source fetch`` against a real HTTP server on 127.0.0.1 serving the real corpus files."""

from __future__ import annotations

import hashlib
import json
import os
import socket
import threading
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from _policy import KeyRing
from conftest import CliResult
from lxml import etree

from publisher.acquire.sources import fetch
from publisher.gate.freshness import freshness
from publisher.kernel.assets import AssetChecker
from publisher.kernel.eventlog import read_log
from publisher.kernel.models import EventType
from publisher.runs import Run, init_run

Cli = Callable[..., CliResult]
ARTICLE = "PMC1065070"
HOSTILE = {
    "rlo.txt": ("text/plain; charset=utf-8", "The drug is \u202eevitceffe ton\u202c.".encode()),
    "lro.html": ("text/html", b"<p>The drug is &#x202D;mixed&#x202C;.</p>"),
    "rlo.xml": ("application/xml", b"<article><body><p>The drug is &#8238;evitceffe ton.</p></body></article>"),
    "tags.html": ("text/html", "<p>The drug is safe.\U000e0049\U000e0047\U000e004e\U000e004f</p>".encode()),
    "tag.txt": ("text/plain; charset=utf-8", "The drug is \U000e0001x".encode()),
    "flag.txt": (
        "text/plain; charset=utf-8",
        "Trial in \U0001f3f4\U000e0067\U000e0062\U000e0065\U000e006e\U000e0067\U000e007f.".encode(),
    ),
    "marks.txt": (
        "text/plain; charset=utf-8",
        "\u200f\u05e9\u05dc\u05d5\u05dd\u200e a \u202bb\u202c \u2067c\u2069".encode(),
    ),
}
"""Documents served under /hostile/<name>: (Content-Type, body)."""


class _Corpus(BaseHTTPRequestHandler):
    root: Path

    def log_message(self, format: str, *args: object) -> None:
        return

    def do_GET(self) -> None:
        kind, _, name = self.path.lstrip("/").partition("/")
        types = {"texts": "text/plain; charset=utf-8", "xml": "application/xml"}
        path = self.root / kind / name
        if kind == "hostile" and name in HOSTILE:
            content_type, body = HOSTILE[name]
        elif kind not in types or "/" in name or not path.is_file():
            self.send_error(404)
            return
        else:
            content_type, body = types[kind], path.read_bytes()
        self.send_response(200)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


@pytest.fixture(scope="module")
def corpus_base(corpus_dir: Path) -> Path:
    base = corpus_dir / "evidence-inference"
    if not (base / "xml" / f"{ARTICLE}.nxml").is_file():
        pytest.skip(f"../shared/corpus not present: {ARTICLE}.nxml missing")
    return base


@pytest.fixture(scope="module")
def server(corpus_base: Path) -> Iterator[str]:
    handler = type("Handler", (_Corpus,), {"root": corpus_base})
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    httpd.daemon_threads = True
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}"
    finally:
        httpd.shutdown()
        httpd.server_close()


@pytest.fixture(autouse=True)
def _loopback_only(no_proxy: None) -> None:
    return None


def _refused_url() -> str:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}/texts/{ARTICLE}.txt"


def _article_ids(xml: Path) -> dict[str, str]:
    tree = etree.parse(str(xml), etree.XMLParser(resolve_entities=False, no_network=True, load_dtd=False))
    ids = {}
    for node in tree.iter("article-id"):
        ids[node.get("pub-id-type")] = (node.text or "").strip()
    return ids


def _nothing_written(run: Run) -> None:
    """No snapshot; the attempt itself is logged, once, as a fetch_failed event (never fresh)."""
    assert os.listdir(run.sources_dir) == []
    state = read_log(run.events_path)
    assert state.intact and len(state.events) == 1
    failed = state.events[0]
    assert failed.type is EventType.FETCH_FAILED and failed.source_id is None and failed.fresh is False
    assert failed.receipt is not None and failed.sha256 is None


def test_plain_text_fetch_is_exact_and_fresh(server: str, corpus_base: Path, tmp_path: Path) -> None:
    run = init_run(tmp_path / "r", "r")
    body = (corpus_base / "texts" / f"{ARTICLE}.txt").read_bytes()
    served = body.decode("utf-8")
    url = f"{server}/texts/{ARTICLE}.txt"
    outcome = fetch(run, url)
    snap = run.store.read(outcome.snapshot.source_id)
    assert snap.text == served
    assert snap.url == url
    assert snap.access.value == "web" and snap.origin.value == "web"
    event = outcome.event
    assert event.type is EventType.FETCH and event.fresh is True
    assert event.sha256 == hashlib.sha256(body).hexdigest()
    assert event.detail is not None
    assert "200" in event.detail and str(len(body)) in event.detail and str(len(served)) in event.detail
    state = read_log(run.events_path)
    assert state.intact and state.events == [event]
    got = freshness(snap, state.events, run.load_config().created_at, AssetChecker(None), trusted_keys=KeyRing())
    assert got.fresh and got.event_id == event.event_id


def test_fetched_text_keeps_corpus_offsets(server: str, corpus_base: Path, tmp_path: Path) -> None:
    run = init_run(tmp_path / "r", "r")
    spans = [json.loads(line) for line in (corpus_base / "spans.jsonl").read_text().splitlines()]
    texts = {s["pmcid"] for s in spans if (corpus_base / "texts" / f"PMC{s['pmcid']}.txt").is_file()}
    pmcid = sorted(texts)[0]
    snap = fetch(run, f"{server}/texts/PMC{pmcid}.txt").snapshot
    checked = 0
    for span in spans:
        if span["pmcid"] == pmcid:
            assert snap.text[span["start"] : span["end"]] == span["excerpt"]
            checked += 1
    assert checked


def test_jats_fetch_has_sections_and_paper_ids(server: str, corpus_base: Path, tmp_path: Path) -> None:
    run = init_run(tmp_path / "r", "r")
    xml = corpus_base / "xml" / f"{ARTICLE}.nxml"
    ids = _article_ids(xml)
    outcome = fetch(run, f"{server}/xml/{ARTICLE}.nxml")
    snap = run.store.read(outcome.snapshot.source_id)
    assert snap.access.value == "full_text" and snap.origin.value == "pmc"
    assert snap.paper is not None
    assert snap.paper.pmid == ids["pmid"]
    assert snap.paper.pmcid == "PMC" + ids["pmc"].removeprefix("PMC")
    assert (snap.paper.doi or "").lower() == ids["doi"].lower()
    assert snap.sections
    for section in snap.sections:
        assert 0 <= section.start <= section.end <= len(snap.text)
    assert outcome.event.fresh and "200" in (outcome.event.detail or "")
    assert read_log(run.events_path).intact


def test_fetch_contradicting_the_document_writes_nothing(server: str, corpus_base: Path, tmp_path: Path) -> None:
    from publisher.acquire.sources import Metadata
    from publisher.kernel.errors import UsageError

    run = init_run(tmp_path / "r", "r")
    with pytest.raises(UsageError):
        fetch(run, f"{server}/xml/{ARTICLE}.nxml", Metadata(pmid="1"))
    _nothing_written(run)


def test_cli_fetch_json(cli: Cli, server: str, corpus_base: Path, tmp_path: Path) -> None:
    run_dir = tmp_path / "r"
    init_run(run_dir, "r")
    url = f"{server}/texts/{ARTICLE}.txt"
    result = cli("source", "fetch", "--run-dir", run_dir, "--url", url, "--json")
    assert result.status == 0, result.err
    data = result.json()
    assert data["fresh"] is True and data["created"] is True and data["url"] == url
    text = (corpus_base / "texts" / f"{ARTICLE}.txt").read_bytes().decode("utf-8")
    assert data["chars"] == len(text)
    again = cli("source", "fetch", "--run-dir", run_dir, "--url", url, "--json").json()
    assert again["source_id"] == data["source_id"] and again["created"] is False and again["fresh"] is True
    assert len(read_log(run_dir / "events.jsonl").events) == 2


@pytest.mark.parametrize("where", ["404", "refused"])
def test_failed_fetch_leaves_no_snapshot_and_no_event(cli: Cli, server: str, tmp_path: Path, where: str) -> None:
    run_dir = tmp_path / "r"
    run = init_run(run_dir, "r")
    url = f"{server}/texts/nothing-here.txt" if where == "404" else _refused_url()
    result = cli("source", "fetch", "--run-dir", run_dir, "--url", url, "--timeout", "5", "--json")
    assert result.status == 2, result.err
    assert len(result.err_lines) == 1 and "Traceback" not in result.err
    error = result.json()["error"]
    assert (error["reason_code"], error["exit_status"], error["source_id"]) == (None, 2, None), error
    _nothing_written(run)
    receipt = read_log(run.events_path).events[0].receipt
    assert receipt is not None and receipt.status == (404 if where == "404" else None)  # what was learnt


def test_a_text_too_large_to_store_is_a_logged_failure_not_an_unreadable_snapshot(
    server: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A snapshot file over the readers' limit is corrupt on every read; a PDF's compressed streams
    # (or JSON escapes of control characters) make text far larger than the body fetched.
    from publisher.kernel.errors import UsageError
    from publisher.kernel.store import SnapshotStore

    run = init_run(tmp_path / "r", "r")
    monkeypatch.setattr(Run, "store", property(lambda self: SnapshotStore(self.sources_dir, max_bytes=2_000)))
    with pytest.raises(UsageError) as info:
        fetch(run, f"{server}/texts/{ARTICLE}.txt")
    assert "2000 byte limit" in str(info.value) and "\n" not in str(info.value)
    _nothing_written(run)


@pytest.mark.parametrize("name", ["rlo.txt", "lro.html", "rlo.xml", "tag.txt"])
def test_a_page_holding_a_bidi_override_or_tag_character_is_refused(server: str, tmp_path: Path, name: str) -> None:
    # Shown reversed: a reader sees "not effective" where the snapshot would store "evitceffe ton";
    # a tag character is not shown at all.
    from publisher.kernel.errors import UsageError

    run = init_run(tmp_path / "r", "r")
    with pytest.raises(UsageError) as info:
        fetch(run, f"{server}/hostile/{name}")
    assert info.value.context["offset"] == len("The drug is ") and "\n" not in str(info.value)
    _nothing_written(run)


def test_tag_characters_smuggling_ascii_are_refused(server: str, tmp_path: Path) -> None:
    # "IGNO..." spelt in tag characters: invisible on the page, read by an agent.
    from publisher.kernel.errors import UsageError

    run = init_run(tmp_path / "r", "r")
    with pytest.raises(UsageError) as info:
        fetch(run, f"{server}/hostile/tags.html")
    assert info.value.context["offset"] == len("The drug is safe.")
    _nothing_written(run)


@pytest.mark.parametrize("name", ["marks.txt", "flag.txt"])
def test_bidi_marks_embeddings_isolates_and_flags_are_kept(server: str, tmp_path: Path, name: str) -> None:
    # Marks, embeddings and isolates reorder runs, not the letters of a word (Hebrew and Arabic
    # pages use them); tag characters that draw a subdivision flag are the flag.
    run = init_run(tmp_path / "r", "r")
    snap = fetch(run, f"{server}/hostile/{name}").snapshot
    assert snap.text == HOSTILE[name][1].decode()


@pytest.mark.parametrize(
    ("option", "value"),
    [
        *(("--timeout", value) for value in ("nan", "inf", "-1", "0")),
        *(("--max-bytes", value) for value in ("-5", "²")),
    ],
)
def test_an_impossible_timeout_or_size_is_a_usage_error_before_any_attempt(
    cli: Cli, tmp_path: Path, option: str, value: str
) -> None:
    # httpx raised ValueError/OverflowError for these: an "internal error" instead of a usage line.
    run = init_run(tmp_path / "r", "r")
    result = cli("source", "fetch", "--run-dir", run.path, "--url", _refused_url(), option, value)
    assert result.status == 2 and len(result.err_lines) == 1, result.err
    assert option in result.err and "internal error" not in result.err
    assert read_log(run.events_path).events == []
