"""Declared surfaces at acquisition (CONTRACT section 14): declared, sealed, logged, never inferred."""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from conftest import CliResult, minimal_pdf

from publisher.acquire.signing import KeyRing, key_id_of, load_public_key, load_signer, new_key_pair, signature_problem
from publisher.acquire.sources import Declaration, add_local_pdf, fetch, register
from publisher.kernel.errors import IntegrityError, UsageError
from publisher.kernel.eventlog import read_log
from publisher.kernel.models import Event
from publisher.kernel.reasons import Reason
from publisher.runs import Run, init_run

Cli = Callable[..., CliResult]
ARTICLE = "PMC1065070"


def article_pages(corpus_dir: Path, count: int) -> list[str]:
    """``count`` one-line pages of a real article (what a hand-made PDF can carry: Latin-1 words)."""
    text = (corpus_dir / "evidence-inference" / "texts" / f"{ARTICLE}.txt").read_text(encoding="utf-8")
    words = [w for w in text.split() if w.isascii() and w.isprintable()]
    return [" ".join(words[i * 12 : i * 12 + 12]) for i in range(count)]


def local(run: Run, tmp_path: Path, pages: list[str], **declared: object) -> dict[str, object]:
    pdf = tmp_path / f"doc-{len(os.listdir(tmp_path))}.pdf"
    pdf.write_bytes(minimal_pdf(pages))
    outcome = add_local_pdf(run, pdf, tmp_path / "wiki", declaration=Declaration(**declared))  # type: ignore[arg-type]
    assert outcome.snapshot.surface is not None
    return outcome.snapshot.surface.model_dump(mode="json")


@pytest.fixture
def wiki_run(tmp_path: Path) -> Run:
    (tmp_path / "wiki").mkdir()
    return init_run(tmp_path / "wiki" / "runs" / "r", "r")


def test_undeclared_pdf_is_never_complete(wiki_run: Run, tmp_path: Path, corpus_dir: Path) -> None:
    surface = local(wiki_run, tmp_path, article_pages(corpus_dir, 3))
    assert surface["type"] == "PAGE_INDEXED_TEXT"
    assert surface["expected_pages"] is None and surface["extracted_pages"] == [1, 2, 3]
    assert surface["complete"] is False
    assert surface["excluded_modalities"] == ["IMAGES", "TABLE_STRUCTURE", "EMBEDDED_FILES"]


def test_expected_surface_is_not_inferred_from_extracted_pages(wiki_run: Run, tmp_path: Path, corpus_dir: Path) -> None:
    # Two pages extracted of a paper declared to have twelve: ten are missing, never "complete".
    surface = local(wiki_run, tmp_path, article_pages(corpus_dir, 2), expected_page_count=12)
    assert surface["missing_pages"] == list(range(3, 13))
    assert surface["complete"] is False
    # A page that gives no text (a scan) is not extracted, whatever the PDF's page count.
    pages = article_pages(corpus_dir, 3)
    surface = local(wiki_run, tmp_path, [pages[0], " ", pages[2]], expected_pages="1-3")
    assert surface["extracted_pages"] == [1, 3] and surface["missing_pages"] == [2]
    assert surface["complete"] is False
    other = init_run(tmp_path / "wiki" / "runs" / "other", "other")
    surface = local(other, tmp_path, [pages[0], " ", pages[2]], expected_pages="1,3")
    assert surface["complete"] is True and surface["unexpected_pages"] == []


def test_surface_is_sealed_and_recorded_in_the_signed_event(wiki_run: Run, tmp_path: Path, corpus_dir: Path) -> None:
    private, public, _ = new_key_pair(tmp_path / "keys")
    pdf = tmp_path / "a.pdf"
    pdf.write_bytes(minimal_pdf(article_pages(corpus_dir, 4)))
    signer = load_signer(private, wiki_run.name())
    outcome = add_local_pdf(
        wiki_run, pdf, tmp_path / "wiki", signer=signer, declaration=Declaration(expected_page_count=4)
    )
    snap = outcome.snapshot
    assert snap.surface is not None and snap.surface.complete
    event = read_log(wiki_run.events_path).events[-1]
    assert event.surface is not None  # the log's view holds the values the snapshot's model holds
    assert event.surface.model_dump(mode="json") == snap.surface.model_dump(mode="json")
    key = load_public_key(public)
    ring = KeyRing({key_id_of(key): key})
    assert signature_problem(event, ring, wiki_run.name()) is None
    # The signature covers the surface: an event claiming another surface does not verify.
    as_model = Event.model_validate(event.wire())  # the log holds a view; the model makes the forgery
    forged = as_model.model_copy(update={"surface": snap.surface.model_copy(update={"complete": False})})
    assert signature_problem(forged, ring, wiki_run.name()) is not None
    # The snapshot seals it: an edited surface is a hash mismatch on read.
    path = wiki_run.store.path_for(snap.source_id)
    record = json.loads(path.read_text(encoding="utf-8"))
    record["surface"]["missing_pages"] = []
    record["surface"]["expected_pages"] = [1, 2, 3, 4, 5]
    os.chmod(path, 0o644)
    path.write_text(json.dumps(record), encoding="utf-8")
    with pytest.raises(IntegrityError) as info:
        wiki_run.store.read(snap.source_id)
    assert info.value.reason is Reason.SNAPSHOT_HASH_MISMATCH


def test_refused_declarations(wiki_run: Run, tmp_path: Path, corpus_dir: Path) -> None:
    pages = article_pages(corpus_dir, 2)
    with pytest.raises(UsageError):
        local(wiki_run, tmp_path, pages, complete=True)  # a PDF declares pages
    with pytest.raises(UsageError):
        local(wiki_run, tmp_path, pages, expected_pages="3-1")
    with pytest.raises(UsageError):
        local(wiki_run, tmp_path, pages, expected_pages="1", expected_page_count=2)
    local(wiki_run, tmp_path, pages, expected_page_count=2)
    with pytest.raises(UsageError):  # the same PDF again with another declaration is refused, not dropped
        local(wiki_run, tmp_path, pages, expected_page_count=3)


class _Served(BaseHTTPRequestHandler):
    body = b""

    def log_message(self, format: str, *args: object) -> None:
        return

    def do_GET(self) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "application/xml")
        self.send_header("Content-Length", str(len(self.body)))
        self.end_headers()
        self.wfile.write(self.body)


@pytest.fixture
def jats_server(corpus_dir: Path, no_proxy: None) -> Iterator[str]:
    handler = type(
        "H", (_Served,), {"body": (corpus_dir / "evidence-inference" / "xml" / f"{ARTICLE}.nxml").read_bytes()}
    )
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}/{ARTICLE}.nxml"
    finally:
        httpd.shutdown()
        httpd.server_close()


def test_fetched_full_text_is_complete_only_when_declared(jats_server: str, tmp_path: Path, cli: Cli) -> None:
    undeclared = init_run(tmp_path / "u", "u")
    snap = fetch(undeclared, jats_server).snapshot
    assert snap.surface is not None and snap.surface.type.value == "WHOLE_TEXT" and not snap.surface.complete
    declared = init_run(tmp_path / "d", "d")
    out = cli("source", "fetch", "--run-dir", declared.path, "--url", jats_server, "--complete", "--json")
    assert out.status == 0, out.err
    assert out.json()["surface"]["complete"] is True
    # Completeness of an abstract cannot be declared; a page declaration on a whole text neither.
    abstract = init_run(tmp_path / "a", "a")
    out = cli("source", "fetch", "--run-dir", abstract.path, "--url", jats_server, "--complete", "--access", "abstract")
    assert out.status == 2 and len(out.err_lines) == 1
    out = cli("source", "fetch", "--run-dir", abstract.path, "--url", jats_server, "--expected-page-count", "3")
    assert out.status == 2 and len(out.err_lines) == 1


def test_registered_text_carries_a_surface_that_is_never_complete(tmp_path: Path, corpus_dir: Path) -> None:
    run = init_run(tmp_path / "r", "r")
    text_file = corpus_dir / "evidence-inference" / "texts" / f"{ARTICLE}.txt"
    snap = register(run, f"https://pmc.ncbi.nlm.nih.gov/articles/{ARTICLE}/", text_file).snapshot
    assert snap.surface is not None
    assert (snap.surface.type.value, snap.surface.complete, snap.surface.method) == ("WHOLE_TEXT", False, "register")
    assert read_log(run.events_path).events[-1].surface is None  # a register event is no acquisition
