"""Windows mode in the seal, and the published snapshot records, at build time and in ``check-site``."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest
from _policy import policy_of
from _wiki_helpers import build_wiki, leftovers, make_wiki, refused_build, sample_run, tree_digest

from publisher.kernel.canonical import sha256_hex
from publisher.kernel.reasons import Reason
from publisher.site.checks.checksite import check_site
from publisher.site.checks.manifest import MANIFEST_NAME
from publisher.site.checks.scan import scan_page
from publisher.site.pages.highlight import snapshot_html, window_bounds, windows_html
from publisher.wiki.promote import promote

WINDOWS = "extra:\n  evidence:\n    source_text: windows\n    context: 5\n"
SID = "src-" + "d" * 64

_ALTER_WINDOW = """
def on_post_page(output, page, config):
    if page.file.src_uri.startswith("sources/"):
        return output.replace("und. <mark", "und; <mark")
    return output
"""


def _wiki(tmp_path: Path, *, hooks: dict[str, str] | None = None) -> Path:
    wiki = make_wiki(tmp_path / "wiki", extra=WINDOWS, hooks=hooks)
    rb = sample_run(wiki)
    promote(rb.run.path, wiki, policy=policy_of(wiki))
    return wiki


@pytest.fixture
def built(tmp_path: Path) -> Path:
    wiki = _wiki(tmp_path)
    build_wiki(wiki)
    return wiki


def _codes(wiki: Path) -> set[str]:
    """Codes of the evidence findings (every edit is also a changed file, C-SITE-FILE, not counted here)."""
    return {f.code for f in check_site(wiki / "site", wiki, policy=policy_of(wiki)).findings if f.code != "C-SITE-FILE"}


def _window_page(wiki: Path) -> Path:
    (page,) = [p for p in (wiki / "site" / "sources").glob("src-*/index.html") if "und. <mark" in p.read_text()]
    return page


def _manifest(wiki: Path) -> dict[str, list[dict[str, object]]]:
    return json.loads((wiki / "site" / MANIFEST_NAME).read_text(encoding="utf-8"))  # type: ignore[no-any-return]


# ---------------------------------------------------------------------------------------------
# windows


def test_window_markup_round_trips_through_the_scanner() -> None:
    text = "alpha\nbeta gamma\n\ndelta & <epsilon> \r zeta"
    spans = {(6, 10), (8, 16), (len(text) - 4, len(text))}
    (block,) = scan_page(snapshot_html(SID, text, spans)).snapshots
    assert block.text == text and block.misplaced_marks() == []
    for context in (0, 1, 3, 40):
        scan = scan_page(windows_html(SID, text, spans, context))
        bounds = window_bounds(len(text), spans, context)
        assert [(w.window_start, w.window_end) for w in scan.windows] == bounds
        for window in scan.windows:
            assert window.source_id == SID
            assert window.text == text[window.window_start : window.window_end]  # type: ignore[misc]
            assert window.misplaced_marks() == []
            assert window.marks


def test_a_window_that_starts_with_a_line_feed_keeps_it() -> None:
    # Browsers drop one line feed right after <pre>; the generator writes one so the text's own stays.
    text = "head\nbody of the cited passage\ntail"
    spans = {(6, 10)}
    (window,) = scan_page(windows_html(SID, text, spans, 2)).windows
    assert window.window_start == 4 and window.text.startswith("\n") and window.text == text[4:12]


def test_windows_build_is_sealed_and_check_site_passes(built: Path) -> None:
    manifest = _manifest(built)
    assert manifest["windows"] and not manifest["snapshots"]
    for entry in manifest["windows"]:
        assert set(entry) == {"page", "source_id", "start", "end", "sha256"}
    outcome = check_site(built / "site", built, policy=policy_of(built))
    assert outcome.ok, [f.one_line() for f in outcome.findings]
    assert outcome.windows == len(manifest["windows"]) and outcome.snapshots == 0
    assert outcome.records == 3


def test_edited_window_text_fails_check_site(built: Path) -> None:
    page = _window_page(built)
    page.write_text(page.read_text(encoding="utf-8").replace("und. <mark", "und! <mark", 1), encoding="utf-8")
    findings = check_site(built / "site", built, policy=policy_of(built)).findings
    assert {f.code for f in findings} == {"EXCERPT_MISMATCH", "C-SITE-FILE"}
    rel = page.relative_to(built / "site").as_posix()
    windows = {(w["source_id"], w["start"], w["end"]) for w in _manifest(built)["windows"] if w["page"] == rel}
    mismatched = [f for f in findings if f.code == "EXCERPT_MISMATCH"]
    assert mismatched and all(f.file == rel and (f.source_id, f.start, f.end) in windows for f in mismatched)


def test_moved_window_offsets_fail_check_site(built: Path) -> None:
    page = _window_page(built)
    html = page.read_text(encoding="utf-8")
    start = re.search(r'data-window-start="(\d+)"', html)
    assert start is not None
    shifted = html[: start.start(1)] + str(int(start.group(1)) + 1) + html[start.end(1) :]
    page.write_text(shifted, encoding="utf-8")
    assert "EXCERPT_MISMATCH" in _codes(built)


def test_moved_highlight_in_a_window_fails_check_site(built: Path) -> None:
    page = _window_page(built)
    html = page.read_text(encoding="utf-8")
    at = html.index('<mark class="evidence-span"')
    shifted = html[:at] + re.sub(r'data-end="(\d+)"', lambda m: f'data-end="{int(m.group(1)) - 1}"', html[at:], count=1)
    page.write_text(shifted, encoding="utf-8")
    assert _codes(built) == {"EXCERPT_MISMATCH"}


def test_hidden_window_fails_check_site(built: Path) -> None:
    page = _window_page(built)
    html = page.read_text(encoding="utf-8")
    page.write_text(html.replace('class="evidence-window"', 'class="plain"', 1), encoding="utf-8")
    assert _codes(built) == {"EXCERPT_MISMATCH"}


def test_rendering_that_alters_a_window_fails_the_build(tmp_path: Path) -> None:
    wiki = _wiki(tmp_path)
    build_wiki(wiki)
    before = tree_digest(wiki / "site")
    (wiki / "hooks" / "alter.py").write_text(_ALTER_WINDOW, encoding="utf-8")
    config = (wiki / "mkdocs.yml").read_text(encoding="utf-8")
    (wiki / "mkdocs.yml").write_text(
        config.replace("  - hooks/evidence.py\n", "  - hooks/evidence.py\n  - hooks/alter.py\n"), encoding="utf-8"
    )
    findings = refused_build(wiki)
    windows = [f for f in findings if f.start is not None and f.file.startswith("sources/src-")]
    assert windows and {f.reason for f in findings} == {Reason.EXCERPT_MISMATCH}, findings
    assert tree_digest(wiki / "site") == before
    assert leftovers(wiki) == []


# ---------------------------------------------------------------------------------------------
# published snapshot records


def _record(wiki: Path) -> Path:
    records = sorted((wiki / "site" / "sources").glob("src-*/record.json"))
    assert len(records) == 3
    return records[0]


def test_records_are_sealed_byte_for_byte(built: Path) -> None:
    sealed = {e["source_id"]: e["sha256"] for e in _manifest(built)["records"]}
    for path in (built / "site" / "sources").glob("src-*/record.json"):
        assert sealed[path.parent.name] == sha256_hex(path.read_bytes())


@pytest.mark.parametrize("mode", ["full", "windows"])
def test_tampered_record_fails_check_site(tmp_path: Path, mode: str) -> None:
    wiki = make_wiki(tmp_path / "wiki", extra=WINDOWS if mode == "windows" else "")
    promote(sample_run(wiki).run.path, wiki, policy=policy_of(wiki))
    build_wiki(wiki)
    record = _record(wiki)
    data = json.loads(record.read_bytes())
    data["title"] = "A forged title"
    os.chmod(record, 0o644)
    record.write_text(json.dumps(data), encoding="utf-8")
    assert _codes(wiki) == {"SNAPSHOT_HASH_MISMATCH"}


def test_reformatted_record_fails_check_site(built: Path) -> None:
    # The same record, re-serialised: it may still verify, but it is not the stored file.
    record = _record(built)
    data = json.loads(record.read_bytes())
    os.chmod(record, 0o644)
    record.write_text(json.dumps(data, indent=2), encoding="utf-8")
    assert _codes(built) == {"SNAPSHOT_HASH_MISMATCH"}


def test_missing_record_fails_check_site(built: Path) -> None:
    _record(built).unlink()
    assert _codes(built) == {"SNAPSHOT_HASH_MISMATCH"}


def test_record_missing_from_the_seal_fails_check_site(built: Path) -> None:
    path = built / "site" / MANIFEST_NAME
    manifest = json.loads(path.read_text(encoding="utf-8"))
    manifest["records"] = manifest["records"][1:]
    path.write_text(json.dumps(manifest), encoding="utf-8")
    assert _codes(built) == {"SNAPSHOT_HASH_MISMATCH"}


def test_windows_over_the_index_limit_are_kept_out_of_the_search_index() -> None:
    text = "0123456789" * 10
    spans = {(10, 14), (60, 64)}
    shown = sum(hi - lo for lo, hi in window_bounds(len(text), spans, 3))
    assert 'data-search-exclude">' not in windows_html(SID, text, spans, 3, index_limit=shown)
    excluded = windows_html(SID, text, spans, 3, index_limit=shown - 1)
    assert excluded.startswith(f'<div class="evidence-windows" data-window-of="{SID}" data-search-exclude>')
    assert scan_page(excluded).windows == scan_page(windows_html(SID, text, spans, 3)).windows


@pytest.mark.parametrize("limit, indexed", [(1_000_000, True), (12, False)])
def test_the_search_index_holds_windows_up_to_windows_above(tmp_path: Path, limit: int, indexed: bool) -> None:
    """A source page adds at most ``windows_above`` code points to the search index; the seal and
    ``check-site`` are the same either way."""
    wiki = _wiki(tmp_path)
    config = wiki / "mkdocs.yml"
    text = config.read_text(encoding="utf-8").replace("plugins: []", "plugins:\n  - search")
    config.write_text(text + f"    windows_above: {limit}\n", encoding="utf-8")
    build_wiki(wiki)
    window = _window_page(wiki).read_text(encoding="utf-8")
    assert (re.search(r'class="evidence-windows"[^>]*data-search-exclude', window) is None) is indexed
    index = json.loads((wiki / "site" / "search" / "search_index.json").read_text(encoding="utf-8"))
    source_docs = [d["text"] for d in index["docs"] if d["location"].startswith("sources/src-")]
    assert source_docs and any("und." in t for t in source_docs) is indexed
    assert check_site(wiki / "site", wiki, policy=policy_of(wiki)).ok


def test_a_window_holds_the_whole_sentence_of_a_span_cut_after_a_negation() -> None:
    from publisher.kernel.sentences import Sentences

    text = "Methods were fixed. No significant differences were found between the groups. Follow-up ended."
    start, end = text.index("significant"), text.index(" between")
    sentence = (text.index("No "), text.index("groups.") + len("groups."))
    (window,) = window_bounds(len(text), {(start, end)}, 2, Sentences(text))
    assert window[0] <= sentence[0] and sentence[1] <= window[1]
    (bare,) = window_bounds(len(text), {(start, end)}, 2)
    assert bare == (start - 2, end + 2)  # without sentences, only the context
    html = windows_html(SID, text, {(start, end)}, 2, sentences=Sentences(text))
    (shown,) = scan_page(html).windows
    assert "No significant differences were found between the groups." in shown.text
