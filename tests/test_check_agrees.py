"""``publisher check`` runs every check the build runs except rendering: each input the build
refuses, check refuses with the same finding (prose, files of docs/, concept prose, tampered
evidence), and what the build accepts, check accepts."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from _policy import options_of, policy_of
from _wiki_helpers import build_wiki, make_wiki, refused_build, sample_run, tamper, tree_digest
from conftest import CliResult
from mkdocs.exceptions import Abort

from publisher.wiki.promote import promote

Cli = Callable[..., CliResult]


def _break(wiki: Path, how: str) -> None:
    if how == "script-in-docs":
        (wiki / "docs" / "index.md").write_text("# Home\n\n<script>alert(1)</script>\n", encoding="utf-8")
    elif how == "handler-in-docs":
        (wiki / "docs" / "index.md").write_text('# Home\n\n<a href="#" onclick="x()">x</a>\n', encoding="utf-8")
    elif how == "html-file-in-docs":
        (wiki / "docs" / "page.html").write_text("<p>hi</p>\n", encoding="utf-8")
    elif how == "svg-with-script":
        (wiki / "docs" / "x.svg").write_text('<svg xmlns="http://www.w3.org/2000/svg"><script>1</script></svg>')
    elif how == "iframe-in-concept":
        (concept,) = (wiki / "concepts").glob("*.md")
        text = concept.read_text(encoding="utf-8")
        head, body = text.split("\n---\n", 1)
        concept.write_text(head + "\n---\n<iframe src='https://e.org'></iframe>\n\n" + body, encoding="utf-8")
    else:
        tamper(how, _break.rb)  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    "how",
    [
        "script-in-docs",
        "handler-in-docs",
        "html-file-in-docs",
        "svg-with-script",
        "iframe-in-concept",
        "snapshot-text",
        "result-excerpt",
    ],
)
def test_what_the_build_refuses_check_refuses_with_the_same_finding(tmp_path: Path, how: str, cli: Cli) -> None:
    wiki = make_wiki(tmp_path / "wiki")
    rb = sample_run(wiki)
    promote(rb.run.path, wiki, policy=policy_of(wiki))
    assert cli("check", "--wiki", wiki).status == 0
    build_wiki(wiki)
    before = tree_digest(wiki / "site")
    _break.rb = rb  # type: ignore[attr-defined]
    _break(wiki, how)

    done = cli("check", "--wiki", wiki, "--json")
    assert done.status == 1, done.err
    roots = [f for f in json.loads(done.out)["findings"] if f["cause"] is None]
    assert roots

    refused = [f.to_dict() for f in refused_build(wiki) if f.cause is None]
    assert sorted(refused, key=str) == sorted(roots, key=str)
    assert tree_digest(wiki / "site") == before


def test_check_writes_nothing_and_passes_what_the_build_publishes(tmp_path: Path, cli: Cli) -> None:
    wiki = make_wiki(tmp_path / "wiki")
    rb = sample_run(wiki)
    promote(rb.run.path, wiki, policy=policy_of(wiki))
    before = tree_digest(wiki)
    assert cli("check", "--wiki", wiki).status == 0
    assert tree_digest(wiki) == before
    build_wiki(wiki)
    assert (wiki / "site" / "index.html").is_file()


def test_a_report_changed_after_its_check_is_not_rendered(tmp_path: Path) -> None:
    from publisher.gate.pipeline import check_run
    from publisher.gate.render import ReportView
    from publisher.kernel.errors import IntegrityError

    wiki = make_wiki(tmp_path / "wiki")
    rb = sample_run(wiki)
    rb.run.report_md.write_text("# Report\n\nChecked text.\n", encoding="utf-8")
    rc = check_run(rb.run, options_of(rb.run))
    ReportView.of(rc)  # the report the checks read
    rb.run.report_md.write_text("# Report\n\nSwapped after the check.\n", encoding="utf-8")
    with pytest.raises(IntegrityError):
        ReportView.of(rc)


def test_a_strict_wiki_with_a_broken_link_is_refused_by_check_as_by_the_build(tmp_path: Path, cli: Cli) -> None:
    wiki = make_wiki(tmp_path / "wiki")
    promote(sample_run(wiki).run.path, wiki, policy=policy_of(wiki))
    config = wiki / "mkdocs.yml"
    config.write_text(config.read_text(encoding="utf-8") + "strict: true\n", encoding="utf-8")
    assert cli("check", "--wiki", wiki).status == 0
    (wiki / "docs" / "index.md").write_text("# Home\n\n[gone](missing.md)\n", encoding="utf-8")
    with pytest.raises(Abort):
        build_wiki(wiki)
    done = cli("check", "--wiki", wiki, "--json")
    assert done.status == 1
    assert [f["check"] for f in json.loads(done.out)["findings"]] == ["C-BUILD"]


def test_a_refusal_past_the_wiki_check_is_the_same_finding_in_check_and_build(tmp_path: Path, cli: Cli) -> None:
    wiki = make_wiki(tmp_path / "wiki")
    promote(sample_run(wiki).run.path, wiki, policy=policy_of(wiki))
    (wiki / "docs" / "concepts.md").write_text("# Mine\n", encoding="utf-8")  # where a generated page goes
    done = cli("check", "--wiki", wiki, "--json")
    assert done.status == 1
    refused = [f.to_dict() for f in refused_build(wiki)]
    assert json.loads(done.out)["findings"] == refused
    assert [(f["check"], f["file"]) for f in refused] == [("C-BUILD", "docs/concepts.md")]
