"""One-line text for messages and findings, and text made safe to print on a terminal."""

from __future__ import annotations

import re

__all__ = ["MAX_DETAIL", "REORDERING", "one_line", "first_line", "terminal_safe"]

MAX_DETAIL = 300
"""Longest ``detail`` line of a finding or an event."""

_CONTROL_RE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")


REORDERING = re.compile("[\u202a-\u202e\u2066-\u2069]")
"""The bidi controls that show text in another order than it is written (embeddings, overrides,
isolates). Prose and titles refuse or drop every bidirectional formatting character, the implicit
marks LRM, RLM and ALM too: :data:`publisher.kernel.lookalike.BIDI_CONTROLS`."""


def one_line(text: object, limit: int = MAX_DETAIL) -> str:
    """``text`` on one line (whitespace runs become one space), cut to ``limit`` with an ellipsis."""
    flat = " ".join(str(text).split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def first_line(exc: BaseException) -> str:
    """The first line of an exception's message (its type's name when it has none)."""
    lines = str(exc).strip().splitlines()
    return lines[0] if lines else type(exc).__name__


def terminal_safe(text: str, *, keep_newlines: bool = True) -> str:
    """``text`` with every control character a terminal would act on shown as ``\\xNN``/``\\uNNNN``.

    Escape sequences, carriage returns, backspaces and bidirectional overrides in a snapshot or a
    title could rewrite what the user sees; tabs (and line feeds, unless ``keep_newlines`` is
    false) are kept.
    """

    def show(match: re.Match[str]) -> str:
        code = ord(match.group())
        return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"

    out = _CONTROL_RE.sub(show, text)
    return out if keep_newlines else out.replace("\n", "\\n")
