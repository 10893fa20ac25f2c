"""One trust policy (CONTRACT 12): ``extra: evidence:`` is resolved once, through MkDocs' loader,
by the build and by every command, so a key listed through ``INHERIT``, ``-f other.yml`` or
``!ENV`` binds ``publisher check`` exactly as it binds ``mkdocs build``. Tests assert reason
codes and finding fields, never wording."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
from _provenance_helpers import forge_fetch
from _wiki_helpers import build_findings, make_wiki, refused_build, sample_run
from conftest import CliResult
from mkdocs.exceptions import Abort, PluginError

from publisher.acquire.signing import new_key_pair
from publisher.kernel.reasons import Reason
from publisher.site.lifecycle.policy import resolve_policy

Cli = Callable[..., CliResult]

TRUST = "extra:\n  evidence:\n    trusted_keys:\n      - keys/ci.pub\n"


def _wiki(tmp_path: Path) -> tuple[Path, str]:
    """A wiki with an unsigned run (its fetch events carry no signature) and a key pair whose
    public half sits in the wiki, listed nowhere yet. Returns the wiki and the key id."""
    wiki = make_wiki(tmp_path / "wiki")
    rb = sample_run(wiki)
    forge_fetch(rb.run, "https://example.org/forged", "A fabricated sentence.")
    _, public, key_id = new_key_pair(tmp_path / "keys", "ci")
    (wiki / "keys").mkdir()
    shutil.copy(public, wiki / "keys" / "ci.pub")
    return wiki, key_id


def _build(config_file: Path) -> None:
    """``mkdocs build -f FILE``, in process, as the command runs it."""
    from mkdocs.commands.build import build
    from mkdocs.config import load_config

    config = load_config(str(config_file))
    config.plugins.on_startup(command="build", dirty=False)
    try:
        build(config)
    finally:
        config.plugins.on_shutdown()


def _list_key(wiki: Path, how: str, monkeypatch: pytest.MonkeyPatch) -> Path | None:
    """List ``keys/ci.pub`` in a way only MkDocs' loader resolves; returns the ``-f`` file, if any."""
    config = wiki / "mkdocs.yml"
    text = config.read_text(encoding="utf-8")
    if how == "inherit":
        (wiki / "base.yml").write_text(TRUST, encoding="utf-8")
        config.write_text("INHERIT: base.yml\n" + text, encoding="utf-8")
        return None
    if how == "file":
        other = wiki / "other.yml"
        other.write_text(text + TRUST, encoding="utf-8")
        return other
    monkeypatch.setenv("WIKI_TRUSTED_KEY", "keys/ci.pub")
    config.write_text(
        text + "extra:\n  evidence:\n    trusted_keys:\n      - !ENV WIKI_TRUSTED_KEY\n", encoding="utf-8"
    )
    return None


@pytest.mark.parametrize("how", ["inherit", "file", "env"])
def test_a_key_listed_only_through_mkdocs_binds_check_and_build(
    tmp_path: Path, how: str, cli: Cli, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    wiki, key_id = _wiki(tmp_path)
    assert cli("check", "--wiki", wiki).status == 0  # unsigned provenance: fresh without keys
    other = _list_key(wiki, how, monkeypatch)
    config = ["--config", other] if other is not None else []

    assert resolve_policy(wiki, other).trusted_keys.ids == [key_id]
    done = cli("check", "--wiki", wiki, *config, "--json")
    assert done.status == 1
    findings = json.loads(done.out)["findings"]
    assert Reason.NO_FRESH_FETCH.value in {f["reason_code"] for f in findings}

    with pytest.raises((PluginError, Abort)) as refused:
        _build(other or wiki / "mkdocs.yml")
    assert Reason.NO_FRESH_FETCH in {f.reason for f in build_findings(refused.value)}
    assert not (wiki / "site").exists()

    assembled = cli("assemble", "--run-dir", wiki / "runs" / "alpha", *config, "--json")
    codes = {e["reason_code"] for e in json.loads(assembled.out)["diagnostics"]["unresolved"]}
    assert codes == {Reason.NO_FRESH_FETCH.value}


@pytest.mark.parametrize(
    "entry",
    ["keys/missing.pub", "keys/not-a-key.pub", "/etc/hostname", "../outside.pub", "[1, 2]"],
)
def test_a_bad_key_entry_is_one_finding_in_check_and_build(
    tmp_path: Path, entry: str, cli: Cli, caplog: pytest.LogCaptureFixture
) -> None:
    wiki = make_wiki(tmp_path / "wiki")
    (wiki / "keys").mkdir()
    (wiki / "keys" / "not-a-key.pub").write_text("hello\n", encoding="utf-8")
    listed = entry if entry.startswith("[") else f"\n      - {entry}"
    with (wiki / "mkdocs.yml").open("a", encoding="utf-8") as out:
        out.write(f"extra:\n  evidence:\n    trusted_keys: {listed}\n")
    done = cli("check", "--wiki", wiki, "--json")
    assert done.status == 2
    assert done.err.count("\n") == 1 and done.json()["error"]["reason_code"] == "SCHEMA_ERROR"
    assert str(tmp_path) not in done.err
    (finding,) = refused_build(wiki)
    assert (finding.reason, finding.check, finding.file) == (Reason.SCHEMA_ERROR, "C-CONFIG", "mkdocs.yml")
    assert str(tmp_path) not in finding.detail
    assert len([r for r in caplog.records if r.levelname == "ERROR"]) == 1  # one refusal, no cascade
    assert not (wiki / "site").exists()


def test_an_unknown_option_or_unloadable_configuration_is_an_error_never_no_keys(tmp_path: Path, cli: Cli) -> None:
    wiki = make_wiki(tmp_path / "wiki")
    config = wiki / "mkdocs.yml"
    base = config.read_text(encoding="utf-8")
    config.write_text(base + "extra:\n  evidence:\n    trusted_key: [keys/ci.pub]\n", encoding="utf-8")
    assert cli("check", "--wiki", wiki).status == 2
    config.write_text("INHERIT: absent.yml\n" + base, encoding="utf-8")
    done = cli("check", "--wiki", wiki, "--json")
    assert done.status == 2 and done.json()["error"]["reason_code"] == "SCHEMA_ERROR"
    assert cli("check", "--wiki", wiki, "--config", wiki / "absent.yml").status == 2


def test_trusting_keys_in_a_wiki_of_unsigned_runs_is_one_root_finding_with_its_fix(tmp_path: Path, cli: Cli) -> None:
    wiki, _ = _wiki(tmp_path)
    with (wiki / "mkdocs.yml").open("a", encoding="utf-8") as out:
        out.write(TRUST)
    done = cli("check", "--wiki", wiki, "--json")
    assert done.status == 1
    findings = json.loads(done.out)["findings"]
    roots = [f for f in findings if f["cause"] is None]
    assert [(f["check"], f["reason_code"]) for f in roots] == [("C-ASSEMBLER", None)]
    assert "runs/alpha" in roots[0]["fix"]  # the command that re-assembles names the run
    consequences = {f["reason_code"] for f in findings if f["cause"] == roots[0]["key"]}
    assert Reason.NO_FRESH_FETCH.value in consequences
    assert not any("raw" in f["detail"] for f in findings)
