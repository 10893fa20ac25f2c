"""``C-GATE``: the assembler gate over the inputs now: every artifact accepted and the evidence set
not empty.

Reason codes: every code of the assembly no other check carries (``SCHEMA_ERROR``,
``URL_NOT_RETRIEVED``, ``UNSUPPORTED_VERDICT``, ``NO_PAPER_ID``, ``ACCESS_MISMATCH`` on fields
other than ``evidence_basis`` ...), and ``NO_SPANS`` for an empty evidence set. Gated.
"""

from __future__ import annotations

from ...kernel.checkids import CheckId
from ...kernel.reasons import Reason
from ..artifacts import LOG_NOT_INTACT
from .collect import Collector
from .report import report_check_of
from .snapshot import SNAPSHOT_CODES
from .span import SPAN_CODES

__all__ = ["GATE", "check_gate"]

GATE = CheckId.GATE


def check_gate(out: Collector, snapshot_roots: dict[str, str], log_root: str | None) -> None:
    """C-GATE: every other reason code of the assembly; an empty evidence set."""
    assembly = out.rc.assembly
    shown = SNAPSHOT_CODES | SPAN_CODES | {Reason.NO_SPANS, Reason.NO_FRESH_FETCH}
    for entry in assembly.findings:
        if entry.reason in shown or report_check_of(entry) is not None:
            continue
        cause = log_root if entry.detail.startswith(LOG_NOT_INTACT) else None
        out.from_assembly(GATE, entry, out.gated(), cause)
    counts = assembly.result["counts"]
    if counts["unresolved"]:
        out.add(GATE, out.gated(), f"{counts['unresolved']} of {counts['artifacts_seen']} artifacts unresolved")
    elif not counts["accepted"]:
        out.find(
            GATE,
            Reason.NO_SPANS,
            "outputs/result.json",
            "no accepted artifact: an empty evidence set is not a pass",
            severity=out.gated(),
        )
        out.add(GATE, out.gated(), "no accepted artifact: an empty evidence set is not a pass")
    else:
        out.add(GATE, "pass", f"all {counts['accepted']} artifacts accepted")
