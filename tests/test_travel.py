"""Results that travel (CONTRACT 13): nothing stored on disk holds a path of the machine, and a
wiki copied to another folder checks clean and builds the same bytes."""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
from _policy import policy_of
from _wiki_helpers import TAMPERINGS, build_wiki, make_wiki, sample_run, tamper, tree_digest
from conftest import CliResult

from publisher.wiki.promote import promote

Cli = Callable[..., CliResult]


def _stored_texts(wiki: Path) -> dict[str, str]:
    """Every run file the commands write (results, verifications, reports), by relative path."""
    out = {}
    for path in sorted((wiki / "runs").rglob("*")):
        if path.is_file() and path.parent.name in ("outputs",) and path.suffix in (".json", ".html"):
            out[str(path.relative_to(wiki))] = path.read_text(encoding="utf-8", errors="replace")
    return out


def _machine_paths(tmp_path: Path) -> list[str]:
    return sorted({str(tmp_path), os.path.realpath(tmp_path), str(tmp_path).replace(os.sep, "/")})


@pytest.mark.parametrize("kind", [*TAMPERINGS, "none"])
def test_no_stored_result_or_verification_holds_a_machine_path(tmp_path: Path, kind: str, cli: Cli) -> None:
    wiki = make_wiki(tmp_path / "machine-specific-folder" / "wiki")
    rb = sample_run(wiki)
    if kind != "none":
        tamper(kind, rb)
    run = rb.run.path
    cli("verify", "--run-dir", run)
    cli("assemble", "--run-dir", run)
    cli("verify", "--run-dir", run)
    cli("render", "--run-dir", run)
    stored = _stored_texts(wiki)
    assert "runs/alpha/outputs/verification.json" in stored
    leaks = [(name, p) for name, text in stored.items() for p in _machine_paths(tmp_path) if p in text]
    assert leaks == []
    checked = cli("check", "--wiki", wiki, "--json")
    for finding in checked.json()["findings"] if checked.out else []:
        assert not any(p in finding["detail"] or p in finding["file"] for p in _machine_paths(tmp_path))


def test_a_copied_wiki_checks_clean_and_builds_the_same_bytes(tmp_path: Path, cli: Cli) -> None:
    first = make_wiki(tmp_path / "here" / "wiki")
    rb = sample_run(first)
    promote(rb.run.path, first, policy=policy_of(first))
    second = tmp_path / "elsewhere" / "deeper" / "copy"
    shutil.copytree(first, second, symlinks=True)
    assert cli("check", "--wiki", second).status == 0
    assert cli("verify", "--run-dir", second / "runs" / "alpha", "--gate").status == 0
    build_wiki(first)
    build_wiki(second)
    assert tree_digest(first / "site") == tree_digest(second / "site")
    assert cli("verify", "--run-dir", first / "runs" / "alpha", "--gate").status == 0

    def verification(wiki: Path) -> dict:
        data = json.loads((wiki / "runs" / "alpha" / "outputs" / "verification.json").read_text(encoding="utf-8"))
        del data["generated_at"]
        return data

    assert verification(first) == verification(second)


def test_a_copied_run_with_findings_is_not_reported_edited(tmp_path: Path, cli: Cli) -> None:
    # Diagnostics that named the machine's folder made the same run "edited" once moved.
    first = make_wiki(tmp_path / "here" / "wiki")
    rb = sample_run(first)
    tamper("snapshot-missing", rb)
    assert cli("assemble", "--run-dir", rb.run.path).status == 0  # gate off: warn
    second = tmp_path / "elsewhere" / "copy"
    shutil.copytree(first, second, symlinks=True)
    done = cli("verify", "--run-dir", second / "runs" / "alpha", "--json")
    checks = {c["check_id"]: c["status"] for c in done.json()["checks"]}
    assert checks["C-ASSEMBLER"] == "pass"
