"""``publisher migrate labels``: positional evidence labels of earlier versions become stable ones.

Earlier versions numbered a concept's footnote labels by position (``<run>-<artifact>-<n>``), so
re-promoting after a span was added could point a claim at another quotation. Labels are now
derived from what they cite (:func:`.promoted.evidence_label`). This migration rewrites, for every
concept whose promoted block is exactly what an earlier version wrote from the accepted results
now, the block with stable labels and the claims of its front matter bound to the old ones, all
concepts or none, and is a no-op on a wiki already migrated.

The assessment log is append-only and is left as it is: an entry keeps the label it bound with
the spans behind it, and the claim check accepts the stable label of those same spans in its
place (:func:`.claims.provenance.same_evidence`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..kernel import _fs
from ..kernel.errors import IntegrityError, PublisherError, UsageError
from ..kernel.findings import Finding
from ..kernel.reasons import Reason
from .check import check_claims_text, check_wiki
from .conceptcheck import check_concept_text
from .concepts import CONCEPTS_DIR, ConceptDoc, dump_concept, with_generated
from .evidence import ConceptEvidence, RunEvidence, WikiCheck
from .policy import Policy
from .promote import PlannedWrite, commit_writes
from .promoted import CHECK, BlockLines, block_lines, render_block

__all__ = ["LabelMigration", "MigrationRefused", "migrate_labels"]


class MigrationRefused(IntegrityError):
    """The wiki has findings a relabelling cannot fix, or a migrated concept would not verify."""

    def __init__(self, message: str, findings: list[Finding]) -> None:
        super().__init__(message, reason=findings[0].reason if findings else None)
        self.findings = findings


@dataclass
class LabelMigration:
    """What a migration did (with ``check``: would do)."""

    concepts: list[str] = field(default_factory=list)
    """The concept files rewritten."""
    labels: dict[str, dict[str, str]] = field(default_factory=dict)
    """Per concept file: each old label and the stable label it became."""
    claims: int = 0
    """Claims whose evidence labels were rewritten."""
    written: bool = False

    def summary(self) -> dict[str, Any]:
        """Plain values for ``--json``."""
        return {
            "ok": True,
            "concepts": list(self.concepts),
            "labels": {rel: dict(pairs) for rel, pairs in self.labels.items()},
            "claims": self.claims,
            "written": self.written,
        }


def _is_label_finding(finding: Finding) -> bool:
    return finding.check == CHECK and finding.field == "labels"


def _named_runs(wiki: WikiCheck, doc: ConceptDoc) -> list[RunEvidence] | None:
    runs = []
    for entry in doc.front.runs:
        ev = wiki.run_by_rel(entry.path)
        if ev is None or not ev.assembled:
            return None
        runs.append(ev)
    return runs


def _relabelled(wiki: WikiCheck, ce: ConceptEvidence, raw: bytes) -> tuple[str, dict[str, str], int] | None:
    """The concept's new text, its label pairs and how many claims changed; None when its block
    already carries stable labels (or it has none)."""
    doc = ce.doc
    if doc is None:
        return None
    at = block_lines(doc.body)
    runs = _named_runs(wiki, doc)
    if not isinstance(at, BlockLines) or runs is None:
        return None
    found = at.inside(doc.body.split("\n"))
    stable = render_block(runs, wiki)
    if found == stable.lines():
        return None
    legacy = render_block(runs, wiki, legacy=True)
    if found != legacy.lines():
        return None  # the wiki check's own C-PROMOTED findings name the difference
    pairs = dict(zip(legacy.labels, stable.labels, strict=True))
    body = with_generated(doc.body, stable.text, where=ce.rel)
    claims = []
    changed = 0
    for claim in doc.front.claims:
        evidence = tuple(pairs.get(label, label) for label in claim.evidence)
        if evidence != claim.evidence:
            changed += 1
            claim = claim.model_copy(update={"evidence": evidence})
        claims.append(claim)
    if changed:
        text = dump_concept(doc.front.model_copy(update={"claims": tuple(claims)}), body)
    else:  # the front matter as its author wrote it (comments, order), only the body replaced
        head = raw.decode("utf-8").split("\n")[: doc.body_line - 1]
        text = "\n".join(head) + "\n" + body
    return text, {old: new for old, new in pairs.items() if old != new}, changed


def migrate_labels(wiki: Path | str, *, policy: Policy, check: bool = False) -> LabelMigration:
    """Rewrite every concept's positional labels and the claims bound to them; all or nothing.

    Refused (:class:`MigrationRefused`, nothing written) when the wiki check finds anything but
    positional labels, or when a rewritten concept would not verify exactly as the build checks
    it. ``check`` plans and verifies without writing.
    """
    root = Path(wiki)
    if not root.is_dir():
        raise UsageError(f"wiki folder {root} does not exist")
    pre = check_wiki(root, policy=policy)
    blocking = [f for f in pre.findings if not _is_label_finding(f)]
    if blocking:
        raise MigrationRefused(
            f"labels not migrated: the wiki check has {len(blocking)} other finding(s); fix them first "
            "('publisher check --wiki')",
            blocking,
        )
    outcome = LabelMigration()
    writes: list[PlannedWrite] = []
    problems: list[Finding] = []
    for ce in pre.concepts:
        try:
            raw = _fs.read_regular(ce.path, follow_symlinks=False)
        except OSError as exc:
            raise UsageError(f"{ce.rel} cannot be read ({exc.strerror or exc})", reason=Reason.SCHEMA_ERROR) from exc
        planned = _relabelled(pre, ce, raw)
        if planned is None:
            continue
        text, pairs, claims = planned
        found = check_concept_text(pre, text, ce.rel, ce.slug) + check_claims_text(pre, text, ce.rel, ce.slug)
        if found:
            problems += found
            continue
        outcome.concepts.append(ce.rel)
        outcome.labels[ce.rel] = pairs
        outcome.claims += claims
        writes.append(PlannedWrite(ce.path, text.encode("utf-8"), raw))
    if problems:
        raise MigrationRefused("labels not migrated: a rewritten concept would not verify; nothing written", problems)
    if check or not writes:
        return outcome
    folder = root / CONCEPTS_DIR
    try:
        with _fs.folder_lock(folder):
            commit_writes(writes)
    except PublisherError:
        raise
    except OSError as exc:
        raise PublisherError(f"could not write the migrated concepts: {exc.strerror or exc}") from exc
    outcome.written = True
    return outcome
