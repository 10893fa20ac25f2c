"""The wiki check: every run and every concept of a wiki, through the one pipeline.

``publisher check``, ``promote`` and the build hook call :func:`check_wiki`. Every run goes
through :func:`~publisher.gate.pipeline.check_run` (:mod:`.runchecks`: on the workers of one pool
for the whole wiki, every snapshot read once, or in this process): the run is assembled now, and
its stored ``result.json`` must be exactly that assembly with a gate verdict other than ``fail``
(:func:`~publisher.gate.checks.publication.refusals`). Concepts are parsed while the runs are
checked (on the workers themselves when there are many), then checked against what each named
run accepts now (:mod:`.conceptcheck`); then the claims (:func:`check_claims`).

Findings that block publication land in :attr:`WikiCheck.findings`; what a run leaves unpublished
without blocking (unresolved artifacts with the gate off) becomes a notice. A wiki with neither
runs nor concepts has nothing to verify: that passes with a notice, so a fresh scaffold builds;
a ``concepts`` that is there but no real folder (a file, a FIFO, a link) is a finding, never that.
"""

from __future__ import annotations

import os
from collections import deque
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import Executor, Future
from functools import partial
from pathlib import Path

from ..kernel.checkids import CheckId
from ..kernel.errors import PublisherError
from ..kernel.findings import Finding
from ..kernel.locate import forget_normal_forms
from ..kernel.models import build_validators
from ..kernel.reasons import Reason
from ..parallel import Workers, cut_by_size, default_workers, fewer_collections, pool_pays, worker_pool
from ..runs import RUN_LAYOUTS, Run
from .claims.log import ASSESSMENTS_FILE, read_assessments
from .claims.missingness import LogCache
from .claims.provenance import admitted_index, check_concept_claims, log_findings
from .claims.warrant import WARRANTS_FILE, WarrantGuard, apply_warrants
from .conceptcheck import (
    check_concept,
    concept_folder,
    parse_concept_text,
    read_concept_file,
    read_concepts,
    render_ahead,
)
from .concepts import ConceptFrontMatter
from .discover import ConceptsFolderError, discover_concepts, discover_runs, inside
from .evidence import ConceptEvidence, RunEvidence, WikiCheck
from .notices import check_notices
from .policy import Policy
from .promoted import BlockCache
from .runchecks import check_runs, run_bytes

__all__ = ["check_wiki", "check_claims", "check_claims_text"]

_CONCEPTS_PER_TASK = 16
"""Concept files parsed per task when the concepts are parsed on the workers."""

_TASK_BYTES = 1 << 20
"""A task of concepts holds at least this many bytes of them (or :data:`_CONCEPTS_PER_TASK`)."""


def _concept_tasks(paths: Sequence[Path], workers: int) -> list[list[Path]]:
    """``paths`` in order, cut into the pool's tasks: at most :data:`_CONCEPTS_PER_TASK` concepts
    and, past :data:`_TASK_BYTES`, about a quarter of one worker's share of their bytes, so a wiki
    of a few large concepts keeps every worker busy to the end (a file that cannot be measured
    counts nothing; its reading reports it)."""
    sizes = []
    for path in paths:
        try:
            sizes.append(os.stat(path).st_size)
        except OSError:
            sizes.append(0)
    most = max(_TASK_BYTES, sum(sizes) // (4 * max(1, workers)))
    return cut_by_size(paths, sizes, most, _CONCEPTS_PER_TASK)


def _forked_pool(count: int) -> Executor:
    """The check's own pool, its workers started with the concept front matter's validator
    already built (inherited, not built again in every worker). Snapshots, event lines, configs,
    agent records and stored results are read by hand checks; their models only judge what those
    are unsure of, and are built where that happens."""
    build_validators((ConceptFrontMatter,))
    return worker_pool(count)


def check_wiki(
    wiki_root: Path,
    *,
    policy: Policy,
    runs: Sequence[Path] | None = None,
    concepts: Sequence[Path] | None = None,
    layouts: Iterable[str] = RUN_LAYOUTS,
    workers: Workers | None = None,
) -> WikiCheck:
    """Check the wiki's runs and concepts; ``runs``/``concepts`` narrow it (default: all of them).

    ``policy`` is the wiki's evidence options as the caller resolved them through MkDocs
    (:func:`publisher.site.lifecycle.policy.resolve_policy`; ``Policy.unsigned()`` for a caller that
    means it): there is no default. ``workers`` says where the
    work runs (:class:`~publisher.parallel.Workers`; default: a pool of every core when the wiki is
    large enough to pay for one).

    Runs a concept names are checked too, even outside the usual layouts. Never raises for bad
    evidence: every problem is a :class:`~publisher.kernel.findings.Finding`. A resource error
    (a disk that cannot be read) raises.
    """
    with fewer_collections():
        root = Path(wiki_root)
        return _check_wiki(root, policy, layouts, runs, concepts, workers or Workers())


def _concept_files(wiki_root: Path, out: list[Finding]) -> list[Path]:
    """The wiki's concept files; a ``concepts`` that is not a real folder (a file, a FIFO, a link
    of any kind) is one ``SCHEMA_ERROR`` finding naming what it is, never "no concepts"."""
    try:
        return discover_concepts(wiki_root)
    except ConceptsFolderError as exc:
        out.append(exc.finding())
        return []


def _check_wiki(
    wiki_root: Path,
    policy: Policy,
    layouts: Iterable[str],
    runs: Sequence[Path] | None,
    concepts: Sequence[Path] | None,
    on: Workers,
) -> WikiCheck:
    executor, workers, progress = on.executor, on.count, on.progress
    wiki = WikiCheck(wiki_root, policy)
    real_root = wiki_root.resolve()  # once: every run a concept names is resolved against it
    real = wiki.real_path
    run_paths = list(runs) if runs is not None else discover_runs(wiki_root, layouts, real)
    concept_findings: list[Finding] = []
    concept_paths = list(concepts) if concepts is not None else _concept_files(wiki_root, concept_findings)
    folders: dict[Path, str] = {}
    todo: deque[Callable[[], object]] = deque()
    ahead = BlockCache()

    def parse_at(path: Path) -> None:
        wiki.concepts.append(
            read_concept_file(path, wiki_root, concept_findings, concept_folder(path, wiki_root, folders))
        )

    def next_piece() -> None:
        if todo:
            todo.popleft()()

    # Many concepts are parsed on the workers, in tasks queued behind the runs' snapshots on the
    # same pool (they keep the workers busy while the last runs are checked here); else this
    # process parses one concept per snapshot check that comes back.
    many = len(concept_paths) >= 2 * _CONCEPTS_PER_TASK
    own_pool = None
    count = workers if workers is not None else default_workers()
    if workers is not None and workers < 1:
        raise ValueError("workers must be at least 1")
    if executor is None and count > 1 and (many or pool_pays(run_bytes(run_paths), count)):
        executor = own_pool = _forked_pool(count)
    try:
        parsing: list[Future[list[tuple[ConceptEvidence, list[Finding]]]]] = []

        def parse_on_workers(pool: Executor) -> None:
            for chunk in _concept_tasks(concept_paths, count):
                folder_rels = [concept_folder(p, wiki_root, folders) for p in chunk]
                parsing.append(
                    pool.submit(read_concepts, [os.fspath(p) for p in chunk], os.fspath(wiki_root), folder_rels)
                )

        if executor is not None and many:
            check_runs(run_paths, wiki, executor, progress, None, partial(parse_on_workers, executor), count)
        else:
            todo.extend(partial(parse_at, path) for path in concept_paths)
            check_runs(run_paths, wiki, executor, progress, next_piece, workers=count)
        while todo:
            next_piece()
        resolved: dict[str, Path | None] = {}  # a run a concept names, by the path it is named by

        def target_of(rel: str) -> Path | None:
            if rel not in resolved:
                resolved[rel] = inside(wiki_root, rel, real_root)
            return resolved[rel]

        # While the workers parse the later concepts, this process renders the promoted blocks of
        # those that came back (the costliest part of checking a concept, here): kept for the
        # checks below if no run is checked meanwhile, which is when the blocks would be the same.
        checked_runs: dict[Path, RunEvidence] = {}
        for ev in wiki.runs if parsing else ():
            checked_runs.setdefault(real(ev.run.path), ev)

        def checked_run(rel: str) -> RunEvidence | None:
            target = target_of(rel)
            return checked_runs.get(target) if target is not None else None

        for future in parsing:
            for ce, found in future.result():
                wiki.concepts.append(ce)
                concept_findings.extend(found)
                render_ahead(ce, wiki, checked_run, ahead)
        # A run that only a concept names (outside the usual layouts) is checked once the
        # concepts are known.
        known = {real(p) for p in run_paths}
        named: list[Path] = []
        for ce in wiki.concepts:
            for entry in ce.doc.front.runs if ce.doc else ():
                target = target_of(entry.path)
                # A run without result.json is checked too: C-ASSEMBLER names it absent, with the
                # command that writes it, rather than the concept naming a run it cannot find.
                if target is None or target in known:
                    continue
                run = Run(target)
                if os.path.lexists(run.result_path) or os.path.lexists(run.config_path):
                    known.add(target)
                    named.append(target)
        if named:
            if executor is None and pool_pays(run_bytes(named), count):
                executor = own_pool = _forked_pool(count)
            check_runs(named, wiki, executor, progress, None, workers=count)
    finally:
        if own_pool is not None:
            own_pool.shutdown(wait=True, cancel_futures=True)
    wiki.findings.extend(concept_findings)

    slugs: dict[str, str] = {}
    for ev in wiki.runs:
        if ev.slug in slugs:
            wiki.findings.append(
                Finding(
                    Reason.SCHEMA_ERROR, ev.rel, f"run slug {ev.slug!r} is also used by {slugs[ev.slug]}", run=ev.rel
                )
            )
        slugs.setdefault(ev.slug, ev.rel)

    by_path: dict[Path, RunEvidence] = {}
    for ev in wiki.runs:
        by_path.setdefault(real(ev.run.path), ev)
    wiki.forget_real_paths()  # resolved for this check only

    def run_for(rel: str) -> RunEvidence | None:
        target = target_of(rel)
        return by_path.get(target) if target is not None else None

    # Concepts naming the same runs share one rendering of their block; those rendered ahead
    # stand unless another run has been checked since (its excerpts could change a block).
    blocks = ahead if not named else BlockCache()
    for ce in wiki.concepts:
        check_concept(ce, wiki, run_for, blocks=blocks)
    check_claims(wiki, wiki.concepts)
    check_notices(wiki)
    forget_normal_forms()  # the reviews' normal forms: none stays resident through the site's build
    if not wiki.runs and not wiki.concepts and not wiki.findings:
        wiki.notices.append("no run results and no concepts: nothing to verify")
    return wiki


def check_claims(wiki: WikiCheck, concepts: Sequence[ConceptEvidence]) -> None:
    """The ``C-CLAIM`` check of ``concepts`` (section 14): findings to ``wiki.findings``, each
    claim's state (its assessment entry, its provenance now, its warrant: ``C-WARRANT``, section
    17) to ``wiki.claims``.

    The assessment log is read when it exists or a concept has claims; a torn or edited log is a
    finding even when no claim names it.
    """
    log_path = wiki.wiki_root / ASSESSMENTS_FILE
    with_claims = [ce for ce in concepts if ce.doc is not None and ce.doc.front.claims]
    if not with_claims and not os.path.lexists(log_path):
        if os.path.lexists(wiki.wiki_root / WARRANTS_FILE):
            apply_warrants(wiki, ())  # a warrant log that does not verify is a finding even now
        return
    try:
        state = read_assessments(wiki.wiki_root)
    except PublisherError as exc:  # a link, a folder or a FIFO in the log's place
        wiki.findings.append(Finding(None, ASSESSMENTS_FILE, exc.message, check=CheckId.CLAIM, field="ASSESSMENT_LOG"))
        return
    keys = wiki.policy.trusted_keys  # the policy the caller resolved, never the raw YAML
    wiki.findings.extend(log_findings(state, keys))
    entries = {entry.assessment_id: entry for entry in state.events}
    admitted = admitted_index(state.events)
    logs: LogCache = {}
    runs = {ev.slug: ev for ev in wiki.runs}
    before = len(wiki.claims)
    for ce in with_claims:
        wiki.claims.extend(check_concept_claims(wiki, ce, entries, keys, state.intact, logs, runs, admitted))
    apply_warrants(wiki, wiki.claims[before:], logs)


def check_claims_text(wiki: WikiCheck, text: str, rel: str, slug: str) -> list[Finding]:
    """The ``C-CLAIM`` findings of a concept not yet on disk (promotion checks what it writes).

    ``require_warrant`` is a condition of publication, not of promotion: a claim awaiting its
    review never blocks promoting new evidence into its concept (the build still refuses it)."""
    before, claims = len(wiki.findings), len(wiki.claims)
    parsed: list[Finding] = []
    check_claims(wiki, [parse_concept_text(text, rel, slug, wiki.wiki_root, parsed)])
    found = [f for f in wiki.findings[before:] if f.field != WarrantGuard.WARRANT_REQUIRED.value]
    del wiki.findings[before:]
    del wiki.claims[claims:]
    return found
