"""``C-SNAPSHOT``: every snapshot the run's records and report or ``result.json`` reference
exists, parses and recomputes all its digests, and so does the stored PDF behind it.

Reason codes: ``UNKNOWN_SOURCE``, ``SNAPSHOT_HASH_MISMATCH``, ``ASSET_HASH_MISMATCH``. One root
finding per snapshot; the artifacts citing it are its consequences. Fails whatever the gate.
A snapshot without ``record_hash`` is ``SNAPSHOT_HASH_MISMATCH`` (field ``METADATA_UNSEALED``) on a
wiki that trusts keys, a warning with that note code on a wiki configured unsigned, and a note
for an upstream-layout run (see :data:`.eventlog.Seals`).
"""

from __future__ import annotations

from ...kernel.checkids import CheckId
from ...kernel.errors import IntegrityError
from ...kernel.findings import NoteCode
from ...kernel.reasons import Reason
from ...parallel import CheckedSnapshots
from ..resultshape import ResultView
from .assembler import result_sources
from .collect import Collector
from .eventlog import Seals

__all__ = ["SNAPSHOT", "SNAPSHOT_CODES", "check_snapshots"]

SNAPSHOT = CheckId.SNAPSHOT
SNAPSHOT_CODES = frozenset({Reason.UNKNOWN_SOURCE, Reason.SNAPSHOT_HASH_MISMATCH, Reason.ASSET_HASH_MISMATCH})
"""The assembly's reason codes this check carries."""


def check_snapshots(
    out: Collector, reader: CheckedSnapshots, stored: ResultView | None, seals: Seals
) -> dict[str, str]:
    """C-SNAPSHOT: one root finding per snapshot that does not verify; returns source id -> root key."""
    assembly = out.rc.assembly
    wanted = list(dict.fromkeys([*assembly.referenced, *(result_sources(stored) if stored else [])]))
    roots: dict[str, str] = {}
    unsealed = 0
    for source_id in wanted:
        try:
            snap = reader.get(source_id)
        except IntegrityError as exc:
            reason = exc.reason or Reason.SNAPSHOT_HASH_MISMATCH
            root = out.find(SNAPSHOT, reason, f"sources/{source_id}.json", exc.message, source_id=source_id)
            roots[source_id] = root.key
            continue
        if not snap.sealed:
            unsealed += 1
            file, code = f"sources/{source_id}.json", NoteCode.METADATA_UNSEALED
            if seals == "fail":
                detail = "metadata unsealed (no record_hash); a wiki that trusts keys requires sealed snapshots"
                root = out.find(SNAPSHOT, Reason.SNAPSHOT_HASH_MISMATCH, file, detail, source_id=source_id, field=code)
                roots[source_id] = root.key
                continue
            if seals == "warn":
                detail = "metadata unsealed (no record_hash): access, paper and title can be edited unseen"
                out.find(SNAPSHOT, None, file, detail, source_id=source_id, field=code, severity="warn")
        problem = assembly.assets.check(snap)
        if problem is not None:
            # The stored PDF behind a snapshot is one of its digests: tampering, whatever the gate.
            # The PDF lies in the wiki's library (<wiki>/assets/papers/), not in the run.
            asset = snap.asset is not None
            where = snap.asset.path if snap.asset is not None else f"sources/{source_id}.json"
            root = out.find(SNAPSHOT, Reason.ASSET_HASH_MISMATCH, where, problem, in_wiki=asset, source_id=source_id)
            roots[source_id] = root.key
    note = f"; {unsealed} with metadata unsealed ({NoteCode.METADATA_UNSEALED.value})" if unsealed else ""
    bad = len(roots)
    if assembly.wiki_root is None and any(f.reason is Reason.ASSET_HASH_MISMATCH for f in out.rc.findings):
        note += "; no wiki root found for the stored PDFs (pass --wiki)"
    out.add(
        SNAPSHOT,
        "fail" if bad else "pass",
        f"{len(wanted) - bad} of {len(wanted)} referenced snapshots verified{note}",
    )
    for entry in assembly.findings:
        if entry.reason in SNAPSHOT_CODES:
            out.from_assembly(SNAPSHOT, entry, "fail", roots.get(entry.source_id or ""))
    return roots
