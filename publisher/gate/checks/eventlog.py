"""``C-EVENT-LOG``: the event log is a regular file, its chain intact, no line torn, and the
lines ``result.json`` read unchanged. Findings carry the check id (no reason code); fails
whatever the gate. Its root finding is the cause of every freshness a broken log voids."""

from __future__ import annotations

from ..inputs import RunInputs
from ..result import Result
from .collect import Collector

__all__ = ["EVENT_LOG", "check_log"]

EVENT_LOG = "C-EVENT-LOG"


def check_log(out: Collector, inputs: RunInputs, stored: Result | None) -> str | None:
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
    if log.torn:
        line = len(log.digests) + 1
        finding = out.find(EVENT_LOG, None, file, f"line {line} is torn (no trailing newline)", line=line)
        root_key = root_key or finding.key
        problems.append(f"line {line} is torn")
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
    else:
        out.add(EVENT_LOG, "pass", f"{len(log.digests)} lines, chain intact")
    return root_key
