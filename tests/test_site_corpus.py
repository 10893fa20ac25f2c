"""The site over real articles: corpus offsets survive promotion, build and the seal exactly."""

from __future__ import annotations

import json
from pathlib import Path

from _policy import policy_of
from _wiki_helpers import RunBuilder, build_wiki, leftovers, make_wiki

from publisher.site.checks.checksite import check_site
from publisher.site.checks.scan import scan_page
from publisher.wiki.check import check_wiki as run_preflight
from publisher.wiki.promote import promote


def test_corpus_excerpts_published_character_for_character(tmp_path: Path, corpus_dir: Path) -> None:
    base = corpus_dir / "evidence-inference"
    by_article: dict[str, list[dict[str, object]]] = {}
    for line in (base / "spans.jsonl").read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        by_article.setdefault(row["pmcid"], []).append(row)
    wiki = make_wiki(tmp_path / "wiki")
    rb = RunBuilder(wiki, "corpus", question="What do the trials report?")
    expected: set[str] = set()
    for pmcid, rows in sorted(by_article.items())[:8]:
        text = (base / "texts" / f"PMC{pmcid}.txt").read_text(encoding="utf-8")
        sid = rb.source(
            f"https://www.ncbi.nlm.nih.gov/pmc/articles/PMC{pmcid}/",
            text,
            paper={"pmid": None, "doi": None, "pmcid": f"PMC{pmcid}"},
        )
        picked = rows[:3]
        spans = [{"claim": r["label"], "source_id": sid, "start": r["start"], "end": r["end"]} for r in picked]
        rb.record(
            "extraction",
            f"pmc{pmcid}",
            {"schema_version": 1, "evidence_id": f"pmcid:PMC{pmcid}", "design": "trial", "spans": spans},
        )
        expected.update(str(r["excerpt"]) for r in picked)
    rb.assemble()
    promote(rb.run.path, wiki, policy=policy_of(wiki))
    assert run_preflight(wiki, policy=policy_of(wiki)).ok
    build_wiki(wiki, strict=True)
    page = (wiki / "site" / "concepts" / "corpus" / "index.html").read_text(encoding="utf-8")
    shown = {e.text for e in scan_page(page).excerpts}
    assert shown == expected
    assert check_site(wiki / "site", wiki, policy=policy_of(wiki)).ok
    assert leftovers(wiki) == []
