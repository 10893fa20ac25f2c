"""Promotion: a run's accepted evidence becomes a concept file, all or nothing (CONTRACT section 10).

Promotion publishes a run's accepted evidence only when its ``result.json`` is exactly what
assembling the run now produces and its gate verdict is not ``fail``: it runs the wiki check
(:func:`.check.check_wiki`, the one pipeline) on the run and on any other run the concept already
names, which re-reads and re-hashes every snapshot, re-slices every excerpt, checks paper ids,
asset hashes, freshness and the event-log chain. Any finding refuses the promotion outright,
naming the cause and the fix. Only then is the concept's generated block rewritten (maintainer prose
around it is kept), the new file checked once more as the build would check it, and written with
exclusive creation or atomic replacement. ``check`` stops before writing.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..kernel import _fs
from ..kernel.canonical import format_ts, utc_now
from ..kernel.errors import ConflictError, IntegrityError, PublisherError, UsageError
from ..kernel.findings import Finding
from ..kernel.reasons import Reason
from ..parallel import ProgressFn, Workers
from ..runs import Run
from .check import check_claims_text, check_wiki
from .conceptcheck import check_concept_text
from .concepts import (
    CONCEPTS_DIR,
    ConceptDoc,
    ConceptFrontMatter,
    ConceptRun,
    check_slug,
    dump_concept,
    parse_concept,
    with_generated,
)
from .discover import concepts_folder
from .evidence import RunEvidence, WikiCheck
from .markdown import markdown_code
from .policy import Policy
from .promoted import block_lines, promoted_findings, render_block

__all__ = ["PlannedWrite", "Promotion", "PromotionRefused", "plan_promotion", "promote", "commit_writes"]


class PromotionRefused(IntegrityError):
    """The evidence did not verify, or the gate failed: nothing was written."""

    def __init__(self, message: str, findings: Sequence[Finding], **context: Any) -> None:
        reason = findings[0].reason if findings else None
        super().__init__(message, reason=reason, **context)
        self.findings = list(findings)


@dataclass(frozen=True)
class PlannedWrite:
    """One file to write: its new bytes and the bytes it must still hold (None: must not exist)."""

    path: Path
    data: bytes
    previous: bytes | None


@dataclass
class Promotion:
    """What a promotion did (or, with ``check``, would do)."""

    run_slug: str
    concept: str
    concept_file: str
    created: bool
    changed: bool
    artifacts: int
    claims: int
    written: bool = False
    notices: list[str] = field(default_factory=list)
    writes: list[PlannedWrite] = field(default_factory=list)

    def summary(self) -> dict[str, Any]:
        """Plain values for ``--json``."""
        return {
            "ok": True,
            "run": self.run_slug,
            "concept": self.concept,
            "concept_file": self.concept_file,
            "created": self.created,
            "changed": self.changed,
            "written": self.written,
            "artifacts": self.artifacts,
            "claims": self.claims,
            "notices": list(self.notices),
        }


# ---------------------------------------------------------------------------------------------
# planning


def _relative_to(path: Path, root: Path, what: str) -> str:
    try:
        return _fs.real_path(path).relative_to(_fs.real_path(root)).as_posix()
    except ValueError as exc:
        raise UsageError(
            f"{what} {path} is not inside the wiki {root}; keep runs under the wiki (runs/<slug>)"
        ) from exc


def _refuse(message: str, findings: Sequence[Finding]) -> PromotionRefused:
    return PromotionRefused(message, findings)


def plan_promotion(
    run_dir: Path | str,
    wiki: Path | str,
    *,
    concept: str | None = None,
    now: str | None = None,
    progress: ProgressFn | None = None,
    policy: Policy,
) -> Promotion:
    """Verify everything and prepare the concept file's bytes; writes nothing.

    ``progress`` is called as the preflight verifies each snapshot (see ``batch.verify_many``).

    Raises :class:`PromotionRefused` (exit 1) on any integrity finding or a failed gate, and
    :class:`UsageError` for a missing run, result or wiki.
    """
    wiki_root = Path(wiki)
    if not wiki_root.is_dir():
        raise UsageError(f"wiki folder {wiki_root} does not exist (create one with 'publisher new')")
    run = Run.open(run_dir)
    config = run.load_config()
    if not run.result_path.is_file():
        raise UsageError(f"{run.path} has no outputs/result.json; run 'publisher assemble' first")
    concepts_folder(wiki_root)  # a link or file in place of concepts/: refused before any check
    run_rel = _relative_to(run.path, wiki_root, "run")
    slug = concept if concept is not None else run.slug(config)
    try:
        check_slug(slug)
    except ValueError as exc:
        raise UsageError(f"{exc}; choose another with --concept") from exc
    concept_rel = f"{CONCEPTS_DIR}/{slug}.md"
    path = wiki_root / concept_rel
    previous: bytes | None = None
    doc: ConceptDoc | None = None
    if os.path.lexists(path):
        try:
            previous = _fs.read_regular(path, follow_symlinks=False)
        except OSError as exc:
            raise UsageError(
                f"{concept_rel} cannot be read ({exc.strerror or exc})", reason=Reason.SCHEMA_ERROR
            ) from exc
        try:
            doc = parse_concept(previous.decode("utf-8"), where=concept_rel)
        except UnicodeDecodeError as exc:
            raise IntegrityError(f"{concept_rel}: is not UTF-8", reason=Reason.SCHEMA_ERROR) from exc

    others = [wiki_root / e.path for e in (doc.front.runs if doc else ()) if e.path != run_rel]
    pre = check_wiki(
        wiki_root, runs=[run.path, *others], concepts=[], policy=policy, workers=Workers(progress=progress)
    )
    if not pre.ok:
        fix = f"fix what is named, then run 'publisher assemble --run-dir {run_rel}' and promote again"
        raise _refuse(f"promotion refused: {len(pre.findings)} finding(s); {fix}", pre.findings)
    this = pre.run_by_rel(run_rel)
    if this is None or this.inputs_hash is None:
        raise UsageError(f"{run_rel}: the run could not be assembled")

    stamp = now or format_ts(utc_now())
    entries: list[ConceptRun] = []
    replaced = False
    for entry in doc.front.runs if doc else ():
        if entry.path == run_rel or entry.run == this.slug:
            same = entry.inputs_hash == this.inputs_hash and entry.path == run_rel
            entries.append(
                ConceptRun(
                    run=this.slug,
                    path=run_rel,
                    inputs_hash=this.inputs_hash,
                    promoted_at=entry.promoted_at if same else stamp,
                )
            )
            replaced = True
        else:
            entries.append(entry)
    if not replaced:
        entries.append(ConceptRun(run=this.slug, path=run_rel, inputs_hash=this.inputs_hash, promoted_at=stamp))

    ordered: list[RunEvidence] = []
    for entry in entries:
        named = pre.run_by_rel(entry.path)
        if named is None:
            raise UsageError(f"{concept_rel} names run {entry.run} at {entry.path}, which has no result.json")
        ordered.append(named)
    if doc is not None:
        tampered = _edited_block(doc, concept_rel, pre)
        if tampered:
            fix = (
                "restore the promoted text each finding names, or delete the whole promoted block "
                "(both markers and what lies between them) and promote again"
            )
            raise _refuse(f"promotion refused: {concept_rel} was edited inside its promoted block; {fix}", tampered)
    rendered = render_block(ordered, pre)
    block, artifacts, claims = rendered.text, rendered.artifacts, rendered.claims
    if doc is None:
        front = ConceptFrontMatter(schema_version=1, title=this.title, concept=slug, runs=tuple(entries))
        # No "# title" line: the title (the run's question) reaches the page only through the
        # site's escaping boundary, from the front matter, never through Markdown.
        intro = f"Evidence promoted from run {markdown_code(this.slug)}.\n"
        body = "\n" + with_generated(intro, block, where=concept_rel)
    else:
        front = doc.front.model_copy(update={"runs": tuple(entries)})
        body = with_generated(doc.body, block, where=concept_rel)
    text = dump_concept(ConceptFrontMatter.model_validate(front.model_dump()), body)
    findings = check_concept_text(pre, text, concept_rel, slug) + check_claims_text(pre, text, concept_rel, slug)
    if findings:
        raise _refuse(f"promotion refused: {concept_rel} would not verify", findings)
    data = text.encode("utf-8")
    changed = data != previous
    promotion = Promotion(
        run_slug=this.slug,
        concept=slug,
        concept_file=concept_rel,
        created=previous is None,
        changed=changed,
        artifacts=artifacts,
        claims=claims,
        notices=list(pre.notices),
        writes=[PlannedWrite(path, data, previous)] if changed else [],
    )
    return promotion


def _edited_block(doc: ConceptDoc, rel: str, pre: WikiCheck) -> list[Finding]:
    """``C-PROMOTED`` findings of a concept's block as it is now, when none of its runs has been
    re-assembled since promotion: then a difference can only be an edit, which promotion refuses
    to paper over. A block whose runs changed is simply rewritten (what promotion is for)."""
    if block_lines(doc.body) is None:
        return []  # no block (deleted whole): promotion writes a fresh one
    runs: list[RunEvidence] = []
    for entry in doc.front.runs:
        ev = pre.run_by_rel(entry.path)
        if ev is None or entry.inputs_hash is None or entry.inputs_hash != ev.inputs_hash:
            return []
        runs.append(ev)
    return promoted_findings(doc, rel, runs, pre)


def commit_writes(writes: Sequence[PlannedWrite]) -> None:
    """Write every planned file or none: a failure part-way restores what was already written.

    Each target must still hold the bytes the plan was made from (or still be absent), else
    :class:`ConflictError` and nothing is written.
    """
    for item in writes:
        try:
            current: bytes | None = _fs.read_regular(item.path, follow_symlinks=False)
        except FileNotFoundError:
            current = None
        if current != item.previous or (item.previous is None and item.path.is_symlink()):
            raise ConflictError(f"{item.path} changed while promoting; nothing written, try again")
    done: list[PlannedWrite] = []
    try:
        for item in writes:
            _fs.own_folder(item.path.parent)
            if item.previous is None:
                if not _fs.create_exclusive(item.path, item.data, mode=0o644):
                    raise ConflictError(f"{item.path} appeared while promoting; nothing written, try again")
            else:
                _fs.write_atomic(item.path, item.data, mode=0o644)
            done.append(item)
    except BaseException:
        for item in reversed(done):
            if item.previous is None:
                item.path.unlink(missing_ok=True)
                _fs.fsync_dir(item.path.parent)
            else:
                _fs.write_atomic(item.path, item.previous, mode=0o644)
        raise


def promote(
    run_dir: Path | str,
    wiki: Path | str,
    *,
    concept: str | None = None,
    check: bool = False,
    now: str | None = None,
    progress: ProgressFn | None = None,
    policy: Policy,
) -> Promotion:
    """Verify and promote a run into ``concepts/<slug>.md``; with ``check``, verify only.

    ``policy``: the wiki's evidence options as the caller resolved them (see :func:`check_wiki`)."""
    promotion = plan_promotion(run_dir, wiki, concept=concept, now=now, progress=progress, policy=policy)
    if check or not promotion.writes:
        return promotion
    concepts_dir = Path(wiki) / CONCEPTS_DIR
    _fs.own_folder(concepts_dir)
    try:
        with _fs.folder_lock(concepts_dir):
            commit_writes(promotion.writes)
    except PublisherError:
        raise
    except OSError as exc:
        raise PublisherError(f"could not write {promotion.concept_file}: {exc.strerror or exc}") from exc
    promotion.written = True
    return promotion
