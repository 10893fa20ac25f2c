"""``publisher assess``: check a proposed status against the guards, log the attempt, write if admitted.

The whole wiki is checked first (every run as it assembles now), so evidence labels resolve
against current results and reviews and missingness records are found in any run. Every
attempt is appended to ``assessments.jsonl``, admitted or rejected with the guard that failed;
an admitted claim is written into the concept's front matter with its ``assessment`` id by
atomic replacement (the body is kept byte for byte); a rejected attempt writes nothing else.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ..kernel import _fs
from ..kernel.errors import ConflictError, IntegrityError, UsageError
from ..kernel.reasons import Reason
from ..kernel.text import one_line
from ..kernel.trust import Role, Signer
from .check import check_wiki
from .claims.admission import Problem, Proposal, admit
from .claims.log import Assessment, Bound, append_assessment
from .claims.model import ClaimRefusal, claim_hash, normalise_statement
from .concepts import CONCEPTS_DIR, ConceptClaim, ConceptFrontMatter, check_slug, dump_concept, parse_concept
from .discover import concepts_folder
from .evidence import ConceptEvidence, WikiCheck
from .policy import Policy

__all__ = ["Assessed", "Proposed", "assess", "propose"]


@dataclass(frozen=True)
class Assessed:
    """An admitted assessment: the logged entry and the concept file written."""

    entry: Assessment
    concept_file: str


def _concept_path(wiki_root: Path, slug: str) -> tuple[Path, str]:
    try:
        check_slug(slug)
    except ValueError as exc:
        raise UsageError(str(exc)) from exc
    rel = f"{CONCEPTS_DIR}/{slug}.md"
    return wiki_root / rel, rel


@dataclass(frozen=True)
class Proposed:
    """What assessing a proposal would give, with nothing written: the grounds it would bind, or
    every guard that fails."""

    bound: Bound | None
    problems: tuple[Problem, ...]

    @property
    def admissible(self) -> bool:
        """Whether ``publisher assess`` would admit it now."""
        return not self.problems


def propose(wiki_root: Path, concept: str, proposal: Proposal, *, policy: Policy) -> Proposed:
    """Check ``proposal`` against every guard as :func:`assess` would, under the wiki's ``policy``,
    and write nothing: no log line, no front matter. The agents' server answers with it on a signed
    wiki when it holds no key of the wiki, so that no tool call can leave the wiki unbuildable."""
    _path, _rel, _before, wiki, ce, checked = _prepared(Path(wiki_root), concept, proposal, policy)
    bound, problems = admit(wiki, ce, checked)
    return Proposed(bound, tuple(problems))


def _prepared(
    wiki_root: Path, concept: str, proposal: Proposal, policy: Policy
) -> tuple[Path, str, bytes, WikiCheck, ConceptEvidence, Proposal]:
    """The usage checks and the wiki check every assessment starts with (nothing written)."""
    if not wiki_root.is_dir():
        raise UsageError(f"wiki folder {wiki_root} does not exist")
    path, rel = _concept_path(wiki_root, concept)
    concepts_folder(wiki_root)  # a link or file in place of concepts/: refused before anything is read or logged
    statement = normalise_statement(proposal.statement)
    if not statement:
        raise UsageError("--statement must not be empty")
    try:
        ConceptClaim(id=proposal.claim_id, statement=statement, status=proposal.status)
    except ValueError as exc:
        raise UsageError(
            f"--claim-id {proposal.claim_id[:60]!r} must be a slug (letters, digits, '.', '_', '-')"
        ) from exc
    try:
        before = _fs.read_regular(path, follow_symlinks=False)
    except FileNotFoundError as exc:
        raise UsageError(f"no concept {rel}; promote a run into it first") from exc
    except OSError as exc:
        raise UsageError(f"{rel} cannot be read ({exc.strerror or exc})", reason=Reason.SCHEMA_ERROR) from exc
    wiki = check_wiki(wiki_root, policy=policy)
    ce = next((c for c in wiki.concepts if c.rel == rel), None)
    if ce is None or ce.doc is None:
        raise IntegrityError(f"{rel} does not parse; fix it first ('publisher check')", reason=Reason.SCHEMA_ERROR)
    checked = Proposal(
        proposal.claim_id,
        statement,
        proposal.status,
        tuple(proposal.conditions),
        tuple(proposal.evidence),
        proposal.review,
        proposal.missingness,
    )
    return path, rel, before, wiki, ce, checked


def assess(wiki_root: Path, concept: str, proposal: Proposal, *, signer: Signer | None, policy: Policy) -> Assessed:
    """Assess ``proposal`` for claim ``proposal.claim_id`` of ``concept`` under the wiki's ``policy``.

    Raises :class:`ClaimRefusal` (exit 1) after logging a rejected attempt; a usage problem (no
    wiki, no concept, an empty statement, no ``signer`` trusted for ``assess`` on a wiki that
    trusts keys) is refused before anything is logged.
    """
    wiki_root = Path(wiki_root)
    if not wiki_root.is_dir():
        raise UsageError(f"wiki folder {wiki_root} does not exist")
    ring = policy.trusted_keys
    if ring and (signer is None or not ring.has_role(signer.key_id, Role.ASSESS)):
        keys = ", ".join(ring.shown(kid) for kid in ring.ids_for(Role.ASSESS)) or "none"
        raise UsageError(
            f"this wiki trusts signed assessments only: sign with the private key of {keys} "
            "(--key FILE or $PUBLISHER_SIGNING_KEY); nothing logged",
            **ring.key_fact(ring.ids_for(Role.ASSESS)),
        )
    path, rel, before, wiki, ce, proposal = _prepared(wiki_root, concept, proposal, policy)
    statement = proposal.statement
    if ce.doc is None:
        raise IntegrityError(f"{rel} does not parse; fix it first ('publisher check')", reason=Reason.SCHEMA_ERROR)
    bound, problems = admit(wiki, ce, proposal)
    first: Problem | None = problems[0] if problems else None
    entry = append_assessment(
        wiki_root,
        {
            "concept": concept,
            "claim_id": proposal.claim_id,
            "statement": statement,
            "claim_hash": claim_hash(statement),
            "status": proposal.status.value,
            "conditions": list(proposal.conditions),
            "evidence": list(proposal.evidence),
            "review": proposal.review,
            "missingness": proposal.missingness,
            "admitted": first is None,
            "guard": first.guard.value if first else None,
            "detail": one_line(first.detail, 300) if first else None,
            "bound": bound.model_dump(mode="json") if bound is not None else None,
        },
        signer=signer,
    )
    if first is not None:
        more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
        raise ClaimRefusal(
            first.guard,
            f"{rel} claim {proposal.claim_id}: {first.detail}{more}; logged as rejected {entry.assessment_id}",
            assessment_id=entry.assessment_id,
            problems=[(p.guard.value, p.detail) for p in problems],
            file=rel,
            artifact_id=f"claim:{proposal.claim_id}",  # as the wiki check names a claim
        )
    _write_claim(path, rel, before, ce.doc.front, ce.doc.body, proposal, entry)
    return Assessed(entry, rel)


def _write_claim(
    path: Path, rel: str, before: bytes, front: ConceptFrontMatter, body: str, p: Proposal, entry: Assessment
) -> None:
    """Replace (or append) the claim in front matter, atomically; the body is kept as it is."""
    claim = ConceptClaim(
        id=p.claim_id,
        statement=p.statement,
        status=p.status,
        conditions=p.conditions,
        evidence=p.evidence,
        review=p.review,
        missingness=p.missingness,
        assessment=entry.assessment_id,
    )
    claims = [c for c in front.claims if c.id != p.claim_id]
    position = next((i for i, c in enumerate(front.claims) if c.id == p.claim_id), len(claims))
    claims.insert(position, claim)
    text = dump_concept(front.model_copy(update={"claims": tuple(claims)}), body)
    parsed = parse_concept(text, where=rel)
    if parsed.body != body:
        raise UsageError(f"{rel}: the body would not survive rewriting the front matter; nothing written")
    try:
        current = _fs.read_regular(path, follow_symlinks=False)
    except OSError as exc:
        raise ConflictError(f"{rel} changed while assessing ({exc}); assess again") from exc
    if current != before:
        raise ConflictError(f"{rel} changed while assessing; nothing written, assess again (the entry stays logged)")
    _fs.own_folder(path.parent)
    _fs.write_atomic(path, text.encode("utf-8"))
