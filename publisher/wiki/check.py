"""The wiki check: every run and every concept of a wiki, through the one pipeline.

``publisher check``, ``promote`` and the build hook call :func:`check_wiki`. For each run it loads
the inputs, declares every snapshot and span the run's checks will ask for, verifies all of them
for all runs in ONE parallel pass (:func:`~publisher.parallel.load_all`), and then runs
:func:`~publisher.gate.pipeline.check_run` on each: the run is assembled now, and its stored
``result.json`` must be exactly that assembly with a gate verdict other than ``fail``
(:meth:`~publisher.gate.pipeline.RunCheck.refusals`). Concepts are parsed while the workers check
snapshots (on the workers themselves when there are many), then checked against what each named
run accepts now (:mod:`.conceptcheck`).

Findings that block publication land in :attr:`WikiCheck.findings`; what a run leaves unpublished
without blocking (unresolved artifacts with the gate off) becomes a notice. A wiki with neither
runs nor concepts has nothing to verify: that passes with a notice, so a fresh scaffold builds.
"""

from __future__ import annotations

import os
from collections import deque
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import Executor, Future
from functools import partial
from pathlib import Path

from ..gate.inputs import RunInputs, load_inputs
from ..gate.pipeline import Prepared, check_run, prepare
from ..gate.result import Result
from ..kernel.errors import PublisherError
from ..kernel.findings import Finding
from ..kernel.reasons import Reason
from ..parallel import CheckedSnapshots, ProgressFn, default_workers, load_all, worker_pool
from ..runs import RUN_LAYOUTS, Run
from .conceptcheck import check_concept, concept_folder, read_concept_file, read_concepts
from .discover import discover, inside, relative
from .evidence import ConceptEvidence, RunEvidence, SourceInfo, WikiCheck

__all__ = ["check_wiki"]

_CONCEPTS_PER_TASK = 16
"""Concept files parsed per task when the concepts are parsed on the workers."""


class _Loaded:
    """A run between loading and checking: its inputs, reader and stored result."""

    def __init__(self, ev: RunEvidence, inputs: RunInputs, reader: CheckedSnapshots, prepared: Prepared) -> None:
        self.ev = ev
        self.inputs = inputs
        self.reader = reader
        self.prepared = prepared


def _load(path: Path, wiki: WikiCheck) -> tuple[RunEvidence, _Loaded | None]:
    """Read one run's inputs and declare its snapshots; a run that cannot be read is a finding."""
    run = Run(path)
    rel = relative(path, wiki.wiki_root)
    ev = RunEvidence(run, rel, path.name, {})
    try:
        inputs = load_inputs(run, wiki_root=wiki.wiki_root)
    except PublisherError as exc:
        if exc.reason is None:
            raise  # the machine failed (a file that cannot be read): an error, not a finding
        file = relative(Path(exc.context["path"]), wiki.wiki_root) if "path" in exc.context else f"{rel}/config.json"
        wiki.findings.append(
            Finding(exc.reason or Reason.SCHEMA_ERROR, file, f"{exc.message}; the run cannot be assembled", run=rel)
        )
        return ev, None
    ev.slug = inputs.slug
    ev.config = inputs.config.model_dump(mode="json")
    reader = CheckedSnapshots(run.sources_dir, assets_root=wiki.wiki_root)
    return ev, _Loaded(ev, inputs, reader, prepare(inputs, reader))


def _finish(loaded: _Loaded, wiki: WikiCheck) -> None:
    """Check one loaded run and index what it accepts now."""
    ev = loaded.ev
    rc = check_run(ev.run, label=ev.rel, inputs=loaded.inputs, reader=loaded.reader, prepared=loaded.prepared)
    ev.check = rc
    ev.events = list(rc.assembly.log.events)
    refusals = rc.refusals()
    wiki.findings.extend(refusals)
    ev.result = Result.model_validate(rc.result)
    unresolved = rc.result["counts"]["unresolved"]
    if unresolved and not refusals:
        wiki.notices.append(f"{ev.rel}: {unresolved} unresolved artifact(s) not published (gate off)")
    reader = loaded.reader
    for artifact in ev.result.accepted:
        for sid in artifact.source_ids:
            info = wiki.sources.get(sid)
            if info is None:
                info = wiki.sources[sid] = SourceInfo(reader.get(sid), ev.run.sources_dir)
            if ev.slug not in info.holders:
                info.holders.append(ev.slug)
        for index, claim in enumerate(artifact.claims):
            key = (claim.source_id, claim.start, claim.end)
            ev.accepted.setdefault(key, []).append((artifact.artifact_id, index))
            wiki.excerpts[key] = claim.excerpt
            wiki.sources[claim.source_id].spans.add((claim.start, claim.end))


def _check_runs(
    paths: Sequence[Path],
    wiki: WikiCheck,
    executor: Executor | None,
    workers: int | None,
    progress: ProgressFn | None,
    meanwhile: Callable[[], object] | None,
) -> None:
    loaded = []
    for path in paths:
        ev, ready = _load(path, wiki)
        wiki.runs.append(ev)
        if ready is not None:
            loaded.append(ready)
    load_all(
        [item.reader for item in loaded],
        executor=executor,
        workers=workers,
        progress=progress,
        meanwhile=meanwhile,
        assets_root=wiki.wiki_root,
    )
    for item in loaded:
        _finish(item, wiki)


def check_wiki(
    wiki_root: Path,
    *,
    layouts: Iterable[str] = RUN_LAYOUTS,
    runs: Sequence[Path] | None = None,
    concepts: Sequence[Path] | None = None,
    executor: Executor | None = None,
    workers: int | None = None,
    progress: ProgressFn | None = None,
) -> WikiCheck:
    """Check the wiki's runs and concepts; ``runs``/``concepts`` narrow it (default: all of them).

    Runs a concept names are checked too, even outside the usual layouts. Never raises for bad
    evidence: every problem is a :class:`~publisher.kernel.findings.Finding`. A resource error
    (a disk that cannot be read) raises. ``executor``, ``workers`` and ``progress`` go to
    :func:`publisher.parallel.verify_many`.
    """
    wiki_root = Path(wiki_root)
    wiki = WikiCheck(wiki_root)
    found_runs, found_concepts = discover(wiki_root, layouts)
    run_paths = list(runs) if runs is not None else found_runs
    concept_paths = list(concepts if concepts is not None else found_concepts)
    concept_findings: list[Finding] = []
    folders: dict[Path, str] = {}
    todo: deque[Callable[[], object]] = deque()

    def parse_at(path: Path) -> None:
        wiki.concepts.append(
            read_concept_file(path, wiki_root, concept_findings, concept_folder(path, wiki_root, folders))
        )

    def next_piece() -> None:
        if todo:
            todo.popleft()()

    # Many concepts are parsed on the workers, in tasks queued before the snapshot checks, on the
    # same pool; else this process parses one concept per snapshot check that comes back.
    many = len(concept_paths) >= 2 * _CONCEPTS_PER_TASK
    own_pool = None
    if executor is None and many:
        count = workers if workers is not None else default_workers()
        if count > 1:
            executor = own_pool = worker_pool(count)
    try:
        parsing: list[Future[list[tuple[ConceptEvidence, list[Finding]]]]] = []
        if executor is not None and many:
            for at in range(0, len(concept_paths), _CONCEPTS_PER_TASK):
                chunk = concept_paths[at : at + _CONCEPTS_PER_TASK]
                folder_rels = [concept_folder(p, wiki_root, folders) for p in chunk]
                parsing.append(
                    executor.submit(read_concepts, [os.fspath(p) for p in chunk], os.fspath(wiki_root), folder_rels)
                )
        else:
            todo.extend(partial(parse_at, path) for path in concept_paths)
        _check_runs(run_paths, wiki, executor, workers, progress, next_piece)
        while todo:
            next_piece()
        for future in parsing:
            for ce, found in future.result():
                wiki.concepts.append(ce)
                concept_findings.extend(found)
        # A run that only a concept names (outside the usual layouts) is checked once the
        # concepts are known.
        known = {p.resolve() for p in run_paths}
        named: list[Path] = []
        for ce in wiki.concepts:
            for entry in ce.doc.front.runs if ce.doc else ():
                target = inside(wiki_root, entry.path)
                if target is not None and target not in known and os.path.lexists(Run(target).result_path):
                    known.add(target)
                    named.append(target)
        if named:
            _check_runs(named, wiki, executor, workers, progress, None)
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

    resolved: dict[str, Path | None] = {}
    by_path: dict[Path, RunEvidence] = {}
    for ev in wiki.runs:
        by_path.setdefault(ev.run.path.resolve(), ev)

    def run_for(rel: str) -> RunEvidence | None:
        if rel not in resolved:
            resolved[rel] = inside(wiki_root, rel)
        target = resolved[rel]
        return by_path.get(target) if target is not None else None

    for ce in wiki.concepts:
        check_concept(ce, wiki, run_for)
    if not wiki.runs and not wiki.concepts:
        wiki.notices.append("no run results and no concepts: nothing to verify")
    return wiki
