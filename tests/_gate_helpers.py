"""Builders of valid runs over corpus texts, for assembler, verifier and render tests.

``make_run(tmp_path, articles=2)`` creates a wiki folder (with ``mkdocs.yml``) holding one run
whose snapshots are Evidence Inference articles (or, without ``../shared``, the in-repo mini
corpus of the same layout) registered through the kernel
(``build_record`` + ``SnapshotStore.put``) with a fresh ``fetch`` event each, and whose
extractions, appraisals and ``report.md`` cite spans taken from ``spans.jsonl``. Every artifact
of such a run is accepted; a test breaks one thing and asserts the reason code.

Evidence ids are ``pmcid:PMC<digits>``; the snapshots' ``paper.pmcid`` carries the same id.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from publisher.kernel.canonical import format_ts, utc_now
from publisher.kernel.eventlog import append_event
from publisher.kernel.models import Snapshot
from publisher.kernel.refs import format_ref
from publisher.kernel.store import build_record
from publisher.runs import Run, init_run

__all__ = [
    "CORPUS",
    "Article",
    "RunFixture",
    "corpus_dir",
    "corpus_articles",
    "make_run",
    "make_upstream_run",
    "read_json",
    "write_json",
    "pmc_url",
]

SHARED_CORPUS = Path(__file__).resolve().parents[2] / "shared" / "corpus" / "evidence-inference"
"""The Evidence Inference corpus in the ``shared`` folder beside the repository."""
MINI_CORPUS = Path(__file__).resolve().parent / "fixtures" / "mini-corpus"
"""A tiny corpus in the same layout, written for these tests (synthetic texts)."""
CORPUS = SHARED_CORPUS if (SHARED_CORPUS / "spans.jsonl").is_file() else MINI_CORPUS
"""What runs are built from: the real articles where ``../shared`` is present, else the mini corpus,
so the reason-code attack tests run everywhere."""


def corpus_dir() -> Path:
    """The corpus folder (the real one, else the in-repo mini corpus)."""
    if not (CORPUS / "spans.jsonl").is_file():
        pytest.skip(f"no corpus: neither {SHARED_CORPUS} nor {MINI_CORPUS}")
    return CORPUS


@dataclass(frozen=True)
class CorpusArticle:
    """One corpus text and its annotated spans (start, end, excerpt, outcome, label)."""

    pmcid: str
    title: str
    text: str
    spans: tuple[dict[str, Any], ...]


@cache
def _all_spans() -> dict[str, list[dict[str, Any]]]:
    out: dict[str, list[dict[str, Any]]] = {}
    with open(CORPUS / "spans.jsonl", encoding="utf-8") as fh:
        for line in fh:
            entry = json.loads(line)
            out.setdefault("PMC" + entry["pmcid"], []).append(entry)
    return out


@cache
def corpus_articles(count: int) -> tuple[CorpusArticle, ...]:
    """The first ``count`` articles (PMCID order) with at least two distinct annotated spans."""
    corpus_dir()
    titles = {a["pmcid"]: a["title"] for a in json.loads((CORPUS / "articles.json").read_text("utf-8"))}
    out: list[CorpusArticle] = []
    for pmcid in sorted(_all_spans()):
        distinct: dict[tuple[int, int], dict[str, Any]] = {}
        for entry in _all_spans()[pmcid]:
            distinct.setdefault((entry["start"], entry["end"]), entry)
        if len(distinct) < 2:
            continue
        text = (CORPUS / "texts" / f"{pmcid}.txt").read_text(encoding="utf-8")
        out.append(CorpusArticle(pmcid, titles.get(pmcid, pmcid), text, tuple(distinct.values())[:3]))
        if len(out) == count:
            break
    return tuple(out)


def pmc_url(pmcid: str) -> str:
    """The URL the fixture pretends each article was fetched from."""
    return f"https://www.ncbi.nlm.nih.gov/pmc/articles/{pmcid}/"


def read_json(path: Path) -> Any:
    """Parse a JSON file."""
    return json.loads(path.read_text(encoding="utf-8"))


def write_json(path: Path, value: Any) -> None:
    """Write a JSON file (replacing a read-only one, as a person editing by hand would)."""
    if path.exists():
        path.chmod(0o644)
    path.write_text(json.dumps(value, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")


@dataclass
class Article:
    """One article of a fixture run: its snapshot, evidence id and corpus spans."""

    pmcid: str
    snapshot: Snapshot
    spans: tuple[dict[str, Any], ...]

    @property
    def source_id(self) -> str:
        return self.snapshot.source_id

    @property
    def evidence_id(self) -> str:
        return f"pmcid:{self.pmcid}"

    @property
    def text(self) -> str:
        return self.snapshot.text

    def span(self, index: int = 0, **overrides: Any) -> dict[str, Any]:
        """An agent span for corpus span ``index`` (claim, evidence id, source id, offsets, access)."""
        entry = self.spans[index]
        span = {
            "claim": f"{entry['outcome'].strip()}: {entry['label']}",
            "evidence_id": self.evidence_id,
            "source_id": self.source_id,
            "start": entry["start"],
            "end": entry["end"],
            "access": self.snapshot.access.value,
        }
        span.update(overrides)
        return span


@dataclass
class RunFixture:
    """A run over corpus texts, with paths to every file a test may break."""

    wiki: Path
    run: Run
    articles: list[Article]
    extractions: list[Path] = field(default_factory=list)
    appraisals: list[Path] = field(default_factory=list)

    @property
    def report(self) -> Path:
        return self.run.report_md

    def snapshot_file(self, index: int = 0) -> Path:
        return self.run.store.path_for(self.articles[index].source_id)

    def extraction(self, index: int = 0) -> dict[str, Any]:
        return dict(read_json(self.extractions[index]))

    def appraisal(self, index: int = 0) -> dict[str, Any]:
        return dict(read_json(self.appraisals[index]))

    def put_extraction(self, index: int, record: dict[str, Any]) -> None:
        write_json(self.extractions[index], record)

    def put_appraisal(self, index: int, record: dict[str, Any]) -> None:
        write_json(self.appraisals[index], record)

    def add_snapshot(
        self,
        text: str,
        *,
        url: str = "https://example.org/page",
        paper: dict[str, str | None] | None = None,
        access: str = "web",
        origin: str = "web",
        event: str | None = "fetch",
        fresh: bool = True,
    ) -> Snapshot:
        """Store one more snapshot and (optionally) log an event for it."""
        record = build_record(
            url=url,
            text=text,
            title=None,
            retrieved_at=format_ts(utc_now()),
            access=access,
            origin=origin,
            paper=paper,
        )
        snap, _ = self.run.store.put(record)
        if event is not None:
            append_event(
                self.run.events_path,
                type=event,
                source_id=snap.source_id,
                url=snap.url,
                fresh=fresh,
                sha256=snap.content_hash[7:],
            )
        return snap


def _extraction(article: Article) -> dict[str, Any]:
    first = article.spans[0]
    return {
        "schema_version": 1,
        "pmid": None,
        "evidence_id": article.evidence_id,
        "design": "randomized controlled trial",
        "n_total": None,
        "n_arms": [],
        "population": None,
        "intervention": first["intervention"],
        "comparator": first["comparator"],
        "outcomes": [
            {
                "name": entry["outcome"].strip(),
                "timepoint": None,
                "effect_measure": None,
                "effect": None,
                "ci_low": None,
                "ci_high": None,
                "p_value": 0.05,
                "direction": "unclear",
                "spans": [article.span(i, text=entry["excerpt"])],
            }
            for i, entry in enumerate(article.spans[1:], start=1)
        ],
        "funding": None,
        "coi": None,
        "limitations": None,
        "evidence_basis": "fulltext",
        "extractor_notes": None,
        "spans": [article.span(0)],
        "quotes": [],
    }


def _appraisal(article: Article) -> dict[str, Any]:
    return {
        "schema_version": 1,
        "pmid": None,
        "evidence_id": article.evidence_id,
        "tool": "RoB2",
        "domains": [
            {
                "domain": "Bias arising from the randomization process",
                "judgement": "low",
                "rationale": "stated in the methods",
                "spans": [article.span(0)],
            },
            {
                "domain": "Bias in selection of the reported result",
                "judgement": "unclear",
                "rationale": None,
                "spans": [],
            },
        ],
        "overall_judgement": "some concerns",
        "grade": None,
        "evidence_basis": "fulltext",
    }


def _report(articles: list[Article]) -> str:
    lines = ["# Findings", ""]
    notes = []
    for i, article in enumerate(articles):
        entry = article.spans[0]
        lines.append(f"In {article.pmcid}, {entry['outcome'].strip()} was {entry['label']}.[^a{i}]")
        lines.append(f"The trial is indexed in PubMed Central.[^pmc{i}] Its page was read.[^url{i}]")
        lines.append("")
        notes.append(f"[^a{i}]: {format_ref(article.source_id, entry['start'], entry['end'], entry['excerpt'])}")
        notes.append(f"[^pmc{i}]: PMCID {article.pmcid}.")
        notes.append(f"[^url{i}]: [{article.pmcid} at PMC]({pmc_url(article.pmcid)})")
    return "\n".join(lines + notes) + "\n"


def make_run(
    tmp_path: Path,
    articles: int = 2,
    *,
    gate: bool = False,
    slug: str = "corpus-run",
    report: bool = True,
    appraisals: bool = True,
) -> RunFixture:
    """A wiki with one fully valid run over ``articles`` corpus texts (all artifacts accepted)."""
    picked = corpus_articles(articles)
    if len(picked) < articles:
        pytest.skip(f"the corpus has only {len(picked)} usable articles")
    wiki = tmp_path / "wiki"
    wiki.mkdir()
    (wiki / "mkdocs.yml").write_text("site_name: test wiki\n", encoding="utf-8")
    run = init_run(wiki / "runs" / slug, slug, gate=gate)
    fixture = RunFixture(wiki=wiki, run=run, articles=[])
    for corpus_article in picked:
        text = corpus_article.text
        half = len(text) // 2
        record = build_record(
            url=pmc_url(corpus_article.pmcid),
            text=text,
            title=corpus_article.title,
            retrieved_at=format_ts(utc_now()),
            access="full_text",
            origin="pmc",
            paper={"pmid": None, "doi": None, "pmcid": corpus_article.pmcid},
            sections=[
                {"title": "First half", "start": 0, "end": half},
                {"title": "Second half", "start": half, "end": len(text)},
            ],
        )
        snap, _ = run.store.put(record)
        append_event(
            run.events_path,
            type="fetch",
            source_id=snap.source_id,
            url=snap.url,
            fresh=True,
            sha256=snap.content_hash[7:],
            detail="test fixture",
        )
        fixture.articles.append(Article(corpus_article.pmcid, snap, corpus_article.spans))
    for article in fixture.articles:
        path = run.extractions_dir / f"{article.pmcid}.json"
        write_json(path, _extraction(article))
        fixture.extractions.append(path)
        if appraisals:
            path = run.appraisals_dir / f"{article.pmcid}.json"
            write_json(path, _appraisal(article))
            fixture.appraisals.append(path)
    if report:
        run.report_md.write_text(_report(fixture.articles), encoding="utf-8")
    return fixture


def make_upstream_run(tmp_path: Path, articles: int = 1) -> RunFixture:
    """A run in the upstream v1 form: no ``run_slug``, no ``record_hash``, no ``prev``.

    The config carries a ``question`` (kept and shown); snapshots are unsealed; the event log is
    written line by line without the hash chain; the report cites papers by PMCID.
    """
    picked = corpus_articles(articles)
    wiki = tmp_path / "wiki"
    (wiki / "outputs" / "deep-research").mkdir(parents=True)
    (wiki / "mkdocs.yml").write_text("site_name: upstream\n", encoding="utf-8")
    folder = wiki / "outputs" / "deep-research" / "upstream-review"
    for sub in ("sources", "workspace/extractions", "workspace/appraisals", "outputs"):
        (folder / sub).mkdir(parents=True)
    now = format_ts(utc_now())
    config = {"schema_version": 1, "created_at": now, "question": "Does the intervention work?"}
    (folder / "config.json").write_text(json.dumps(config) + "\n", encoding="utf-8")
    run = Run(folder)
    fixture = RunFixture(wiki=wiki, run=run, articles=[])
    events = []
    for number, corpus_article in enumerate(picked, start=1):
        record = build_record(
            url=pmc_url(corpus_article.pmcid),
            text=corpus_article.text,
            title=corpus_article.title,
            retrieved_at=now,
            access="full_text",
            origin="pmc",
            paper={"pmid": None, "doi": None, "pmcid": corpus_article.pmcid},
        )
        del record["record_hash"]
        snap, _ = run.store.put(record)
        events.append(
            {
                "schema_version": 1,
                "event_id": f"ev-{number:04d}",
                "type": "fetch",
                "source_id": snap.source_id,
                "url": snap.url,
                "at": now,
                "fresh": True,
                "sha256": snap.content_hash[7:],
                "actor": "main",
                "detail": "pmc full text, http 200",
            }
        )
        fixture.articles.append(Article(corpus_article.pmcid, snap, corpus_article.spans))
    run.events_path.write_text("".join(json.dumps(e) + "\n" for e in events), encoding="utf-8")
    notes = []
    lines = ["# Review", ""]
    for i, article in enumerate(fixture.articles):
        extraction = _extraction(article)
        for outcome in extraction["outcomes"]:
            for span in outcome["spans"]:
                span.pop("text", None)
        path = run.extractions_dir / f"{article.pmcid}.json"
        write_json(path, extraction)
        fixture.extractions.append(path)
        lines.append(f"The trial {article.pmcid} reported its primary outcome.[^pmc-{i}]")
        notes.append(f"[^pmc-{i}]: PMCID {article.pmcid}.")
    run.report_md.write_text("\n".join([*lines, "", *notes]) + "\n", encoding="utf-8")
    return fixture
