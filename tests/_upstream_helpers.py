"""Run directories written the way the upstream literature-review kit writes them.

Nothing here goes through this project's store or event log: the files are laid out byte for byte
in the upstream on-disk form, so that the tests judge what the upstream kit really hands over.

- the run sits at ``<wiki>/outputs/deep-research/<slug>/`` (the wiki need not hold ``mkdocs.yml``);
- ``config.json`` has no ``run_slug`` (the folder is the slug) and carries a ``question``;
- snapshots are indented JSON in the upstream field order, without ``record_hash``;
- events are one JSON object a line in the upstream field order, without ``prev``;
- ``corpus.jsonl`` lists the papers the run considered, with their ``source_ids``.

The texts are invented for these tests.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

__all__ = ["TRIAL", "PAPER", "EVIDENCE_ID", "UpstreamRun", "upstream_run", "corpus_entry"]

TRIAL = (
    "Methods. Ninety-six night-shift nurses were randomised to a morning light box or to a dim red "
    "lamp for four weeks. Results. Sleep-onset latency fell by 7.9 minutes more with the light box "
    "(95% CI 3.1 to 12.6). No serious adverse events occurred."
)
PAPER = {"pmid": "31415926", "doi": "10.5555/upstream.trial", "pmcid": "PMC2718281"}
EVIDENCE_ID = "pmid:31415926"
CREATED = "2026-03-02T09:00:00Z"
FETCHED = "2026-03-02T09:05:00Z"


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def corpus_entry(evidence_id: str = EVIDENCE_ID, paper: dict[str, str] | None = None, **extra: Any) -> dict[str, Any]:
    """One upstream ``corpus.jsonl`` record of an included paper."""
    ids = PAPER if paper is None else paper
    record = {
        "evidence_id": evidence_id,
        "status": "included",
        "title": "Morning light for night-shift nurses: a randomised trial",
        "pmid": ids.get("pmid"),
        "doi": ids.get("doi"),
        "pmcid": ids.get("pmcid"),
        "authors": [{"family": "Okafor", "given": "Ada", "initials": "A"}],
        "journal": "Journal of Invented Trials",
        "publication_date": "2025-11-01",
        "abstract": "A randomised trial of morning light in night-shift nurses.",
        "basis": "full_text",
    }
    record.update(extra)
    return record


@dataclass
class UpstreamRun:
    """One upstream-shaped run directory and the writers for its files."""

    wiki: Path
    path: Path
    events: list[dict[str, Any]] = field(default_factory=list)

    @property
    def outputs(self) -> Path:
        return self.path / "outputs"

    def write_json(self, relative: str, value: Any) -> Path:
        target = self.path / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        if target.exists():
            target.chmod(0o644)
        target.write_text(json.dumps(value, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
        return target

    def snapshot(
        self,
        text: str = TRIAL,
        *,
        url: str = "https://www.ncbi.nlm.nih.gov/pmc/articles/PMC2718281/",
        access: str = "full_text",
        origin: str = "pmc",
        paper: dict[str, str | None] | None = PAPER,
        asset: dict[str, Any] | None = None,
        event: str | None = "fetch",
        fresh: bool = True,
    ) -> str:
        """Write a snapshot (upstream field order, indented, no ``record_hash``) and log its event."""
        body = text.encode("utf-8")
        source_id = "src-" + _sha(url.encode("utf-8") + b"\x00" + body)
        record = {
            "schema_version": 1,
            "source_id": source_id,
            "content_hash": "sha256:" + _sha(body),
            "url": url,
            "title": "Morning light for night-shift nurses",
            "retrieved_at": FETCHED,
            "access": access,
            "paper": None if paper is None else {k: paper.get(k) for k in ("pmid", "doi", "pmcid")},
            "origin": origin,
            "asset": asset,
            "text": text,
        }
        self.write_json(f"sources/{source_id}.json", record)
        if event is not None:
            digest = asset["sha256"] if event == "local_pdf" and asset else _sha(body)
            self.log(event, source_id, url, fresh=fresh, sha256=digest)
        return source_id

    def log(self, kind: str, source_id: str, url: str, *, fresh: bool, sha256: str) -> None:
        """Append one event line in the upstream form (no ``prev``)."""
        self.events.append(
            {
                "schema_version": 1,
                "event_id": f"ev-{len(self.events) + 1:04d}",
                "type": kind,
                "source_id": source_id,
                "url": url,
                "at": FETCHED,
                "fresh": fresh and kind in ("fetch", "local_pdf"),
                "sha256": sha256,
                "actor": "main",
                "detail": "upstream test",
            }
        )
        lines = "".join(json.dumps(e, ensure_ascii=False) + "\n" for e in self.events)
        (self.path / "events.jsonl").write_text(lines, encoding="utf-8")

    def span(self, source_id: str, phrase: str, text: str = TRIAL, **extra: Any) -> dict[str, Any]:
        """An upstream span over the first occurrence of ``phrase``."""
        start = text.index(phrase)
        span = {"claim": f"The trial reports: {phrase[:40]}", "source_id": source_id, "start": start}
        span["end"] = start + len(phrase)
        span.update(extra)
        return span

    def extraction(self, spans: list[dict[str, Any]], name: str = "pmid-31415926", **fields: Any) -> Path:
        """An upstream extraction record (evidence id, the spans, ``quotes: []`` unless given)."""
        record: dict[str, Any] = {"schema_version": 1, "evidence_id": EVIDENCE_ID, "spans": spans, "quotes": []}
        record.update(fields)
        return self.write_json(f"workspace/extractions/{name}.json", record)

    def corpus(self, *records: dict[str, Any]) -> None:
        lines = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records)
        (self.path / "corpus.jsonl").write_text(lines, encoding="utf-8")

    def report(self, body: str, notes: list[str]) -> Path:
        target = self.outputs / "report.md"
        target.write_text(f"# Morning light review\n\n{body}\n\n## References\n\n" + "\n".join(notes) + "\n", "utf-8")
        return target


def upstream_run(
    tmp_path: Path, *, slug: str = "light-review", mkdocs: bool = False, gate: bool = False
) -> UpstreamRun:
    """An empty upstream run at ``<wiki>/outputs/deep-research/<slug>/`` (config, folders, no sources)."""
    wiki = tmp_path / "wiki"
    path = wiki / "outputs" / "deep-research" / slug
    for sub in ("sources", "workspace/extractions", "workspace/appraisals", "outputs"):
        (path / sub).mkdir(parents=True)
    (wiki / "assets" / "papers").mkdir(parents=True)
    if mkdocs:
        (wiki / "mkdocs.yml").write_text("site_name: upstream wiki\n", encoding="utf-8")
    run = UpstreamRun(wiki, path)
    config = {
        "schema_version": 1,
        "created_at": CREATED,
        "question": "Does morning light shorten sleep onset in night-shift workers?",
        "gates": {"evidence_kernel": gate},
    }
    run.write_json("config.json", config)
    return run
