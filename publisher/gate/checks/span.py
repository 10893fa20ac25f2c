"""``C-SPAN``: every span of the run and every claim ``result.json`` stores is in range, at most
2000 code points, and its excerpt equals the re-slice.

Reason codes: ``SPAN_OUT_OF_RANGE``, ``SPAN_TOO_LONG``, ``EXCERPT_MISMATCH`` (fail); ``NO_SPANS``
for records without the spans they owe (gated).
"""

from __future__ import annotations

from ...kernel.checkids import CheckId
from ...kernel.errors import IntegrityError
from ...kernel.reasons import Reason
from ...parallel import CheckedSnapshots
from ..resultshape import ResultView
from .collect import Collector

__all__ = ["SPAN", "SPAN_CODES", "check_spans"]

SPAN = CheckId.SPAN
SPAN_CODES = frozenset({Reason.SPAN_OUT_OF_RANGE, Reason.SPAN_TOO_LONG, Reason.EXCERPT_MISMATCH})
"""The assembly's reason codes this check fails on (``NO_SPANS`` it carries gated)."""


def check_spans(
    out: Collector, reader: CheckedSnapshots, stored: ResultView | None, assembler_root: str | None
) -> None:
    """C-SPAN: the run's spans (from the assembly) and the claims ``result.json`` stores."""
    assembly = out.rc.assembly
    bad = no_spans = 0
    for entry in assembly.findings:
        reason = entry.reason
        if reason in SPAN_CODES:
            bad += 1
            out.from_assembly(SPAN, entry, "fail")
        elif reason is Reason.NO_SPANS:
            no_spans += 1
            out.from_assembly(SPAN, entry, out.gated())
    claims_checked = 0
    for accepted in stored.accepted if stored else ():
        for index, claim in enumerate(accepted.claims):
            sid, start, end = claim.source_id, claim.start, claim.end
            try:
                reader.get(sid)
            except IntegrityError:
                continue  # reported by C-SNAPSHOT
            claims_checked += 1
            span = reader.span(sid, start, end)
            if span.excerpt is None or span.excerpt != claim.excerpt:
                bad += 1
                reason = span.reason or Reason.EXCERPT_MISMATCH
                out.find(
                    SPAN,
                    reason,
                    "outputs/result.json",
                    f"result.json claim {sid}#{start}-{end} is not the re-slice",
                    artifact_id=accepted.artifact_id,
                    field=f"claims[{index}]",
                    source_id=sid,
                    start=start,
                    end=end,
                    cause=assembler_root,
                )
    note = f"{assembly.result['counts']['spans_checked']} spans and {claims_checked} result claims re-sliced"
    if bad:
        out.add(SPAN, "fail", f"{bad} bad span(s); {note}")
    elif no_spans:
        out.add(SPAN, out.gated(), f"{no_spans} record(s) without the spans they owe; {note}")
    else:
        out.add(SPAN, "pass", note)
