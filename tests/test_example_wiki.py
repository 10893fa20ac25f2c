"""The repository's own example wiki: it verifies, it builds, and its build script reruns cleanly.

Every test works on a copy of the wiki in ``tmp_path``, so the committed example is never touched.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest

from publisher.kernel.refs import parse_refs

REPO = Path(__file__).resolve().parents[1]
RUN = "runs/example"
_TOP_LEVEL_SKIPPED = frozenset({".git", ".venv", "site", "tests", "test-artifacts", "build", "dist"})
_ANYWHERE_SKIPPED = shutil.ignore_patterns(
    "__pycache__", ".pytest_cache", ".ruff_cache", ".mypy_cache", ".hypothesis", "*.egg-info", ".site-*"
)


def _ignored(folder: str, names: list[str]) -> set[str]:
    """Skip build outputs and tooling; ``site`` only at the top (``templates/site`` is needed)."""
    skipped = set(_ANYWHERE_SKIPPED(folder, names))
    if Path(folder) == REPO:
        skipped |= _TOP_LEVEL_SKIPPED & set(names)
    return skipped


def _copy_wiki(tmp_path: Path) -> Path:
    """A copy of the repository's wiki (config, pages, hook, runs, concepts, PDF library, examples)."""
    if not (REPO / RUN / "outputs" / "result.json").is_file():
        pytest.fail(f"the committed example run is missing: {REPO / RUN}/outputs/result.json")
    target = tmp_path / "wiki"
    shutil.copytree(REPO, target, ignore=_ignored, symlinks=True)
    return target


def _publisher(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "publisher", *args], cwd=cwd, capture_output=True, text=True, check=False
    )


def _load(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8"))


def _accepted_excerpts(result: dict[str, Any]) -> list[tuple[str, str]]:
    """(source_id, excerpt) of every claim the assembler accepted."""
    return [(c["source_id"], c["excerpt"]) for a in result["accepted"] for c in a["claims"]]


def _concept_excerpts(concepts: Path) -> list[tuple[str, str]]:
    """(source_id, excerpt) of every evidence footnote in the promoted concept files."""
    found = []
    for path in sorted(concepts.glob("*.md")):
        for line in path.read_text(encoding="utf-8").splitlines():
            if not line.startswith("[^") or "]:" not in line:
                continue
            parsed = parse_refs(line.split("]:", 1)[1])
            found += [(ref.source_id, ref.quoted) for ref in parsed.refs if ref.quoted is not None]
    return found


class _Text(HTMLParser):
    """The text content of an HTML page, entities decoded, tags dropped, scripts and styles skipped."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self._skip = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in ("script", "style"):
            self._skip += 1

    def handle_endtag(self, tag: str) -> None:
        if tag in ("script", "style") and self._skip:
            self._skip -= 1

    def handle_data(self, data: str) -> None:
        if not self._skip:
            self.parts.append(data)


def _page_text(path: Path) -> str:
    parser = _Text()
    parser.feed(path.read_text(encoding="utf-8"))
    parser.close()
    return "".join(parser.parts)


def _shows(page: str, excerpt: str) -> bool:
    """Whether a page's text shows the excerpt: each of its lines verbatim (a page may break lines)."""
    return all(line in page for line in excerpt.split("\n") if line)


@pytest.mark.slow
def test_committed_example_run_verifies_under_the_gate(tmp_path: Path) -> None:
    wiki = _copy_wiki(tmp_path)
    done = _publisher("verify", "--run-dir", RUN, "--gate", cwd=wiki)
    assert done.returncode == 0, done.stdout + done.stderr
    verification = _load(wiki / RUN / "outputs" / "verification.json")
    statuses = {c["check_id"]: c["status"] for c in verification["checks"]}
    assert {"C-SNAPSHOT", "C-SPAN", "C-FRESH-FETCH", "C-ASSEMBLER", "C-EVENT-LOG"} <= set(statuses)
    assert set(statuses.values()) == {"pass"}, statuses


def test_committed_example_result_is_a_clean_pass() -> None:
    result = _load(REPO / RUN / "outputs" / "result.json")
    assert result["gate"]["verdict"] == "pass"
    assert result["counts"]["unresolved"] == 0
    assert result["diagnostics"]["unresolved"] == []
    kinds = sorted(a["kind"] for a in result["accepted"])
    assert kinds.count("extraction") == 3
    assert kinds.count("appraisal") == 1
    assert 3 <= kinds.count("report_claim") <= 5
    accesses = {s["access"] for s in result["sources"]}
    assert accesses == {"full_text", "guideline"}
    assert all(s["fresh"] for s in result["sources"])


def test_committed_appraisal_keeps_an_unclear_domain_without_spans() -> None:
    appraisal = _load(REPO / RUN / "workspace" / "appraisals" / "dawn-rob2.json")
    unclear = [d for d in appraisal["domains"] if d["judgement"] == "unclear"]
    assert unclear and all(d["spans"] == [] for d in unclear)
    assert all(d["spans"] for d in appraisal["domains"] if d["judgement"] != "unclear")


@pytest.mark.slow
def test_mkdocs_build_of_a_copy_shows_every_promoted_excerpt(tmp_path: Path) -> None:
    wiki = _copy_wiki(tmp_path)
    done = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--site-dir", str(tmp_path / "site")],
        cwd=wiki,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    site = tmp_path / "site"
    pages = {path: _page_text(path) for path in site.rglob("*.html")}

    promoted = _concept_excerpts(wiki / "concepts")
    assert promoted, "the example promoted no excerpts into concepts/"
    result = _load(wiki / RUN / "outputs" / "result.json")
    for source_id, excerpt in sorted(set(promoted) | set(_accepted_excerpts(result))):
        source_pages = [text for path, text in pages.items() if source_id in str(path.relative_to(site))]
        assert source_pages, f"no source page for {source_id}"
        assert any(_shows(text, excerpt) for text in source_pages), f"{source_id}: {excerpt[:60]!r}"
    concept_pages = [text for path, text in pages.items() if path.relative_to(site).parts[0] == "concepts"]
    for _, excerpt in promoted:
        assert any(_shows(text, excerpt) for text in concept_pages), f"concept page lacks {excerpt[:60]!r}"


def _structure(wiki: Path) -> dict[str, Any]:
    """What a rebuild must reproduce: file names, artifact ids, claim offsets by source kind, concepts."""
    run = wiki / RUN
    result = _load(run / "outputs" / "result.json")
    access_of = {s["source_id"]: s["access"] for s in result["sources"]}
    return {
        "workspace": sorted(str(p.relative_to(run)) for p in (run / "workspace").rglob("*.json")),
        "outputs": sorted(p.name for p in (run / "outputs").iterdir()),
        "snapshots": len(list((run / "sources").glob("src-*.json"))),
        "artifacts": sorted(a["artifact_id"] for a in result["accepted"]),
        "claims": sorted(
            (a["artifact_id"], access_of[c["source_id"]], c["start"], c["end"], c["excerpt"])
            for a in result["accepted"]
            for c in a["claims"]
        ),
        "concepts": sorted(p.name for p in (wiki / "concepts").glob("*.md")),
        "assets": sorted(p.name for p in (wiki / "assets" / "papers").glob("*.pdf")),
    }


@pytest.mark.slow
def test_build_example_reruns_from_scratch_in_a_copy(tmp_path: Path) -> None:
    wiki = _copy_wiki(tmp_path)
    before = _structure(wiki)
    done = subprocess.run(
        [sys.executable, str(wiki / "examples" / "build_example.py"), "--wiki", str(wiki), "--port", "0"],
        cwd=wiki,
        capture_output=True,
        text=True,
        check=False,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert _structure(wiki) == before
    verified = _publisher("verify", "--run-dir", RUN, "--gate", cwd=wiki)
    assert verified.returncode == 0, verified.stdout + verified.stderr


def test_example_pdf_is_what_make_pdf_writes(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, str(REPO / "examples" / "make_pdf.py"), str(tmp_path / "out.pdf")],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "out.pdf").read_bytes() == (
        REPO / "examples" / "sources" / "eoss-practice-statement.pdf"
    ).read_bytes()
