"""``extra: evidence: offline: true``: a site that reads from disk, at build time and in ``check-site``.

The browser side (open from disk, follow, verify, search) is in test_browser_offline.py.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from _policy import policy_of
from _wiki_helpers import build_wiki, leftovers, make_wiki, refused_build, sample_run, tree_digest

from publisher.kernel.reasons import Reason
from publisher.site.checks.checksite import check_site
from publisher.site.pages.offline import record_js
from publisher.wiki.promote import promote

OFFLINE = "extra:\n  evidence:\n    offline: true\n"


def _wiki(root: Path, extra: str = OFFLINE, *, search: bool = True) -> Path:
    wiki = make_wiki(root, extra=extra)
    if search:
        config = wiki / "mkdocs.yml"
        config.write_text(config.read_text(encoding="utf-8").replace("plugins: []", "plugins:\n  - search"))
    promote(sample_run(wiki).run.path, wiki, policy=policy_of(wiki))
    return wiki


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    wiki = _wiki(tmp_path_factory.mktemp("offline") / "wiki")
    build_wiki(wiki)
    return wiki


def _codes(wiki: Path) -> set[str]:
    return {f.code for f in check_site(wiki / "site", wiki, policy=policy_of(wiki)).findings}


def test_pages_link_to_files_and_records_ship_as_scripts(built: Path) -> None:
    site = built / "site"
    assert check_site(site, built, policy=policy_of(built)).ok
    sources = sorted(site.glob("sources/src-*.html"))
    assert sources and not list(site.glob("sources/src-*/index.html"))
    for page in sources:
        record = site / "sources" / page.stem / "record.json"
        assert (record.parent / "record.js").read_bytes() == record_js(page.stem, record.read_bytes())
    concept = (site / "concepts" / "alpha.html").read_text(encoding="utf-8")
    assert re.search(r'href="\.\./sources/src-[0-9a-f]{64}\.html#span-\d+-\d+"', concept)
    assert 'src="../assets/publisher/offline.js"' in concept.split("</head>")[0]  # before the theme's bundle
    assert "worker-src 'self' blob:" in concept
    index = (site / "search" / "search_index.json").read_bytes()
    assert (site / "search" / "search_index.js").read_bytes() == b"var __index = " + index + b";\n"
    worker = (site / "assets" / "publisher" / "search-worker.js").read_text(encoding="utf-8")
    (theme,) = site.glob("assets/javascripts/workers/search.*.min.js")
    assert json.loads(worker.removeprefix("globalThis.__evidenceSearchWorker = ").removesuffix(";\n")) == (
        theme.read_text(encoding="utf-8")
    )
    manifest = json.loads((site / "evidence-manifest.json").read_bytes())
    listed = {e["path"] for e in manifest["files"]}
    assert {"search/search_index.js", "assets/publisher/search-worker.js", "assets/publisher/offline.js"} <= listed
    assert {f"sources/{p.stem}/record.js" for p in sources} <= listed


def test_record_js_carries_the_record_text_exactly() -> None:
    sid = "src-" + "a" * 64
    record = json.dumps({"text": 'a "quote" \\ \u2028 line\nnext \U0001d4af \x01'}, ensure_ascii=False).encode()
    script = record_js(sid, record).decode("utf-8")
    call = re.fullmatch(r"EvidenceVerify\.register\((\"src-a{64}\"), (.*)\);\n", script, re.DOTALL)
    assert call is not None
    assert "\u2028" not in script  # escaped: older engines end a string literal there
    assert json.loads(call[2]).encode("utf-8") == record


def test_without_offline_nothing_changes(tmp_path: Path) -> None:
    wiki = _wiki(tmp_path / "wiki", extra="")
    build_wiki(wiki)
    site = wiki / "site"
    assert list(site.glob("sources/src-*/index.html")) and not list(site.glob("sources/*/record.js"))
    assert not (site / "search" / "search_index.js").exists()
    assert not (site / "assets" / "publisher" / "offline.js").exists()
    page = (site / "concepts" / "alpha" / "index.html").read_text(encoding="utf-8")
    assert "worker-src 'self';" in page and "blob:" not in page


def test_check_site_refuses_an_edited_record_script(built: Path, tmp_path: Path) -> None:
    import shutil

    wiki = tmp_path / "wiki"
    shutil.copytree(built, wiki, symlinks=True)
    (script,) = list((wiki / "site" / "sources").glob("src-*/record.js"))[:1]
    script.chmod(0o644)
    record = json.loads((script.parent / "record.json").read_bytes())
    record["text"] = "X" + record["text"][1:]
    script.write_bytes(record_js(script.parent.name, json.dumps(record).encode()))
    findings = check_site(wiki / "site", wiki, policy=policy_of(wiki)).findings
    assert {f.code for f in findings} == {"SNAPSHOT_HASH_MISMATCH", "C-SITE-FILE"}
    assert any(f.code == "SNAPSHOT_HASH_MISMATCH" and f.file.endswith("record.js") for f in findings)


@pytest.mark.parametrize("name", ["record.js", "record.json"])
def test_a_docs_file_in_the_way_of_a_record_is_refused(tmp_path: Path, name: str) -> None:
    wiki = _wiki(tmp_path / "wiki")
    build_wiki(wiki)
    before = tree_digest(wiki / "site")
    sid = next((wiki / "site" / "sources").glob("src-*/record.json")).parent.name
    (wiki / "docs" / "sources" / sid).mkdir(parents=True)
    (wiki / "docs" / "sources" / sid / name).write_text("forged", encoding="utf-8")
    findings = refused_build(wiki)
    assert [(f.check, f.file) for f in findings] == [("C-BUILD", f"docs/sources/{sid}/{name}")]
    assert tree_digest(wiki / "site") == before
    assert leftovers(wiki) == []


@pytest.mark.parametrize(
    "extra",
    [
        "extra:\n  evidence:\n    offline: yes please\n",
        "extra:\n  evidence:\n    windows_above: -1\n",
        "extra:\n  evidence:\n    windows_above: many\n",
        "extra:\n  evidence:\n    web_fonts: 1\n",
    ],
)
def test_bad_offline_and_size_options_are_one_schema_error(tmp_path: Path, extra: str, caplog: Any) -> None:
    wiki = _wiki(tmp_path / "wiki")
    config = wiki / "mkdocs.yml"
    config.write_text(config.read_text(encoding="utf-8").replace(OFFLINE, extra), encoding="utf-8")
    (finding,) = refused_build(wiki)
    assert (finding.reason, finding.check, finding.file) == (Reason.SCHEMA_ERROR, "C-CONFIG", "mkdocs.yml")
    assert len([r for r in caplog.records if r.levelname == "ERROR"]) == 1  # one refusal, no cascade
    assert not (wiki / "site").exists()
    assert leftovers(wiki) == []
