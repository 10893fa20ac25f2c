"""A resolved configuration is kept between commands under the digests of the files it read:
the next command takes ``extra.evidence`` from the cache, without loading YAML, only while every
one of those files is unchanged; tagged, refused and foreign entries are never used."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from publisher.kernel.errors import UsageError
from publisher.kernel.reasons import Reason
from publisher.site.lifecycle.policy import CACHE_VARIABLE, cache_folder, resolve_policy
from publisher.wiki.policy import Policy


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "cache"
    monkeypatch.setenv(CACHE_VARIABLE, os.fspath(folder))
    return folder


def _wiki(root: Path, files: dict[str, str]) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text, encoding="utf-8")
    return root


def _options(policy: Policy) -> tuple[str, int, bool]:
    return policy.source_text, policy.context, policy.offline


def _entries(cache: Path) -> list[Path]:
    return sorted(cache.glob("*.json")) if cache.is_dir() else []


WINDOWS = "site_name: w\nextra:\n  evidence:\n    source_text: windows\n    context: 120\n    offline: true\n"


def test_a_resolved_configuration_is_read_back_without_loading_yaml(tmp_path: Path, cache: Path) -> None:
    wiki = _wiki(tmp_path / "wiki", {"mkdocs.yml": WINDOWS})
    first = resolve_policy(wiki)
    assert _options(first) == ("windows", 120, True) and len(_entries(cache)) == 1
    probe = (
        "import sys; from pathlib import Path; from publisher.site.lifecycle.policy import resolve_policy; "
        f"p = resolve_policy(Path({os.fspath(wiki)!r})); "
        "print(p.source_text, p.context, p.offline, p.digest, 'yaml' in sys.modules)"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert done.stdout.split() == ["windows", "120", "True", first.digest, "False"]


def test_a_changed_file_or_inherit_parent_is_resolved_again(
    tmp_path: Path, cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    files = {
        "mkdocs.yml": "INHERIT: base/parent.yml\nsite_name: w\n",
        "base/parent.yml": "extra:\n  evidence:\n    context: 100\n",
    }
    wiki = _wiki(tmp_path / "wiki", files)
    assert resolve_policy(wiki).context == 100
    assert resolve_policy(wiki).context == 100  # from the cache
    (wiki / "base" / "parent.yml").write_text("extra:\n  evidence:\n    context: 200\n", encoding="utf-8")
    assert resolve_policy(wiki).context == 200
    (wiki / "mkdocs.yml").write_text("site_name: w\n", encoding="utf-8")
    assert resolve_policy(wiki).context == Policy.unsigned().context
    # Named relative to the working folder, the files read are kept by their absolute paths.
    (wiki / "mkdocs.yml").write_text("INHERIT: base/parent.yml\nsite_name: relative\n", encoding="utf-8")
    monkeypatch.chdir(wiki)
    assert resolve_policy(Path("."), Path("mkdocs.yml")).context == 200
    for entry in _entries(cache):
        assert all(os.path.isabs(name) for name, _ in json.loads(entry.read_text(encoding="utf-8"))["files"])
    # The same bytes at another path are another entry (INHERIT is relative to the file).
    other = _wiki(tmp_path / "other", {"mkdocs.yml": files["mkdocs.yml"], "base/parent.yml": "extra: {}\n"})
    assert resolve_policy(other).context == Policy.unsigned().context


def test_a_tagged_configuration_is_resolved_every_time(
    tmp_path: Path, cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    text = "extra:\n  evidence:\n    source_text: !ENV [POLICY_CACHE_MODE, full]\n"
    wiki = _wiki(tmp_path / "wiki", {"mkdocs.yml": text})
    monkeypatch.setenv("POLICY_CACHE_MODE", "proofs")
    assert resolve_policy(wiki).source_text == "proofs"
    monkeypatch.setenv("POLICY_CACHE_MODE", "windows")
    assert resolve_policy(wiki).source_text == "windows"
    assert _entries(cache) == []
    # A tag in an INHERIT parent keeps the child out of the cache too.
    _wiki(wiki, {"mkdocs.yml": "INHERIT: base.yml\n", "base.yml": text})
    assert resolve_policy(wiki).source_text == "windows" and _entries(cache) == []


def test_a_refused_configuration_is_never_kept(tmp_path: Path, cache: Path) -> None:
    wiki = _wiki(tmp_path / "wiki", {"mkdocs.yml": "site_name: a\nsite_name: b\n"})
    for _ in range(2):
        with pytest.raises(UsageError) as refused:
            resolve_policy(wiki)
        assert refused.value.reason is Reason.SCHEMA_ERROR
    bad_option = "extra:\n  evidence:\n    context: lots\n"
    _wiki(wiki, {"mkdocs.yml": bad_option})
    for _ in range(2):
        with pytest.raises(UsageError) as refused:
            resolve_policy(wiki)
        assert refused.value.reason is Reason.SCHEMA_ERROR
    assert _entries(cache) == []


def test_an_entry_others_may_write_or_that_is_damaged_is_not_used(tmp_path: Path, cache: Path) -> None:
    wiki = _wiki(tmp_path / "wiki", {"mkdocs.yml": WINDOWS})
    resolve_policy(wiki)
    (entry,) = _entries(cache)
    kept = json.loads(entry.read_text(encoding="utf-8"))
    kept["evidence"]["source_text"] = "proofs"  # what a forged entry would claim
    entry.write_text(json.dumps(kept), encoding="utf-8")
    entry.chmod(0o666)
    assert resolve_policy(wiki).source_text == "windows"
    entry.write_text("{not json", encoding="utf-8")
    entry.chmod(0o600)
    assert resolve_policy(wiki).source_text == "windows"
    assert json.loads(entry.read_text(encoding="utf-8"))["evidence"]["source_text"] == "windows"  # kept anew
    cache.chmod(0o777)  # a folder others may write: nothing in it is read
    try:
        kept["evidence"]["source_text"] = "proofs"
        entry.write_text(json.dumps(kept), encoding="utf-8")
        assert resolve_policy(wiki).source_text == "windows"
    finally:
        cache.chmod(0o700)


def test_an_empty_cache_setting_keeps_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(CACHE_VARIABLE, "")
    monkeypatch.setenv("XDG_CACHE_HOME", os.fspath(tmp_path / "xdg"))
    assert cache_folder() is None
    wiki = _wiki(tmp_path / "wiki", {"mkdocs.yml": WINDOWS})
    assert resolve_policy(wiki).source_text == "windows"
    assert not (tmp_path / "xdg").exists()
    monkeypatch.delenv(CACHE_VARIABLE)
    assert cache_folder() == tmp_path / "xdg" / "evidence-publisher" / "config"
