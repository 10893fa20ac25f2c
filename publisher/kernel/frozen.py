"""A frozen dataclass's behaviour for a plain slotted class, without compiling methods at import.

``@dataclass(frozen=True)`` writes and compiles ``__init__``, ``__repr__``, ``__eq__``,
``__hash__``, ``__setattr__`` and ``__delattr__`` for each class when its module is imported
(about a millisecond a class), which every command that imports the class pays. A
:class:`FrozenValue` subclass names its fields in :attr:`~FrozenValue._fields`, in order, and sets
them in its ``__init__`` with :meth:`~FrozenValue._init`; the methods here then act as the
dataclass's would: equal (and hashed) by the tuple of its fields when the classes are the same,
shown as ``Name(field=value, ...)``, refusing assignment and deletion with
:class:`dataclasses.FrozenInstanceError`, and pickled by its fields. A field declared with
``compare=False``, ``hash=False`` or ``repr=False`` is left out of :attr:`~FrozenValue._compared`,
:attr:`~FrozenValue._hashed` or :attr:`~FrozenValue._shown`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import FrozenInstanceError
from operator import attrgetter
from typing import Any, ClassVar

__all__ = ["FrozenValue"]


class FrozenValue:
    """Base of a frozen value class; see the module's docstring."""

    __slots__ = ()
    _fields: ClassVar[tuple[str, ...]] = ()
    """The fields, in the order a dataclass would list them (the constructor's order)."""
    _compared: ClassVar[tuple[str, ...] | None] = None
    """The fields equality and the hash read (None: all of :attr:`_fields`)."""
    _hashed: ClassVar[tuple[str, ...] | None] = None
    """The fields the hash reads (None: those of :attr:`_compared`)."""
    _shown: ClassVar[tuple[str, ...] | None] = None
    """The fields the representation shows (None: all of :attr:`_fields`)."""

    _read: ClassVar[tuple[Callable[[Any], tuple[Any, ...]], ...]] = ()
    """What reads the fields, the compared fields and the hashed ones as tuples (made once per class)."""

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        compared = cls._fields if cls._compared is None else cls._compared
        hashed = compared if cls._hashed is None else cls._hashed
        cls._read = (_reader(cls._fields), _reader(compared), _reader(hashed))

    def _init(self, *values: Any) -> None:
        """Set the fields, in the order of :attr:`_fields` (the constructor's one step)."""
        for name, value in zip(self._fields, values, strict=True):
            object.__setattr__(self, name, value)

    def __eq__(self, other: object) -> bool:
        if other.__class__ is self.__class__:
            compared = self._read[1]
            return compared(self) == compared(other)
        return NotImplemented

    def __hash__(self) -> int:
        return hash(self._read[2](self))

    def __repr__(self) -> str:
        names = self._fields if self._shown is None else self._shown
        shown = ", ".join(f"{name}={getattr(self, name)!r}" for name in names)
        return f"{self.__class__.__qualname__}({shown})"

    def __setattr__(self, name: str, value: object) -> None:
        raise FrozenInstanceError(f"cannot assign to field {name!r}")

    def __delattr__(self, name: str) -> None:
        raise FrozenInstanceError(f"cannot delete field {name!r}")

    def __reduce__(self) -> tuple[Any, tuple[Any, ...]]:
        return self.__class__, self._read[0](self)


def _reader(names: tuple[str, ...]) -> Callable[[Any], tuple[Any, ...]]:
    """The fields ``names`` of an object as a tuple (``attrgetter`` of one name gives no tuple)."""
    if len(names) == 1:
        one = attrgetter(names[0])
        return lambda value: (one(value),)
    if not names:
        return lambda value: ()
    return attrgetter(*names)
