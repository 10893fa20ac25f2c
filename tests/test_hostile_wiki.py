"""Hostile wikis: run slugs, concept files and site folders that once escaped or were skipped.

Real ``mkdocs build`` runs where the site is concerned; every failure must leave the published
site (and everything around it) untouched.
"""

from __future__ import annotations

import os
import unicodedata
from collections.abc import Callable
from pathlib import Path

import pytest
from _policy import policy_of
from _scaling import grows_linearly
from _wiki_helpers import Claim, RunBuilder, build_wiki, edit_json, make_wiki, refused_build, sample_run, tree_digest
from conftest import CliResult

from publisher.gate.result import Result
from publisher.kernel.errors import IntegrityError
from publisher.runs import Run
from publisher.wiki.check import check_wiki as run_preflight
from publisher.wiki.concepts import ConceptRun, parse_concept
from publisher.wiki.promote import promote

BAD_SLUGS = ["../../../escaped", "..", "a/b", "a\\b", "tab\there"]


def _published(tmp_path: Path) -> tuple[Path, RunBuilder, dict[str, str]]:
    wiki = make_wiki(tmp_path / "wiki")
    rb = sample_run(wiki)
    promote(rb.run.path, wiki, policy=policy_of(wiki))
    build_wiki(wiki)
    return wiki, rb, tree_digest(tmp_path)


# ---------------------------------------------------------------------------------------------
# run slugs become page paths: one that is not a single path segment must never be used


@pytest.mark.parametrize("slug", BAD_SLUGS)
def test_config_run_slug_that_is_not_a_path_segment_is_refused(
    tmp_path: Path, cli: Callable[..., CliResult], slug: str
) -> None:
    wiki = make_wiki(tmp_path / "wiki")
    rb = sample_run(wiki)
    edit_json(rb.run.config_path, lambda d: d.__setitem__("run_slug", slug))
    before = tree_digest(rb.run.path / "outputs")
    outcome = cli("assemble", "--run-dir", rb.run.path, "--json")
    assert outcome.status == 2 and outcome.json()["error"]["reason_code"] == "SCHEMA_ERROR"
    assert len(outcome.err_lines) == 1
    assert tree_digest(rb.run.path / "outputs") == before


@pytest.mark.parametrize("slug", BAD_SLUGS)
def test_result_run_slug_that_is_not_a_path_segment_fails_the_build(tmp_path: Path, slug: str) -> None:
    wiki, rb, before = _published(tmp_path)
    edit_json(rb.run.result_path, lambda d: d.__setitem__("run_slug", slug))
    findings = refused_build(wiki)
    assert findings and {(f.run, f.file) for f in findings} == {("runs/alpha", "runs/alpha/outputs/result.json")}
    after = tree_digest(tmp_path)
    after.pop("wiki/runs/alpha/outputs/result.json")
    before.pop("wiki/runs/alpha/outputs/result.json")
    assert after == before  # nothing written anywhere, inside the wiki or above it


def test_result_model_refuses_a_traversing_slug(tmp_path: Path) -> None:
    wiki = make_wiki(tmp_path / "wiki")
    rb = sample_run(wiki)
    raw = __import__("json").loads(rb.run.result_path.read_text(encoding="utf-8"))
    Result.model_validate(raw)
    raw["run_slug"] = "../x"
    with pytest.raises(ValueError):
        Result.model_validate(raw)


def test_folder_name_slug_is_resolved(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    folder = tmp_path / "runs" / "upstream-run"
    folder.mkdir(parents=True)
    monkeypatch.chdir(folder)
    assert Run(Path(".")).slug_default == "upstream-run"
    assert Run(folder / "sub" / "..").slug_default == "upstream-run"


def test_concept_front_matter_run_slug_is_anchored() -> None:
    with pytest.raises(ValueError):
        ConceptRun(run="../../x", path="runs/a", promoted_at="2026-01-01T00:00:00Z")


# ---------------------------------------------------------------------------------------------
# concept files that are links or FIFOs


@pytest.mark.parametrize("kind", ["symlink", "fifo"])
def test_concept_that_is_not_a_regular_file_fails_the_build(tmp_path: Path, kind: str) -> None:
    wiki, _, _ = _published(tmp_path)
    path = wiki / "concepts" / "alpha.md"
    if kind == "symlink":
        outside = tmp_path / "outside.md"
        outside.write_bytes(path.read_bytes())
        path.unlink()
        path.symlink_to(outside)
    else:
        os.mkfifo(wiki / "concepts" / "beta.md")
    pre = run_preflight(wiki, policy=policy_of(wiki))
    assert pre.counts_by_reason() == {"SCHEMA_ERROR": 1}
    site = tree_digest(wiki / "site")
    assert refused_build(wiki) == tuple(pre.findings)
    assert tree_digest(wiki / "site") == site


# ---------------------------------------------------------------------------------------------
# a concepts/ that is not a real folder: refused, never read as "no concepts" nor followed

CONCEPTS_KINDS = ["file", "fifo", "link-loop", "dangling-link", "link-outside"]


def _replace_concepts(wiki: Path, kind: str) -> None:
    """Put ``kind`` in place of the wiki's ``concepts/``; ``link-outside`` keeps its concept files,
    moved outside the wiki (a build following the link would publish them)."""
    folder = wiki / "concepts"
    if kind == "link-outside":
        outside = wiki.parent / "outside-concepts"
        folder.rename(outside)
        folder.symlink_to(outside)
        return
    for path in folder.iterdir():
        path.unlink()
    folder.rmdir()
    if kind == "file":
        folder.write_text("not a folder\n", encoding="utf-8")
    elif kind == "fifo":
        os.mkfifo(folder)
    elif kind == "link-loop":
        folder.symlink_to(folder.name)
    else:
        folder.symlink_to(wiki / "nowhere")


@pytest.mark.parametrize("kind", CONCEPTS_KINDS)
def test_a_concepts_that_is_not_a_real_folder_fails_check_and_the_build(
    tmp_path: Path, cli: Callable[..., CliResult], kind: str
) -> None:
    wiki, _, _ = _published(tmp_path)
    _replace_concepts(wiki, kind)
    before = tree_digest(tmp_path)
    pre = run_preflight(wiki, policy=policy_of(wiki))
    assert [(f.code, f.file) for f in pre.findings] == [("SCHEMA_ERROR", "concepts")]
    assert pre.concepts == []
    done = cli("check", "--wiki", wiki, "--json")
    assert done.status == 1, done.err
    assert "internal error" not in done.err and "Traceback" not in done.err
    assert [(f["reason_code"], f["file"]) for f in done.json()["findings"]] == [("SCHEMA_ERROR", "concepts")]
    human = cli("check", "--wiki", wiki)
    assert human.status == 1 and human.err_lines[0].startswith("publisher: SCHEMA_ERROR concepts: is a "), human.err
    assert refused_build(wiki) == tuple(pre.findings)
    assert tree_digest(tmp_path) == before  # the published site, the wiki and what a link names: untouched
    assert not [p.name for p in wiki.iterdir() if p.name.startswith(".site-")]


def test_a_wiki_without_concepts_is_checked_and_built(tmp_path: Path, cli: Callable[..., CliResult]) -> None:
    """An absent ``concepts/`` is no concepts (runs alone build), unlike anything else in its place."""
    wiki, _, _ = _published(tmp_path)
    for path in (wiki / "concepts").iterdir():
        path.unlink()
    (wiki / "concepts").rmdir()
    pre = run_preflight(wiki, policy=policy_of(wiki))
    assert pre.ok and pre.concepts == [] and len(pre.runs) == 1, pre.findings
    assert cli("check", "--wiki", wiki).status == 0
    build_wiki(wiki)
    assert not (wiki / "site" / "concepts" / "alpha").exists()


def test_new_never_scaffolds_through_a_linked_concepts_folder(tmp_path: Path, cli: Callable[..., CliResult]) -> None:
    wiki, outside = tmp_path / "wiki", tmp_path / "outside"
    wiki.mkdir()
    outside.mkdir()
    (wiki / "concepts").symlink_to(outside)
    done = cli("new", wiki, "--unsigned")
    assert done.status == 2 and len(done.err_lines) == 1, done.err
    assert list(outside.iterdir()) == [] and not (wiki / "mkdocs.yml").exists()


# ---------------------------------------------------------------------------------------------
# a file where the site goes


def test_site_dir_that_is_a_file_is_not_replaced(tmp_path: Path) -> None:
    wiki = make_wiki(tmp_path / "wiki")
    rb = sample_run(wiki)
    promote(rb.run.path, wiki, policy=policy_of(wiki))
    (wiki / "site").write_text("precious", encoding="utf-8")
    # Refused before anything is read or written: not a folder this build made (C-CONFIG, site_dir).
    assert [(f.check, f.field, f.file) for f in refused_build(wiki)] == [("C-CONFIG", "site_dir", "mkdocs.yml")]
    assert (wiki / "site").read_text(encoding="utf-8") == "precious"
    assert not [p.name for p in wiki.iterdir() if p.name.startswith(".site-")]


# ---------------------------------------------------------------------------------------------
# concept front matter: safe YAML only, no expansion bombs, no normalisation of excerpts


def _front(extra: str) -> str:
    return f"---\nschema_version: 1\ntitle: T\nconcept: t\n{extra}---\nBody.\n"


@pytest.mark.parametrize(
    "extra",
    [
        "summary: !!python/object/apply:os.system ['echo pwned']\n",
        "summary: !!python/name:os.system\n",
        "title2: !!binary aGVsbG8=\n",
    ],
)
def test_unsafe_yaml_tags_are_refused(extra: str) -> None:
    with pytest.raises(IntegrityError) as info:
        parse_concept(_front(extra))
    assert info.value.reason is not None and info.value.reason.value == "SCHEMA_ERROR"


@pytest.mark.parametrize("field", ["claims", "summary", "runs", "extra_field"])
def test_alias_expansion_bomb_is_refused_quickly(field: str) -> None:
    lines = ['a0: &a0 ["x","x","x","x","x","x","x","x","x","x"]']
    for i in range(1, 9):
        lines.append(f"a{i}: &a{i} [" + ",".join([f"*a{i - 1}"] * 10) + "]")
    bomb = "\n".join([*lines, f"{field}: *a8"]) + "\n"
    bigger = "\n".join([*lines, "a9: &a9 [" + ",".join(["*a8"] * 10) + "]", f"{field}: *a9"]) + "\n"

    def refused(text: str) -> None:
        with pytest.raises(IntegrityError):
            parse_concept(_front(text))

    # Ten times the expansion costs no more: the aliases are refused before they are expanded.
    grows_linearly(lambda: refused(bomb), lambda: refused(bigger))


def test_missing_front_matter_is_a_schema_error() -> None:
    with pytest.raises(IntegrityError) as info:
        parse_concept("# Just prose\n")
    assert info.value.reason is not None and info.value.reason.value == "SCHEMA_ERROR"


def test_excerpt_in_another_normalisation_form_is_an_excerpt_mismatch(tmp_path: Path) -> None:
    wiki = make_wiki(tmp_path / "wiki")
    rb = RunBuilder(wiki, "nfc")
    text = "Caf\u00e9 patients improved. Na\u00efve controls did not."
    sid = rb.source("https://example.org/cafe", text, paper={"pmid": "1", "doi": None, "pmcid": None})
    rb.extraction("pmid:1", [Claim("spans[0]", "Improved.", sid, 0, 23)])
    rb.assemble()
    promote(rb.run.path, wiki, policy=policy_of(wiki))
    path = wiki / "concepts" / "nfc.md"
    composed = path.read_text(encoding="utf-8")
    assert '"Caf\u00e9 patients improved."' in composed
    assert run_preflight(wiki, policy=policy_of(wiki)).ok
    path.write_text(composed.replace("Caf\u00e9", unicodedata.normalize("NFD", "Caf\u00e9")), encoding="utf-8")
    findings = run_preflight(wiki, policy=policy_of(wiki)).findings
    assert [f.code for f in findings if f.cause is None] == ["EXCERPT_MISMATCH"]
    assert [f.check for f in findings if f.cause is not None] == ["C-PROMOTED"]  # the line, grouped under it


def test_new_never_writes_the_wiki_key_through_a_linked_keys_folder(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    # The public key went where keys/ pointed (and the wiki then trusted a file outside it), and
    # the key pair's private half stayed behind in the user's key folder.
    wiki, outside = tmp_path / "wiki", tmp_path / "outside"
    wiki.mkdir()
    outside.mkdir()
    (wiki / "keys").symlink_to(outside)
    done = cli("new", wiki)
    assert done.status == 2 and len(done.err_lines) == 1, done.err
    assert list(outside.iterdir()) == [] and not (wiki / "mkdocs.yml").exists()
