"""Synthetic evidence wikis of a chosen size, deterministic by seed, written through the kernel.

Every file is real: snapshots go through ``build_record`` and ``SnapshotStore.put``, events
through ``append_event`` (each source fetched fresh), extraction records carry spans whose
offsets index the snapshot texts, ``outputs/result.json`` is written by the real assembler when it
is available, and concept files quote the same spans in the footnote grammar of
:mod:`publisher.refs`. Texts mix Latin with accents, Greek, CJK and symbols; a few contain
characters beyond the BMP, as real articles do.

Only timestamps (run creation, fetch times) depend on the clock; texts, URLs and therefore source
ids depend on the seed alone.

    python benchmarks/generate.py /tmp/wiki --total-mb 100 --seed 1
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import random
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from publisher.acquire.signing import load_signer
from publisher.gate.inputs import RunOptions
from publisher.kernel.canonical import format_ts, utc_now
from publisher.kernel.eventlog import append_event
from publisher.kernel.refs import format_ref
from publisher.kernel.store import build_record
from publisher.runs import init_run
from publisher.site.lifecycle.policy import resolve_policy

__all__ = ["WikiSpec", "WikiSummary", "generate_wiki", "paragraphs", "main"]

_WORDS = (
    "patients randomised trial outcome baseline follow-up placebo intervention cohort analysis "
    "adverse events dose weeks months significant difference confidence interval ratio risk "
    "étude randomisée résultats efficacité sécurité traitement groupe témoin analyse médiane "
    "Behandlung Studie Ergebnisse Patientinnen Wirksamkeit Übersicht Größe Häufigkeit "
    "estudio ensayo niños años señal población "
    "治疗 研究 患者 结果 随机 对照 "
    "α β γ δ μg ≤ ≥ ± × → – — “quoted” ‘single’ … ° ‰ µmol/L "
    "HbA1c IL-6 TNF-α SMD −0.41 95 % CI p < 0.001 n = 120"
).split()
_RARE = ("𝛽-cell", "𝑝-value", "🧪", "𝔼[X]")
_SECTION_TITLES = ("Abstract", "Introduction", "Methods", "Results", "Discussion", "Conclusions")


def paragraphs(seed: int, count: int = 400) -> list[str]:
    """A pool of pseudo-random paragraphs (deterministic by ``seed``)."""
    rng = random.Random(seed)
    pool = []
    for _ in range(count):
        sentences = []
        for _ in range(rng.randint(2, 7)):
            words = rng.choices(_WORDS, k=rng.randint(6, 24))
            sentence = " ".join(words)
            sentences.append(sentence[0].upper() + sentence[1:] + ".")
        pool.append(" ".join(sentences))
    return pool


@dataclass(frozen=True)
class WikiSpec:
    """What to generate. Sizes are UTF-8 bytes of text, snapshot sizes log-uniform in range."""

    root: Path
    seed: int = 1
    total_bytes: int = 8 * 1024 * 1024
    min_bytes: int = 4 * 1024
    max_bytes: int = 2 * 1024 * 1024
    sources_per_run: int = 200
    spans_per_source: int = 3
    records_per_source: int = 1
    """Extraction records each source's spans are spread over (many small records per source)."""
    sources_per_concept: int = 10
    assemble: bool = True
    pdf_every: int = 0
    """Every n-th source is a user-supplied PDF whose asset file (1.5x its text) the wiki stores."""
    signing_key: Path | None = None
    """A private key (PEM): every acquisition event is signed with it, for its run."""


@dataclass
class WikiSummary:
    """What was generated."""

    root: Path
    runs: list[Path] = field(default_factory=list)
    sources: int = 0
    text_bytes: int = 0
    file_bytes: int = 0
    spans: int = 0
    assets: int = 0
    asset_bytes: int = 0
    concepts: int = 0
    assembled: int = 0
    seconds: float = 0.0


def _text(rng: random.Random, pool: list[str], target: int, rare: bool) -> str:
    parts: list[str] = []
    size = 0
    while size < target:
        para = pool[rng.randrange(len(pool))]
        if rare and rng.random() < 0.05:
            para = para + " " + rng.choice(_RARE)
        parts.append(para)
        size += len(para.encode("utf-8")) + 2
    return "\n\n".join(parts)


def _sections(text: str) -> list[dict[str, object]]:
    n = len(text)
    cuts = [0] + [n * i // len(_SECTION_TITLES) for i in range(1, len(_SECTION_TITLES))] + [n]
    out: list[dict[str, object]] = [{"title": "Article", "start": 0, "end": n}]
    for title, start, end in zip(_SECTION_TITLES, cuts, cuts[1:], strict=False):
        out.append({"title": title, "start": start, "end": end})
    return out


def _pages(text: str, per_page: int = 3000) -> list[dict[str, object]]:
    n = len(text)
    return [{"page": i + 1, "start": s, "end": min(s + per_page, n)} for i, s in enumerate(range(0, n, per_page))]


def _spans(rng: random.Random, text: str, count: int) -> list[tuple[int, int]]:
    n = len(text)
    out = []
    for _ in range(count):
        length = min(n, rng.randint(60, 400))
        start = rng.randrange(0, n - length + 1)
        out.append((start, start + length))
    return out


def _sizes(rng: random.Random, spec: WikiSpec) -> list[int]:
    lo, hi = math.log(spec.min_bytes), math.log(max(spec.min_bytes, spec.max_bytes))
    sizes = []
    total = 0
    while total < spec.total_bytes:
        size = int(math.exp(rng.uniform(lo, hi)))
        sizes.append(size)
        total += size
    return sizes


def _write(path: Path, data: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(data, encoding="utf-8")


def _write_bytes(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)


def _concept(slug: str, run_slugs: list[str], quotes: list[tuple[str, int, int, str]]) -> str:
    lines = [
        "---",
        "schema_version: 1",
        f"title: Synthetic concept {slug}",
        f"concept: {slug}",
        "runs:",
    ]
    for run_slug in run_slugs:  # every run a quote comes from (a concept may span small runs)
        lines += [f"- run: {run_slug}", f"  path: runs/{run_slug}", f"  promoted_at: '{format_ts(utc_now())}'"]
    lines += [
        "claims: []",
        "---",
        f"# Synthetic concept {slug}",
        "",
        "Prose written by the maintainer.",
        "",
        "<!-- publisher:generated:begin -->",
    ]
    for i, (_sid, _start, _end, _excerpt) in enumerate(quotes, 1):
        lines.append(f"- Finding {i}.[^e{i}]")
    lines.append("")
    for i, (sid, start, end, excerpt) in enumerate(quotes, 1):
        lines.append(f"[^e{i}]: {format_ref(sid, start, end, excerpt)}")
    lines.append("<!-- publisher:generated:end -->")
    return "\n".join(lines) + "\n"


def generate_wiki(spec: WikiSpec, *, log: bool = False) -> WikiSummary:
    """Write a wiki under ``spec.root`` (which must not exist yet) and say what was written."""
    began = time.perf_counter()
    root = spec.root
    if root.exists():
        raise SystemExit(f"generate: {root} already exists; pick a new folder")
    rng = random.Random(spec.seed)
    pool = paragraphs(spec.seed)
    sizes = _sizes(rng, spec)
    summary = WikiSummary(root=root)
    _write(root / "mkdocs.yml", "site_name: Synthetic evidence wiki\ndocs_dir: docs\n")
    _write(root / "docs" / "index.md", "# Synthetic evidence wiki\n")
    run = None
    concept_quotes: list[tuple[str, int, int, str]] = []
    concept_runs: list[str] = []
    for index, size in enumerate(sizes):
        if index % spec.sources_per_run == 0:
            run = init_run(root / "runs" / f"run-{len(summary.runs) + 1:04d}", f"run-{len(summary.runs) + 1:04d}")
            summary.runs.append(run.path)
        if run is None:  # unreachable: the first index opens a run
            raise RuntimeError("no run")
        text = _text(rng, pool, size, rare=rng.random() < 0.1)
        pmid = str(10_000_000 + spec.seed * 1_000_000 + index)
        kind = index % 3
        url = f"https://example.org/s{spec.seed}/article/{index}"
        asset = None
        if spec.pdf_every and index % spec.pdf_every == 0:
            data = b"%PDF-1.4\n" + rng.randbytes(len(text.encode("utf-8")) * 3 // 2)
            digest = hashlib.sha256(data).hexdigest()
            asset = {"path": f"assets/papers/{digest}.pdf", "sha256": digest, "bytes": len(data)}
            _write_bytes(root / asset["path"], data)
            url = f"file:///papers/{digest}.pdf"
            summary.assets += 1
            summary.asset_bytes += len(data)
        record = build_record(
            url=url,
            text=text,
            title=f"Synthetic article {index} — étude {pmid}",
            retrieved_at=format_ts(utc_now()),
            access="full_text",
            origin="user-supplied-pdf" if asset else ("pmc", "oa-pdf", "europepmc")[kind],
            paper={"pmid": pmid, "doi": f"10.5555/syn.{index}", "pmcid": None},
            sections=_sections(text) if kind == 0 else None,
            pages=_pages(text) if kind == 1 or asset else None,
            asset=asset,
        )
        snap, _ = run.store.put(record)
        append_event(
            run.events_path,
            type="local_pdf" if asset else "fetch",
            source_id=snap.source_id,
            url=url,
            fresh=True,
            sha256=asset["sha256"] if asset else snap.content_hash[7:],
            detail=f"synthetic {len(text)} code points",
            record_hash=snap.record_hash,
            merkle_root=snap.merkle_root,
            merkle_size=snap.merkle_size,
            signer=load_signer(spec.signing_key, run.name()) if spec.signing_key else None,
        )
        spans = _spans(rng, text, spec.spans_per_source)
        per = -(-len(spans) // max(1, spec.records_per_source))
        for part, at in enumerate(range(0, len(spans), per)):
            # One record per paper id; the further records of a source are web evidence on it.
            evidence_id = f"pmid:{pmid}" if part == 0 else f"web:synthetic-{index}-part-{part}"
            extraction = {
                "schema_version": 1,
                "pmid": pmid,
                "evidence_id": evidence_id,
                "design": "RCT",
                "n_total": 100 + index,
                "n_arms": [2],
                "population": "synthetic participants",
                "intervention": "synthetic intervention",
                "comparator": "placebo",
                "outcomes": [],
                "funding": None,
                "coi": None,
                "limitations": None,
                "evidence_basis": "fulltext",
                "spans": [
                    {
                        "claim": f"claim {k} of source {index}",
                        "evidence_id": evidence_id,
                        "source_id": snap.source_id,
                        "start": start,
                        "end": end,
                        "access": "full_text",
                    }
                    for k, (start, end) in enumerate(spans[at : at + per], at)
                ],
            }
            name = f"pmid-{pmid}.json" if part == 0 else f"pmid-{pmid}-{part}.json"
            _write(run.extractions_dir / name, json.dumps(extraction, ensure_ascii=False, indent=1))
        start, end = spans[0]
        concept_quotes.append((snap.source_id, start, end, text[start:end]))
        if run.path.name not in concept_runs:
            concept_runs.append(run.path.name)
        if len(concept_quotes) >= spec.sources_per_concept or index == len(sizes) - 1:
            slug = f"concept-{summary.concepts + 1:05d}"
            _write(root / "concepts" / f"{slug}.md", _concept(slug, concept_runs, concept_quotes))
            summary.concepts += 1
            concept_quotes, concept_runs = [], []
        summary.sources += 1
        summary.text_bytes += len(text.encode("utf-8"))
        summary.file_bytes += run.store.path_for(snap.source_id).stat().st_size
        summary.spans += len(spans)
        if log and summary.sources % 100 == 0:
            print(f"generate: {summary.sources} sources, {summary.file_bytes / 1e6:.0f} MB", file=sys.stderr)
    if spec.assemble:
        summary.assembled = _assemble_all(summary.runs, root)
        if summary.assembled:
            _promote_blocks(root)
    summary.seconds = time.perf_counter() - began
    return summary


def _promote_blocks(root: Path) -> None:
    """Each concept's promoted block rewritten as promotion writes it from the assembled runs (the
    check binds the block to exactly that, ``C-PROMOTED``: the hand-made one above only places the
    markers, the front matter and the maintainer's prose)."""
    from publisher.site.lifecycle.policy import resolve_policy
    from publisher.wiki.check import check_wiki
    from publisher.wiki.concepts import dump_concept, with_generated
    from publisher.wiki.promoted import render_block

    wiki = check_wiki(root, policy=resolve_policy(root))
    by_rel = {ev.rel: ev for ev in wiki.runs}
    for ce in wiki.concepts:
        if ce.doc is None:
            continue
        runs = [by_rel[entry.path] for entry in ce.doc.front.runs if entry.path in by_rel]
        block = render_block(runs, wiki).text
        ce.path.write_text(
            dump_concept(ce.doc.front, with_generated(ce.doc.body, block, where=ce.rel)), encoding="utf-8"
        )


def _assemble_all(runs: list[Path], root: Path) -> int:
    """Write each run's result.json with the real assembler, when the installed product has one."""
    try:
        from publisher.gate.assemble import assemble_run
        from publisher.runs import Run
    except ImportError:
        return 0
    done = 0
    for path in runs:
        assemble_run(Run(path), RunOptions(resolve_policy(root).trusted_keys, wiki_root=root))
        done += 1
    return done


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("root", type=Path, help="folder to create (must not exist)")
    parser.add_argument("--total-mb", type=float, default=8.0, help="total text size in MB (default 8)")
    parser.add_argument("--min-kb", type=float, default=4.0, help="smallest snapshot text in KB")
    parser.add_argument("--max-kb", type=float, default=2048.0, help="largest snapshot text in KB")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--sources-per-run", type=int, default=200)
    parser.add_argument("--spans-per-source", type=int, default=3)
    parser.add_argument("--records-per-source", type=int, default=1, help="extraction records per source")
    parser.add_argument("--no-assemble", action="store_true", help="skip writing result.json")
    parser.add_argument("--pdf-every", type=int, default=0, help="every n-th source a stored PDF (0: none)")
    args = parser.parse_args(argv)
    spec = WikiSpec(
        root=args.root,
        seed=args.seed,
        total_bytes=int(args.total_mb * 1e6),
        min_bytes=int(args.min_kb * 1024),
        max_bytes=int(args.max_kb * 1024),
        sources_per_run=args.sources_per_run,
        spans_per_source=args.spans_per_source,
        records_per_source=args.records_per_source,
        assemble=not args.no_assemble,
        pdf_every=args.pdf_every,
    )
    s = generate_wiki(spec, log=True)
    print(
        f"{s.root}: {len(s.runs)} runs, {s.sources} sources, {s.file_bytes / 1e6:.1f} MB of snapshot files, "
        f"{s.assets} PDF assets ({s.asset_bytes / 1e6:.1f} MB), "
        f"{s.spans} spans, {s.concepts} concepts, {s.assembled} results assembled, {s.seconds:.1f} s"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
