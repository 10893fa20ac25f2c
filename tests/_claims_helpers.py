"""A wiki of real articles for the claim tests: two trials from the corpus, promoted into one concept.

Article A is stored twice, as its PMC full text (a complete declared surface) and as a PubMed
abstract (the first paragraph, same PMCID): one work, two snapshots. Article B is one full text
without a declaration. Article C is only an abstract, quoted by nothing. The extraction of A
quotes two spans, B one; promotion writes the concept ``trials`` whose footnote labels the tests
cite.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from _policy import policy_of
from _wiki_helpers import Claim, RunBuilder, make_wiki

from publisher.kernel.models import DEFAULT_EXCLUDED_MODALITIES
from publisher.wiki.concepts import parse_concept
from publisher.wiki.promote import promote

CONCEPT = "trials"


def whole_text(complete: bool) -> dict[str, Any]:
    """A declared WHOLE_TEXT surface (as ``source fetch [--complete]`` declares one)."""
    return {
        "type": "WHOLE_TEXT",
        "expected_pages": None,
        "extracted_pages": [],
        "missing_pages": [],
        "unexpected_pages": [],
        "complete": complete,
        "excluded_modalities": list(DEFAULT_EXCLUDED_MODALITIES),
        "method": "publisher-jats/test",
    }


def corpus_rows(corpus_dir: Path) -> dict[str, list[dict[str, Any]]]:
    base = corpus_dir / "evidence-inference"
    rows: dict[str, list[dict[str, Any]]] = {}
    for line in (base / "spans.jsonl").read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        rows.setdefault(row["pmcid"], []).append(row)
    return rows


@dataclass
class ClaimsWiki:
    wiki: Path
    rb: RunBuilder
    a_full: str
    a_abstract: str
    b_full: str
    a_text: str
    labels: list[str]
    c_abstract: str

    def labels_of(self, source_id: str) -> list[str]:
        """The footnote labels of the concept quoting ``source_id``."""
        doc = parse_concept(self.concept.read_text(encoding="utf-8"))
        return [n.label for n in doc.footnotes if any(r.source_id == source_id for r in n.refs)]

    @property
    def concept(self) -> Path:
        return self.wiki / "concepts" / f"{CONCEPT}.md"

    def front(self) -> Any:
        return parse_concept(self.concept.read_text(encoding="utf-8")).front


def claims_wiki(root: Path, corpus_dir: Path, *, key: Path | None = None, extra: str = "") -> ClaimsWiki:
    rows = corpus_rows(corpus_dir)
    picked = [pmcid for pmcid, found in sorted(rows.items()) if len(found) >= 2][:2]
    a_id, b_id = picked
    texts = {
        p: (corpus_dir / "evidence-inference" / "texts" / f"PMC{p}.txt").read_text(encoding="utf-8") for p in picked
    }
    wiki = make_wiki(root, extra=extra)
    rb = RunBuilder(wiki, "trials", question="What do the two trials report?", key=key)
    a_paper = {"pmid": None, "doi": None, "pmcid": f"PMC{a_id}"}
    a_full = rb.source(
        f"https://pmc.ncbi.nlm.nih.gov/articles/PMC{a_id}/", texts[a_id], paper=a_paper, surface=whole_text(True)
    )
    abstract = texts[a_id][: texts[a_id].index("\n", 400) if "\n" in texts[a_id][400:] else 800]
    a_abstract = rb.source(
        f"https://pubmed.ncbi.nlm.nih.gov/?pmc=PMC{a_id}", abstract, paper=a_paper, access="abstract", origin="pubmed"
    )
    b_full = rb.source(
        f"https://pmc.ncbi.nlm.nih.gov/articles/PMC{b_id}/",
        texts[b_id],
        paper={"pmid": None, "doi": None, "pmcid": f"PMC{b_id}"},
        surface=whole_text(False),
    )
    # A third work known only by its abstract (quoted by nothing): restricted access, a fact.
    c_id = next(pmcid for pmcid in sorted(rows) if pmcid not in picked)
    c_text = (corpus_dir / "evidence-inference" / "texts" / f"PMC{c_id}.txt").read_text(encoding="utf-8")[:600]
    c_abstract = rb.source(
        f"https://pubmed.ncbi.nlm.nih.gov/?pmc=PMC{c_id}",
        c_text,
        paper={"pmid": None, "doi": None, "pmcid": f"PMC{c_id}"},
        access="abstract",
        origin="pubmed",
    )
    ra, rb_rows = rows[a_id][:2], rows[b_id][:1]
    rb.extraction(
        f"pmcid:PMC{a_id}", [Claim(f"spans[{i}]", r["label"], a_full, r["start"], r["end"]) for i, r in enumerate(ra)]
    )
    rb.extraction(
        f"pmcid:PMC{b_id}", [Claim("spans[0]", rb_rows[0]["label"], b_full, rb_rows[0]["start"], rb_rows[0]["end"])]
    )
    rb.record(
        "appraisal",
        f"pmc{a_id}",
        {
            "schema_version": 1,
            "evidence_id": f"pmcid:PMC{a_id}",
            "tool": "RoB2",
            "domains": [
                {
                    "domain": "randomisation",
                    "judgement": "some concerns",
                    "spans": [
                        {"claim": "The abstract states the design.", "source_id": a_abstract, "start": 0, "end": 80}
                    ],
                }
            ],
            "overall_judgement": "some concerns",
        },
    )
    rb.assemble()
    promote(rb.run.path, wiki, concept=CONCEPT, policy=policy_of(wiki))
    doc = parse_concept((wiki / "concepts" / f"{CONCEPT}.md").read_text(encoding="utf-8"))
    labels = [note.label for note in doc.footnotes]
    return ClaimsWiki(wiki, rb, a_full, a_abstract, b_full, texts[a_id], labels, c_abstract)
