"""Attacks on the published site by whoever writes prose or files under docs/: the build's own
stylesheets cannot be replaced, an SVG cannot load anything, and text cannot spell evidence in
an order or form the checks do not read. Payloads here are not those of the other prose tests."""

from __future__ import annotations

from pathlib import Path

import pytest
from _wiki_helpers import build_wiki, leftovers, make_wiki, refused_build, sample_run, tree_digest

from publisher.wiki.promote import promote

_FORGED_CSS = 'button.evidence-verify[data-state="mismatch"]::after { content: "\\2713  verified"; color: green }'


@pytest.mark.parametrize("uri", ["assets/publisher/evidence.css", "assets/publisher/reader.css"])
def test_a_docs_file_cannot_replace_the_builds_own_stylesheet(tmp_path: Path, uri: str) -> None:
    """The build's stylesheets decide what "verified" looks like; one of docs/ at their path
    would be published in their place (it is named in extra_css, so it passed as the site's own)."""
    wiki = make_wiki(tmp_path / "wiki")
    promote(sample_run(wiki).run.path, wiki)
    build_wiki(wiki)
    before = tree_digest(wiki / "site")
    forged = wiki / "docs" / uri
    forged.parent.mkdir(parents=True)
    forged.write_text(_FORGED_CSS, encoding="utf-8")
    findings = refused_build(wiki)
    assert ("C-BUILD", f"docs/{uri}") in {(f.check, f.file) for f in findings}, findings
    assert tree_digest(wiki / "site") == before and leftovers(wiki) == []
