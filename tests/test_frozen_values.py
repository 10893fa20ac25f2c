"""The plain slotted value classes (``kernel/frozen.py``) behave as the frozen dataclasses they replace.

Each class is held to a dataclass twin declared with the same fields and options: the same
representation, equality, hash (or refusal to hash), refusal to assign or delete, and a pickle
that reads back equal.
"""

from __future__ import annotations

import pickle
from dataclasses import FrozenInstanceError, dataclass, field
from pathlib import Path
from typing import Any

import pytest

from publisher.gate.checks.runcheck import CheckStatus
from publisher.gate.freshness import Freshness
from publisher.kernel.checkids import CheckId
from publisher.kernel.frozen import FrozenValue
from publisher.kernel.locate import Budget, Candidate, Fragment, Normalized, Occurrence
from publisher.kernel.reasons import Reason
from publisher.kernel.refs import ParsedRefs, SpanRef
from publisher.kernel.trust import DEFAULT_ROLES, KeyRing, Role, Signer, TrustedKey
from publisher.runs import Run
from publisher.wiki.policy import WINDOWS_ABOVE, Policy

SID = "src-" + "a" * 64


@dataclass(frozen=True)
class SpanRefTwin:
    source_id: str
    start: int
    end: int
    quoted: str | None = None


@dataclass(frozen=True)
class ParsedRefsTwin:
    refs: tuple[Any, ...]
    rest: str
    error: str | None = None


@dataclass(frozen=True)
class TrustedKeyTwin:
    path: str
    roles: frozenset[Role] = DEFAULT_ROLES


@dataclass(frozen=True)
class SignerTwin:
    private: Any = field(repr=False)
    key_id: str
    run: str


@dataclass(frozen=True)
class KeyRingTwin:
    keys: dict[str, Any] = field(default_factory=dict)
    roles: dict[str, frozenset[Role]] = field(default_factory=dict)
    names: dict[str, str] = field(default_factory=dict, compare=False)


@dataclass(frozen=True)
class FragmentTwin:
    start: int
    end: int


@dataclass(frozen=True)
class CandidateTwin:
    kind: str
    start: int
    end: int
    fragments: tuple[Any, ...] = ()


@dataclass(frozen=True)
class OccurrenceTwin:
    kind: str
    start: int
    end: int


@dataclass(frozen=True)
class NormalizedTwin:
    text: str
    starts: tuple[int, ...]
    ends: tuple[int, ...]


@dataclass
class BudgetTwin:
    left: int


@dataclass(frozen=True)
class FreshnessTwin:
    fresh: bool
    event_id: str | None
    reason: Reason | None
    detail: str
    field: str | None = None


@dataclass(frozen=True)
class PolicyTwin:
    wiki_root: Any
    trusted_keys: Any
    key_files: tuple[str, ...] = ()
    source_text: str = "full"
    source_text_for: tuple[tuple[str, str], ...] = ()
    context: int = 400
    windows_above: int = WINDOWS_ABOVE
    offline: bool = False
    web_fonts: bool = False
    retracted: str = "warn"
    require_warrant: bool = False


@dataclass(frozen=True)
class RunTwin:
    path: Path


@dataclass(frozen=True)
class CheckStatusTwin:
    check_id: str
    status: str
    detail: str
    counts: dict[str, int] = field(default_factory=dict, hash=False)


def _outcome(call: Any) -> tuple[str, Any]:
    try:
        return "value", call()
    except Exception as exc:  # the exception's type and words are what is compared
        return type(exc).__name__, str(exc)


# (class, twin, argument tuples: pairs among them are compared with each other)
CASES: list[tuple[type[Any], type[Any], list[tuple[Any, ...]]]] = [
    (SpanRef, SpanRefTwin, [(SID, 1, 5), (SID, 1, 5, None), (SID, 1, 5, "x"), (SID, 2, 5)]),
    (ParsedRefs, ParsedRefsTwin, [((), ""), ((SpanRef(SID, 0, 1),), "rest"), ((), "", "malformed")]),
    (TrustedKey, TrustedKeyTwin, [("k.pub",), ("k.pub", DEFAULT_ROLES), ("k.pub", frozenset({Role.ACQUIRE}))]),
    (Signer, SignerTwin, [("secret", "kid", "run"), ("secret", "kid", "other"), ("other", "kid", "run")]),
    (KeyRing, KeyRingTwin, [(), ({"a": 1},), ({"a": 1}, {}, {"a": "a.pub"}), ({"a": 1}, {"a": frozenset()})]),
    (Fragment, FragmentTwin, [(0, 3), (0, 3), (1, 3)]),
    (Candidate, CandidateTwin, [("exact", 0, 3), ("exact", 0, 3, ()), ("fragments", 0, 9, (Fragment(0, 2),))]),
    (Occurrence, OccurrenceTwin, [("exact", 0, 3), ("normalized", 0, 3), ("exact", 0, 3)]),
    (Normalized, NormalizedTwin, [("ab", (0, 1), (1, 2)), ("ab", (0, 1), (1, 3))]),
    (
        Freshness,
        FreshnessTwin,
        [
            (True, "ev-1", None, "fetched"),
            (False, None, Reason.NO_FRESH_FETCH, "x", "sig"),
            (True, "ev-1", None, "fetched"),
        ],
    ),
    (
        Policy,
        PolicyTwin,
        [
            (None, KeyRing()),
            (None, KeyRing(), ("k.pub",)),
            (None, KeyRing(), (), "proofs", (), 80, 10, True, True, "fail", True),
        ],
    ),
    (Run, RunTwin, [(Path("runs/a"),), (Path("runs/a"),), (Path("runs/b"),)]),
    (
        CheckStatus,
        CheckStatusTwin,
        [(CheckId.PROSE, "pass", "x"), (CheckId.PROSE, "pass", "x", {"n": 1}), ("C-OTHER", "fail", "y")],
    ),
]


def _shown(text: str, cls: type[Any], twin: type[Any]) -> str:
    return text.replace(twin.__qualname__, cls.__qualname__, 1)


@pytest.mark.parametrize(("cls", "twin", "args"), CASES, ids=[c[0].__name__ for c in CASES])
def test_behaves_as_its_frozen_dataclass(cls: type[Any], twin: type[Any], args: list[tuple[Any, ...]]) -> None:
    assert issubclass(cls, FrozenValue)
    mine = [cls(*a) for a in args]
    theirs = [twin(*a) for a in args]
    for one, other in zip(mine, theirs, strict=True):
        assert repr(one) == _shown(repr(other), cls, twin)
        assert _outcome(lambda o=one: hash(o)) == _outcome(lambda o=other: hash(o))
        for name in (*cls._fields, "not_a_field"):
            refused = _outcome(lambda o=one, n=name: setattr(o, n, 1))
            assert refused == _outcome(lambda o=other, n=name: setattr(o, n, 1))
        with pytest.raises(FrozenInstanceError):
            delattr(one, cls._fields[0])
        assert one != other and one != object()  # another class is never equal
    for i, (a, b) in enumerate(zip(mine, theirs, strict=True)):
        for c, d in zip(mine, theirs, strict=True):
            assert (a == c) == (b == d), (i, a, c)


def test_run_pickled_without_its_paths() -> None:
    run = Run(Path("runs/a"))
    assert run.config_path == Path("runs/a/config.json") and "config_path" in vars(run)
    back = pickle.loads(pickle.dumps(run))
    assert back == run and vars(back) == {"path": Path("runs/a")}  # the folder alone: paths are made again
    assert back.config_path == run.config_path


def test_budget_as_its_dataclass() -> None:
    budget, twin = Budget(5), BudgetTwin(5)
    assert repr(budget) == repr(twin).replace("BudgetTwin", "Budget")
    assert budget == Budget(5) and budget != Budget(4) and budget != twin
    budget.left -= 2
    assert budget.left == 3 and budget == Budget(3)
    with pytest.raises(TypeError):
        hash(budget)


@pytest.mark.parametrize(
    "value",
    [
        SpanRef(SID, 3, 9, "q"),
        ParsedRefs((SpanRef(SID, 0, 1),), "r", None),
        TrustedKey("k.pub"),
        KeyRing(),
        Candidate("fragments", 0, 9, (Fragment(0, 2), Fragment(5, 9))),
        Occurrence("normalized", 4, 8),
        Normalized("ab", (0, 1), (1, 2)),
    ],
    ids=repr,
)
def test_pickled_by_its_fields(value: Any) -> None:
    back = pickle.loads(pickle.dumps(value))
    assert back == value and type(back) is type(value)
    fields = [getattr(value, name) for name in getattr(type(value), "_fields", ())]
    if not any(isinstance(field, (set, frozenset)) for field in fields):  # a set prints in its table's order
        assert repr(back) == repr(value)
