"""A tampered claim fails every build the same way, leaving the published site byte-identical:
MkDocs with the hook, MkDocs with the plugin, ProperDocs with the hook; and ``promote`` and
``publisher check`` refuse it too (one wiki check behind all of them)."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from _claims_helpers import CONCEPT, claims_wiki
from _policy import policy_of
from _wiki_helpers import leftovers, logged_findings, tree_digest
from conftest import CliResult
from test_claims_assess import assess

from publisher.acquire.signing import new_key_pair
from publisher.kernel.canonical import canonical_bytes
from publisher.wiki.promote import PromotionRefused, promote

Cli = Callable[..., CliResult]
BIN = Path(sys.executable).parent


def _as_plugin(wiki: Path) -> None:
    yml = (wiki / "mkdocs.yml").read_text(encoding="utf-8")
    assert "  - hooks/evidence.py\n" in yml and "plugins: []\n" in yml
    yml = yml.replace("  - hooks/evidence.py\n", "").replace("hooks:\nmarkdown", "markdown")
    (wiki / "mkdocs.yml").write_text(yml.replace("plugins: []\n", "plugins:\n  - evidence\n"), encoding="utf-8")
    (wiki / "hooks" / "evidence.py").unlink()


def _build(tool: str, wiki: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(BIN / tool), "build", "--strict", "-v", "-f", "mkdocs.yml"],
        cwd=wiki, capture_output=True, text=True, check=False, timeout=600,
    )  # fmt: skip


@pytest.mark.slow
@pytest.mark.parametrize(("tool", "wiring"), [("mkdocs", "hook"), ("mkdocs", "plugin"), ("properdocs", "hook")])
def test_tampered_front_matter_fails_every_build_with_the_site_untouched(
    tool: str, wiring: str, cli: Cli, tmp_path: Path, corpus_dir: Path
) -> None:
    if not (BIN / tool).exists():
        pytest.fail(f"{tool} is not installed beside this Python; the test extra installs it")
    cw = claims_wiki(tmp_path / "wiki", corpus_dir)
    assert assess(cli, cw, "c1", "It helps.", "S", "--evidence", cw.labels[0]).status == 0
    if wiring == "plugin":
        _as_plugin(cw.wiki)
    done = _build(tool, cw.wiki)
    assert done.returncode == 0, done.stderr
    site = cw.wiki / "site"
    assert (site / "claims.json").is_file()
    before = tree_digest(site)
    text = cw.concept.read_text(encoding="utf-8")
    cw.concept.write_text(text.replace("status: supported", "status: contradicted"), encoding="utf-8")
    done = _build(tool, cw.wiki)
    assert done.returncode != 0
    assert [(f.check, f.field) for f in logged_findings(done.stderr)] == [("C-CLAIM", "ASSESSMENT_MISMATCH")]
    assert tree_digest(site) == before and leftovers(cw.wiki) == []


def test_promote_and_check_agree_with_the_build(cli: Cli, tmp_path: Path, corpus_dir: Path) -> None:
    cw = claims_wiki(tmp_path / "wiki", corpus_dir)
    assert assess(cli, cw, "c1", "It helps.", "S", "--evidence", cw.labels[0]).status == 0
    text = cw.concept.read_text(encoding="utf-8")
    cw.concept.write_text(text.replace("status: supported", "status: contradicted"), encoding="utf-8")
    with pytest.raises(PromotionRefused) as info:
        promote(cw.rb.run.path, cw.wiki, concept=CONCEPT, policy=policy_of(cw.wiki))
    assert [(f.check, f.field) for f in info.value.findings] == [("C-CLAIM", "ASSESSMENT_MISMATCH")]
    out = cli("check", "--wiki", cw.wiki, "--json")
    assert out.status == 1
    assert [(f["check"], f["field"]) for f in out.json()["findings"]] == [("C-CLAIM", "ASSESSMENT_MISMATCH")]


def test_with_trusted_keys_only_signed_assessments_count(cli: Cli, tmp_path: Path, corpus_dir: Path) -> None:
    private, public, _ = new_key_pair(tmp_path / "keys")
    (tmp_path / "wiki" / "keys").mkdir(parents=True)
    (tmp_path / "wiki" / "keys" / "wiki.pub").write_bytes(public.read_bytes())
    trusted = "extra:\n  evidence:\n    trusted_keys: [keys/wiki.pub]\n"
    cw = claims_wiki(tmp_path / "wiki", corpus_dir, key=private, extra=trusted)
    assert cli("check", "--wiki", cw.wiki).status == 0
    log = cw.wiki / "assessments.jsonl"
    unsigned = assess(cli, cw, "c1", "It helps.", "S", "--evidence", cw.labels[0], "--json")
    assert unsigned.status == 2 and not log.exists()  # no key found: refused before anything is logged
    assert unsigned.json()["error"]["file"] == "keys/wiki.pub"  # naming the key to sign with
    other, _, _ = new_key_pair(tmp_path / "other")
    untrusted = assess(cli, cw, "c1", "It helps.", "S", "--evidence", cw.labels[0], "--key", other)
    assert untrusted.status == 2 and not log.exists()  # a key the wiki does not trust: refused too
    signed = assess(cli, cw, "c1", "It helps.", "S", "--evidence", cw.labels[0], "--key", private)
    assert signed.status == 0
    assert cli("check", "--wiki", cw.wiki).status == 0
    # The signature stripped from the logged line: the check refuses the entry.
    entry = json.loads(log.read_bytes())
    del entry["sig"]
    log.write_bytes(canonical_bytes(entry) + b"\n")
    out = cli("check", "--wiki", cw.wiki, "--json")
    assert out.status == 1
    assert ("C-CLAIM", "ASSESSMENT_LOG") in {(f["check"], f["field"]) for f in out.json()["findings"]}


def test_serve_watches_the_assessment_log(cli: Cli, tmp_path: Path, corpus_dir: Path) -> None:
    from mkdocs.config import load_config

    cw = claims_wiki(tmp_path / "wiki", corpus_dir)
    assert assess(cli, cw, "c1", "It helps.", "S", "--evidence", cw.labels[0]).status == 0
    config = load_config(str(cw.wiki / "mkdocs.yml"))
    watched: list[str] = []

    class _Server:
        def watch(self, path: str) -> None:
            watched.append(path)

    config.plugins.on_serve(_Server(), config=config, builder=lambda: None)
    assert str(cw.wiki / "assessments.jsonl") in watched
