"""The policy's configuration loader reads each form MkDocs allows exactly as MkDocs' own
``yaml_load`` does (``!ENV``, ``!relative``, ``INHERIT`` chains, empty files) and refuses what it
refuses, without importing MkDocs for a configuration with no ``!relative`` tag."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from mkdocs.exceptions import MkDocsException
from mkdocs.utils.yaml import get_yaml_loader, yaml_load

from publisher.kernel.reasons import Reason
from publisher.site.lifecycle.policy import ConfigLoadError, PythonTag, _load_config, _Loading, resolve_policy

CASES: dict[str, dict[str, str]] = {
    "plain": {"mkdocs.yml": "site_name: w\nextra:\n  evidence:\n    trusted_keys: [keys/a.pub]\n"},
    "empty": {"mkdocs.yml": ""},
    "env set": {"mkdocs.yml": "site_name: w\nextra:\n  evidence:\n    trusted_keys: [!ENV POLICY_TEST_KEY]\n"},
    "env default": {"mkdocs.yml": "extra:\n  n: !ENV [POLICY_TEST_UNSET, POLICY_TEST_NUMBER, 3]\n"},
    "env unset": {"mkdocs.yml": "extra:\n  n: !ENV POLICY_TEST_UNSET\n"},
    "inherit": {
        "mkdocs.yml": "INHERIT: base/parent.yml\nsite_name: child\nextra:\n  evidence:\n    require: [x]\n",
        "base/parent.yml": "INHERIT: ../grand.yml\nextra:\n  evidence:\n    trusted_keys: [keys/p.pub]\n",
        "grand.yml": "site_name: grand\ntheme: material\nextra:\n  other: 1\n",
    },
    "relative config_dir": {"mkdocs.yml": "extra:\n  where: !relative $config_dir/keys\n"},
    "merge key": {"mkdocs.yml": "base: &b {x: 1}\nextra:\n  <<: *b\n  y: 2\n"},
}

REFUSED: dict[str, dict[str, str]] = {
    "bad yaml": {"mkdocs.yml": "extra: [unclosed\n"},
    "missing parent": {"mkdocs.yml": "INHERIT: nowhere.yml\nsite_name: w\n"},
    "unknown relative prefix": {"mkdocs.yml": "extra:\n  where: !relative $elsewhere/keys\n"},
    "relative with a suffix": {"mkdocs.yml": "extra:\n  where: !relative keys\n"},
    "bad env node": {"mkdocs.yml": "extra:\n  n: !ENV {a: 1}\n"},
}


def _write(folder: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(text, encoding="utf-8")
    return folder / "mkdocs.yml"


def _plain(value: Any) -> Any:
    """MkDocs' placeholders compared by the path they stand for."""
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    if isinstance(value, os.PathLike):
        return ("path", os.fspath(value))
    return value


def _mkdocs(path: Path) -> Any:
    with open(path, "rb") as fd:
        return yaml_load(fd, get_yaml_loader(config=_Loading(path)))  # type: ignore[arg-type]


@pytest.fixture(autouse=True)
def _env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("POLICY_TEST_KEY", "keys/env.pub")
    monkeypatch.setenv("POLICY_TEST_NUMBER", "7")
    monkeypatch.delenv("POLICY_TEST_UNSET", raising=False)


@pytest.mark.parametrize("case", sorted(CASES))
def test_each_form_loads_as_mkdocs_loads_it(tmp_path: Path, case: str) -> None:
    path = _write(tmp_path, CASES[case])
    assert _plain(_load_config(path)) == _plain(_mkdocs(path))


@pytest.mark.parametrize("case", sorted(REFUSED))
def test_what_mkdocs_refuses_is_refused(tmp_path: Path, case: str) -> None:
    path = _write(tmp_path, REFUSED[case])
    with pytest.raises(MkDocsException):
        _plain(_mkdocs(path))
    with pytest.raises(ConfigLoadError):
        _plain(_load_config(path))
    with pytest.raises(Exception) as refused:  # the command's refusal: a one-line SCHEMA_ERROR
        _plain(resolve_policy(tmp_path, path).trusted_keys)
    assert getattr(refused.value, "reason", None) is Reason.SCHEMA_ERROR


def test_a_list_document_is_refused_as_not_a_mapping(tmp_path: Path) -> None:
    path = _write(tmp_path, {"mkdocs.yml": "- a\n- b\n"})
    with pytest.raises(ConfigLoadError):
        _load_config(path)


def test_an_inherit_cycle_is_a_refusal_not_a_crash(tmp_path: Path) -> None:
    path = _write(tmp_path, {"mkdocs.yml": "INHERIT: other.yml\n", "other.yml": "INHERIT: mkdocs.yml\n"})
    with pytest.raises(ConfigLoadError):
        _load_config(path)


def test_resolving_a_policy_imports_no_mkdocs(tmp_path: Path) -> None:
    files = {"mkdocs.yml": "INHERIT: base.yml\nsite_name: w\n", "base.yml": "extra:\n  a: !ENV [X, 1]\n"}
    path = _write(tmp_path, files)
    probe = (
        "import sys; from pathlib import Path; from publisher.site.lifecycle.policy import resolve_policy; "
        f"resolve_policy(Path({os.fspath(tmp_path)!r}), Path({os.fspath(path)!r})); "
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('mkdocs', 'click', 'jinja2', 'babel')))"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"


def test_reading_the_policy_runs_no_python_tag(tmp_path: Path) -> None:
    """MkDocs constructs a Python tag when it builds (it may call any function the file names);
    the policy reads the tag only, so a command reading a wiki someone else wrote runs none of its
    code. Everything else reads as MkDocs reads it."""
    mark = tmp_path / "ran"
    text = (
        "site_name: w\n"
        f"hook: !!python/object/apply:os.mkdir [{os.fspath(mark)!r}]\n"
        "markdown_extensions:\n"
        "  - pymdownx.emoji:\n"
        "      emoji_index: !!python/name:material.extensions.emoji.twemoji\n"
        "extra:\n  evidence:\n    offline: true\n"
    )
    path = _write(tmp_path, {"mkdocs.yml": text})
    loaded = _load_config(path)
    assert not mark.exists()
    assert isinstance(loaded["hook"], PythonTag) and loaded["hook"].tag.endswith("python/object/apply:os.mkdir")
    emoji = loaded["markdown_extensions"][0]["pymdownx.emoji"]["emoji_index"]
    assert isinstance(emoji, PythonTag) and emoji.tag.endswith(":material.extensions.emoji.twemoji")
    assert not resolve_policy(tmp_path, path).trusted_keys
    assert not mark.exists()
    mkdocs = _mkdocs(path)  # MkDocs itself runs it: the difference is only in the tags
    assert mark.exists()
    assert {k: v for k, v in loaded.items() if k not in ("hook", "markdown_extensions")} == {
        k: v for k, v in mkdocs.items() if k not in ("hook", "markdown_extensions")
    }


def test_a_python_tag_in_the_evidence_settings_is_refused(tmp_path: Path) -> None:
    path = _write(tmp_path, {"mkdocs.yml": "extra:\n  evidence:\n    trusted_keys: !!python/name:os.getcwd\n"})
    with pytest.raises(Exception) as refused:
        resolve_policy(tmp_path, path)
    assert getattr(refused.value, "reason", None) is Reason.SCHEMA_ERROR
