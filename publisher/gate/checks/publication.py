"""The publication policy: whether a checked run's evidence may be published (CONTRACT section 10).

:func:`refusals` reads a :class:`~.runcheck.RunCheck` and returns the findings that refuse
publication, each a :class:`~publisher.kernel.findings.Finding` (empty: the run may be published).
``publisher promote``, ``publisher check`` and the build ask this one function.
"""

from __future__ import annotations

from dataclasses import replace

from ...kernel.checkids import CheckId
from ...kernel.findings import Finding
from ...kernel.reasons import Reason
from .assembler import ASSEMBLER
from .runcheck import RunCheck

__all__ = ["refusals"]


def refusals(rc: RunCheck) -> list[Finding]:
    """Why this run's evidence may not be published now (CONTRACT section 10); empty if it may.

    Publication needs ``result.json`` to be exactly what assembling the run now produces
    (stale, edited or absent all refuse, whatever the gate), a gate verdict other than
    ``fail``, an evidence set that is not empty, and no failed check.
    """
    out = [f for f in rc.findings if f.severity == "fail"]
    if rc.status(ASSEMBLER) == "warn":
        roots = [f for f in rc.findings if f.check == ASSEMBLER and f.severity == "warn"]
        out += [replace(f, severity="fail") for f in roots]
        # What the stored result calls fresh and is not now is why it cannot be published:
        # shown under the stored result's root, never as causes of their own.
        root_key = roots[0].key if roots else None
        out += [
            replace(f, severity="fail", cause=f.cause or root_key)
            for f in rc.findings
            if f.check == CheckId.FRESH_FETCH and f.severity == "warn"
        ]
    result = rc.result  # read once: a packed check decodes on each reading
    counts = result["counts"]
    if (
        rc.assembly.verdict == "fail"
        and counts["unresolved"]
        and not any(f.check in (CheckId.GATE, CheckId.FRESH_FETCH) for f in out)
    ):
        detail = f"gate verdict fail: {counts['unresolved']} of {counts['artifacts_seen']} artifacts unresolved"
        root = _root(rc, CheckId.GATE, "outputs/result.json", detail)
        out.append(root)
        gate = [f for f in rc.findings if f.check == CheckId.GATE and f.severity == "warn"]
        out += [replace(f, severity="fail", cause=f.cause or root.key) for f in gate]
    if not result["accepted"]:  # the empty-set finding of the assembly is only ever a warning
        detail = "no accepted artifact: an empty evidence set is not a pass"
        empty = _root(rc, CheckId.GATE, "outputs/result.json", detail, Reason.NO_SPANS)
        # A stored result that is not the assembly now is the root: its fix comes first.
        assembler = next((f.key for f in out if f.check == ASSEMBLER and f.cause is None), None)
        out.append(replace(empty, cause=assembler) if assembler is not None else empty)
    return out


def _root(rc: RunCheck, check: CheckId, file: str, detail: str, reason: Reason | None = None) -> Finding:
    return Finding(reason, rc.file(file), detail, check=check, run=rc.label)
