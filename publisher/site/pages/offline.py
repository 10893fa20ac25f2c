"""A site that also reads from disk: ``extra: evidence: offline: true``.

An evidence wiki is often handed over as a folder or an archive and opened with a double click,
as ``file://``. Three things a served site gets from its web server do not work there, and this
module supplies them, each as a plain file of the site (listed and sealed in the manifest like
every other):

* **links**: ``use_directory_urls`` is turned off, so every link names its page
  (``sources/<source_id>.html``), never a folder that the browser would list;
* **records**: a page opened from disk cannot ``fetch``. Beside each
  ``sources/<source_id>/record.json`` the build writes ``record.js``, which hands the very same
  bytes, as a JSON text, to the in-browser verifier (``EvidenceVerify.register``); the verifier
  loads it only from that address, parses it as it parses ``record.json`` and recomputes every
  digest (``publisher check-site`` checks that it is exactly the record);
* **search**: Material runs its search in a Web Worker, which a ``file://`` page may not start
  from a file. ``offline.js`` (loaded before the theme's bundle, active on ``file://`` only)
  starts it from ``search-worker.js``, the theme's worker code shipped as a script, through a
  ``blob:`` URL; the index is ``search/search_index.js``, the form Material itself reads on
  ``file://``. The page's Content-Security-Policy allows ``worker-src blob:`` on such sites only.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ...kernel import _fs
from .staged import write_staged

__all__ = [
    "OFFLINE_JS_URI",
    "SEARCH_WORKER_URI",
    "SEARCH_INDEX_JS",
    "enable",
    "record_js_uri",
    "record_js",
    "write_search_files",
]

OFFLINE_JS_URI = "assets/publisher/offline.js"
SEARCH_WORKER_URI = "assets/publisher/search-worker.js"
SEARCH_INDEX_JS = "search/search_index.js"
_SEARCH_INDEX = "search/search_index.json"
_THEME_WORKERS = "assets/javascripts/workers"


def enable(config: Any) -> None:
    """Links to pages, not folders; ``offline.js`` in every page's head (Material's ``polyfills``)."""
    config.use_directory_urls = False
    polyfills = list(config.extra.get("polyfills") or [])
    if OFFLINE_JS_URI not in [str(p) for p in polyfills]:
        polyfills.insert(0, OFFLINE_JS_URI)
    config.extra["polyfills"] = polyfills


def record_js_uri(source_id: str) -> str:
    """Where an offline site publishes a snapshot record as a script."""
    return f"sources/{source_id}/record.js"


def _js_string(text: str) -> str:
    """``text`` as a JavaScript string literal (JSON's, with U+2028/U+2029 escaped for older engines)."""
    return json.dumps(text, ensure_ascii=False).replace("\u2028", "\\u2028").replace("\u2029", "\\u2029")


def record_js(source_id: str, record: bytes) -> bytes:
    """The script form of a published record: its exact bytes as one JSON text, for the verifier.

    ``record`` is the verified ``record.json`` (UTF-8 JSON); its text reaches the browser
    unchanged, and the browser parses it exactly as it would parse the fetched file.
    """
    call = f"EvidenceVerify.register({_js_string(source_id)}, {_js_string(record.decode('utf-8'))});\n"
    return call.encode("utf-8")


def write_search_files(site: Path) -> list[str]:
    """Write ``search/search_index.js`` and ``assets/publisher/search-worker.js`` into a built
    site, from the search index and the theme's search worker it holds; returns what was written.

    A site without a search index (no search plugin) or without Material's worker gets neither.
    """
    written: list[str] = []
    index = site / _SEARCH_INDEX
    if index.is_file():
        data = _fs.read_regular(index, follow_symlinks=False)
        write_staged(site / SEARCH_INDEX_JS, b"var __index = " + data + b";\n")
        written.append(SEARCH_INDEX_JS)
    workers = sorted((site / _THEME_WORKERS).glob("search.*.min.js")) if written else []
    if workers:
        code = _fs.read_regular(workers[-1], follow_symlinks=False).decode("utf-8")
        script = f"globalThis.__evidenceSearchWorker = {_js_string(code)};\n"
        write_staged(site / SEARCH_WORKER_URI, script.encode("utf-8"))
        written.append(SEARCH_WORKER_URI)
    return written
