"""``publisher schema`` and its examples: a short summary, and examples that really assemble and promote.

The examples cite two real articles of the shared corpus at the offsets ``source spans --sentence``
gives. The test fetches those articles over loopback HTTP into a fresh run inside a fresh wiki,
writes the example records with the source ids of this fetch put in (the only thing a user
changes), and requires the gate to pass, the verification to be Verified and the promotion into
the example concept to succeed.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
import yaml
from conftest import CliResult

from publisher.acquire import extract
from publisher.cli.examples import EXAMPLES, QUESTION, SOURCES, example
from publisher.gate.recordschema import Appraisal, Extraction
from publisher.kernel.canonical import loads_strict
from publisher.kernel.models import RunConfig
from publisher.wiki.concepts import ConceptFrontMatter

Cli = Callable[..., CliResult]
XML = Path(__file__).resolve().parents[2] / "shared" / "corpus" / "evidence-inference" / "xml"


def test_schema_prints_a_short_summary_by_default(cli: Cli) -> None:
    result = cli("schema")
    assert result.status == 0 and result.err == ""
    lines = result.out.splitlines()
    assert len(lines) < 30
    for name in ("config", "snapshot", "extraction", "appraisal", "report", "concept", "pmid:N", "web:<slug>"):
        assert name in result.out
    assert cli("schema", "--all").json().keys() >= {"extraction", "appraisal", "config", "concept"}


@pytest.mark.parametrize("name", list(EXAMPLES))
def test_each_example_prints_as_is(cli: Cli, name: str) -> None:
    result = cli("schema", "--example", name)
    assert result.status == 0 and result.out == example(name)


@pytest.mark.parametrize("args", [("span", "--all"), ("--all", "--example", "config"), ("--example", "nope")])
def test_schema_usage_errors_are_one_line(cli: Cli, args: tuple[str, ...]) -> None:
    result = cli("schema", *args)
    assert result.status == 2 and len(result.err_lines) == 1 and result.out == ""


def test_examples_are_valid_records() -> None:
    RunConfig.model_validate(loads_strict(example("config").encode()))
    extraction = Extraction.model_validate(loads_strict(example("extraction").encode()))
    appraisal = Appraisal.model_validate(loads_strict(example("appraisal").encode()))
    assert not extraction.model_extra and not appraisal.model_extra  # nothing the reader would ignore
    front = example("concept").split("---\n")[1]
    ConceptFrontMatter.model_validate(yaml.safe_load(front))
    assert QUESTION in example("config") and QUESTION in example("report")


# --- the examples assemble, verify and promote against the real articles ----------------------


class _Articles(BaseHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:
        return

    def do_GET(self) -> None:
        name = self.path.strip("/")
        path = XML / f"{name}.nxml"
        if name not in SOURCES or not path.is_file():
            self.send_error(404)
            return
        body = path.read_bytes()
        self.send_response(200)
        self.send_header("Content-Type", "application/xml")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


@pytest.fixture
def articles(no_proxy: None) -> Iterator[str]:
    if not all((XML / f"{pmcid}.nxml").is_file() for pmcid in SOURCES):
        pytest.skip(f"the example articles are not in {XML}")
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Articles)
    httpd.daemon_threads = True
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}"
    finally:
        httpd.shutdown()
        httpd.server_close()


def test_example_source_ids_are_those_of_the_article_texts() -> None:
    """The ids in the examples are sha256(url NUL text) of the articles' text at the example URLs."""
    for pmcid, source in SOURCES.items():
        path = XML / f"{pmcid}.nxml"
        if not path.is_file():
            pytest.skip(f"{path} not found")
        text = extract(path.read_bytes(), "application/xml").text
        digest = hashlib.sha256(f"{source['url']}\x00{text}".encode()).hexdigest()
        assert source["source_id"] == f"src-{digest}", f"{pmcid}: the extracted text changed; update the examples"


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


@pytest.mark.slow
def test_the_examples_assemble_verify_and_promote(cli: Cli, articles: str, tmp_path: Path) -> None:
    wiki = tmp_path / "wiki"
    assert cli("new", wiki).status == 0, "publisher new failed"
    config = json.loads(example("config"))
    run = wiki / "runs" / config["run_slug"]
    init = cli("run", "init", run, "--slug", config["run_slug"], "--question", config["question"], "--gate")
    assert init.status == 0, init.err
    ids: dict[str, str] = {}
    for pmcid, source in SOURCES.items():
        fetched = cli("source", "fetch", "--run-dir", run, "--url", f"{articles}/{pmcid}", "--json")
        assert fetched.status == 0, fetched.err
        ids[source["source_id"]] = fetched.json()["source_id"]

    def mine(text: str) -> str:
        for theirs, ours in ids.items():
            text = text.replace(theirs, ours)
        return text

    _write(run / "workspace" / "extractions" / "rcdc-chile.json", mine(example("extraction")))
    _write(run / "workspace" / "appraisals" / "ipt-online-rob2.json", mine(example("appraisal")))
    _write(run / "outputs" / "report.md", mine(example("report")))
    _write(wiki / "concepts" / "remote-depression-care.md", example("concept"))

    assembled = cli("assemble", "--run-dir", run, "--gate", "--json")
    result: dict[str, Any] = assembled.json()
    assert assembled.status == 0 and result["gate"]["verdict"] == "pass", result["diagnostics"]
    kinds = sorted(a["artifact_id"] for a in result["accepted"])
    assert kinds == [
        "appraisal:pmid:23669884",
        "extraction:pmid:29386172",
        "report:ipt-completers",
        "report:ipt-dropout",
        "report:rcdc-symptoms",
    ]
    sections = {c["section"] for a in result["accepted"] for c in a["claims"]}
    assert {"Acknowledgements", "Footnotes", "Results"} <= sections  # funding and interests are citable
    verified = cli("verify", "--run-dir", run, "--gate")
    assert verified.status == 0, verified.out + verified.err
    promoted = cli("promote", "--run-dir", run, "--wiki", wiki, "--concept", "remote-depression-care")
    assert promoted.status == 0, promoted.err
    concept = (wiki / "concepts" / "remote-depression-care.md").read_text(encoding="utf-8")
    prose = example("concept").split("---\n")[2]
    assert prose in concept and "title: Remote psychological care for depression" in concept
    assert "publisher:generated:begin" in concept and "run: remote-depression-care" in concept

    # The walk-through's last steps: build the site and re-verify it.
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    built = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "-q"], cwd=wiki, capture_output=True, text=True, env=env, check=False
    )
    assert built.returncode == 0, built.stderr[-2000:]
    page = (wiki / "site" / "concepts" / "remote-depression-care.html").read_text(encoding="utf-8")  # offline
    assert "Adolescents (N=143; 13-19 years) with MDD were recruited." in page
    checked = cli("check-site", wiki / "site", "--wiki", wiki)
    assert checked.status == 0, checked.err
