"""Slugs are held to a safe alphabet wherever they come from, an upstream run's folder name too.

An unsafe slug is refused with one SCHEMA_ERROR naming the run and the fix, never mapped; the
build fails and the previous site stays byte-identical.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from _policy import policy_of
from _wiki_helpers import build_wiki, leftovers, make_wiki, refused_build, sample_run, tree_digest

from publisher.kernel.errors import UsageError
from publisher.runs import Run, slug_problem
from publisher.wiki.check import check_wiki as run_preflight
from publisher.wiki.promote import promote

UNSAFE = ("bad slug", "<img src=x onerror=alert(1)>", 'a"b', ".hidden", "-flag", "é", "x" * 129, "a&b", "a'b")


@pytest.mark.parametrize("slug", UNSAFE)
def test_unsafe_slugs_are_refused(slug: str) -> None:
    assert slug_problem(slug) is not None


@pytest.mark.parametrize("slug", ["a", "run-2024.05_01", "A1", "x" * 128])
def test_safe_slugs_pass(slug: str) -> None:
    assert slug_problem(slug) is None


@pytest.mark.parametrize("folder", ["bad slug", "<img src=x onerror=alert(1)>", "a&b"])
def test_upstream_folder_name_that_is_not_a_safe_slug_fails_the_build(tmp_path: Path, folder: str) -> None:
    wiki = make_wiki(tmp_path / "wiki")
    rb = sample_run(wiki)
    promote(rb.run.path, wiki, policy=policy_of(wiki))
    build_wiki(wiki)
    (wiki / "concepts" / "alpha.md").unlink()
    before = tree_digest(wiki / "site")
    config = json.loads(rb.run.config_path.read_text(encoding="utf-8"))
    del config["run_slug"]  # an upstream run: its folder name is its slug
    os.chmod(rb.run.config_path, 0o644)
    rb.run.config_path.write_text(json.dumps(config), encoding="utf-8")
    moved = wiki / "runs" / folder
    os.rename(rb.run.path, moved)
    with pytest.raises(UsageError) as caught:
        Run(moved).slug()
    assert caught.value.reason == "SCHEMA_ERROR"
    pre = run_preflight(wiki, policy=policy_of(wiki))
    assert [f.code for f in pre.findings] == ["SCHEMA_ERROR"]
    assert refused_build(wiki) == tuple(pre.findings)
    assert tree_digest(wiki / "site") == before and leftovers(wiki) == []
