"""Signed by default (CONTRACT 12): ``publisher new`` makes the wiki's key pair, keeps the private
half in the user's configuration folder, lists the public half under ``trusted_keys``; fetches
sign with it; a hand-written event is refused as fresh; ``keys new`` keeps private keys out of
git work trees and wikis. Tests assert reason codes and fields, never wording."""

from __future__ import annotations

import os
import stat
from collections.abc import Callable
from pathlib import Path

import pytest
from _provenance_helpers import PAGE, forge_fetch, serve, write_extraction
from conftest import CliResult

from publisher.acquire.signing import key_home_problem, user_key_dir
from publisher.gate.assemble import assemble_run
from publisher.gate.inputs import RunOptions
from publisher.kernel.reasons import Reason
from publisher.runs import Run
from publisher.site.lifecycle.policy import resolve_policy

Cli = Callable[..., CliResult]


@pytest.fixture(autouse=True)
def _loopback_only(no_proxy: None) -> None:
    return None


def test_a_new_wiki_is_signed_and_its_private_key_lives_outside_it(tmp_path: Path, cli: Cli) -> None:
    wiki = tmp_path / "w"
    done = cli("new", wiki, "--json")
    assert done.status == 0, done.err
    assert done.json()["signed"] is True
    policy = resolve_policy(wiki)
    [key_id] = policy.trusted_keys.ids
    assert policy.key_files == ("keys/wiki.pub",)
    private = user_key_dir() / f"{key_id}.key"
    assert private.is_file() and stat.S_IMODE(private.stat().st_mode) == 0o600
    assert stat.S_IMODE(private.parent.stat().st_mode) == 0o700
    assert not any(p.suffix == ".key" for p in wiki.rglob("*"))
    ignored = (wiki / ".gitignore").read_text(encoding="utf-8").splitlines()
    assert "*.key" in ignored


def test_fetches_in_a_new_wiki_are_signed_and_a_forged_event_is_not_fresh(tmp_path: Path, cli: Cli) -> None:
    wiki = tmp_path / "w"
    assert cli("new", wiki).status == 0
    [key_id] = resolve_policy(wiki).trusted_keys.ids
    assert cli("run", "init", wiki / "runs" / "r", "--slug", "r").status == 0
    run = Run(wiki / "runs" / "r")
    with serve() as pages:
        pages.pages["/p"] = ("text/plain; charset=utf-8", PAGE.encode())
        fetched = cli("source", "fetch", "--run-dir", run.path, "--url", pages.url("/p"), "--json")
    assert fetched.status == 0, fetched.err
    assert fetched.json()["signed_by"] == key_id
    start = PAGE.index("The effect")
    write_extraction(run, fetched.json()["source_id"], start, start + 20)
    forged = forge_fetch(run, "https://example.org/forged", "A fabricated sentence about the effect.")
    write_extraction(run, forged, 2, 20, name="forged")
    assembly = assemble_run(run, RunOptions(trusted_keys=resolve_policy(wiki).trusted_keys), write=False)
    codes = {(f.source_id, f.code) for f in assembly.findings}
    assert codes == {(forged, Reason.NO_FRESH_FETCH.value)}


def test_unsigned_new_wiki_on_request(tmp_path: Path, cli: Cli) -> None:
    wiki = tmp_path / "w"
    assert cli("new", wiki, "--unsigned").status == 0
    assert not resolve_policy(wiki).signed
    assert not (wiki / "keys").exists()


@pytest.mark.parametrize("where", ["git", "wiki"])
def test_keys_new_refuses_a_git_work_tree_or_a_wiki_unless_forced(tmp_path: Path, where: str, cli: Cli) -> None:
    home = tmp_path / "repo"
    home.mkdir()
    if where == "git":
        (home / ".git").mkdir()
    else:
        (home / "mkdocs.yml").write_text("site_name: x\n", encoding="utf-8")
    out = home / "deep" / "keys"
    assert key_home_problem(out) is not None
    refused = cli("keys", "new", "--out", out)
    assert refused.status == 2 and len(refused.err_lines) == 1
    assert not out.exists() or not any(out.iterdir())
    assert cli("keys", "new", "--out", out, "--force").status == 0
    assert (out / "publisher.key").is_file()
    outside = tmp_path / "elsewhere"
    assert key_home_problem(outside) is None or os.path.lexists(Path("/.git"))


def test_a_fetch_without_the_wikis_private_key_is_refused_before_anything_is_written(
    tmp_path: Path, cli: Cli, monkeypatch: pytest.MonkeyPatch
) -> None:
    wiki = tmp_path / "w"
    assert cli("new", wiki).status == 0
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "another-user"))
    monkeypatch.delenv("PUBLISHER_SIGNING_KEY", raising=False)
    run = wiki / "runs" / "r"
    assert cli("run", "init", run, "--slug", "r").status == 0
    before = sorted(p.relative_to(run) for p in run.rglob("*"))
    with serve() as pages:
        pages.pages["/p"] = ("text/plain; charset=utf-8", PAGE.encode())
        fetched = cli("source", "fetch", "--run-dir", run, "--url", pages.url("/p"), "--json")
        registered = cli(
            "source",
            "register",
            "--run-dir",
            run,
            "--url",
            pages.url("/p"),
            "--text-file",
            wiki / "mkdocs.yml",
            "--json",
        )
    for refused in (fetched, registered):
        assert refused.status == 2
        key_file = refused.json()["error"]["file"]  # the key to use, by its file in the wiki
        assert key_file.endswith(".pub") and (wiki / key_file).is_file()
    assert sorted(p.relative_to(run) for p in run.rglob("*")) == before
