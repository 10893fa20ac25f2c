"""The promoted block of a concept: what promotion writes, and the check that it is still that.

Promotion owns the text between :data:`~.concepts.GENERATED_BEGIN` and
:data:`~.concepts.GENERATED_END` (CONTRACT section 10). :func:`render_block` is the one code path
that writes it, from the runs the concept's front matter names as they assemble now; the wiki
check (``C-PROMOTED``, :func:`promoted_findings`) renders it again and compares it line by line
with the file, so a hand edit of a claim line, a footnote reference or an excerpt inside the
block is refused with its file, line, the promoted text and the found text.

Each footnote's label is derived from what it cites (:func:`evidence_label`: the run, the
artifact, the source id, the offsets and the claim text), never from a position, so re-promoting
after a span is added moves no label to another quotation. :func:`legacy_label` is the positional
label earlier versions wrote, kept only to migrate them (:mod:`.migrate`).
"""

from __future__ import annotations

import difflib
import hashlib
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from ..kernel.canonical import canonical_bytes
from ..kernel.checkids import CheckId
from ..kernel.findings import Finding
from ..kernel.reasons import Reason
from ..kernel.refs import format_ref
from .concepts import GENERATED_BEGIN, GENERATED_END, ConceptDoc
from .evidence import RunEvidence, VerifiedClaim, WikiCheck
from .markdown import markdown_code, markdown_text

__all__ = [
    "CHECK",
    "LABEL_DIGITS",
    "BlockClaim",
    "RenderedBlock",
    "BlockLines",
    "evidence_label",
    "legacy_label",
    "is_stable_label",
    "render_block",
    "block_lines",
    "promoted_findings",
    "BlockCache",
    "render_into",
    "label_facts",
    "run_label_prefix",
]

CHECK = CheckId.PROMOTED
"""The check id of every finding about the promoted block."""

LABEL_DIGITS = 12
"""Hex digits of the facts' digest a label ends with (48 bits: one concept never holds two)."""

_LABEL_RE = re.compile(r"[^a-z0-9]+")
_STABLE_RE = re.compile(rf"-q[0-9a-f]{{{LABEL_DIGITS}}}$")
_REF_LABEL_RE = re.compile(r"\[\^([^\]\s]+)\]")
_SHOWN = 160
"""Characters of a promoted or found line a finding carries."""


def _label_base(run_slug: str, artifact_id: str) -> str:
    return _LABEL_RE.sub("-", f"{run_slug}-{artifact_id}".lower()).strip("-")


def run_label_prefix(run_slug: str) -> str:
    """How every label of a run's claims starts (the run slug as labels write it, then ``-``)."""
    return _LABEL_RE.sub("-", run_slug.lower()).strip("-") + "-"


def _claim_text(claim: VerifiedClaim) -> str:
    """What the claim says as promotion shows it: the agent's claim label, else the field it fills."""
    return claim.claim if claim.claim and claim.claim.strip() else f"field:{claim.field}"


def label_facts(run_slug: str, claim: VerifiedClaim) -> bytes:
    """The facts a label stands for, canonically encoded: run, artifact, source id, start, end, claim text."""
    return canonical_bytes([run_slug, claim.artifact_id, claim.source_id, claim.start, claim.end, _claim_text(claim)])


def evidence_label(run_slug: str, claim: VerifiedClaim) -> str:
    """The footnote label of one promoted claim: ``<run>-<artifact id>-q<12 hex>``.

    The readable part names the run and the artifact; the digest covers every fact the footnote
    cites, so the same citation always gets the same label and another citation never does.
    """
    digest = hashlib.sha256(label_facts(run_slug, claim)).hexdigest()[:LABEL_DIGITS]
    return f"{_label_base(run_slug, claim.artifact_id)}-q{digest}"


def is_stable_label(label: str) -> bool:
    """Whether ``label`` has the form :func:`evidence_label` writes (a positional one never does)."""
    return _STABLE_RE.search(label) is not None


def legacy_label(run_slug: str, artifact_id: str, index: int, taken: set[str]) -> str:
    """The positional label earlier versions wrote (``<run>-<artifact id>-<n>``, a short digest on
    a collision); only :mod:`.migrate` uses it, to find what an old label cited."""
    label = _label_base(run_slug, artifact_id) + f"-{index + 1}"
    if label in taken:
        digest = hashlib.sha256(f"{run_slug}\x00{artifact_id}\x00{index}".encode()).hexdigest()[:8]
        label = f"{label}-{digest}"
    taken.add(label)
    return label


@dataclass(frozen=True)
class BlockClaim:
    """One claim the block cites: its label and the facts behind it."""

    label: str
    run: str
    claim: VerifiedClaim


@dataclass(frozen=True)
class RenderedBlock:
    """The block's content (without the markers), what it counts, and the claims in order."""

    text: str
    artifacts: int
    claims: int
    cited: tuple[BlockClaim, ...]
    """Each footnote the block defines, in order."""
    labels: tuple[str, ...]
    """The label of each claim line, in order (one claim, one label: what a migration pairs)."""

    def lines(self) -> list[str]:
        """The lines between the marker lines, as :func:`~.concepts.with_generated` writes them."""
        return [*self.text.strip("\n").split("\n"), ""]


_KIND_TITLES = {
    "extraction": "Extraction",
    "appraisal": "Appraisal",
    "report_claim": "Report claim",
    "synthesis_claim": "Synthesis claim",
}

_HEADER = (
    "<!-- Written by `publisher promote` from the runs in the front matter; the build refuses any edit "
    "between the markers: write your own prose outside them. -->"
)
_LEGACY_HEADER = (
    "<!-- Written by `publisher promote` from the runs in the front matter; "
    "edits between the markers are replaced at the next promotion. -->"
)
"""The header earlier versions wrote (with positional labels)."""


def _paper_line(paper: object) -> str:
    if paper is None:
        return ""
    parts = []
    for kind, name in (("pmid", "PMID"), ("doi", "DOI"), ("pmcid", "PMCID")):
        value = getattr(paper, kind)
        if value:
            parts.append(f"{name} {markdown_code(value)}")
    return ", ".join(parts)


def _sentence(claim: VerifiedClaim) -> str:
    """The bullet a claim's footnote hangs on: the agent's claim label, or the field it fills
    when it has none (the field's record path, ``spans[0]``, says nothing to a reader)."""
    if claim.claim and claim.claim.strip():
        return markdown_text(claim.claim)
    return f"Evidence for {markdown_text(claim.field)}."


_Labeller = Callable[[str, VerifiedClaim, set[str]], str]


def _stable(run_slug: str, claim: VerifiedClaim, taken: set[str]) -> str:
    label = evidence_label(run_slug, claim)
    taken.add(label)
    return label


def _positional(run_slug: str, claim: VerifiedClaim, taken: set[str]) -> str:
    return legacy_label(run_slug, claim.artifact_id, claim.index, taken)


def _run_section(
    ev: RunEvidence, wiki: WikiCheck, taken: set[str], label_of: _Labeller, cited: list[BlockClaim], labels: list[str]
) -> tuple[list[str], int, int]:
    """Markdown lines for one run's accepted artifacts; returns (lines, artifacts, claims)."""
    lines = [f"## Evidence from run {markdown_code(ev.slug)}", ""]
    if ev.title != ev.slug:
        lines += [f"Question: {markdown_text(ev.title)}", ""]
    notes: list[str] = []
    artifacts = claims = 0
    for artifact, verified in ev.claims(wiki):
        if not verified:
            continue
        artifacts += 1
        kind = _KIND_TITLES.get(artifact.kind, artifact.kind)
        lines += [f"### {kind} {markdown_code(artifact.evidence_id or artifact.artifact_id)}", ""]
        facts = [f"access {markdown_code(artifact.access.value)}" if artifact.access else ""]
        paper = _paper_line(artifact.paper)
        if paper:
            facts.insert(0, paper)
        facts.append(f"artifact {markdown_code(artifact.artifact_id)}")
        lines += ["; ".join(f for f in facts if f) + ".", ""]
        for claim in verified:
            claims += 1
            seen = len(taken)
            label = label_of(ev.slug, claim, taken)
            labels.append(label)
            lines.append(f"- {_sentence(claim)}[^{label}]")
            if len(taken) > seen:  # the same citation twice in one artifact: one definition
                notes.append(f"[^{label}]: {format_ref(claim.source_id, claim.start, claim.end, claim.excerpt)}")
                cited.append(BlockClaim(label, ev.slug, claim))
        lines.append("")
    return lines + notes + [""], artifacts, claims


def render_block(runs: Sequence[RunEvidence], wiki: WikiCheck, *, legacy: bool = False) -> RenderedBlock:
    """The promoted block's content for ``runs`` in order, from what ``wiki`` verified now.

    ``legacy`` writes the positional labels of earlier versions (to migrate them), else the labels
    :func:`evidence_label` derives from the facts.
    """
    taken: set[str] = set()
    cited: list[BlockClaim] = []
    labels: list[str] = []
    lines = [_LEGACY_HEADER if legacy else _HEADER, ""]
    artifacts = claims = 0
    for ev in runs:
        section, a, c = _run_section(ev, wiki, taken, _positional if legacy else _stable, cited, labels)
        lines += section
        artifacts += a
        claims += c
    return RenderedBlock("\n".join(lines).rstrip("\n") + "\n", artifacts, claims, tuple(cited), tuple(labels))


@dataclass(frozen=True)
class BlockLines:
    """Where a concept body's promoted block is: the 0-based body lines of its two markers."""

    begin: int
    end: int

    def inside(self, lines: Sequence[str]) -> list[str]:
        """The body lines between the markers, each without a line ending's carriage return."""
        return [line.removesuffix("\r") for line in lines[self.begin + 1 : self.end]]


def block_lines(body: str) -> BlockLines | tuple[str, int] | None:
    """The promoted block's marker lines in ``body``; None without markers; why not and the 0-based
    body line of the first marker out of place when a marker is not a line of its own, once, begin
    before end (text beside a marker would hide a line in the block's extent)."""
    holding = {**_lines_holding(body, GENERATED_BEGIN), **_lines_holding(body, GENERATED_END)}
    marked = sorted(holding)
    begins = [i for i in marked if holding[i].removesuffix("\r") == GENERATED_BEGIN]
    ends = [i for i in marked if holding[i].removesuffix("\r") == GENERATED_END]
    if not marked:
        return None
    if len(begins) == 1 and len(ends) == 1 and begins[0] < ends[0] and marked == [begins[0], ends[0]]:
        return BlockLines(begins[0], ends[0])
    stray = next((i for i in marked if i not in (begins[:1] + ends[:1])), marked[0])
    return "each promoted-block marker must be a line of its own, once, begin before end", stray


def _lines_holding(body: str, marker: str) -> dict[int, str]:
    """The 0-based lines of ``body`` that hold ``marker`` (no line break in it), each with its
    text: found by searching the body, not by reading it a line at a time (a generated block is
    thousands of lines, and only its two markers are looked for)."""
    out: dict[int, str] = {}
    line, counted = 0, 0
    at = body.find(marker)
    while at != -1:
        line += body.count("\n", counted, at)
        start = body.rfind("\n", 0, at) + 1
        stop = body.find("\n", at)
        stop = len(body) if stop == -1 else stop
        out[line] = body[start:stop]
        counted = at
        at = body.find(marker, stop)
    return out


def _shown(line: str | None) -> str:
    if line is None:
        return "(no line)"
    return line if len(line) <= _SHOWN else line[: _SHOWN - 1] + "…"


def _label_on(*lines: str | None) -> str | None:
    for line in lines:
        match = _REF_LABEL_RE.search(line or "")
        if match is not None:
            return match.group(1)
    return None


_MAX_DIFFERENCES = 20
"""Differing stretches of one block reported one by one; beyond, one finding says how many more."""


def _differences(rel: str, doc: ConceptDoc, at: BlockLines, found: list[str], wanted: list[str]) -> list[Finding]:
    """One finding per stretch of lines where the file's block differs from the promoted one."""
    out: list[Finding] = []
    opcodes = [
        op for op in difflib.SequenceMatcher(None, wanted, found, autojunk=False).get_opcodes() if op[0] != "equal"
    ]
    for tag, w1, w2, f1, f2 in opcodes[:_MAX_DIFFERENCES]:
        promoted = wanted[w1] if w1 < w2 else None
        seen = found[f1] if f1 < f2 else None
        what = {"replace": "differs from", "delete": "lacks", "insert": "adds to"}[tag]
        line = doc.file_line(at.begin + 1 + f1)
        out.append(
            Finding(
                Reason.EXCERPT_MISMATCH,
                rel,
                f"the promoted block {what} what promotion writes from the accepted result now: "
                f"promoted {_shown(promoted)!r}, found {_shown(seen)!r}",
                label=_label_on(promoted, seen),
                line=line,
                check=CHECK,
                expected=promoted,
                found=seen,
            )
        )
    if len(opcodes) > _MAX_DIFFERENCES:
        out.append(
            Finding(
                Reason.EXCERPT_MISMATCH,
                rel,
                f"{len(opcodes) - _MAX_DIFFERENCES} more stretch(es) of the promoted block differ",
                line=doc.file_line(at.begin),
                check=CHECK,
            )
        )
    return out


def _outside_definitions(lines: Sequence[str], at: BlockLines, labels: set[str]) -> list[tuple[int, str]]:
    """Lines outside the block that define a footnote the block defines: the later definition
    would replace the promoted one on the page."""
    out: list[tuple[int, str]] = []
    for index, line in enumerate(lines):
        if at.begin <= index <= at.end:
            continue
        for match in re.finditer(r"\[\^([^\]]+)\]\s*:", line):
            if match.group(1) in labels or match.group(1).lower() in labels:
                out.append((index, match.group(1)))
    return out


class BlockCache:
    """The promoted blocks rendered during one check, by the runs they were rendered for.

    Concepts that name the same runs in the same order hold the same block; rendering it once
    for all of them is exact while neither the runs nor what the wiki verified change, so a
    cache lives for one pass over the concepts of one check. Each entry keeps its runs (the
    very objects), so a key of object ids can never be taken by other runs."""

    def __init__(self) -> None:
        self._held: dict[tuple[int, ...], tuple[tuple[RunEvidence, ...], RenderedBlock, list[str]]] = {}
        self._refs: dict[tuple[int, ...], tuple[tuple[RunEvidence, ...], set[tuple[str, int, int, str | None]]]] = {}
        self.forms: dict[tuple[str, str, int, int], str] = {}
        """The line promotion writes for a footnote citing one span, by its label and the span
        (made from what the wiki verified, which one pass does not change)."""

    def refs_for(self, runs: Sequence[RunEvidence]) -> set[tuple[str, int, int, str | None]]:
        """The footnote references (span and the words quoted) that passed their check against
        exactly these runs so far in the pass: the same reference passes again for them."""
        key = tuple(id(ev) for ev in runs)
        held = self._refs.get(key)
        if held is None or len(held[0]) != len(runs) or any(a is not b for a, b in zip(held[0], runs, strict=True)):
            held = self._refs[key] = (tuple(runs), set())
        return held[1]

    def get(self, runs: Sequence[RunEvidence]) -> tuple[RenderedBlock, list[str]] | None:
        """The block and its lines rendered for exactly these runs, or None."""
        held = self._held.get(tuple(id(ev) for ev in runs))
        if held is None or len(held[0]) != len(runs) or any(a is not b for a, b in zip(held[0], runs, strict=True)):
            return None
        return held[1], held[2]

    def put(self, runs: Sequence[RunEvidence], rendered: RenderedBlock, lines: list[str]) -> None:
        """Keep the block rendered for ``runs`` and its lines."""
        self._held[tuple(id(ev) for ev in runs)] = (tuple(runs), rendered, lines)


def _rendered(
    runs: Sequence[RunEvidence], wiki: WikiCheck, blocks: BlockCache | None
) -> tuple[RenderedBlock, list[str]]:
    """The block promotion writes for ``runs`` and its lines, from ``blocks`` when rendered there."""
    kept = blocks.get(runs) if blocks is not None else None
    if kept is not None:
        return kept
    rendered = render_block(runs, wiki)
    lines = rendered.lines()
    if blocks is not None:
        blocks.put(runs, rendered, lines)
    return rendered, lines


def render_into(runs: Sequence[RunEvidence], wiki: WikiCheck, blocks: BlockCache) -> None:
    """Render the block promotion writes for ``runs`` into ``blocks`` now, for a later
    :func:`promoted_findings` with the same ``blocks`` (while neither the runs nor what the wiki
    verified change)."""
    _rendered(runs, wiki, blocks)


def promoted_findings(
    doc: ConceptDoc, rel: str, runs: Sequence[RunEvidence], wiki: WikiCheck, *, blocks: BlockCache | None = None
) -> list[Finding]:
    """``C-PROMOTED``: the concept's promoted block is exactly what promotion writes for ``runs``
    (the runs its front matter names, in order) from what ``wiki`` verified now.

    A concept that names runs must hold the block, its markers each a line of its own
    (``SCHEMA_ERROR``); every line inside must be the promoted line (``EXCERPT_MISMATCH``, with the
    promoted and the found text); no footnote outside the block may define one of its labels.
    A block whose only difference is the positional labels of earlier versions gets one finding
    naming ``publisher migrate labels``. ``blocks`` keeps the blocks rendered for other concepts
    of the same check (the lines compared are read, never changed).
    """
    at = block_lines(doc.body)
    if isinstance(at, tuple):
        why, index = at
        return [Finding(Reason.SCHEMA_ERROR, rel, why, line=doc.file_line(index), check=CHECK)]
    if at is None:
        if not doc.front.runs:
            return []
        why = "names runs in its front matter but holds no promoted block; promote the run again"
        return [Finding(Reason.SCHEMA_ERROR, rel, why, line=1, check=CHECK)]
    lines = doc.body.split("\n")
    found = at.inside(lines)
    rendered, wanted = _rendered(runs, wiki, blocks)
    out: list[Finding] = []
    if found != wanted:
        if found == render_block(runs, wiki, legacy=True).lines():
            why = "the promoted block carries positional labels of an earlier version"
            fix = "run 'publisher migrate labels --wiki .' to rewrite them with the claims bound to them"
            line = doc.file_line(at.begin)
            return [Finding(Reason.SCHEMA_ERROR, rel, why, line=line, check=CHECK, field="labels", fix=fix)]
        out += _differences(rel, doc, at, found, wanted)
    labels = {item.label for item in rendered.cited}
    for index, label in _outside_definitions(lines, at, labels):
        out.append(
            Finding(
                Reason.SCHEMA_ERROR,
                rel,
                "a footnote outside the promoted block defines a promoted label; name your own footnote otherwise",
                label=label,
                line=doc.file_line(index),
                check=CHECK,
            )
        )
    return out
