"""No dead end for a newcomer: a source fetched without ids and cited as ``pmcid:`` gets NO_PAPER_ID
with the way on, and ``publisher run init NEW --from OLD`` copies the agent's work so that only the
fetches are redone, with the ids. Tests assert codes and fields, never wording."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path

import pytest
from _policy import policy_of
from _provenance_helpers import PAGE, make_wiki, serve
from conftest import CliResult

from publisher.kernel.reasons import Reason

Cli = Callable[..., CliResult]


@pytest.fixture(autouse=True)
def _loopback_only(no_proxy: None) -> None:
    return None


def _cite_as_pmcid(run_dir: Path, source_id: str) -> None:
    start = PAGE.index("The effect")
    record = {
        "schema_version": 1,
        "evidence_id": "pmcid:PMC1234567",
        "design": "trial",
        "spans": [{"claim": "the effect", "source_id": source_id, "start": start, "end": start + 20}],
    }
    folder = run_dir / "workspace" / "extractions"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "trial.json").write_text(json.dumps(record), encoding="utf-8")


def test_a_source_without_ids_cited_as_pmcid_is_fixed_by_a_new_run_from_the_old(tmp_path: Path, cli: Cli) -> None:
    wiki, run = make_wiki(tmp_path / "wiki", slug="old")
    with serve() as pages:
        pages.pages["/p"] = ("text/plain; charset=utf-8", PAGE.encode())
        fetched = cli("source", "fetch", "--run-dir", run.path, "--url", pages.url("/p"), "--json")
        source_id = fetched.json()["source_id"]
        _cite_as_pmcid(run.path, source_id)
        assembled = cli("assemble", "--run-dir", run.path, "--json")
        findings = assembled.json()["diagnostics"]["unresolved"]
        assert {f["reason_code"] for f in findings} == {Reason.NO_PAPER_ID.value}
        checked = cli("verify", "--run-dir", run.path, "--json")
        [root] = [f for f in checked.json()["findings"] if f["reason_code"] == Reason.NO_PAPER_ID.value]
        assert root["detail"]  # the fix is the code's: cite as url:/web:, or a new run --from this one

        new = wiki / "runs" / "new"
        done = cli("run", "init", new, "--slug", "new", "--from", run.path, "--json")
        assert done.status == 0, done.err
        assert set(done.json()["copied"]) == {"workspace/extractions/trial.json"}
        assert not (new / "sources").exists() or not any((new / "sources").iterdir())
        again = cli("source", "fetch", "--run-dir", new, "--url", pages.url("/p"), "--pmcid", "PMC1234567", "--json")
    assert again.json()["source_id"] == source_id  # same URL, same text: the records still cite it
    done = cli("assemble", "--run-dir", new, "--json")
    assert done.status == 0
    assert done.json()["diagnostics"]["unresolved"] == [] and done.json()["counts"]["accepted"] == 1


def test_run_init_from_refuses_a_link_and_creates_nothing(tmp_path: Path, cli: Cli) -> None:
    wiki, run = make_wiki(tmp_path / "wiki", slug="old")
    (run.path / "workspace" / "extractions").mkdir(parents=True, exist_ok=True)
    os.symlink("/etc/passwd", run.path / "workspace" / "extractions" / "x.json")
    new = wiki / "runs" / "new"
    done = cli("run", "init", new, "--slug", "new", "--from", run.path)
    assert done.status == 2 and len(done.err_lines) == 1
    assert not new.exists()


def test_source_labels_are_readable() -> None:
    from publisher.wiki.evidence import source_label

    sid = "src-" + "a" * 64
    assert source_label("  A   title ", "https://x.org/p", sid) == "A title"
    assert source_label(None, "https://www.example.org/papers/trial/", sid) == "example.org/papers/trial"
    assert source_label(None, "file:///papers/" + "b" * 64 + ".pdf", sid) == "b" * 64 + ".pdf"
    assert source_label("", None, sid) == sid[:16] + "…"
    assert len(source_label(None, "https://e.org/" + "x" * 500, sid)) <= 90


def test_untitled_sources_get_a_label_in_pages_search_and_tables(tmp_path: Path) -> None:
    from _wiki_helpers import build_wiki, sample_run
    from _wiki_helpers import make_wiki as make_site_wiki

    from publisher.wiki.promote import promote

    wiki = make_site_wiki(tmp_path / "wiki")
    config = wiki / "mkdocs.yml"
    config.write_text(config.read_text(encoding="utf-8").replace("plugins: []", "plugins:\n  - search"))
    rb = sample_run(wiki, title=None)
    promote(rb.run.path, wiki, policy=policy_of(wiki))
    build_wiki(wiki)
    untitled = [sid for sid, rec in rb.records.items() if rec["title"] is None and rec["url"].startswith("https")]
    assert untitled
    index = (wiki / "site" / "sources" / "index.html").read_text(encoding="utf-8")
    search = (wiki / "site" / "search" / "search_index.json").read_text(encoding="utf-8")
    for sid in untitled:
        page = next((wiki / "site" / "sources").glob(f"{sid}*"))
        html = page.read_text(encoding="utf-8") if page.is_file() else (page / "index.html").read_text(encoding="utf-8")
        title = html.split("<title>", 1)[1].split("</title>", 1)[0]
        assert sid not in title and "example.org/" in title
        assert f">{sid}</a>" not in index
        assert f'"title":"{sid}"' not in search.replace(" ", "")
