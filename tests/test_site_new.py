"""``publisher new``: a scaffolded wiki has the example's reader features and its build passes check-site."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml
from _policy import policy_of
from _wiki_helpers import REPO, build_wiki, leftovers, sample_run

from publisher.acquire.signing import wiki_key_file
from publisher.site.checks.checksite import check_site
from publisher.site.pages.highlight import SourceText
from publisher.site.scaffold import new_wiki
from publisher.wiki.promote import promote


def _config(path: Path) -> dict[str, Any]:
    return yaml.safe_load(path.read_text(encoding="utf-8"))  # type: ignore[no-any-return]


def _extensions(config: dict[str, Any]) -> set[str]:
    return {next(iter(e)) if isinstance(e, dict) else e for e in config["markdown_extensions"]}


def test_new_wiki_enables_the_example_reader_features(tmp_path: Path) -> None:
    new_wiki(tmp_path / "w")
    fresh = _config(tmp_path / "w" / "mkdocs.yml")
    example = _config(REPO / "mkdocs.yml")
    assert "content.footnote.tooltips" in fresh["theme"]["features"]
    assert set(example["theme"]["features"]) <= set(fresh["theme"]["features"])
    assert fresh["hooks"] == ["hooks/evidence.py"]
    assert {"footnotes", "attr_list", "md_in_html", "toc"} <= _extensions(fresh)
    assert "search" in fresh["plugins"]
    assert fresh["extra"]["evidence"]["offline"] is True == example["extra"]["evidence"]["offline"]


def test_new_wiki_with_a_promoted_run_builds_and_passes_check_site(tmp_path: Path) -> None:
    wiki = tmp_path / "w"
    new_wiki(wiki)  # signed by default: the runs' fresh events are signed with the wiki's key
    rb = sample_run(wiki, key=wiki_key_file(policy_of(wiki).trusted_keys.ids))
    promote(rb.run.path, wiki, policy=policy_of(wiki))
    build_wiki(wiki, strict=True)
    outcome = check_site(wiki / "site", wiki, policy=policy_of(wiki))
    assert outcome.ok, [f.one_line() for f in outcome.findings]
    assert outcome.excerpts >= 10 and outcome.snapshots == 3 and outcome.records == 3
    page = (wiki / "site" / "concepts" / "alpha.html").read_text(encoding="utf-8")  # offline: links name files
    assert 'class="footnote"' in page and "evidence-excerpt" in page
    sources = wiki / "site" / "sources"
    assert len(list(sources.glob("src-*/record.json"))) == 3
    # Signed sources verify through their proofs and the signed root: the text ships once.
    assert list(sources.glob("src-*/record.js")) == []
    assert len(list(sources.glob("src-*/proofs/*.js"))) >= 3
    assert leftovers(wiki) == []


def test_new_wiki_reader_options_as_documented_in_its_config(tmp_path: Path) -> None:
    # Uncommenting the documented reader options (windows mode) builds a site check-site accepts.
    wiki = tmp_path / "w"
    new_wiki(wiki)
    config = (wiki / "mkdocs.yml").read_text(encoding="utf-8")
    block = config[config.index("extra:") : config.index("\nnav:")]
    options = "\n".join(line.replace("# ", "", 1) for line in block.splitlines()).replace("full ", "windows ")
    (wiki / "mkdocs.yml").write_text(config.replace(block, options), encoding="utf-8")
    evidence = _config(wiki / "mkdocs.yml")["extra"]["evidence"]
    assert evidence["source_text"] == "windows" and evidence["offline"] is True
    assert evidence["windows_above"] == 200_000 == SourceText().windows_above
    promote(
        sample_run(wiki, key=wiki_key_file(policy_of(wiki).trusted_keys.ids)).run.path,
        wiki,
        policy=policy_of(wiki),
    )
    build_wiki(wiki, strict=True)
    outcome = check_site(wiki / "site", wiki, policy=policy_of(wiki))
    assert outcome.ok, [f.one_line() for f in outcome.findings]
    assert outcome.windows >= 3 and outcome.snapshots == 0


def test_new_wiki_keeps_evidence_byte_exact_in_git(tmp_path: Path) -> None:
    """``.gitattributes`` turns off line-ending conversion for the event log and the runs."""
    from publisher.site.scaffold import new_wiki

    written = new_wiki(tmp_path / "w")
    assert ".gitattributes" in written
    rules = {
        line.split()[0]: line.split()[1:]
        for line in (tmp_path / "w" / ".gitattributes").read_text(encoding="utf-8").splitlines()
        if line and not line.startswith("#")
    }
    for pattern in ("*.jsonl", "runs/**", "assets/papers/**"):
        assert rules.get(pattern) == ["-text"], pattern


def test_new_wiki_at_a_link_to_a_folder_writes_into_that_folder(tmp_path: Path) -> None:
    # The wiki's root may be a link (a run's or wiki's root may be, own_folder's docstring): only
    # folders below it are refused as links. Scaffolding at one refused its own root.
    real = tmp_path / "real"
    real.mkdir()
    (tmp_path / "link").symlink_to(real)
    written = new_wiki(tmp_path / "link", signed=False)
    assert "mkdocs.yml" in written and (real / "mkdocs.yml").is_file()
