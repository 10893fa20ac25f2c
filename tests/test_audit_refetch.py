"""``publisher audit refetch``: re-download cited public URLs and report drift, changing nothing."""

from __future__ import annotations

import shlex
from collections.abc import Callable
from pathlib import Path

import pytest
from _policy import options_of
from _provenance_helpers import OTHER_PAGE, PAGE, make_wiki, serve, write_extraction
from _wiki_helpers import finding_of, tree_digest, writable
from conftest import CliResult, minimal_pdf

from publisher.acquire.http import HttpResult
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
        assert assemble_run(run, options_of(run)).verdict == "pass"

        pages.pages["/changes"] = ("text/plain; charset=utf-8", PAGE.replace("large", "small").encode())
        del pages.pages["/goes"]
        before = tree_digest(wiki)
        audit = refetch_audit(wiki, timeout=5)
        result = cli("audit", "refetch", "--wiki", wiki, "--json", "--timeout", "5")
        assert tree_digest(wiki) == before  # nothing written: no snapshot, event or raw file
        # The drift comes with the ready-made command that records it as a revision.
        drifted = next(e for e in audit.entries if e.status == "drifted")
        assert drifted.revise is not None and next(e for e in audit.entries if e.status != "drifted").revise is None
        program, *argv = shlex.split(drifted.revise)
        assert program == "publisher" and argv[:2] == ["source", "revise"]
        argv[argv.index("--run-dir") + 1] = str(wiki / argv[argv.index("--run-dir") + 1])
        revised = cli(*argv, "--json")
        assert revised.status == 0, revised.err
        assert revised.json()["supersedes"] == sources["changes"]

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
        assemble_run(run, options_of(run))
        result = cli("audit", "refetch", "--wiki", wiki)
    assert result.status == 0, result.out + result.err
    assert "1 identical" in result.out


def test_audit_of_a_missing_wiki_is_a_usage_error(tmp_path: Path, cli: Cli) -> None:
    result = cli("audit", "refetch", "--wiki", tmp_path / "nowhere")
    assert result.status == 2 and len(result.err_lines) == 1


def test_what_cannot_be_audited_is_a_finding_naming_its_file_and_run(tmp_path: Path, cli: Cli) -> None:
    wiki, run = make_wiki(tmp_path / "wiki")
    with serve() as pages:
        pages.pages["/p"] = ("text/plain; charset=utf-8", PAGE.encode())
        sid = fetch(run, pages.url("/p")).snapshot.source_id
        write_extraction(run, sid, 0, 5)
        assemble_run(run, options_of(run))
    rel = run.path.relative_to(wiki).as_posix()
    (run.sources_dir / f"{sid}.json").unlink()

    def offline(url: str) -> HttpResult:
        raise AssertionError(f"{url} was fetched although its snapshot is gone")

    audit = refetch_audit(wiki, fetcher=offline)
    assert not audit.clean and audit.entries == []
    (gone,) = audit.problems
    assert (gone.check, gone.file, gone.run, gone.source_id) == ("C-SNAPSHOT", f"{rel}/sources/{sid}.json", rel, sid)
    assert gone.reason is not None

    writable(run.result_path).write_text("{", encoding="utf-8")
    result = cli("audit", "refetch", "--wiki", wiki, "--json")
    assert result.status == 1
    (unreadable,) = [finding_of(data) for data in result.json()["findings"]]
    assert (unreadable.file, unreadable.run, unreadable.source_id) == (f"{rel}/outputs/result.json", rel, None)
    assert result.json()["problems"] == [unreadable.one_line()]
    assert str(tmp_path) not in result.out
