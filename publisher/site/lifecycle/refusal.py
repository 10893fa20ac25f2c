"""How the evidence build refuses: every finding of a phase, raised once, as one error.

A phase of the build (the options, the wiki check, the pages' prose, the seal of the rendered
pages, the publication) collects :class:`~publisher.kernel.findings.Finding` values and, when any
was found, raises one :class:`EvidenceBuildError` carrying all of them in ``.findings``. MkDocs
prints the error's text, worded by the one formatter of findings
(:func:`~publisher.kernel.findings.summary`, :func:`~publisher.kernel.findings.grouped_lines`):
a single finding that needs no separate fix is one line, ``<phase>: <finding>``; otherwise a
summary line ``<phase> failed: N finding(s) (CODE xN, ...); nothing was published`` with every
finding under it, consequences under their cause.

For machines, :func:`refuse` also logs each finding at ``DEBUG`` level on
``mkdocs.plugins.publisher`` as one line, :data:`FINDING_LINE` followed by the finding as compact
JSON (the keys of ``publisher check --json``'s ``findings``, :meth:`Finding.to_dict`), so
``mkdocs build -v`` lists each finding in a form a program reads back without parsing prose. The
JSON is ASCII and holds no literal space (a space inside a value is written ``\\u0020``), so no
terminal formatter can wrap or colour it apart.

Errors of the machine or the library met by the build (an ``OSError`` while publishing, a
``PublisherError`` while generating pages) become one finding each through :func:`error_finding`.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterable

from mkdocs.exceptions import PluginError

from ...kernel.checkids import CheckId
from ...kernel.errors import PublisherError
from ...kernel.findings import Finding, grouped_lines, summary
from ...kernel.text import one_line

__all__ = [
    "EvidenceBuildError",
    "FINDING_LINE",
    "refuse",
    "refusal_of",
    "refusal_text",
    "finding_json",
    "error_finding",
]

FINDING_LINE = "evidence finding: "
"""What starts each machine-readable finding line of a refused build (followed by its JSON)."""

log = logging.getLogger("mkdocs.plugins.publisher")


def refusal_text(phase: str, findings: Iterable[Finding]) -> str:
    """The text of a refused ``phase``: one line for a single finding that needs no separate fix,
    else a summary line with every finding under it (see the module docstring)."""
    items = list(findings)
    if len(items) == 1 and items[0].fix is None:
        return f"{phase}: {items[0].one_line()}"
    lines = [f"{phase} failed: {summary(items)}; nothing was published"]
    lines += grouped_lines(items)
    return "\n".join(lines)


class EvidenceBuildError(PluginError):
    """A phase of the evidence build refused; ``findings`` holds every problem the phase found.

    A ``PluginError``, so MkDocs reports it as a failed build (its text, never a traceback) and
    runs ``on_build_error``: the staging folder goes, the published site stays as it was.
    """

    def __init__(self, phase: str, findings: Iterable[Finding]) -> None:
        self.phase = phase
        self.findings: tuple[Finding, ...] = tuple(findings)
        if not self.findings:
            raise ValueError(f"{phase}: a refusal names at least one finding")
        super().__init__(refusal_text(phase, self.findings))


def refusal_of(error: BaseException) -> EvidenceBuildError | None:
    """The refusal behind ``error``: itself, or the one MkDocs was handling when it raised ``error``
    (its ``Abort`` after a ``PluginError``); None for any other failure."""
    seen: set[int] = set()
    current: BaseException | None = error
    while current is not None and id(current) not in seen:
        if isinstance(current, EvidenceBuildError):
            return current
        seen.add(id(current))
        current = current.__cause__ or current.__context__
    return None


def finding_json(finding: Finding) -> str:
    """``finding`` as one line of compact, ASCII JSON without a literal space."""
    text = json.dumps(finding.to_dict(), ensure_ascii=True, separators=(",", ":"), sort_keys=True)
    return text.replace(" ", "\\u0020")  # spaces occur only inside strings with these separators


def refuse(phase: str, findings: Iterable[Finding]) -> EvidenceBuildError:
    """The error to raise for ``phase``, each of its findings logged first as one machine line."""
    error = EvidenceBuildError(phase, findings)
    for finding in error.findings:
        log.debug(FINDING_LINE + finding_json(finding))
    return error


def error_finding(
    exc: PublisherError | OSError | ValueError, file: str, check: CheckId, *, field: str | None = None
) -> Finding:
    """One finding for an error the build met: its reason code where the library gave one, under
    the build's ``check`` (``C-CONFIG``, ``C-BUILD``, ``C-PUBLISH`` ...), at ``file`` (a message
    that starts by naming ``file`` does not name it twice)."""
    detail = one_line(exc.message if isinstance(exc, PublisherError) else exc).removeprefix(f"{file}: ")
    reason = exc.reason if isinstance(exc, PublisherError) else None
    return Finding(reason, file, detail, check=check, field=field)
