"""No dead end for a newcomer: a source fetched without ids and cited as ``pmcid:`` gets NO_PAPER_ID
with the way on, and ``publisher run init NEW --from OLD`` copies the agent's work so that only the
fetches are redone, with the ids. Tests assert codes and fields, never wording."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path

import pytest
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
