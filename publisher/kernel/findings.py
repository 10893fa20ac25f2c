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

__all__ = ["Finding", "NoteCode", "Severity", "group_findings", "grouped_lines", "counts_by_code", "summary"]

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


_FIXES: dict[str, str] = {
    "UNKNOWN_SOURCE": "cite a source id that 'publisher source fetch' printed for this run",
    "SNAPSHOT_HASH_MISMATCH": "restore the snapshot file byte for byte, or fetch the source again",
    "SPAN_OUT_OF_RANGE": "take the offsets from 'publisher source spans'",
    "SPAN_TOO_LONG": "cite at most 2000 code points; split the span",
    "EXCERPT_MISMATCH": "quote the text exactly as 'publisher source read' prints it",
    "NO_SPANS": "cite each claim with a span from 'publisher source spans'",
    "URL_NOT_RETRIEVED": "fetch the URL in this run with 'publisher source fetch'",
    "NO_FRESH_FETCH": "fetch the source again in this run with 'publisher source fetch'",
    "UNSUPPORTED_VERDICT": "revise or drop what the independent checker rejects",
    "SOURCE_OUTSIDE_ACCEPTED": "cite only accepted evidence",
    "NO_PAPER_ID": "cite it as url:/web:, or 'publisher run init NEW --from RUN' and fetch with its ids",
    "ASSET_HASH_MISMATCH": "restore the PDF under assets/papers/ or add it with 'publisher source local'",
    "ACCESS_MISMATCH": "state the snapshot's own access level, or leave access out",
    "SCHEMA_ERROR": "fix the file as described ('publisher schema' prints each format)",
    "C-EVENT-LOG": "restore events.jsonl byte for byte; the log is never edited by hand",
    "C-GATE": "fix or drop the unresolved artifacts named, then 'publisher assemble'",
    "C-PROSE": "cite quotations through span footnotes; no cite-line or badge look-alike in report prose",
    "C-PAGE-PROSE": "write plain Markdown: no script, style, handler, frame or evidence look-alike",
    "C-HYPOTHESIS-WALL": "keep hypotheses under the report's hypothesis heading, findings outside it",
    "C-FULLTEXT": "label claims resting on abstracts only as such, or cite the full text",
    "C-CITE-RESOLVE": "cite only evidence the run accepts",
    "C-SITE-FILE": "rebuild the site with 'mkdocs build'; never edit a built site",
    "C-SITE-PIN": "rebuild, or pin the digest check-site prints for the site you publish",
    "C-CSP": "rebuild the site with 'mkdocs build'; never edit a built site",
    "C-PROMOTED": "restore the promoted text, or promote the run again; write your own prose outside the block",
    "C-META": "keep to the front matter keys the theme may render, with the values docs/reading.md lists",
}
"""The one-line fix of each code, shown under a root finding whose detail names none."""

_FIX_BY_CHECK = frozenset({"C-PROMOTED"})
"""Checks whose fix is shown rather than their reason code's (the code says what differs, the check
what to do)."""


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

    @property
    def fix(self) -> str | None:
        """What fixes this finding, in one short line (None when its detail already says)."""
        if "publisher " in self.detail or "; fix" in self.detail:
            return None
        if self.check in _FIX_BY_CHECK:
            return _FIXES.get(self.check)
        return _FIXES.get(self.code)

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
        out["fix"] = self.fix
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
