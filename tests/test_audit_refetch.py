"""``publisher audit refetch``: re-download cited public URLs and report drift, changing nothing."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from _provenance_helpers import OTHER_PAGE, PAGE, make_wiki, serve, write_extraction
from _wiki_helpers import tree_digest
from conftest import CliResult, minimal_pdf

from publisher.acquire.sources import add_local_pdf, fetch
from publisher.gate.assemble import assemble_run
from publisher.wiki.audit import refetch_audit

Cli = Callable[..., CliResult]


@pytest.fixture(autouse=True)
def _loopback_only(no_proxy: None) -> None:
    return None


def test_audit_reports_the_page_that_changed(tmp_path: Path, cli: Cli) -> None:
    wiki, run = make_wiki(tmp_path / "wiki")
    pdf = tmp_path / "p.pdf"
    pdf.write_bytes(minimal_pdf(["A local paper."]))
    with serve() as pages:
        pages.pages["/changes"] = ("text/plain; charset=utf-8", PAGE.encode())
        pages.pages["/stays"] = ("text/plain; charset=utf-8", OTHER_PAGE.encode())
        pages.pages["/goes"] = ("text/plain; charset=utf-8", b"Soon gone.\n")
        sources = {name: fetch(run, pages.url(f"/{name}")).snapshot.source_id for name in ("changes", "stays", "goes")}
        local = add_local_pdf(run, pdf, wiki).snapshot.source_id
        for name, sid in [*sources.items(), ("local", local)]:
            write_extraction(run, sid, 0, 4, name=name)
        assert assemble_run(run).verdict == "pass"

        pages.pages["/changes"] = ("text/plain; charset=utf-8", PAGE.replace("large", "small").encode())
        del pages.pages["/goes"]
        before = tree_digest(wiki)
        audit = refetch_audit(wiki, timeout=5)
        result = cli("audit", "refetch", "--wiki", wiki, "--json", "--timeout", "5")
        assert tree_digest(wiki) == before  # nothing written: no snapshot, event or raw file

    status = {e.source_id: e.status for e in audit.entries}
    assert status == {sources["changes"]: "drifted", sources["stays"]: "identical", sources["goes"]: "unreachable"}
    assert [s["source_id"] for s in audit.skipped] == [local]
    assert audit.counts == {"identical": 1, "drifted": 1, "unreachable": 1} and not audit.clean
    changed = next(e for e in audit.entries if e.status == "drifted")
    assert changed.raw_sha256_then is not None and changed.raw_sha256_now != changed.raw_sha256_then
    assert result.status == 1, result.err
    data = result.json()
    assert data["counts"] == {"identical": 1, "drifted": 1, "unreachable": 1}
    assert {s["source_id"]: s["status"] for s in data["sources"]} == status


def test_a_wiki_whose_pages_still_agree_is_clean(tmp_path: Path, cli: Cli) -> None:
    wiki, run = make_wiki(tmp_path / "wiki")
    with serve() as pages:
        pages.pages["/p"] = ("text/plain; charset=utf-8", PAGE.encode())
        write_extraction(run, fetch(run, pages.url("/p")).snapshot.source_id, 0, 5)
        assemble_run(run)
        result = cli("audit", "refetch", "--wiki", wiki)
    assert result.status == 0, result.out + result.err
    assert "1 identical" in result.out


def test_audit_of_a_missing_wiki_is_a_usage_error(tmp_path: Path, cli: Cli) -> None:
    result = cli("audit", "refetch", "--wiki", tmp_path / "nowhere")
    assert result.status == 2 and len(result.err_lines) == 1
