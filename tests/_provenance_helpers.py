"""Loopback pages, a wiki with trusted keys and a one-record run, for the provenance tests (issue 12)."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from publisher.runs import Run, init_run

__all__ = ["Pages", "serve", "make_wiki", "write_extraction", "PAGE", "OTHER_PAGE"]

PAGE = "Trial of a thing.\nThe effect was large in every arm of the trial.\n"
OTHER_PAGE = "A second page that stays as it is.\n"


@dataclass
class Pages:
    """What a loopback server serves (path -> (content type, body)), editable while it runs."""

    base: str = ""
    pages: dict[str, tuple[str, bytes]] = field(default_factory=dict)
    redirects: dict[str, str] = field(default_factory=dict)
    hits: list[str] = field(default_factory=list)

    def url(self, path: str) -> str:
        return self.base + path


class _Handler(BaseHTTPRequestHandler):
    served: Pages

    def log_message(self, format: str, *args: object) -> None:
        return

    def do_GET(self) -> None:
        pages = self.served
        pages.hits.append(self.path)
        target = pages.redirects.get(self.path)
        if target is not None:
            self.send_response(302)
            self.send_header("Location", target)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        found = pages.pages.get(self.path)
        if found is None:
            self.send_error(404)
            return
        content_type, body = found
        self.send_response(200)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


@contextmanager
def serve(pages: Pages | None = None) -> Iterator[Pages]:
    """Serve ``pages`` on 127.0.0.1 (a random port) for the duration of the block."""
    served = pages or Pages()
    handler = type("Handler", (_Handler,), {"served": served})
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    httpd.daemon_threads = True
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    served.base = f"http://127.0.0.1:{httpd.server_address[1]}"
    try:
        yield served
    finally:
        httpd.shutdown()
        httpd.server_close()


def make_wiki(root: Path, trusted: list[str] | None = None, slug: str = "r") -> tuple[Path, Run]:
    """A wiki folder whose ``mkdocs.yml`` lists ``trusted`` keys (and a python tag), with one run."""
    root.mkdir(parents=True, exist_ok=True)
    config = (
        "site_name: Provenance test\n"
        "markdown_extensions:\n"
        "  - pymdownx.emoji:\n"
        "      emoji_index: !!python/name:material.extensions.emoji.twemoji\n"
        "extra:\n"
        "  version: !ENV [WIKI_VERSION, 'dev']\n"
    )
    if trusted is not None:
        config += "  evidence:\n    trusted_keys:\n" + "".join(f"      - {path}\n" for path in trusted)
    (root / "mkdocs.yml").write_text(config, encoding="utf-8")
    return root, init_run(root / "runs" / slug, slug)


def write_extraction(run: Run, source_id: str, start: int, end: int, name: str = "page") -> None:
    """One extraction of a web page citing ``[start, end)`` of ``source_id`` (no paper ids needed)."""
    record: dict[str, Any] = {
        "schema_version": 1,
        "evidence_id": f"web:{name}",
        "design": "trial",
        "n_arms": [],
        "outcomes": [],
        "spans": [{"claim": "the effect", "source_id": source_id, "start": start, "end": end}],
    }
    run.extractions_dir.mkdir(parents=True, exist_ok=True)
    (run.extractions_dir / f"{name}.json").write_text(json.dumps(record), encoding="utf-8")


def forge_fetch(run: Run, url: str, text: str) -> str:
    """What an agent with write access can do: store invented text and append a correctly chained
    ``fetch`` event claiming it fresh (no retrieval, no receipt, no signature). Returns its source id."""
    from publisher.kernel.eventlog import append_event
    from publisher.kernel.store import build_record

    record = build_record(
        url=url, text=text, title=None, retrieved_at="2026-01-01T00:00:00Z", access="web", origin="web", paper=None
    )
    snap, _ = run.store.put(record)
    append_event(
        run.events_path,
        type="fetch",
        source_id=snap.source_id,
        url=snap.url,
        fresh=True,
        sha256=snap.content_hash[7:],
        record_hash=snap.record_hash,
    )
    return snap.source_id
