"""The one finding type: what a check found, where, and under which reason code or check id.

Every check of the product (the assembler's artifacts, the verifier's numbered checks, the wiki
check, the site seal) reports :class:`Finding` values; the caller decides what blocks. A finding
names a closed reason code where one applies, else the check it belongs to (``C-EVENT-LOG``,
``C-ASSEMBLER``, ``C-CONFIG`` ...), plus the facts: file and line, run, artifact, field, footnote
label, source id and offsets. ``cause`` groups consequences under the one root cause they follow
from (a tampered snapshot, a broken event log), so a user reads one problem, not ten lines.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import asdict, dataclass
from enum import StrEnum
from typing import Any, Literal

from .checkids import CheckId
from .reasons import Reason
from .text import one_line

__all__ = [
    "Finding",
    "LocateOutcome",
    "Located",
    "NoteCode",
    "Severity",
    "typed_fix",
    "group_findings",
    "grouped_lines",
    "counts_by_code",
    "summary",
]

Severity = Literal["fail", "warn"]


class NoteCode(StrEnum):
    """What a finding's ``field`` names when the problem is a missing seal or link, not a wrong
    one: a failure on a wiki that trusts keys, a warning on a wiki configured unsigned."""

    METADATA_UNSEALED = "METADATA_UNSEALED"
    """A snapshot without ``record_hash``: its metadata (access, paper, title) can be edited."""
    LOG_UNCHAINED = "LOG_UNCHAINED"
    """An event log line after the first without ``prev``: lines can be removed or reordered."""
    EVENT_UNSEALED = "EVENT_UNSEALED"
    """An acquisition event without ``record_hash``: the snapshot's metadata is not bound to it."""


class LocateOutcome(StrEnum):
    """What the quote locator made of a mismatched quote: why a candidate is named or is not."""

    LOCATED = "LOCATED"
    """The search finished and names its nearest candidate."""
    NOWHERE = "NOWHERE"
    """The search finished and the quote is nowhere in the text, not even after normalisation."""
    NOT_SEARCHED = "NOT_SEARCHED"
    """No search: the quote is blank, longer than a span's quote may be, or its text unreadable."""
    OVER_LIMIT = "OVER_LIMIT"
    """No search: more quotes than are located per assembly or import were already searched."""
    BUDGET = "BUDGET"
    """The search stopped at its shared work budget; a nearer candidate may lie past where it stopped."""


@dataclass(frozen=True)
class Located:
    """The quote locator's answer for one mismatched quote, as data: the outcome and, when
    :attr:`LocateOutcome.LOCATED`, the nearest candidate's kind and raw code-point range."""

    outcome: LocateOutcome
    kind: str | None = None
    """``exact``, ``normalized`` or ``fragments`` (the candidate's kind), else None."""
    start: int | None = None
    end: int | None = None
    candidates: int = 0
    """How many candidates the search found (the nearest is the one named)."""


_FIX_BY_REASON: dict[Reason, str] = {
    Reason.UNKNOWN_SOURCE: "cite a source id that 'publisher source fetch' printed for this run",
    Reason.SNAPSHOT_HASH_MISMATCH: "restore the snapshot file byte for byte, or fetch the source again",
    Reason.SPAN_OUT_OF_RANGE: "take the offsets from 'publisher source spans'",
    Reason.SPAN_TOO_LONG: "cite at most 2000 code points; split the span",
    Reason.EXCERPT_MISMATCH: "quote the text exactly as 'publisher source read' prints it",
    Reason.NO_SPANS: "cite each claim with a span from 'publisher source spans'",
    Reason.URL_NOT_RETRIEVED: "fetch the URL in this run with 'publisher source fetch'",
    Reason.NO_FRESH_FETCH: "fetch the source again in this run with 'publisher source fetch'",
    Reason.UNSUPPORTED_VERDICT: "revise or drop what the independent checker rejects",
    Reason.SOURCE_OUTSIDE_ACCEPTED: "cite only accepted evidence",
    Reason.NO_PAPER_ID: "cite it as url:/web:, or 'publisher run init NEW --from RUN' and fetch with its ids",
    Reason.ASSET_HASH_MISMATCH: "restore the PDF under assets/papers/ or add it with 'publisher source local'",
    Reason.ACCESS_MISMATCH: "state the snapshot's own access level, or leave access out",
    Reason.SCHEMA_ERROR: "fix the file as described ('publisher schema' prints each format)",
}
"""The one-line fix of each reason code: a finding's fix unless its site names its own."""

_FIX_BY_CHECK: dict[CheckId, str] = {
    CheckId.EVENT_LOG: "restore events.jsonl byte for byte; the log is never edited by hand",
    CheckId.GATE: "fix or drop the unresolved artifacts named, then 'publisher assemble'",
    CheckId.PROSE: "cite quotations through span footnotes; no cite-line or badge look-alike in report prose",
    CheckId.PAGE_PROSE: "write plain Markdown: no script, style, handler, frame or evidence look-alike",
    CheckId.HYPOTHESIS_WALL: "keep hypotheses under the report's hypothesis heading, findings outside it",
    CheckId.FULLTEXT: "label claims resting on abstracts only as such, or cite the full text",
    CheckId.CITE_RESOLVE: "cite only evidence the run accepts",
    CheckId.SITE_FILE: "rebuild the site with 'mkdocs build'; never edit a built site",
    CheckId.SITE_PIN: "rebuild, or pin the digest check-site prints for the site you publish",
    CheckId.CSP: "rebuild the site with 'mkdocs build'; never edit a built site",
    CheckId.PROMOTED: "restore the promoted text, or promote the run again; write your own prose outside the block",
    CheckId.META: "keep to the front matter keys the theme may render, with the values docs/reading.md lists",
}
"""The one-line fix of each check, for a finding without a reason code (or one of
:data:`_CHECK_FIRST`) whose site names no fix of its own."""

_CHECK_FIRST = frozenset({CheckId.PROMOTED})
"""Checks whose fix is shown rather than their reason code's (the code says what differs, the check
what to do)."""


def typed_fix(reason: Reason | None, check: CheckId | None) -> str | None:
    """The fix a finding of ``reason`` under ``check`` gets when its site names none: the check's
    for :data:`_CHECK_FIRST`, else the reason code's, else the check's (None when neither has one)."""
    if check is not None and (reason is None or check in _CHECK_FIRST):
        return _FIX_BY_CHECK.get(check)
    return _FIX_BY_REASON.get(reason) if reason is not None else None


@dataclass(frozen=True)
class Finding:
    """One problem: reason code or check id, file (relative to the wiki or run) and the facts."""

    reason: Reason | None
    file: str
    detail: str
    artifact_id: str | None = None
    label: str | None = None
    source_id: str | None = None
    start: int | None = None
    end: int | None = None
    line: int | None = None
    check: CheckId | None = None
    """The numbered check (``C-SNAPSHOT`` ...) the finding belongs to, when it comes from one."""
    field: str | None = None
    run: str | None = None
    """The run (path relative to the wiki root) the finding concerns."""
    severity: Severity = "fail"
    cause: str | None = None
    """:attr:`key` of the root finding this one is a consequence of."""
    expected: str | None = None
    """What the check required at this place (the text promotion writes on a ``C-PROMOTED`` line)."""
    found: str | None = None
    """What the file holds there instead."""
    fix: str | None = None
    """What fixes this finding, in one short line: the site's own where it names one (``fix=``),
    else, chosen at construction, the one of its reason code or check (:func:`typed_fix`)."""
    differs_at: int | None = None
    """For ``EXCERPT_MISMATCH``: the first code point at which the quote and the re-slice differ
    (the shorter one's length when one is the other's beginning)."""
    located: Located | None = None
    """For ``EXCERPT_MISMATCH``: where the quote locator found the quote, or why it names nothing."""

    def __post_init__(self) -> None:
        if self.fix is None:
            object.__setattr__(self, "fix", typed_fix(self.reason, self.check))

    @property
    def code(self) -> str:
        """The reason code, else the check id: what a user greps for."""
        if self.reason is not None:
            return self.reason.value
        return self.check or "ERROR"

    @property
    def key(self) -> str:
        """A stable name for this finding as a root cause (``code file[:line] source``)."""
        where = self.file + (f":{self.line}" if self.line else "")
        return " ".join(p for p in (self.code, where, self.source_id) if p)

    def one_line(self, detail: bool = True) -> str:
        """``CODE file[:line] [footnote ^label|artifact id] [field] [src#s-e]: detail`` (without
        ``detail``: the facts only, for a consequence that repeats its root's detail)."""
        where = self.file + (f":{self.line}" if self.line else "")
        parts = [self.code, where]
        if self.check is not None and self.reason is not None:
            parts.insert(1, f"[{self.check}]")
        if self.label is not None:
            parts.append(f"footnote [^{self.label}]")
        if self.artifact_id is not None:
            parts.append(f"artifact {self.artifact_id}")
        if self.field is not None:
            parts.append(f"field {self.field}")
        if self.source_id is not None and (self.start is not None or self.source_id not in where):
            span = f"#{self.start}-{self.end}" if self.start is not None else ""
            parts.append(self.source_id + span)
        return " ".join(parts) + (": " + one_line(self.detail) if detail else "")

    def to_dict(self) -> dict[str, Any]:
        """Plain values for ``--json``."""
        out = asdict(self)
        out["reason_code"] = self.reason.value if self.reason is not None else None
        out["code"] = self.code
        out["key"] = self.key  # what a consequence's ``cause`` names
        del out["reason"]
        return out


def group_findings(findings: Iterable[Finding]) -> list[tuple[Finding, list[Finding]]]:
    """Root findings in order, each with the consequences that name it as their ``cause``.

    A consequence whose cause is not among the findings is a root of its own.
    """
    items = list(findings)
    roots = {f.key: f for f in items if f.cause is None}
    grouped: dict[str, list[Finding]] = {key: [] for key in roots}
    order: list[Finding] = []
    for f in items:
        if f.cause is not None and f.cause in grouped:
            grouped[f.cause].append(f)
        elif f.cause is None:
            order.append(f)
        else:
            grouped.setdefault(f.key, [])
            order.append(f)
    return [(f, grouped.get(f.key, [])) for f in order]


def counts_by_code(findings: Iterable[Finding]) -> dict[str, int]:
    """How many findings carry each code, sorted by code."""
    out: dict[str, int] = {}
    for f in findings:
        out[f.code] = out.get(f.code, 0) + 1
    return dict(sorted(out.items()))


def summary(findings: Iterable[Finding]) -> str:
    """``N finding(s) (CODE xN, ...)``: how many findings, and how many of each code.

    The summary line of a refusal, worded once for the command line and the MkDocs build.
    """
    items = list(findings)
    counts = ", ".join(f"{code} x{n}" for code, n in counts_by_code(items).items())
    return f"{len(items)} finding(s) ({counts})"


def grouped_lines(findings: Iterable[Finding], indent: str = "  ") -> list[str]:
    """One line per root finding, each consequence indented under its cause with ``↳``.

    The one wording of a list of findings: the CLI (``publisher: `` before each line, no indent)
    and the MkDocs build (under its phase line, indented) add only their framing.
    """
    lines: list[str] = []
    for root, consequences in group_findings(findings):
        lines.append(indent + root.one_line())
        if root.fix is not None:
            lines.append(f"{indent}  fix: {root.fix}")
        lines += [f"{indent}  ↳ {f.one_line(f.detail != root.detail)}" for f in consequences]
    return lines
