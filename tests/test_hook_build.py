"""Real ``mkdocs build`` runs of small wikis: preflight, generated pages, seal, atomic publication.

Every failure, wherever it happens (preflight, page generation, templates, another plugin, the
post-build, a strict-mode warning), must leave the published site byte-identical and no staging
folder behind.
"""

from __future__ import annotations

import contextlib
import json
import os
import posixpath
import re
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterator
from concurrent.futures import Executor, Future, ThreadPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from pathlib import Path
from typing import Any

import pytest
from _policy import policy_of
from _wiki_helpers import (
    HEAVY_EXTENSIONS,
    TRICKY,
    WARNING_HOOK,
    RecordingHelpers,
    RunBuilder,
    build_findings,
    build_wiki,
    codes,
    leftovers,
    logged_findings,
    make_wiki,
    refused_build,
    sample_run,
    tamper,
    tree_digest,
)
from mkdocs.exceptions import Abort, PluginError

from publisher.kernel.errors import IntegrityError
from publisher.kernel.reasons import Reason
from publisher.site.checks.checksite import check_site
from publisher.site.checks.manifest import MANIFEST_NAME
from publisher.site.checks.scan import scan_page
from publisher.site.lifecycle import publish as publish_module
from publisher.site.pages import generate as pages_module
from publisher.site.pages.highlight import SourceBody, SourceJob, SourceText, render_source_body, source_job
from publisher.wiki.check import check_wiki as run_preflight
from publisher.wiki.promote import promote


def _sample(tmp_path: Path, **kwargs: object) -> RunBuilder:
    wiki = make_wiki(tmp_path / "wiki", **kwargs)  # type: ignore[arg-type]
    rb = sample_run(wiki)
    promote(rb.run.path, wiki, policy=policy_of(wiki))
    return rb


def _wiki(tmp_path: Path, **kwargs: object) -> Path:
    return _sample(tmp_path, **kwargs).wiki


def _published(tmp_path: Path, **kwargs: object) -> tuple[Path, dict[str, str]]:
    wiki = _wiki(tmp_path, **kwargs)
    build_wiki(wiki)
    assert (wiki / "site" / MANIFEST_NAME).is_file()
    return wiki, tree_digest(wiki / "site")


def _assert_untouched(wiki: Path, before: dict[str, str]) -> None:
    assert tree_digest(wiki / "site") == before
    assert leftovers(wiki) == []


def test_the_build_reports_through_the_reporter_the_hook_hands_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The build draws nothing of its own: the hook file's plugin hands it the command line's
    # reporter, and the wiki check's progress goes through that reporter alone.
    wiki = _wiki(tmp_path)
    seen: list[tuple[str, tuple[int, int] | None]] = []

    @contextlib.contextmanager
    def recording(label: str) -> Iterator[Callable[[int, int], None]]:
        seen.append((label, None))
        yield lambda done, total: seen.append((label, (done, total)))

    monkeypatch.setattr("publisher.cli.plugin.terminal_progress", recording)
    build_wiki(wiki)
    assert seen[0] == ("evidence check", None)
    counts = [count for _, count in seen[1:]]
    assert counts and all(label == "evidence check" for label, _ in seen)
    assert counts[-1] is not None and counts[-1][0] == counts[-1][1] > 0


# ---------------------------------------------------------------------------------------------
# a clean build


def test_clean_build_shows_every_excerpt_and_links_resolve(tmp_path: Path) -> None:
    wiki, _ = _published(tmp_path)
    site = wiki / "site"
    pre = run_preflight(wiki, policy=policy_of(wiki))
    concept_html = (site / "concepts" / "alpha" / "index.html").read_text(encoding="utf-8")
    scan = scan_page(concept_html)
    shown = {(e.source_id, e.start, e.end): e.text for e in scan.excerpts}
    footnoted = {(r.source_id, r.start, r.end) for n in pre.concepts[0].doc.footnotes for r in n.refs}  # type: ignore[union-attr]
    assert set(shown) == footnoted
    for key, text in shown.items():
        assert text == pre.excerpts[key]
    links = re.findall(r'<a class="evidence-link" href="([^"]+)"', concept_html)
    assert len(links) == len(footnoted)
    for href in links:
        path, fragment = href.split("#")
        assert path.startswith("../../sources/src-")
        target = site / posixpath.normpath(posixpath.join("concepts/alpha", path)) / "index.html"
        assert target.is_file(), href
        assert f'id="{fragment}"' in target.read_text(encoding="utf-8"), href
    assert leftovers(wiki) == []
    for index in ("concepts", "sources", "runs"):
        assert (site / index / "index.html").is_file()
    # The runs index shows each result's verdict and accepted count as the check assembled them.
    runs_html = (site / "runs" / "index.html").read_text(encoding="utf-8")
    (ev,) = pre.runs
    result = ev.result
    assert result is not None and (ev.verdict, ev.accepted_count) == (result.gate.verdict, result.counts.accepted)
    cells = re.findall(r"<td[^>]*>(.*?)</td>", runs_html, flags=re.S)
    assert result.gate.verdict in cells and str(result.counts.accepted) in cells
    report = (site / "runs" / "alpha" / "report" / "index.html").read_text(encoding="utf-8")
    assert len(scan_page(report).excerpts) == len(pre.excerpts)


def test_source_page_highlights_every_cited_span(tmp_path: Path) -> None:
    wiki, _ = _published(tmp_path)
    pre = run_preflight(wiki, policy=policy_of(wiki))
    for sid, info in pre.sources.items():
        page = (wiki / "site" / "sources" / sid / "index.html").read_text(encoding="utf-8")
        (block,) = scan_page(page).snapshots
        snapshot = json_text(pre, sid)
        assert block.text == snapshot
        for start, end in info.spans:
            assert f'id="span-{start}-{end}"' in page
        for mark_start, mark_end, opened, closed in block.marks:
            assert (mark_start, mark_end) == (opened, closed)
        assert info.meta.url in page and info.meta.content_hash in page


def json_text(pre: object, sid: str) -> str:
    from publisher.kernel.store import SnapshotStore

    return SnapshotStore(pre.sources[sid].sources_dir).read(sid).text  # type: ignore[attr-defined]


def test_generated_pages_stay_out_of_the_nav(tmp_path: Path) -> None:
    wiki, _ = _published(tmp_path)
    home = (wiki / "site" / "index.html").read_text(encoding="utf-8")
    nav = home[home.index('<nav class="md-nav md-nav--primary"') :]
    assert "concepts/alpha/" not in nav and "sources/src-" not in nav
    assert "concepts/" in nav


def test_rebuild_replaces_the_site_whole(tmp_path: Path) -> None:
    wiki, _ = _published(tmp_path)
    (wiki / "docs" / "extra.md").write_text("# Extra\n", encoding="utf-8")
    build_wiki(wiki)
    assert (wiki / "site" / "extra" / "index.html").is_file()
    (wiki / "docs" / "extra.md").unlink()
    build_wiki(wiki)
    assert not (wiki / "site" / "extra").exists()
    assert leftovers(wiki) == []


def test_escaping_survives_every_markdown_extension(tmp_path: Path) -> None:
    wiki, _ = _published(tmp_path, extensions=HEAVY_EXTENSIONS)
    pre = run_preflight(wiki, policy=policy_of(wiki))
    page = (wiki / "site" / "concepts" / "alpha" / "index.html").read_text(encoding="utf-8")
    texts = [e.text for e in scan_page(page).excerpts]
    tricky = next(t for t in texts if "stars" in t)
    assert tricky == TRICKY
    for piece in ("*stars*", "_under_", "<b>bold</b>", "[x](y)", "&amp;", "`tick`", "$$x$$", ":smile:", "--", "..."):
        assert piece in tricky
    assert '"straight"' in tricky and "'single'" in tricky and "(c)" in tricky
    assert "==x==" in tricky and "~~x~~" in tricky and "^^x^^" in tricky and "H~2~O" in tricky
    assert set(texts) <= set(pre.excerpts.values())
    excerpt_html = page[page.index('class="evidence-excerpt"') :]
    excerpt_html = excerpt_html[: excerpt_html.index("</span>")]
    for forbidden in ("<em>", "<strong>", "<mark>", "<del>", "<sup>", "<code>", "&rsquo;", "&ldquo;", "&copy;"):
        assert forbidden not in excerpt_html


def test_maintainer_prose_is_rendered_as_markdown(tmp_path: Path) -> None:
    wiki = _wiki(tmp_path)
    path = wiki / "concepts" / "alpha.md"
    path.write_text(path.read_text(encoding="utf-8") + "\nSome **bold** maintainer prose.\n", encoding="utf-8")
    build_wiki(wiki)
    page = (wiki / "site" / "concepts" / "alpha" / "index.html").read_text(encoding="utf-8")
    assert "<strong>bold</strong>" in page


def test_new_wiki_without_runs_builds(tmp_path: Path, mkdocs_log: list[str]) -> None:
    wiki = make_wiki(tmp_path / "wiki")
    build_wiki(wiki)
    assert (wiki / "site" / MANIFEST_NAME).is_file()
    assert any("nothing to verify" in m for m in mkdocs_log)


# ---------------------------------------------------------------------------------------------
# the preflight stops the build before anything is written


@pytest.mark.parametrize(
    "kind",
    [
        "snapshot-text",
        "snapshot-meta",
        "concept-excerpt",
        "concept-offsets",
        "result-excerpt",
        "event-line",
        "pdf-asset",
    ],
)
def test_tampering_fails_build_and_keeps_old_site(tmp_path: Path, kind: str) -> None:
    rb = _sample(tmp_path)
    wiki = rb.wiki
    build_wiki(wiki)
    before = tree_digest(wiki / "site")
    reason = tamper(kind, rb)
    findings = refused_build(wiki)
    _assert_untouched(wiki, before)
    assert reason in codes(findings)
    assert {f.file for f in findings if f.code == reason} & {"concepts/alpha.md"} or any(
        f.run == "runs/alpha" for f in findings if f.code == reason
    ), findings


def test_failure_lists_every_finding(tmp_path: Path) -> None:
    wiki, before = _published(tmp_path)
    (pdf,) = (wiki / "assets" / "papers").glob("*.pdf")
    pdf.write_bytes(b"changed")
    path = wiki / "concepts" / "alpha.md"
    path.write_text(path.read_text(encoding="utf-8").replace("#12-166", "#12-167"), encoding="utf-8")
    findings = refused_build(wiki)
    assert {"ASSET_HASH_MISMATCH", "SOURCE_OUTSIDE_ACCEPTED"} <= codes(findings)
    outside = [f.label or "" for f in findings if f.code == "SOURCE_OUTSIDE_ACCEPTED"]
    assert any(label.startswith("alpha-extraction-pmid-111-q") for label in outside)
    _assert_untouched(wiki, before)


# ---------------------------------------------------------------------------------------------
# failures after the preflight


_RAISE_IN_MARKDOWN = """
def on_page_markdown(markdown, page, config, files):
    if page.file.src_uri == "concepts/alpha.md":
        raise RuntimeError("injected failure while rendering a page")
    return markdown
"""

_RAISE_IN_POST_BUILD = """
def on_post_build(config):
    raise RuntimeError("injected failure after the pages were written")
"""


_SMARTEN_HTML = """
def on_post_page(output, page, config):
    return output.replace("&#34;straight&#34;", "\\u201cstraight\\u201d")
"""


def _with_hook(tmp_path: Path, source: str) -> Path:
    """A published wiki to which a second hook is then added."""
    wiki, _ = _published(tmp_path)
    (wiki / "hooks" / "extra.py").write_text(source, encoding="utf-8")
    config = (wiki / "mkdocs.yml").read_text(encoding="utf-8")
    (wiki / "mkdocs.yml").write_text(
        config.replace("  - hooks/evidence.py\n", "  - hooks/evidence.py\n  - hooks/extra.py\n"), encoding="utf-8"
    )
    return wiki


@pytest.mark.parametrize("source", [_RAISE_IN_MARKDOWN, _RAISE_IN_POST_BUILD], ids=["page_markdown", "post_build"])
def test_other_plugin_failure_keeps_old_site(tmp_path: Path, source: str) -> None:
    wiki = _with_hook(tmp_path, source)
    before = tree_digest(wiki / "site")
    with pytest.raises(RuntimeError, match="injected failure"):
        build_wiki(wiki)
    _assert_untouched(wiki, before)


def test_strict_warning_keeps_old_site_and_plain_build_publishes(tmp_path: Path) -> None:
    wiki = _with_hook(tmp_path, WARNING_HOOK)
    before = tree_digest(wiki / "site")
    # New content, so a site that was republished differs from the one that was kept.
    (wiki / "docs" / "index.md").write_text("# Home\n\nChanged.\n", encoding="utf-8")
    with pytest.raises(Abort, match="strict"):
        build_wiki(wiki, strict=True)
    _assert_untouched(wiki, before)
    build_wiki(wiki)
    assert "Changed." in (wiki / "site" / "index.html").read_text(encoding="utf-8")
    assert leftovers(wiki) == []


def test_plugin_altering_an_excerpt_fails_the_seal(tmp_path: Path) -> None:
    wiki = _with_hook(tmp_path, _SMARTEN_HTML)
    before = tree_digest(wiki / "site")
    findings = refused_build(wiki)
    _assert_untouched(wiki, before)
    assert findings and {f.reason for f in findings} == {Reason.EXCERPT_MISMATCH}


_FAKE_ON_EVERY_PAGE = """
def on_post_page(output, page, config):
    fake = '<span class="evidence-excerpt" data-source-id="src-' + '0' * 64 + '" data-start="0" data-end="3">abc</span>'
    return output.replace("</body>", fake + "</body>")
"""


def test_the_seal_refuses_every_bad_page_at_once(tmp_path: Path) -> None:
    """The seal is not stopped by its first bad page: one refusal names every page it found."""
    wiki = _with_hook(tmp_path, _FAKE_ON_EVERY_PAGE)
    before = tree_digest(wiki / "site")
    pages = {name for name in before if name.endswith(".html") and name != "404.html"}
    assert len(pages) > 3
    findings = refused_build(wiki)
    _assert_untouched(wiki, before)
    assert {f.file for f in findings} == pages
    assert {(f.reason, f.source_id, f.start, f.end) for f in findings} == {
        (Reason.EXCERPT_MISMATCH, "src-" + "0" * 64, 0, 3)
    }


_FORGE_RECORD = """
import json, os
from pathlib import Path
from typing import Any

def on_post_build(config):
    (record,) = sorted(Path(config.site_dir).glob("sources/src-*/record.json"))[:1]
    data = json.loads(record.read_bytes())
    data["title"] = "A forged title"
    os.chmod(record, 0o644)
    record.write_text(json.dumps(data), encoding="utf-8")
"""


@pytest.mark.parametrize("helper", [False, True])
def test_plugin_altering_a_published_record_fails_before_publication(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, helper: bool
) -> None:
    """The record copies are re-verified once the pages are built, in-process or on the helpers."""
    from publisher.site.lifecycle import workers as hook

    if helper:
        monkeypatch.setattr(hook, "default_workers", lambda: 2)
        monkeypatch.setattr(hook, "helper_pool", lambda workers=1: ThreadPoolExecutor(max_workers=workers))
        monkeypatch.setattr(hook, "_CHUNK_PAGES", 1)  # three records: three chunks for the helpers
    else:
        monkeypatch.setattr(hook, "helper_pool", lambda workers=1: None)
    wiki = _with_hook(tmp_path, _FORGE_RECORD)
    before = tree_digest(wiki / "site")
    findings = refused_build(wiki)
    _assert_untouched(wiki, before)
    assert [(f.reason, f.check) for f in findings] == [(Reason.SNAPSHOT_HASH_MISMATCH, "C-PUBLISH")]


_FORGE_PROOF = """
from pathlib import Path
from typing import Any

def on_post_build(config):
    for proof in sorted(Path(config.site_dir).glob("sources/src-*/proofs/*.js"))[:1]:
        proof.write_text(proof.read_text(encoding="utf-8").replace("Evidence", "Evidence "), encoding="utf-8")
"""

_READ_PAGES = """
from pathlib import Path
from typing import Any

def on_post_build(config):
    site = Path(config.site_dir)
    bare = [p.relative_to(site).as_posix() for p in sorted(site.rglob("*.html"))
            if 'http-equiv="Content-Security-Policy"' not in p.read_text(encoding="utf-8")]
    (Path(config.config_file_path).parent / "bare-pages.txt").write_text("\\n".join(bare), encoding="utf-8")
"""


@pytest.mark.parametrize("helper", [False, True])
def test_plugin_altering_a_proof_file_fails_before_publication(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, helper: bool
) -> None:
    """The proofs are written while the pages are rendered (with helpers): a proof another
    plugin changes in its on_post_build is refused, never sealed as it is now. Without helpers
    they are written after every other plugin's on_post_build, which finds none to change."""
    from publisher.site.lifecycle import workers as hook

    if helper:
        monkeypatch.setattr(hook, "default_workers", lambda: 2)
        monkeypatch.setattr(hook, "helper_pool", lambda workers=1: ThreadPoolExecutor(max_workers=workers))
    else:
        monkeypatch.setattr(hook, "helper_pool", lambda workers=1: None)
    wiki = _with_hook(tmp_path, _FORGE_PROOF)
    before = tree_digest(wiki / "site")
    if not helper:
        build_wiki(wiki)
        assert check_site(wiki / "site", wiki, policy=policy_of(wiki)).ok
        return
    findings = refused_build(wiki)
    _assert_untouched(wiki, before)
    assert [(f.reason, f.check) for f in findings] == [(Reason.SNAPSHOT_HASH_MISMATCH, "C-PUBLISH")]


def test_other_plugins_read_every_page_with_its_policy_after_the_helpers_sealed_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Pages sealed on the helpers are written with their policy before any other plugin's
    on_post_build, as when sealed in-process."""
    from publisher.site.lifecycle import workers as hook

    monkeypatch.setattr(hook, "default_workers", lambda: 2)
    monkeypatch.setattr(hook, "helper_pool", lambda workers=1: ThreadPoolExecutor(max_workers=workers))
    wiki = _with_hook(tmp_path, _READ_PAGES)
    build_wiki(wiki)
    assert (wiki / "bare-pages.txt").read_text(encoding="utf-8") == ""


def test_fake_excerpt_on_a_maintainer_page_fails(tmp_path: Path) -> None:
    wiki, before = _published(tmp_path)
    fake = '<span class="evidence-excerpt" data-source-id="src-' + "0" * 64 + '" data-start="0" data-end="3">abc</span>'
    (wiki / "docs" / "index.md").write_text(f"# Home\n\n{fake}\n", encoding="utf-8")
    findings = refused_build(wiki)
    _assert_untouched(wiki, before)
    assert {(f.check, f.file, f.line) for f in findings} == {("C-PAGE-PROSE", "docs/index.md", 3)}


def test_page_generation_failure_keeps_old_site(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    wiki, before = _published(tmp_path)

    def broken(self: object) -> list[object]:
        raise RuntimeError("injected failure in on_files")

    monkeypatch.setattr(pages_module.SiteModel, "build", broken)
    with pytest.raises(RuntimeError, match="on_files"):
        build_wiki(wiki)
    _assert_untouched(wiki, before)


def test_template_error_keeps_old_site(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    wiki, before = _published(tmp_path)
    broken = tmp_path / "templates"
    shutil.copytree(pages_module.TEMPLATES_DIR, broken)
    (broken / "pages" / "source.md.j2").write_text("{{ no_such_variable }}\n", encoding="utf-8")
    monkeypatch.setattr(pages_module, "TEMPLATES_DIR", broken)
    with pytest.raises(Exception, match="no_such_variable"):
        build_wiki(wiki)
    _assert_untouched(wiki, before)


@pytest.mark.parametrize("helper", [False, True], ids=["in-process", "helper"])
def test_report_render_failure_keeps_old_site(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, helper: bool) -> None:
    """A report that fails to render fails the build, whether a helper or this process renders it."""
    from publisher.site.lifecycle import workers as hook

    wiki, before = _published(tmp_path)
    monkeypatch.setattr(hook, "default_workers", lambda: 2)
    monkeypatch.setattr(hook, "helper_pool", lambda workers=1: ThreadPoolExecutor(workers) if helper else None)
    import publisher.gate.render as render_module

    def broken(*args: object, **kwargs: object) -> str:
        raise RuntimeError("injected failure while rendering a report")

    monkeypatch.setattr(render_module, "render_report_body", broken)
    with pytest.raises(RuntimeError, match="report"):
        build_wiki(wiki)
    _assert_untouched(wiki, before)


def test_publication_failure_keeps_old_site(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    wiki, before = _published(tmp_path)

    def broken(staging: Path, site: Path) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(publish_module, "publish", broken)
    with pytest.raises(PluginError) as refused:
        build_wiki(wiki)
    _assert_untouched(wiki, before)
    assert [(f.check, f.file) for f in build_findings(refused.value)] == [("C-PUBLISH", "site")]


def test_swap_without_exchange_keeps_the_old_site(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Without an atomic exchange, replacing the site would leave a moment with none: refused."""
    wiki, before = _published(tmp_path)
    monkeypatch.setattr(publish_module, "_exchange", lambda a, b: False)
    (wiki / "docs" / "index.md").write_text("# Home\n\nSecond.\n", encoding="utf-8")
    with pytest.raises(PluginError) as refused:
        build_wiki(wiki)
    _assert_untouched(wiki, before)
    assert [(f.check, f.file) for f in build_findings(refused.value)] == [("C-PUBLISH", "site")]


def test_stale_staging_of_a_dead_build_is_swept(tmp_path: Path) -> None:
    wiki, _ = _published(tmp_path)
    proc = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    dead = int(proc.stdout)
    stale = wiki / f".site-staging-{dead}-{'ab' * 6}"
    stale.mkdir()
    (stale / "half.html").write_text("half", encoding="utf-8")
    build_wiki(wiki)
    assert leftovers(wiki) == []


def test_config_reused_for_a_second_build(tmp_path: Path) -> None:
    from mkdocs.commands.build import build
    from mkdocs.config import load_config

    wiki, _ = _published(tmp_path)
    config = load_config(str(wiki / "mkdocs.yml"))
    build(config)
    build(config)
    assert config.site_dir == str((wiki / "site").resolve())
    assert leftovers(wiki) == []


# ---------------------------------------------------------------------------------------------
# the command line and serve


def _mkdocs(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    exe = Path(sys.executable).with_name("mkdocs")
    return subprocess.run([str(exe), *args], cwd=cwd, capture_output=True, text=True, check=False, timeout=120)


def test_mkdocs_cli_build_strict_and_failure(tmp_path: Path) -> None:
    wiki = _wiki(tmp_path)
    done = _mkdocs("build", "--strict", cwd=wiki)
    assert done.returncode == 0, done.stderr
    before = tree_digest(wiki / "site")
    path = wiki / "concepts" / "alpha.md"
    path.write_text(path.read_text(encoding="utf-8").replace('"Intro.', '"Intr0.', 1), encoding="utf-8")
    done = _mkdocs("build", "-v", cwd=wiki)
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert Reason.EXCERPT_MISMATCH in {f.reason for f in logged_findings(done.stderr)}
    _assert_untouched(wiki, before)


def test_serve_style_build_into_temporary_dir(tmp_path: Path) -> None:
    from mkdocs.commands.build import build
    from mkdocs.config import load_config

    wiki = _wiki(tmp_path)
    served = tmp_path / "mkdocs_serve_dir"
    served.mkdir()
    config = load_config(str(wiki / "mkdocs.yml"), site_dir=str(served))
    build(config, serve_url="http://127.0.0.1:8000/")
    assert (served / "concepts" / "alpha" / "index.html").is_file()
    assert leftovers(tmp_path) == [] and not any(p.name.startswith(".mkdocs_serve_dir") for p in tmp_path.iterdir())

    class _Server:
        def __init__(self) -> None:
            self.watched: list[str] = []

        def watch(self, path: str) -> None:
            self.watched.append(path)

    server = _Server()
    config.plugins.on_serve(server, config=config, builder=lambda: None)
    assert str(wiki / "runs") in server.watched and str(wiki / "concepts") in server.watched


@pytest.mark.slow
def test_mkdocs_serve_serves_the_site(tmp_path: Path) -> None:
    import socket
    import time
    import urllib.request

    wiki = _wiki(tmp_path)
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    exe = Path(sys.executable).with_name("mkdocs")
    proc = subprocess.Popen(
        [str(exe), "serve", "--no-livereload", "-a", f"127.0.0.1:{port}"],
        cwd=wiki,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    try:
        page = ""
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/concepts/alpha/", timeout=2) as response:
                    page = response.read().decode("utf-8")
                break
            except OSError:
                time.sleep(0.3)
        assert "evidence-excerpt" in page
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def test_docs_page_colliding_with_generated_page_fails(tmp_path: Path) -> None:
    wiki, before = _published(tmp_path)
    (wiki / "docs" / "concepts.md").write_text("# Mine\n", encoding="utf-8")
    assert [(f.check, f.file) for f in refused_build(wiki)] == [("C-BUILD", "docs/concepts.md")]
    _assert_untouched(wiki, before)
    sid = next((wiki / "site" / "sources").glob("src-*/record.json")).parent.name
    (wiki / "docs" / "sources" / sid).mkdir(parents=True)
    (wiki / "docs" / "sources" / sid / "record.json").write_text("{}", encoding="utf-8")
    found = {(f.check, f.file) for f in refused_build(wiki)}  # every file in the way, not the first
    assert found == {("C-BUILD", "docs/concepts.md"), ("C-BUILD", f"docs/sources/{sid}/record.json")}
    _assert_untouched(wiki, before)


_MOVE_SITE_DIR = """
def on_config(config):
    config.site_dir = config.site_dir + "-elsewhere"
    return config
"""


def test_plugin_moving_site_dir_is_refused(tmp_path: Path) -> None:
    wiki = _with_hook(tmp_path, _MOVE_SITE_DIR)
    before = tree_digest(wiki / "site")
    assert [(f.check, f.field) for f in refused_build(wiki)] == [("C-PUBLISH", "site_dir")]
    assert tree_digest(wiki / "site") == before
    assert [name for name in leftovers(wiki) if not name.endswith("-elsewhere")] == []


# ---------------------------------------------------------------------------------------------
# the helper process (source texts and reports rendered ahead of MkDocs)


_STAMP = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ")


def _built_pages(wiki: Path) -> dict[str, str]:
    """Every source and report page of the built site, time stamps masked."""
    site = wiki / "site"
    pages = sorted([*site.glob("sources/src-*/index.html"), *site.glob("runs/*/report/index.html")])
    assert pages
    return {p.relative_to(site).as_posix(): _STAMP.sub("<time>", p.read_text(encoding="utf-8")) for p in pages}


_RECORDING_BUILD = """
import atexit, json, sys
from mkdocs.__main__ import cli
from publisher.site.lifecycle import workers

out, jobs = sys.argv.pop(1), []
real = workers.helper_pool

def recording(*args, **kwargs):
    pool = real(*args, **kwargs)
    if pool is not None:
        submit = pool.submit
        def counted(fn, /, *a, **kw):
            jobs.append(getattr(fn, "__name__", repr(fn)))
            return submit(fn, *a, **kw)
        pool.submit = counted
    return pool

workers.helper_pool = recording
atexit.register(lambda: open(out, "w", encoding="utf-8").write(json.dumps(jobs)))
sys.argv[0] = "mkdocs"
cli()
"""
"""``mkdocs build`` with every job handed to a helper process recorded, by function name, in the
file named by its first argument."""


def test_cli_build_renders_in_a_helper_process(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``mkdocs build`` (one thread) forks a helper that renders the source texts and reports
    while MkDocs builds the pages; the pages are the same as rendered in-process."""
    from publisher.parallel import default_workers
    from publisher.site.lifecycle import workers as hook

    wiki = _wiki(tmp_path)
    script, jobs = tmp_path / "recording_build.py", tmp_path / "jobs.json"
    script.write_text(_RECORDING_BUILD, encoding="utf-8")
    done = subprocess.run(
        [sys.executable, str(script), str(jobs), "build", "--strict"],
        cwd=wiki,
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    handed = json.loads(jobs.read_text(encoding="utf-8"))  # each job handed to a helper, by function
    if default_workers() >= 2:
        reports = [job for job in handed if job in ("render_report_page", "render_report_job")]
        assert len(reports) == 1 and "render_source_chunk" in handed, handed
    else:
        assert handed == []
    forked = _built_pages(wiki)
    assert len(forked) == 4
    monkeypatch.setattr(hook, "helper_pool", lambda workers=1: None)
    build_wiki(wiki)
    assert _built_pages(wiki) == forked


class _BrokenHelper(Executor):
    """A helper whose process has died: every job fails with BrokenProcessPool."""

    def submit(self, fn, /, *args, **kwargs):  # type: ignore[no-untyped-def, override]
        future: Future[object] = Future()
        future.set_exception(BrokenProcessPool("helper killed"))
        return future


@pytest.mark.parametrize("extra", ["", "extra:\n  evidence:\n    source_text: windows\n    context: 5\n"])
def test_helper_results_equal_in_process_and_a_dead_helper_changes_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, extra: str
) -> None:
    from publisher.site.lifecycle import workers as hook

    wiki, _ = _published(tmp_path, extra=extra)
    monkeypatch.setattr(hook, "helper_pool", lambda workers=1: None)
    build_wiki(wiki)
    expected = _built_pages(wiki)
    monkeypatch.setattr(hook, "default_workers", lambda: 2)
    helpers: list[RecordingHelpers] = []
    monkeypatch.setattr(hook, "helper_pool", lambda workers=1: helpers.append(RecordingHelpers(1)) or helpers[-1])
    build_wiki(wiki)
    assert _built_pages(wiki) == expected
    jobs = helpers[-1].jobs
    # the sentence contexts first (the concepts' and the reports'), then the texts and the report
    # (handed the contexts already read, once they are), the pages' prose as they are converted;
    # the excerpt proofs and the pages' seals once every slot is filled
    assert jobs[:2] == ["context_chunk", "render_source_chunk"]
    assert "render_report_job" not in jobs
    assert "prose_chunk" in jobs
    last_prose = max(i for i, job in enumerate(jobs) if job == "prose_chunk")
    assert set(jobs[last_prose + 1 :]) == {"proof_chunk", "seal_chunk"}
    # A helper that died leaves every slot to be rendered in-process: same pages.
    monkeypatch.setattr(hook, "helper_pool", lambda workers=1: _BrokenHelper())
    build_wiki(wiki)
    assert _built_pages(wiki) == expected


def test_each_source_is_read_once_for_the_contexts_of_concepts_and_reports(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The concept pages and the report show the same excerpts in their sentences: each source's
    snapshot is read (and verified) once for them, on the helpers, and the pages are those built
    in-process."""
    from publisher.site.lifecycle import workers as hook
    from publisher.site.pages import context

    wiki, _ = _published(tmp_path)
    monkeypatch.setattr(hook, "helper_pool", lambda workers=1: None)
    build_wiki(wiki)
    expected = _built_pages(wiki)
    reads: list[str] = []
    real = context.source_contexts

    def counted(source: context.ContextSource) -> dict[tuple[int, int], context.Context]:
        reads.append(source.source_id)
        return real(source)

    monkeypatch.setattr(context, "source_contexts", counted)
    monkeypatch.setattr(hook, "source_contexts", counted)
    monkeypatch.setattr(hook, "default_workers", lambda: 2)
    helpers: list[RecordingHelpers] = []
    monkeypatch.setattr(hook, "helper_pool", lambda workers=1: helpers.append(RecordingHelpers(1)) or helpers[-1])
    build_wiki(wiki)
    assert _built_pages(wiki) == expected
    assert reads and len(reads) == len(set(reads)), reads


def _every_page(wiki: Path) -> dict[str, str]:
    """Every HTML file of the built site, time stamps masked."""
    site = wiki / "site"
    pages = sorted(site.rglob("*.html"))
    assert pages
    return {p.relative_to(site).as_posix(): _STAMP.sub("<time>", p.read_text(encoding="utf-8")) for p in pages}


@pytest.mark.parametrize("chunk", [1, 32])
def test_pages_sealed_by_the_helpers_are_the_pages_sealed_here(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, chunk: int
) -> None:
    """Each page's seal and policy are made on the helpers while MkDocs renders the next ones,
    and the page is written again with its policy: the same site as sealed in-process, also
    when every page goes out at once (one a chunk) and when a helper cannot seal."""
    from publisher.site.lifecycle import workers as hook

    wiki, _ = _published(tmp_path)
    monkeypatch.setattr(hook, "helper_pool", lambda workers=1: None)
    build_wiki(wiki)
    expected = _every_page(wiki)
    assert all('http-equiv="Content-Security-Policy"' in html for html in expected.values())
    monkeypatch.setattr(hook, "default_workers", lambda: 2)
    monkeypatch.setattr(hook, "_SEAL_CHUNK", chunk)
    helpers: list[RecordingHelpers] = []
    monkeypatch.setattr(hook, "helper_pool", lambda workers=1: helpers.append(RecordingHelpers(1)) or helpers[-1])
    build_wiki(wiki)
    assert helpers[-1].jobs.count("seal_chunk") >= (len(expected) - 1) // chunk
    assert _every_page(wiki) == expected

    def not_held(*args: object) -> object:
        raise LookupError("this process does not hold the build's verified evidence")

    monkeypatch.setattr(hook, "seal_chunk", not_held)
    build_wiki(wiki)
    assert _every_page(wiki) == expected


def test_prose_checked_by_the_helpers_refuses_as_in_process(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The helpers check each page's prose while MkDocs converts the next ones: the same findings
    in the same order (with their lines) as checked in-process, and none of a page's fill."""
    from publisher.site.lifecycle import events
    from publisher.site.lifecycle import workers as hook

    wiki = _wiki(tmp_path)
    docs = wiki / "docs"
    (docs / "a.md").write_text("# A\n\nfine\n\n<script>alert(1)</script>\n", encoding="utf-8")
    (docs / "b.md").write_text("# B\n\n<iframe src='x'></iframe>\n\nand <b onclick='x()'>bold</b>\n", encoding="utf-8")
    (docs / "c.md").write_text("# C\n\nplain prose\n", encoding="utf-8")
    monkeypatch.setattr(hook, "helper_pool", lambda workers=1: None)
    alone = refused_build(wiki)
    assert {f.check for f in alone} == {"C-PAGE-PROSE"} and {f.file for f in alone} == {"docs/a.md", "docs/b.md"}
    monkeypatch.setattr(hook, "default_workers", lambda: 2)
    monkeypatch.setattr(hook, "_PROSE_CHUNK", 2)
    helpers: list[RecordingHelpers] = []
    monkeypatch.setattr(hook, "helper_pool", lambda workers=1: helpers.append(RecordingHelpers(1)) or helpers[-1])
    fill = events.SiteModel.fill

    def failing(self: object, uri: str, html: str) -> str:  # every page fails to fill
        raise IntegrityError(f"page {uri}: refused by the test", reason=Reason.EXCERPT_MISMATCH)

    monkeypatch.setattr(events.SiteModel, "fill", failing)
    helped = refused_build(wiki)
    assert "prose_chunk" in helpers[-1].jobs
    prose = [f for f in helped if f.check == "C-PAGE-PROSE"]
    assert prose == list(alone)
    filled = {f.file for f in helped if f.check != "C-PAGE-PROSE"}
    assert "c.md" in filled and not filled & {"a.md", "b.md"}  # no fill error where the prose failed
    monkeypatch.setattr(events.SiteModel, "fill", fill)
    assert refused_build(wiki) == alone


class _HeldHelper(Executor):
    """A helper whose jobs wait until the test lets them run (what it was given, in order)."""

    def __init__(self) -> None:
        self.jobs: list[tuple[str, Future[object], object, tuple[object, ...]]] = []
        self.released = False

    def submit(self, fn, /, *args, **kwargs):  # type: ignore[no-untyped-def, override]
        future: Future[object] = Future()
        self.jobs.append((fn.__name__, future, fn, args))
        if self.released:
            self.finish()
        return future

    def finish(self) -> None:
        for _, future, fn, args in self.jobs:
            if not future.done():
                future.set_result(fn(*args))  # type: ignore[operator]


def test_seals_share_one_lane_beside_mkdocs_and_never_pile_up(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """On two cores one helper job at a time runs beside MkDocs' page rendering: the pages' core
    stays theirs; pages waiting beyond a few chunks go out anyway (memory stays bounded), and
    whatever waits is handed over at the end, every seal taken in page order."""
    from collections import Counter as Count

    from publisher.site.lifecycle import workers as hook
    from publisher.site.lifecycle.pageseal import BuiltPage, PagePolicy

    rb = _sample(tmp_path)
    pre = run_preflight(rb.wiki, policy=policy_of(rb.wiki))
    monkeypatch.setattr(hook, "default_workers", lambda: 2)
    monkeypatch.setattr(hook, "_SEAL_CHUNK", 1)
    pool = _HeldHelper()
    monkeypatch.setattr(hook, "helper_pool", lambda workers=1: pool)
    helper = hook.BuildHelper(rb.wiki, pre)
    helper.start([], list(pre.runs))
    pool.finish()  # the report
    before = len(pool.jobs)
    html = "<!doctype html><html><head><meta charset='utf-8'></head><body><p>x</p></body></html>"
    policy = PagePolicy(None, False, False)

    def page(n: int) -> BuiltPage:
        return BuiltPage(html, f"p{n}/index.html", f"p{n}.md", None, Count())

    for n in range(3):
        assert helper.seal_later(page(n), policy)
    assert [job[0] for job in pool.jobs[before:]] == ["seal_chunk"], "one job at a time beside MkDocs"
    assert helper.sealed(wait=False) == []
    for n in range(3, 9):
        helper.seal_later(page(n), policy)
    assert len(pool.jobs) - before == 9 - 4, "beyond four waiting chunks, they go out at once"
    pool.finish()
    assert [p.dest for p, _, _ in helper.sealed(wait=False)] == [f"p{n}/index.html" for n in range(5)]
    pool.released = True
    done = helper.sealed(wait=True)
    assert [p.dest for p, _, _ in done] == [f"p{n}/index.html" for n in range(5, 9)]
    assert all(not seal.findings and value for _, seal, value in done)
    helper.close()


def test_every_source_text_of_a_build_comes_from_the_helper_in_turn(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The helper is handed the source texts in the order MkDocs builds their pages, so none is
    rendered a second time in-process for being asked out of turn (one page per chunk makes
    any other order show)."""
    import threading

    from publisher.site.lifecycle import workers as hook

    wiki, _ = _published(tmp_path)
    pre = run_preflight(wiki, policy=policy_of(wiki))
    assert len(pre.sources) > 1
    here: list[str] = []
    render = hook.render_source_body

    def counted(job: SourceJob) -> SourceBody:
        if threading.current_thread() is threading.main_thread():
            here.append(job.source_id)
        return render(job)

    monkeypatch.setattr(hook, "render_source_body", counted)
    monkeypatch.setattr(hook, "_CHUNK_PAGES", 1)
    monkeypatch.setattr(hook, "default_workers", lambda: 2)
    pools: list[RecordingHelpers] = []
    monkeypatch.setattr(hook, "helper_pool", lambda workers=1: pools.append(RecordingHelpers(1)) or pools[-1])
    build_wiki(wiki)
    assert pools[-1].jobs.count("render_source_chunk") == len(pre.sources)
    assert here == [], "a source text was rendered in-process: the helper had it in another order"


def test_a_source_text_failing_on_the_helper_fails_the_build(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from publisher.site.lifecycle import workers as hook

    wiki, before = _published(tmp_path)
    monkeypatch.setattr(hook, "default_workers", lambda: 2)
    monkeypatch.setattr(hook, "helper_pool", lambda workers=1: ThreadPoolExecutor(max_workers=1))

    def changed(job: SourceJob) -> SourceBody:
        raise IntegrityError(f"snapshot {job.source_id} changed during the build", reason=Reason.SNAPSHOT_HASH_MISMATCH)

    monkeypatch.setattr(hook, "render_source_body", changed)
    findings = refused_build(wiki)
    _assert_untouched(wiki, before)
    sources = {name.split("/")[1] for name in before if name.startswith("sources/src-")}
    assert {(f.reason, f.check) for f in findings} == {(Reason.SNAPSHOT_HASH_MISMATCH, "C-BUILD")}
    assert {f.file for f in findings} == {f"sources/{sid}.md" for sid in sources}  # every page, not the first


def test_helper_runs_a_few_chunks_ahead_and_pages_out_of_order_render_here(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The helper holds at most a few chunks of texts at once (memory stays bounded whatever
    the wiki's size), and a page asked for out of its turn is rendered in-process."""
    from publisher.site.lifecycle import workers as hook

    rb = _sample(tmp_path)
    pre = run_preflight(rb.wiki, policy=policy_of(rb.wiki))
    options = SourceText()
    jobs = [source_job(sid, info, options) for sid, info in pre.sources.items()]
    monkeypatch.setattr(hook, "_CHUNK_PAGES", 1)
    monkeypatch.setattr(hook, "_CHUNKS_AHEAD", 2)
    monkeypatch.setattr(hook, "default_workers", lambda: 2)
    pool = RecordingHelpers(1)
    monkeypatch.setattr(hook, "helper_pool", lambda workers=1: pool)
    helper = hook.BuildHelper(rb.wiki, pre)
    helper.start(jobs, [])
    assert pool.jobs == ["render_source_chunk"] * 2, "two chunks ahead, not the whole wiki"
    local = [render_source_body(job) for job in jobs]
    assert helper.source(jobs[2]) == local[2]  # out of turn: rendered here
    assert len(pool.jobs) == 2
    assert helper.source(jobs[0]) == local[0]  # its turn: from the helper, and the next chunk goes
    assert len(pool.jobs) == 3
    assert [helper.source(job) for job in jobs[1:]] == local[1:]
    helper.close()
    pool.shutdown()


def test_helper_takes_one_report_at_a_time_and_a_report_not_started_renders_here(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """One report in the helpers' hands at a time leaves a helper free for the source texts; a
    report page reached before its report was handed over is rendered in-process."""
    from publisher.site.lifecycle import workers as hook

    wiki = make_wiki(tmp_path / "wiki")
    for slug in ("alpha", "beta", "gamma"):
        sample_run(wiki, slug)
    pre = run_preflight(wiki, policy=policy_of(wiki))
    assert pre.ok and len(pre.runs) == 3
    expected = {
        ev.slug: _STAMP.sub("", hook.render_report_page(*hook.BuildHelper(wiki, pre)._report_job(ev)))
        for ev in pre.runs
    }
    monkeypatch.setattr(hook, "default_workers", lambda: 2)
    pool = RecordingHelpers(1)
    monkeypatch.setattr(hook, "helper_pool", lambda workers=1: pool)
    helper = hook.BuildHelper(wiki, pre)
    jobs = [source_job(sid, info, SourceText()) for sid, info in pre.sources.items()]
    helper.start(jobs, list(pre.runs))
    assert pool.jobs == ["render_source_chunk", "render_report_page"]
    first, second, third = pre.runs
    assert _STAMP.sub("", helper(third)) == expected[third.slug]  # not handed over yet: rendered here
    assert _STAMP.sub("", helper(first)) == expected[first.slug]  # the helper's; the next goes out
    assert pool.jobs == ["render_source_chunk", "render_report_page", "render_report_page"]
    assert _STAMP.sub("", helper(second)) == expected[second.slug]
    assert pool.jobs.count("render_report_page") == 2, "the third report was rendered in-process"
    helper.close()
    pool.shutdown()


def test_a_site_dir_that_cannot_be_staged_is_one_publication_finding(tmp_path: Path) -> None:
    wiki = _wiki(tmp_path)
    (wiki / "out").write_text("a file where the site's folder goes", encoding="utf-8")
    with (wiki / "mkdocs.yml").open("a", encoding="utf-8") as config:
        config.write("site_dir: out/site\n")
    assert [(f.check, f.file) for f in refused_build(wiki)] == [("C-PUBLISH", "out/site")]
    assert (wiki / "out").read_text(encoding="utf-8") == "a file where the site's folder goes"


def test_a_served_wiki_is_checked_on_one_warm_pool_across_rebuilds(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Once the wiki is served, every rebuild's check runs on the process's one warm pool (its
    start-up paid once); before that, for ``mkdocs build`` and for another wiki, the check makes
    its own."""
    from publisher.parallel import pool as pool_module
    from publisher.site.lifecycle import hook as hook_module

    wiki = _wiki(tmp_path)
    seen: list[object] = []
    check = hook_module.check_wiki

    def spy(root: Path, **kwargs: object) -> object:
        seen.append(kwargs["workers"].executor)  # type: ignore[attr-defined]
        return check(root, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(hook_module, "check_wiki", spy)
    monkeypatch.setattr(hook_module, "default_workers", lambda: 2)
    monkeypatch.setattr(hook_module, "_SERVED", set())
    monkeypatch.setattr(pool_module, "_WARM", {})
    build_wiki(wiki)
    assert seen == [None]

    class _Server:
        def watch(self, path: str) -> None:
            pass

    hook_module.watch(_Server(), _load_config(wiki))
    build_wiki(wiki)
    build_wiki(wiki)
    assert seen[1] is not None and seen[1] is seen[2] is pool_module._WARM[2]
    other = _wiki(tmp_path / "other")
    build_wiki(other)
    assert seen[3] is None  # a wiki this process does not serve
    pool_module._close_warm()
    assert pool_module._WARM == {}


def _load_config(wiki: Path) -> object:
    from mkdocs.config import load_config

    return load_config(str(wiki / "mkdocs.yml"))


class _ForgetfulNotes(dict):  # type: ignore[type-arg]
    """A note cache that keeps nothing: every footnote's note made on its own, as before."""

    def __setitem__(self, key: object, value: object) -> None:
        return None


def test_a_note_quoting_the_same_spans_is_made_once_for_the_concept_pages(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two concept pages quoting the same spans: each footnote's note (excerpts in their
    sentences, links) is made once for both pages, and every page is byte for byte the page
    made when each note is made on its own."""
    rb = _sample(tmp_path)
    wiki = rb.wiki
    promote(rb.run.path, wiki, concept="twin", policy=policy_of(wiki))
    made: list[int] = []
    real_fragments = pages_module.SiteModel.fragments

    class Counting:
        def __init__(self, module: Any) -> None:
            self._module = module

        def __getattr__(self, name: str) -> Any:
            return getattr(self._module, name)

        def evidence_note(self, items: Any) -> Any:
            made.append(len(items))
            return self._module.evidence_note(items)

    monkeypatch.setattr(pages_module.SiteModel, "fragments", lambda self: Counting(real_fragments(self)))
    build_wiki(wiki)
    shared, once = _every_page(wiki), len(made)
    concepts = [uri for uri in shared if uri.startswith("concepts/") and uri != "concepts/index.html"]
    assert len(concepts) == 2 and once > 0
    made.clear()
    real_build = pages_module.SiteModel.build

    def forgetful(self: Any) -> Any:
        pages = real_build(self)
        self._notes = _ForgetfulNotes()
        return pages

    monkeypatch.setattr(pages_module.SiteModel, "build", forgetful)
    build_wiki(wiki)
    assert len(made) == 2 * once  # each page made its own notes
    assert _every_page(wiki) == shared
