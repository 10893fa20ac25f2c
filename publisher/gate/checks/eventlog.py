"""``C-EVENT-LOG``: the event log is a regular file, its chain intact, no line torn, and the
lines ``result.json`` read unchanged. Findings carry the check id (no reason code); fails
whatever the gate. Its root finding is the cause of every freshness a broken log voids.

Seals (CONTRACT 12): on a wiki that trusts keys, a line after the first without ``prev``
(``LOG_UNCHAINED``) or an acquisition event without ``record_hash`` (``EVENT_UNSEALED``) fails
the check, so stripping the chain or a seal is never "chain intact"; on a wiki configured
unsigned each is a warning with the same note code; an upstream-layout run keeps upstream's rules.
"""

from __future__ import annotations

from typing import Literal

from ...kernel.checkids import CheckId
from ...kernel.findings import NoteCode
from ...kernel.vocab import EventType
from ..inputs import RunInputs
from ..resultshape import ResultView
from .collect import Collector

__all__ = ["EVENT_LOG", "Seals", "seals_of", "check_log"]

EVENT_LOG = CheckId.EVENT_LOG

Seals = Literal["fail", "warn", "off"]
"""What a missing seal or chain link is for a run: a failure (the wiki trusts keys), a warning
(the wiki is configured unsigned), or upstream's rule (an upstream-layout run)."""

_SEALED_EVENTS = frozenset({EventType.FETCH, EventType.LOCAL_PDF, EventType.REGISTER})


def seals_of(inputs: RunInputs) -> Seals:
    """How missing seals count for this run (see :data:`Seals`)."""
    if inputs.run.upstream_layout:
        return "off"
    return "fail" if inputs.provenance.trusted_keys else "warn"


def _missing_seals(out: Collector, inputs: RunInputs, seals: Seals, cause: str | None) -> tuple[str | None, list[str]]:
    """Findings for a stripped chain and unsealed acquisitions; (root key, problems that fail)."""
    if seals == "off":
        return None, []
    log, file = inputs.log, "events.jsonl"
    root: str | None = None
    problems: list[str] = []
    found: list[tuple[int, NoteCode, str]] = []
    for index, event in enumerate(log.events, start=1):
        if index > 1 and event.prev is None and not log.chained:
            found.append((index, NoteCode.LOG_UNCHAINED, f"{event.event_id} has no prev: the log is not chained"))
        if event.type in _SEALED_EVENTS and event.source_id is not None and event.record_hash is None:
            detail = f"{event.event_id} has no record_hash: the snapshot's metadata is not sealed by its acquisition"
            found.append((index, NoteCode.EVENT_UNSEALED, detail))
    for line, code, detail in found:
        if seals == "fail":
            detail += "; a wiki that trusts keys requires every seal"
        finding = out.find(EVENT_LOG, None, file, detail, line=line, field=code, severity=seals, cause=cause or root)
        root = root or finding.key
        if seals == "fail":
            problems.append(f"line {line}: {code.value}")
    return root, problems


def check_log(out: Collector, inputs: RunInputs, stored: ResultView | None, seals: Seals) -> str | None:
    """C-EVENT-LOG: a regular file, chain intact, no torn line, the stored prefix unchanged.

    Returns the key of the root finding under which broken-log consequences are grouped. Line
    endings converted to CRLF (a checkout or an editor) break every line's digest: that is named
    once, as the cause, with the fix, instead of as one broken link per line.
    """
    log = inputs.log
    file = "events.jsonl"
    if inputs.log_problem is not None:
        root = out.find(EVENT_LOG, None, file, inputs.log_problem)
        out.add(EVENT_LOG, "fail", inputs.log_problem)
        return root.key
    root_key: str | None = None
    problems: list[str] = []
    if log.crlf:
        detail = (
            f"{log.crlf} line(s) end in CRLF: line endings were converted (a checkout or an editor), so no "
            "digest of the chain verifies; restore the file byte for byte (git: mark '*.jsonl -text' in "
            ".gitattributes and check it out again)"
        )
        root_key = out.find(EVENT_LOG, None, file, detail).key
        problems.append(f"{log.crlf} CRLF line ending(s)")
    for item in log.findings:
        finding = out.find(EVENT_LOG, None, file, item.detail, line=item.line, cause=root_key)
        root_key = root_key or finding.key
        problems.append(f"line {item.line}: {item.detail}")
    unsealed_root, unsealed = _missing_seals(out, inputs, seals, root_key)
    if unsealed:
        root_key = root_key or unsealed_root
        problems += unsealed
    if log.torn:
        line = len(log.digests) + 1
        if log.invalid_last is not None:
            detail, problem = f"line {line} is complete but not a valid event ({log.invalid_last})", "not a valid event"
        else:
            detail, problem = f"line {line} is torn (no trailing newline: a write was cut short)", "torn"
        finding = out.find(EVENT_LOG, None, file, detail, line=line)
        root_key = root_key or finding.key
        problems.append(f"line {line} is {problem}")
    if stored is not None:
        count, head = stored.log.events, stored.log.head
        if count > len(log.digests):
            detail = f"result.json read {count} log lines; only {len(log.digests)} remain"
        elif count and log.head_at(count) != head:
            detail = f"line {count} no longer hashes to result.json's log.head"
        elif not count and head is not None:
            detail = "result.json records a head for an empty log"
        else:
            detail = ""
        if detail:
            finding = out.find(EVENT_LOG, None, file, detail, line=count or None, cause=root_key)
            root_key = root_key or finding.key
            problems.append(detail)
    if problems:
        out.add(EVENT_LOG, "fail", "; ".join(problems))
    elif unsealed_root is not None:
        out.add(EVENT_LOG, "pass", f"{len(log.digests)} lines; unsigned wiki: chain or seals missing (warnings)")
    else:
        out.add(EVENT_LOG, "pass", f"{len(log.digests)} lines, chain intact")
    return root_key
