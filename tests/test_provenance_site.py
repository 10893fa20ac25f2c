"""Source pages say whether provenance is signed (CONTRACT section 12) and who signed each event."""

from __future__ import annotations

from pathlib import Path

from _wiki_helpers import build_wiki, make_wiki, refused_build, sample_run

from publisher.acquire.signing import new_key_pair


def _source_pages(wiki: Path) -> list[str]:
    return [p.read_text(encoding="utf-8") for p in sorted((wiki / "site" / "sources").glob("src-*/index.html"))]


def test_source_pages_say_provenance_is_unsigned_without_trusted_keys(tmp_path: Path) -> None:
    wiki = make_wiki(tmp_path / "wiki")
    sample_run(wiki)
    build_wiki(wiki)
    pages = _source_pages(wiki)
    assert pages and all("Unsigned provenance" in page for page in pages)
    assert all("Signed by" in page for page in pages)


def test_source_pages_say_provenance_is_signed_with_trusted_keys(tmp_path: Path) -> None:
    wiki = make_wiki(tmp_path / "wiki")
    private, public, _ = new_key_pair(tmp_path / "keys", "ci")
    (wiki / "keys").mkdir()
    (wiki / "keys" / public.name).write_bytes(public.read_bytes())
    config = wiki / "mkdocs.yml"
    config.write_text(config.read_text() + f"extra:\n  evidence:\n    trusted_keys: [keys/{public.name}]\n")
    sample_run(wiki, key=private)
    build_wiki(wiki)
    pages = _source_pages(wiki)
    assert pages and all("Signed provenance" in page for page in pages)


def test_trusted_keys_listed_after_assembly_refuse_the_build(tmp_path: Path) -> None:
    """A run whose events nobody trusted signed is not fresh once the wiki lists keys: the
    result is stale (the trusted keys are one of its inputs) and nothing is published."""
    wiki = make_wiki(tmp_path / "wiki")
    sample_run(wiki)
    _, public, _ = new_key_pair(wiki / "keys", "ci")
    config = wiki / "mkdocs.yml"
    config.write_text(config.read_text() + f"extra:\n  evidence:\n    trusted_keys: [keys/{public.name}]\n")
    findings = refused_build(wiki)
    assert findings and {f.run for f in findings} == {"runs/alpha"}
    assert "NO_FRESH_FETCH" in {f.code for f in findings}, findings
    assert not (wiki / "site").exists()
