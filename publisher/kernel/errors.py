"""One exception root for the library, carrying a reason code and the facts behind it.

Library code raises these; only the CLI turns them into exit statuses and only the MkDocs hook
turns them into build failures.
"""

from __future__ import annotations

from typing import Any

from .findings import Finding
from .reasons import Reason

__all__ = [
    "PublisherError",
    "IntegrityError",
    "UsageError",
    "ConflictError",
    "EventLogError",
    "ResourceError",
]


class PublisherError(Exception):
    """Root of every error the library raises on purpose.

    ``reason`` is a closed reason code where one applies; ``context`` holds the facts (paths,
    digests, offsets) as plain values so callers can report them without parsing the message.
    """

    exit_status = 2

    def __init__(self, message: str, *, reason: Reason | None = None, **context: Any) -> None:
        super().__init__(message)
        self.message = message
        self.reason = reason
        self.context = context

    def one_line(self) -> str:
        """The message as a single line, prefixed by the reason code when there is one."""
        text = " ".join(self.message.split())
        return f"{self.reason.value}: {text}" if self.reason else text

    def finding(self) -> Finding:
        """The error as one :class:`~publisher.kernel.findings.Finding`: its reason code, message
        and the facts of ``context`` a finding has (``path`` or ``file`` as ``file``, ``line``,
        ``check``, ``field``, ``source_id``, ``start``, ``end``, ``run``, ``artifact_id``,
        ``label``); a fact the error does not know stays None (``file``: empty)."""
        fact = self.context.get
        file = fact("file", fact("path"))
        return Finding(
            self.reason,
            str(file) if file is not None else "",
            self.message,
            artifact_id=fact("artifact_id"),
            label=fact("label"),
            source_id=fact("source_id"),
            start=fact("start"),
            end=fact("end"),
            line=fact("line"),
            check=fact("check"),
            field=fact("field"),
            run=fact("run"),
        )


class IntegrityError(PublisherError):
    """Stored evidence does not verify (exit status 1)."""

    exit_status = 1


class ConflictError(IntegrityError):
    """A write-once name already exists with bytes that do not verify."""


class EventLogError(IntegrityError):
    """The event log is torn, broken or cannot be appended to safely."""


class ResourceError(PublisherError):
    """The machine failed us (permission denied, an I/O error, out of memory): not evidence of
    tampering, and never reported as a reason code; the command stops (exit status 2)."""

    exit_status = 2


class UsageError(PublisherError):
    """The caller asked for something impossible: bad arguments, missing run, bad input file."""

    exit_status = 2
