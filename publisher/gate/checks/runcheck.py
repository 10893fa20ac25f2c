"""What the checks of one run report (:class:`RunCheck`), and its ``verification.json`` form.

The checks (one module each in this package) add their statuses and findings to a
:class:`RunCheck` through a :class:`~.collect.Collector`; :mod:`.publication` decides from it
whether the run's evidence may be published. Findings stay :class:`~publisher.kernel.findings.Finding`
values until :attr:`RunCheck.report` writes them in the contract's shape.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, NoReturn, cast

import orjson

from ...kernel import _fs
from ...kernel.canonical import StrictJSONError, loads_written
from ...kernel.checkids import CheckId
from ...kernel.errors import IntegrityError
from ...kernel.findings import Finding
from ...kernel.frozen import FrozenValue
from ...runs import Run
from ..inputs import RunInputs

if TYPE_CHECKING:
    from ..assemble import Assembly

__all__ = ["RunCheck", "CheckStatus", "Status", "finding_entry", "compact_json", "from_compact_json"]


Status = Literal["pass", "warn", "fail"]


class CheckStatus(FrozenValue):
    """The outcome of one numbered check: its id, ``pass``, ``warn`` or ``fail``, and one line.

    ``counts``: what the check counted, by name (e.g. ``walled`` sentences), for a reader that
    needs the numbers without parsing ``detail``; listed in ``verification.json`` only when not
    empty. Frozen, equal by its fields and hashed by all but ``counts``
    (:class:`~publisher.kernel.frozen.FrozenValue`)."""

    __slots__ = ("check_id", "counts", "detail", "status")
    _fields = ("check_id", "status", "detail", "counts")
    _hashed = ("check_id", "status", "detail")
    check_id: str
    status: Status
    detail: str
    counts: dict[str, int]

    def __init__(self, check_id: str, status: Status, detail: str, counts: dict[str, int] | None = None) -> None:
        self._init(check_id, status, detail, {} if counts is None else counts)

    def __reduce__(self) -> tuple[Any, tuple[Any, ...]]:
        """Pickled as plain values (a checked run's statuses cross from a worker in every wiki
        check): an enum member's own pickling runs Python code on both sides, several times a
        plain string's; :func:`_status` makes the same status again."""
        check_id = self.check_id
        named = type(check_id) is CheckId
        return _status, (str(check_id) if named else check_id, named, self.status, self.detail, self.counts)

    def to_dict(self) -> dict[str, Any]:
        """As ``verification.json``'s ``checks[]`` lists it."""
        out: dict[str, Any] = {"check_id": self.check_id, "status": self.status, "detail": self.detail}
        if self.counts:
            out["counts"] = dict(self.counts)
        return out


_CHECK_IDS: dict[str, CheckId] = {member.value: member for member in CheckId}


def _status(check_id: str, named: bool, status: Status, detail: str, counts: dict[str, int]) -> CheckStatus:
    """A :class:`CheckStatus` from what its :meth:`~CheckStatus.__reduce__` gave: ``named``, its id
    was the :class:`~publisher.kernel.checkids.CheckId` member of that value, else that string."""
    return CheckStatus(_CHECK_IDS[check_id] if named else check_id, status, detail, counts)


class _Packed:
    """A checked run's results held as compact JSON (:meth:`RunCheck.pack`), or, once settled
    (:meth:`RunCheck.settle`), as the digest of a stored ``result.json`` that is the assembly now.

    A wiki check keeps every run's check until the site is built: a result as nested dicts takes
    about ten times the memory of its JSON (and crosses from a worker far slower), and a result
    the stored file holds already need not be held twice.
    """

    __slots__ = ("digest", "result", "stored", "stored_present", "stored_time", "time")

    def __init__(
        self, result: dict[str, Any], stored: dict[str, Any] | None, stored_is_assembly: bool, settle: bool = False
    ) -> None:
        same = stored is not None and stored_is_assembly
        # What a settled check compares the stored file with when it reads it again.
        self.digest = _digest(result) if same else None
        # Settled at once, a result the stored file holds is never written out here at all.
        self.result: bytes | None = None if settle and same else orjson.dumps(result)
        self.time = result.get("generated_at")
        self.stored_present = stored is not None
        self.stored = None if stored is None or same else orjson.dumps(stored)
        self.stored_time = stored.get("generated_at") if stored is not None and same else None

    def settle(self) -> None:
        if self.digest is not None:
            self.result = None

    def load_result(self, run: Run) -> dict[str, Any]:
        if self.result is not None:
            return dict(orjson.loads(self.result))
        return {**self._read_again(run), "generated_at": self.time}

    def load_stored(self, run: Run) -> dict[str, Any] | None:
        if not self.stored_present:
            return None
        if self.stored is not None:
            return dict(orjson.loads(self.stored))
        if self.result is None:
            return self._read_again(run)
        return {**orjson.loads(self.result), "generated_at": self.stored_time}

    def _read_again(self, run: Run) -> dict[str, Any]:
        """The stored result, read again and verified to be the one checked (apart from its time)."""
        again: Any = None
        try:
            again = loads_written(_fs.read_regular(run.result_path, follow_symlinks=False))
        except (OSError, StrictJSONError, ValueError):
            pass
        if not isinstance(again, dict) or _digest(again) != self.digest:
            raise IntegrityError(
                "outputs/result.json changed after it was checked; nothing rendered (run the command again)",
                path="outputs/result.json",
            )
        return again


def _digest(result: dict[str, Any]) -> str:
    """SHA-256 of the result but its time as sorted compact JSON, hashed piece by piece
    (:func:`_sorted_pieces`) when it holds a long list: a large result is never written out whole
    for it."""
    body = {k: v for k, v in result.items() if k != "generated_at"}
    if not any(type(v) is list and len(v) > _OPEN_LENGTH for v in body.values()):
        # Nothing would be opened but the top mapping: written whole, in one step, not dozens.
        return hashlib.sha256(orjson.dumps(body, option=orjson.OPT_SORT_KEYS)).hexdigest()
    hasher = hashlib.sha256()
    for piece in _sorted_pieces(body):
        hasher.update(piece)
    return hasher.hexdigest()


_OPEN_LENGTH = 64
"""Lists longer than this are opened by :func:`_sorted_pieces` (a result's ``accepted``, ``inputs``)."""


def _sorted_pieces(value: Any, top: bool = True) -> Iterator[bytes]:
    """``orjson.dumps(value, option=OPT_SORT_KEYS)`` in pieces that join to exactly those bytes: the
    top mapping when its keys are ASCII (which every order sorts alike) and long lists are written
    item by item, the rest whole. Raises ``TypeError`` for what orjson cannot write."""
    kind = type(value)
    if kind is dict and top and all(type(key) is str and key.isascii() for key in value):
        yield b"{"
        for index, key in enumerate(sorted(value)):
            yield (b"," if index else b"") + orjson.dumps(key) + b":"
            yield from _sorted_pieces(value[key], False)
        yield b"}"
    elif kind is list and len(value) > _OPEN_LENGTH:
        yield b"["
        for index, item in enumerate(value):
            if index:
                yield b","
            yield from _sorted_pieces(item, False)
        yield b"]"
    else:
        yield orjson.dumps(value, option=orjson.OPT_SORT_KEYS)


def compact_json(value: Any) -> bytes | None:
    """``value`` as compact JSON in its own key order (how a checked run's results are held), or
    None for what JSON cannot hold as it is (an integer beyond 64 bits, a lone surrogate)."""
    try:
        return orjson.dumps(value)
    except (TypeError, RecursionError):  # orjson.JSONEncodeError is a TypeError
        return None


def from_compact_json(data: bytes) -> Any:
    """What :func:`compact_json` wrote, as a fresh value."""
    return orjson.loads(data)


class _PackedAway(Mapping[str, Any]):
    """What ``assembly.result`` holds once its run's check is packed: any reading of it is a
    programming error (read :attr:`RunCheck.result`), so it fails loudly instead of reading empty."""

    def _refuse(self) -> NoReturn:
        raise RuntimeError("this run's check is packed: read RunCheck.result, not assembly.result")

    def __getitem__(self, key: str) -> Any:
        self._refuse()

    def __iter__(self) -> Iterator[str]:
        self._refuse()

    def __len__(self) -> int:
        self._refuse()


@dataclass
class RunCheck:
    """Every check of one run: statuses, findings, the assembly they were made against, the verdict."""

    run: Run
    label: str
    """How findings name the run's folder (``runs/x`` inside a wiki, or the path as given)."""
    inputs: RunInputs
    gate: bool
    flag: str | None
    assembly: Assembly
    _stored: dict[str, Any] | None
    """The stored result as read (see :attr:`stored`)."""
    stored_problem: str | None
    checks: list[CheckStatus] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)
    verdict: str = "Failed"
    exit_status: int = 1
    written: Path | None = None
    stored_is_assembly: bool = False
    """Whether the stored result is the assembly now apart from its time (C-ASSEMBLER passed):
    then one copy of it is kept."""
    _packed: _Packed | None = field(default=None, repr=False, compare=False)

    @property
    def stored(self) -> dict[str, Any] | None:
        """The stored ``result.json`` as read (None when absent or unusable): C-ASSEMBLER compares
        it with the assembly. A packed check decodes it again on each reading."""
        if self._packed is None:
            return self._stored
        return self._packed.load_stored(self.run)

    @stored.setter
    def stored(self, value: dict[str, Any] | None) -> None:
        if self._packed is not None:
            raise RuntimeError("this run's check is packed: its stored result is no longer set")
        self._stored = value

    def pack(self, settle: bool = False) -> None:
        """Hold the result and the stored result as compact JSON from now on (a wiki check keeps
        every run's check until its site is built; a worker ships it to the parent). The checks
        are done: :attr:`result` and :attr:`stored` decode a fresh copy on each reading, so read
        each once. A result JSON cannot hold as it is (an integer beyond 64 bits, a lone surrogate in
        a quoted value) stays unpacked. Idempotent. ``settle``: :meth:`settle` at once (the same
        check, without writing out a result the stored file holds)."""
        if self._packed is not None:
            if settle:
                self.settle()
            return
        try:
            self._packed = _Packed(self.assembly.result, self._stored, self.stored_is_assembly, settle)
        except (TypeError, RecursionError):  # orjson.JSONEncodeError is a TypeError
            return
        self._stored = None
        self.assembly = replace(self.assembly, result=cast(dict[str, Any], _PackedAway()))

    def settle(self) -> None:
        """Once packed, hold a result that the stored ``result.json`` holds already (C-ASSEMBLER
        passed) as that file's digest only: :attr:`result` and :attr:`stored` read the file again
        and raise :class:`~publisher.kernel.errors.IntegrityError` if it is no longer the file
        checked (nothing is rendered from a file changed since). Other checks stay packed."""
        if self._packed is not None:
            self._packed.settle()

    def status(self, check_id: str) -> str:
        """``pass``, ``warn`` or ``fail`` of one check."""
        return self.check(check_id).status

    def check(self, check_id: str) -> CheckStatus:
        """One check's outcome."""
        return next(c for c in self.checks if c.check_id == check_id)

    def failed(self, check_id: str) -> bool:
        """Whether that check failed."""
        return self.status(check_id) == "fail"

    @property
    def result(self) -> dict[str, Any]:
        """The result assembling the run now produces (what ``result.json`` must hold); a fresh
        copy on each reading once the check is packed (:meth:`pack`)."""
        if self._packed is not None:
            return self._packed.load_result(self.run)
        return self.assembly.result

    @property
    def run_shown(self) -> str:
        """The run as messages name it: its label, else its path inside its wiki, else its folder
        name (never a path of the machine: messages are stored in result and verification files)."""
        if self.label:
            return self.label
        root = self.inputs.wiki_root
        if root is not None:
            try:
                return _fs.real_path(self.run.path).relative_to(_fs.real_path(root)).as_posix()
            except ValueError:
                pass
        return _fs.real_path(self.run.path).name

    def file(self, name: str) -> str:
        """A file of the run as findings name it (under the run's label)."""
        return f"{self.label}/{name}" if self.label else name

    @property
    def report(self) -> dict[str, Any]:
        """What ``verification.json`` holds (apart from ``generated_at``, added when written)."""
        return self.report_of(self.result, self.stored)

    def report_of(self, result: dict[str, Any], stored: dict[str, Any] | None) -> dict[str, Any]:
        """:attr:`report` from the result and stored result its caller read already (a packed
        check decodes them on each reading)."""
        return {
            "schema_version": 1,
            "run_slug": result["run_slug"],
            "gate": {"enabled": self.gate, "flag": self.flag},
            "verdict": self.verdict,
            "exit_status": self.exit_status,
            "checks": [c.to_dict() for c in self.checks],
            "findings": [finding_entry(f, self.label) for f in self.findings],
            "result": {
                "present": stored is not None or self.stored_problem is not None,
                "inputs_hash": stored["inputs_hash"] if stored else None,
                "inputs_hash_now": result["inputs_hash"],
                "gate_verdict": stored["gate"]["verdict"] if stored else None,
            },
        }


def finding_entry(f: Finding, label: str) -> dict[str, Any]:
    """One finding as ``verification.json`` lists it (files relative to the run)."""
    prefix = f"{label}/" if label else ""
    return {
        "check_id": f.check,
        "reason_code": f.reason.value if f.reason is not None else None,
        "code": f.code,
        "severity": f.severity,
        "artifact_id": f.artifact_id,
        "field": f.field,
        "source_id": f.source_id,
        "file": f.file.removeprefix(prefix),
        "line": f.line,
        "detail": f.detail,
        "cause": f.cause,
    }
