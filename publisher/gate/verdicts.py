"""The upstream verifier's verdict (``UNSUPPORTED_VERDICT``) read from ``outputs/verification.json``.

The upstream kit's verifier writes ``outputs/verification.json`` with an ``unsupported_claims``
list, and its assembler rejects what a previous verification called unsupported. Such a file is
read here and is an input of the assembly (its digest is in the inputs list): every artifact an
entry names is ``UNSUPPORTED_VERDICT``. An entry names artifacts by ``artifact_id`` (ours, or the
upstream ``report:L<line>[#label]``), by ``evidence_id`` (the extraction and appraisal of that
paper), or by ``location`` ``report.md:L<line>`` (the report claims cited or defined on that line).

``publisher verify`` writes its own report to the same name, so a file there is *ours* when it has
our shape (``verdict``, ``checks`` and ``findings``, and no ``unsupported_claims``): ours holds no
verdict on artifacts and is not an input. Any other file there is never overwritten: ``verify``
writes to ``outputs/publisher-verification.json`` instead (:func:`verification_target`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any, Protocol

from ..kernel import _fs
from ..kernel.canonical import StrictJSONError, loads_strict, prefixed, sha256_hex
from ..kernel.errors import UsageError
from ..kernel.reasons import Reason
from ..kernel.text import one_line
from ..runs import Run

__all__ = ["Unsupported", "UpstreamVerification", "read_upstream_verification", "verification_target", "flag_upstream"]

_OUR_VERDICTS = ("Verified", "Inconclusive", "Failed")
_LINE_RE = re.compile(r":L(\d+)\b")
_REPORT_ID_RE = re.compile(r"report:L(\d+)(?:#(.+))?")
_NAME = "outputs/verification.json"


class _Artifact(Protocol):
    """What an entry is matched against (an :class:`~publisher.gate.artifacts.Artifact`)."""

    artifact_id: str
    kind: str
    evidence_id: str | None
    data: dict[str, Any]

    def find(self, field_name: str, reason: Reason, detail: str, source_id: str | None = None) -> None: ...


class Unsupported:
    """One ``unsupported_claims[]`` entry and what it names. This and
    :class:`UpstreamVerification` are plain slotted classes: a dataclass compiles its methods each
    time its module is imported, which every ``assemble`` and ``verify`` pays, and nothing compares
    these (entries are told apart by their index)."""

    __slots__ = ("artifact_id", "evidence_id", "index", "label", "line", "reason")

    def __init__(
        self,
        index: int,
        reason: str,
        artifact_id: str | None = None,
        evidence_id: str | None = None,
        line: int | None = None,
        label: str | None = None,
    ) -> None:
        self.index, self.reason, self.artifact_id = index, reason, artifact_id
        self.evidence_id, self.line, self.label = evidence_id, line, label

    def names(self, art: _Artifact) -> bool:
        """Whether this entry calls ``art`` unsupported."""
        if self.artifact_id is not None and self.artifact_id == art.artifact_id:
            return True
        if art.kind in ("extraction", "appraisal"):
            return self.evidence_id is not None and self.evidence_id == art.evidence_id
        if self.line is None or (self.label is not None and self.label != art.data.get("label")):
            return False
        return self.line == art.data.get("line") or self.line in art.data.get("_ref_lines", ())


class UpstreamVerification:
    """What ``outputs/verification.json`` contributes to an assembly: ``digest``, the ``sha256:``
    of the file when it is an independent verdict (None when absent or ours), and its entries."""

    __slots__ = ("digest", "unsupported")

    def __init__(self, digest: str | None, unsupported: tuple[Unsupported, ...] = ()) -> None:
        self.digest, self.unsupported = digest, unsupported


def _is_ours(raw: Any) -> bool:
    return (
        isinstance(raw, dict)
        and "unsupported_claims" not in raw
        and raw.get("verdict") in _OUR_VERDICTS
        and isinstance(raw.get("checks"), list)
        and isinstance(raw.get("findings"), list)
    )


def _entry(index: int, item: Any) -> Unsupported:
    if not isinstance(item, dict):
        raise UsageError(f"{_NAME}: unsupported_claims[{index}] is not an object", reason=Reason.SCHEMA_ERROR)
    strings = {
        k: item[k]
        for k in ("artifact_id", "evidence_id", "location", "reason", "claim")
        if isinstance(item.get(k), str)
    }
    reason = strings.get("reason") or strings.get("claim") or "no reason given"
    artifact_id, evidence_id = strings.get("artifact_id"), strings.get("evidence_id")
    line: int | None = None
    label: str | None = None
    report_id = _REPORT_ID_RE.fullmatch(artifact_id) if artifact_id else None
    if report_id is not None:
        line, label = int(report_id.group(1)), report_id.group(2)
    elif "location" in strings and (found := _LINE_RE.search(strings["location"])):
        line = int(found.group(1))
    if artifact_id is None and evidence_id is None and line is None:
        raise UsageError(
            f"{_NAME}: unsupported_claims[{index}] names no artifact_id, evidence_id or report.md:L<line> location",
            reason=Reason.SCHEMA_ERROR,
        )
    return Unsupported(index, one_line(reason, 200), artifact_id, evidence_id, line, label)


def _read(run: Run) -> tuple[bytes | None, Any]:
    try:
        data = _fs.read_regular(run.verification_path, follow_symlinks=False)
    except FileNotFoundError:
        return None, None
    except _fs.NotRegularFileError as exc:
        raise UsageError(str(exc), reason=Reason.SCHEMA_ERROR, path=str(run.verification_path)) from exc
    except OSError as exc:
        raise UsageError(f"cannot read {run.verification_path}: {exc.strerror or exc}") from exc
    try:
        return data, loads_strict(data)
    except (StrictJSONError, ValueError) as exc:
        raise UsageError(
            f"{run.verification_path}: not strict JSON ({exc}); it is read as an independent verifier's verdict",
            reason=Reason.SCHEMA_ERROR,
        ) from exc


def read_upstream_verification(run: Run) -> UpstreamVerification:
    """The independent verdict in ``outputs/verification.json``; raises UsageError when malformed."""
    data, raw = _read(run)
    if data is None or _is_ours(raw):
        return UpstreamVerification(None)
    digest = prefixed(sha256_hex(data))
    items = raw.get("unsupported_claims") if isinstance(raw, dict) else None
    if items is None:
        return UpstreamVerification(digest)
    if not isinstance(items, list):
        raise UsageError(f"{_NAME}: unsupported_claims is not a list", reason=Reason.SCHEMA_ERROR)
    return UpstreamVerification(digest, tuple(_entry(i, item) for i, item in enumerate(items)))


def verification_target(run: Run) -> Path:
    """Where ``publisher verify`` writes: ``verification.json`` unless another verifier's file is there."""
    try:
        data, raw = _read(run)
    except UsageError:
        return run.own_verification_path
    return run.verification_path if data is None or _is_ours(raw) else run.own_verification_path


def flag_upstream(arts: Iterable[_Artifact], verification: UpstreamVerification) -> set[int]:
    """``UNSUPPORTED_VERDICT`` on every artifact an entry names; returns the indexes of the entries used."""
    used: set[int] = set()
    for art in arts:
        for item in verification.unsupported:
            if item.names(art):
                used.add(item.index)
                art.find(
                    "verification",
                    Reason.UNSUPPORTED_VERDICT,
                    f"{_NAME} unsupported_claims[{item.index}]: {item.reason}",
                )
    return used
