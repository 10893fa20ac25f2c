"""What trusted Markdown extensions put on a page themselves, told apart from the author's HTML.

Python-Markdown keeps raw HTML in a stash and puts it back after rendering; extensions use the
same stash for the HTML they generate (Material's emoji SVG through ``pymdownx.emoji``). The
prose check (:mod:`publisher.site.checks.prose`) refuses raw SVG, so it must know which SVG the
extension made: :class:`TrustedOutput` records what the trusted inline patterns stash during each
conversion, keyed by the converted text.
"""

from __future__ import annotations

from typing import Any

from markdown import Extension, Markdown
from markdown.postprocessors import Postprocessor
from markdown.preprocessors import Preprocessor

__all__ = ["TrustedOutput"]


class TrustedOutput(Extension):
    """Records the HTML that trusted extensions put in Python-Markdown's stash, per conversion.

    Only the inline patterns named in :attr:`TRUSTED` count (``emoji``: ``pymdownx.emoji`` and
    Material's icons through it); everything else in the stash, the author's raw HTML first of
    all, is judged like any markup. Register it last, so the patterns exist when it wraps them.
    """

    TRUSTED = ("emoji",)

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._done: dict[str, list[str]] = {}

    def take(self, output: str) -> list[str]:
        """The trusted chunks of the conversion that produced ``output`` (forgotten once taken)."""
        return self._done.pop(output, [])

    def extendMarkdown(self, md: Markdown) -> None:
        record: list[str] = []
        depth = [0]
        store = md.htmlStash.store

        def recording_store(chunk: Any) -> str:
            if depth[0]:
                record.append(str(chunk))
            return str(store(chunk))

        md.htmlStash.store = recording_store
        for name in self.TRUSTED:
            if name in md.inlinePatterns:
                pattern = md.inlinePatterns[name]
                handle = pattern.handleMatch

                def trusted_match(*args: Any, _handle: Any = handle) -> Any:
                    depth[0] += 1
                    try:
                        return _handle(*args)
                    finally:
                        depth[0] -= 1

                pattern.handleMatch = trusted_match
        md.preprocessors.register(_Begin(md, record), "publisher_trusted_begin", 1000)
        md.postprocessors.register(_End(md, record, self._done), "publisher_trusted_end", -10_000)  # the very last


class _Begin(Preprocessor):
    def __init__(self, md: Markdown, record: list[str]) -> None:
        super().__init__(md)
        self._record = record

    def run(self, lines: list[str]) -> list[str]:
        self._record.clear()
        return lines


class _End(Postprocessor):
    def __init__(self, md: Markdown, record: list[str], done: dict[str, list[str]]) -> None:
        super().__init__(md)
        self._record = record
        self._done = done

    def run(self, text: str) -> str:
        if self._record:
            if len(self._done) > 64:
                self._done.clear()  # conversions nobody took (e.g. another plugin's)
            self._done[text.strip()] = list(self._record)
        return text
