"""A Markdown document read in parts: a block that stands apart at the top level is parsed on its
own, once for every document that holds the same block.

markdown-it reads a document line by line from the top level. Where one line is an HTML block
of its own at the top level (nothing before it still open), what follows it is read from a
fresh top level, whatever came before; and where a part's own last line is such a block too,
nothing of the part reaches past it. Such a part's block structure is then the same inside any
document as on its own, and its parse can be shared: a wiki's concepts that promote the same
runs hold the same generated block, most of their text (:mod:`publisher.wiki.concepts`,
:mod:`publisher.wiki.conceptcheck`). Whoever shares a part still answers for what the rest of
the document reads of it (link and footnote labels): that is not block structure.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, Generic, TypeVar

if TYPE_CHECKING:
    from markdown_it import MarkdownIt
    from markdown_it.token import Token

__all__ = ["SHARED_PART_CODE_POINTS", "PartCache", "ends_apart", "parse_part", "stands_apart"]

SHARED_PART_CODE_POINTS = 16_000_000
"""How many code points of parts a :class:`PartCache` keeps (each part counted by its text)."""

T = TypeVar("T")


def _apart(tokens: Sequence[Token], line: int) -> bool:
    """Whether ``tokens`` hold a top-level HTML block that is exactly line ``line``."""
    return any(t.type == "html_block" and t.level == 0 and t.map == [line, line + 1] for t in tokens)


def stands_apart(md: MarkdownIt, lines: Sequence[str], line: int) -> bool:
    """Whether line ``line`` of a document starting with ``lines`` is a top-level HTML block of
    its own (every block before it closed by then), read by ``md``.

    The lines up to the next one are parsed: a rule that looks past a line does so only while
    its block is open, and one still open there would hold the line; the next line is kept for
    the one rule that reads ahead to start a block (a table's delimiter row)."""
    if not 0 <= line < len(lines):
        return False
    return _apart(md.parse("\n".join(lines[: line + 2]), {}), line)


def ends_apart(tokens: Sequence[Token], count: int) -> bool:
    """Whether the parse ``tokens`` of a part of ``count`` lines ends with its last line as a
    top-level HTML block of its own: nothing of the part is open past it (a parser that moves
    its footnotes to the end puts them after that block)."""
    return count > 0 and _apart(tokens, count - 1)


class PartCache(Generic[T]):
    """What a parse of a part gave, by the part's text, least recently used first out (at most
    :data:`SHARED_PART_CODE_POINTS` code points of parts); safe across threads."""

    def __init__(self, limit: int = SHARED_PART_CODE_POINTS) -> None:
        self._limit = limit
        self._held = 0
        self._parts: OrderedDict[str, T] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, text: str, make: Callable[[str], T]) -> T:
        """The value kept for ``text``, else ``make(text)``, kept."""
        with self._lock:
            if text in self._parts:
                self._parts.move_to_end(text)
                return self._parts[text]
        value = make(text)
        with self._lock:
            if text not in self._parts:
                self._parts[text] = value
                self._held += len(text)
            while len(self._parts) > 1 and self._held > self._limit:
                dropped, _ = self._parts.popitem(last=False)
                self._held -= len(dropped)
        return value

    def clear(self) -> None:
        """Forget every part (tests)."""
        with self._lock:
            self._parts.clear()
            self._held = 0


def parse_part(md: MarkdownIt, text: str) -> tuple[list[Token], dict[str, Any]]:
    """``md``'s tokens of ``text`` read on its own, and the environment the parse left."""
    env: dict[str, Any] = {}
    return md.parse(text, env), env
