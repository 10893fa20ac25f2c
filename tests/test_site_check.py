"""``publisher check-site``: the built HTML against the seal and a fresh re-slice."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from _policy import policy_of
from _wiki_helpers import build_wiki, finding_of, make_wiki, sample_run, tamper

from publisher.kernel.findings import grouped_lines
from publisher.site.checks.checksite import check_site
from publisher.site.checks.manifest import MANIFEST_NAME
from publisher.wiki.promote import promote


@pytest.fixture
def built(tmp_path: Path) -> tuple[Path, object]:
    wiki = make_wiki(tmp_path / "wiki")
    rb = sample_run(wiki)
    promote(rb.run.path, wiki, policy=policy_of(wiki))
    build_wiki(wiki)
    return wiki, rb


def _codes(wiki: Path) -> set[str]:
    """Codes of every finding; an edit after the build is always also a changed file (C-SITE-FILE)."""
    return {f.code for f in check_site(wiki / "site", wiki, policy=policy_of(wiki)).findings}


def _concept_page(wiki: Path) -> Path:
    return wiki / "site" / "concepts" / "alpha" / "index.html"


def test_fresh_build_passes(built: tuple[Path, object]) -> None:
    wiki, _ = built
    outcome = check_site(wiki / "site", wiki, policy=policy_of(wiki))
    assert outcome.ok, [f.one_line() for f in outcome.findings]
    assert outcome.excerpts >= 10 and outcome.snapshots == 3


def test_edited_excerpt_in_html_fails(built: tuple[Path, object]) -> None:
    wiki, _ = built
    page = _concept_page(wiki)
    html = page.read_text(encoding="utf-8")
    page.write_text(html.replace("Adherence was 87%", "Adherence was 97%", 1), encoding="utf-8")
    assert _codes(wiki) == {"EXCERPT_MISMATCH", "C-SITE-FILE"}


def test_markup_injected_into_excerpt_fails(built: tuple[Path, object]) -> None:
    wiki, _ = built
    page = _concept_page(wiki)
    html = page.read_text(encoding="utf-8")
    page.write_text(html.replace("Adherence was", "<b>Adherence</b> was", 1), encoding="utf-8")
    assert "EXCERPT_MISMATCH" in _codes(wiki)


def test_unsealed_excerpt_element_fails(built: tuple[Path, object]) -> None:
    wiki, _ = built
    page = wiki / "site" / "index.html"
    html = page.read_text(encoding="utf-8")
    fake = json.loads((wiki / "site" / MANIFEST_NAME).read_text(encoding="utf-8"))["excerpts"][0]
    element = (
        f'<span class="evidence-excerpt" data-source-id="{fake["source_id"]}" '
        f'data-start="{fake["start"]}" data-end="{fake["end"]}">x</span>'
    )
    page.write_text(html.replace("</article>", element + "</article>", 1), encoding="utf-8")
    assert _codes(wiki) == {"EXCERPT_MISMATCH", "C-SITE-FILE"}


def test_moved_highlight_fails(built: tuple[Path, object]) -> None:
    wiki, _ = built
    (source,) = [p for p in (wiki / "site" / "sources").glob("src-*/index.html") if "Adherence" in p.read_text()]
    html = source.read_text(encoding="utf-8")
    start = html.index('<mark class="evidence-span"')
    data_start = html.index('data-start="', start) + len('data-start="')
    value_end = html.index('"', data_start)
    value = int(html[data_start:value_end])
    source.write_text(html[:data_start] + str(value + 1) + html[value_end:], encoding="utf-8")
    assert _codes(wiki) == {"EXCERPT_MISMATCH", "C-SITE-FILE"}


def test_missing_manifest_fails(built: tuple[Path, object]) -> None:
    wiki, _ = built
    (wiki / "site" / MANIFEST_NAME).unlink()
    assert _codes(wiki) == {"SCHEMA_ERROR"}


def test_removed_page_fails(built: tuple[Path, object]) -> None:
    wiki, _ = built
    _concept_page(wiki).unlink()
    assert _codes(wiki) == {"EXCERPT_MISMATCH", "C-SITE-FILE"}


def test_snapshot_tampered_after_build_fails(built: tuple[Path, object]) -> None:
    wiki, rb = built
    tamper("snapshot-text", rb)  # type: ignore[arg-type]
    assert "SNAPSHOT_HASH_MISMATCH" in _codes(wiki)


def test_cli_check_site(cli, built: tuple[Path, object]) -> None:  # type: ignore[no-untyped-def]
    wiki, _ = built
    result = cli("check-site", str(wiki / "site"), "--wiki", str(wiki), "--json")
    assert result.status == 0 and result.json()["ok"]
    page = _concept_page(wiki)
    page.write_text(page.read_text(encoding="utf-8").replace("Adherence was", "Adherance was", 1), encoding="utf-8")
    result = cli("check-site", str(wiki / "site"), "--wiki", str(wiki), "--json")
    assert result.status == 1 and result.json()["ok"] is False
    found = {(f["reason_code"], f["file"]) for f in result.json()["findings"]}
    assert ("EXCERPT_MISMATCH", page.relative_to(wiki / "site").as_posix()) in found, found
    # The human refusal is the one wording of those same findings (grouped_lines), then one error line.
    findings = [finding_of(f) for f in result.json()["findings"]]
    human = cli("check-site", str(wiki / "site"), "--wiki", str(wiki))
    assert human.status == 1 and human.err_lines[:-1] == [f"publisher: {line}" for line in grouped_lines(findings, "")]
    assert human.err_lines[-1].startswith("publisher: error: ")
    result = cli("check-site", str(wiki / "nope"), "--wiki", str(wiki))
    assert result.status == 2


def test_site_built_without_hook_fails(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    site = tmp_path / "site"
    site.mkdir()
    (site / "index.html").write_text("<html><body>plain</body></html>", encoding="utf-8")
    result = cli("check-site", str(site), "--wiki", str(tmp_path), "--json")
    assert result.status == 1
    assert {f["reason_code"] for f in result.json()["findings"]} == {"SCHEMA_ERROR"}


def _resealed(wiki: Path, page: Path) -> None:
    """Re-seal ``page`` in the manifest, as someone who edited the site would: only the checks
    that read the page itself, not the file digests, stand between the edit and a pass."""
    import hashlib

    manifest = wiki / "site" / MANIFEST_NAME
    doc = json.loads(manifest.read_text(encoding="utf-8"))
    rel = page.relative_to(wiki / "site").as_posix()
    data = page.read_bytes()
    for entry in doc["files"]:
        if entry["path"] == rel:
            entry.update(sha256=hashlib.sha256(data).hexdigest(), size=len(data))
    manifest.write_text(json.dumps(doc), encoding="utf-8")


@pytest.mark.parametrize(
    "attribute",
    [' hidden=""', ' style="display:none"', " inert", ' dir="rtl"', ' title="x"', ' class="sr-only"'],
)
def test_an_excerpt_element_with_an_attribute_the_build_never_writes_fails(
    built: tuple[Path, object], attribute: str
) -> None:
    """The excerpt's text still matches the re-slice, but the attribute hides it or changes how it
    reads: an excerpt element carries exactly the attributes the build writes (an allow-list)."""
    wiki, _ = built
    page = _concept_page(wiki)
    html = page.read_text(encoding="utf-8")
    start = html.index('<span class="evidence-excerpt"')
    end = html.index(">", start)
    if attribute.startswith(' class="'):  # a second class attribute is dropped by the parser: add a token
        edited = html[:start] + html[start:end].replace('"evidence-excerpt"', '"evidence-excerpt sr-only"', 1)
    else:
        edited = html[:end] + attribute
    page.write_text(edited + html[end:], encoding="utf-8")
    _resealed(wiki, page)
    assert _codes(wiki) == {"EXCERPT_MISMATCH"}


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ('<span class="evidence-context"> 8 weeks.</span>', '<span class="evidence-context"> 80 weeks.</span>'),
        ('87% over</span><span class="evidence-context">', '87% over</span> never <span class="evidence-context">'),
        ("<p>", '<p><span class="evidence-context">No </span>'),
    ],
    ids=["edited", "parted from its excerpt", "beside no excerpt"],
)
def test_a_sentence_context_that_is_not_the_rest_of_the_sentence_fails(
    built: tuple[Path, object], old: str, new: str
) -> None:
    """The context shown beside an excerpt is verified text too: edited, moved away from its
    excerpt, or written beside none, it fails check-site even with the manifest re-sealed."""
    wiki, _ = built
    assert not check_site(wiki / "site", wiki, policy=policy_of(wiki)).findings
    page = _concept_page(wiki)
    html = page.read_text(encoding="utf-8")
    assert old in html
    page.write_text(html.replace(old, new, 1), encoding="utf-8")
    _resealed(wiki, page)
    assert _codes(wiki) == {"EXCERPT_MISMATCH"}
