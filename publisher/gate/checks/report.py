"""``C-CITE-RESOLVE``, ``C-FULLTEXT`` and ``C-HYPOTHESIS-WALL``: the verifier's checks on the report
itself (checks 7-9 of :mod:`publisher.gate.checks`).

7. ``C-CITE-RESOLVE`` - every citation of the report resolves: each footnote (and each
   ``[^label]`` that no definition answers) names accepted evidence of the run. Carries the
   assembly's ``SOURCE_OUTSIDE_ACCEPTED`` findings; a report that cites nothing at all is a
   finding too. Gated.
8. ``C-FULLTEXT`` - what rests on abstracts alone says so. An extraction or appraisal stating
   ``evidence_basis: fulltext`` backed only by abstract snapshots (the assembly's
   ``ACCESS_MISMATCH`` on ``evidence_basis``: gated); an accepted report claim backed only by
   abstract snapshots whose sentence and footnote do not label it abstract-only (fails whatever the
   gate, as upstream's verifier fails it).
9. ``C-HYPOTHESIS-WALL`` - hypotheses are never reported as findings. The wall is every section
   under a heading naming hypotheses, new insights, speculation or conjecture. Inside it, a
   sentence worded as an established finding (a closed list: "studies show", "the evidence
   shows", "data support", "demonstrates that", GRADE wording, "we found" ...) fails; outside it,
   a sentence stating a hypothesis ("we hypothesise", "we speculate" ...) or claiming certainty no
   synthesis has ("proves", "clearly shows", "beyond doubt" ...) fails. Lexical, on closed
   phrase lists only: a pass means none of those phrases was found on the wrong side of the wall.
   Fails whatever the gate.
10. ``C-PROSE`` - the report's prose quotes only through spans (:mod:`.prose`).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from functools import cache

from ...kernel.checkids import CheckId
from ...kernel.findings import Finding
from ...kernel.reasons import Reason
from ..reportmd import Footnote, ProseBlock
from .collect import Collector
from .prose import check_report_prose

__all__ = ["CITE_RESOLVE", "FULLTEXT", "HYPOTHESIS_WALL", "report_check_of", "check_report"]

CITE_RESOLVE = CheckId.CITE_RESOLVE
FULLTEXT = CheckId.FULLTEXT
HYPOTHESIS_WALL = CheckId.HYPOTHESIS_WALL

REPORT = "outputs/report.md"


@cache
def _abstract_label() -> re.Pattern[str]:
    """How a sentence or footnote says it rests on abstracts only; compiled on first use (only a
    report claim backed by abstracts alone is read for it)."""
    return re.compile(
        r"\babstract[\s\-–—]*(?:only|based|level)\b"
        r"|\b(?:only|solely|just) (?:on |from )?(?:the |its |an )?abstracts?\b"
        r"|\b(?:from|based on|rests? on) (?:the |its |an )?abstracts?(?: alone| only)?\b",
        re.IGNORECASE,
    )


_WALL_HEADING_RE = re.compile(r"hypothes|new insight|speculat|conjectur", re.IGNORECASE)


@cache
def _finding_wording() -> list[re.Pattern[str]]:
    """Finding wording, read only in sentences behind the hypothesis wall (most reports have
    none), so compiled on first use."""
    return [
        re.compile(p, re.IGNORECASE)
        for p in (
            r"\bstudies (?:show|showed|demonstrate|demonstrated|prove)\b",
            r"\b(?:the )?evidence (?:shows|showed|indicates|demonstrates)\b",
            r"\bdata (?:support|show|showed|demonstrate)\b",
            r"\b(?:demonstrates|proves|confirms|establishes) that\b",
            r"\bprobably (?:reduces|increases|improves|shortens|lengthens)\b",
            r"\bthe evidence is (?:very )?uncertain\b",
            r"\bis associated with\b",
            r"\bwe found\b",
            r"\b(?:was|were|has been|have been) shown to\b",
        )
    ]


_HYPOTHESIS_WORDING = [
    re.compile(p, re.IGNORECASE)
    for p in (
        r"\bwe (?:hypothesi[sz]e|speculate|conjecture|propose that)\b",
        r"\bour (?:hypothesis|conjecture)\b",
        r"\bit is (?:hypothesi[sz]ed|conjectured)\b",
    )
]
_CERTAINTY_WORDING = [
    re.compile(p, re.IGNORECASE)
    for p in (
        r"\bprov(?:e|es|ed|en)\b",
        r"\bproof that\b",
        r"\bconfirm(?:s|ed)? that\b",
        r"\bestablish(?:es|ed) that\b",
        r"\bclearly (?:shows?|demonstrates?)\b",
        r"\bit is well[\s\-]known\b",
        r"\bdefinitively (?:shows?|demonstrates?|establishes)\b",
        r"\bbeyond (?:any )?doubt\b",
    )
]
_SENTENCE_RE = re.compile(r"[^.!?]+(?:[.!?]+|$)")


def report_check_of(finding: Finding) -> CheckId | None:
    """The report check an assembly finding is reported under, or None (another check's)."""
    if finding.reason is Reason.SOURCE_OUTSIDE_ACCEPTED:
        return CITE_RESOLVE
    if finding.reason is Reason.ACCESS_MISMATCH and finding.field == "evidence_basis":
        return FULLTEXT
    return None


def check_report(out: Collector) -> None:
    """Checks 7-10 over the run's report and the assembly made of it."""
    _cite_resolve(out)
    _fulltext(out)
    _hypothesis_wall(out)
    check_report_prose(out, out.rc.inputs.report_text)


def _routed(out: Collector, check: CheckId) -> int:
    count = 0
    for entry in out.rc.assembly.findings:
        if report_check_of(entry) == check:
            count += 1
            out.from_assembly(check, entry, out.gated())
    return count


def _cite_resolve(out: Collector) -> None:
    """C-CITE-RESOLVE: every citation names accepted evidence; a report cites something."""
    footnotes = out.rc.inputs.footnotes
    labels = {n.label for n in footnotes or []}
    bad = {e.artifact_id for e in out.rc.assembly.findings if report_check_of(e) == CITE_RESOLVE}
    _routed(out, CITE_RESOLVE)
    if footnotes is None:
        out.add(CITE_RESOLVE, "pass", "no report.md: nothing cited")
    elif not labels:
        detail = "report.md cites nothing: a synthesis without a single citation rests on no evidence"
        out.find(CITE_RESOLVE, None, REPORT, detail, severity=out.gated())
        out.add(CITE_RESOLVE, out.gated(), detail)
    elif bad:
        detail = f"{len(bad)} of {len(labels)} report citations resolve to no accepted evidence"
        out.add(CITE_RESOLVE, out.gated(), detail)
    else:
        unused = sum(1 for n in footnotes if n.defined and not n.ref_lines and n.ordinal == 0)
        note = f"; {unused} defined but never cited in the text" if unused else ""
        out.add(CITE_RESOLVE, "pass", f"all {len(labels)} report citations resolve to accepted evidence{note}")


def _fulltext(out: Collector) -> None:
    """C-FULLTEXT: a record's stated basis and a report claim's wording match abstract-only backing."""
    mislabelled = _routed(out, FULLTEXT)
    result = out.rc.assembly.result
    access = {s["source_id"]: s["access"] for s in result["sources"]}
    bodies: dict[str, Footnote] = {}
    for definition in out.rc.inputs.footnotes or []:
        bodies.setdefault(definition.label, definition)
    abstract_only = unlabelled = 0
    for entry in result["accepted"]:
        if entry["kind"] not in ("report_claim", "synthesis_claim") or not entry["source_ids"]:
            continue
        if any(access.get(sid) != "abstract" for sid in entry["source_ids"]):
            continue
        abstract_only += 1
        label = entry["data"].get("label", "")
        note = bodies.get(label)
        wording = " ".join(filter(None, [entry["data"].get("text"), note.body if note else None]))
        if _abstract_label().search(wording):
            continue
        unlabelled += 1
        out.find(
            FULLTEXT,
            None,
            REPORT,
            f"[^{label}] rests on abstracts only; say so in its sentence or footnote (e.g. 'abstract only')",
            artifact_id=entry["artifact_id"],
            line=note.line if note else None,
            label=label,
        )
    parts = [f"{abstract_only} report claim(s) rest on abstracts only, {unlabelled} unlabelled"]
    if mislabelled:
        parts.append(f"{mislabelled} record(s) state a full-text basis backed by abstracts")
    status = "fail" if unlabelled else out.gated() if mislabelled else "pass"
    out.add(FULLTEXT, status, "; ".join(parts))


def _prose(blocks: list[ProseBlock]) -> Iterator[tuple[int, bool, str]]:
    """``(line, inside the wall, sentence)`` for every sentence of the report's prose.

    Headings, code and footnote definitions are not prose. The wall is every section under a
    heading matching the wall's names, down to the next heading of the same or a higher level.
    """
    wall_level: int | None = None
    for block in blocks:
        if block.heading is not None:
            if wall_level is not None and block.heading <= wall_level:
                wall_level = None
            if wall_level is None and _WALL_HEADING_RE.search(block.text):
                wall_level = block.heading
            continue
        for match in _SENTENCE_RE.finditer(block.text):
            sentence = " ".join(match.group(0).split())
            if sentence:
                yield block.line + block.text.count("\n", 0, match.start()), wall_level is not None, sentence


def _hypothesis_wall(out: Collector) -> None:
    """C-HYPOTHESIS-WALL: no finding wording inside the wall, no hypothesis or certainty outside it."""
    blocks = out.rc.inputs.report_blocks
    if blocks is None:
        out.add(HYPOTHESIS_WALL, "pass", "no report.md")
        return
    walled = crossings = 0
    for line, inside, sentence in _prose(blocks):
        walled += inside
        if inside:
            rules = [(r, "a hypothesis worded as an established finding") for r in _finding_wording()]
        else:
            rules = [(r, "a hypothesis reported among the findings") for r in _HYPOTHESIS_WORDING]
            rules += [(r, "certainty no synthesis of evidence has") for r in _CERTAINTY_WORDING]
        for rule, why in rules:
            match = rule.search(sentence)
            if match is not None:
                crossings += 1
                side = "inside" if inside else "outside"
                out.find(
                    HYPOTHESIS_WALL,
                    None,
                    REPORT,
                    f"{why} ({side} the hypothesis section): {match.group(0)!r} in {sentence[:160]!r}",
                    line=line,
                )
                break
    detail = f"{walled} sentence(s) behind the hypothesis wall; {crossings} worded across it"
    out.add(HYPOTHESIS_WALL, "fail" if crossings else "pass", detail, {"walled": walled, "crossings": crossings})
