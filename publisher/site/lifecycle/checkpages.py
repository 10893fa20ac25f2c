"""``publisher check``'s share of the build: every page's prose and every file of ``docs/``.

The wiki check (:func:`publisher.wiki.check.check_wiki`) covers runs and concepts; the prose
allow-list, the check of files published as they are, and the precondition of the
Content-Security-Policy (no script or style an author wrote) run on the Markdown MkDocs converts.
So that ``publisher check`` and ``mkdocs build`` can never disagree about a page, the check runs
MkDocs' own build with the same configuration, extensions and plugins, as a *check-only* build:
it converts every page and runs the same handlers, then stops in ``on_env`` before anything is
rendered to a file (:class:`~publisher.site.lifecycle.events.CheckDone`). Its site folder is a temporary
one outside the wiki, removed afterwards; nothing of the wiki is written. A phase of the build that
refuses on the way (a ``docs/`` file in the way of a generated one ...) gives its own findings
(:class:`~publisher.site.lifecycle.refusal.EvidenceBuildError`), as the build does.
"""

from __future__ import annotations

import logging
import os
import tempfile
from pathlib import Path

from mkdocs.commands.build import build
from mkdocs.config import load_config
from mkdocs.exceptions import MkDocsException

from ...kernel.checkids import CheckId
from ...kernel.errors import UsageError
from ...kernel.findings import Finding
from ...kernel.reasons import Reason
from ...kernel.text import one_line
from ...wiki.evidence import WikiCheck
from .events import CheckDone
from .hook import CHECK_COMMAND, PRECHECKED
from .refusal import refusal_of

__all__ = ["check_pages"]


class _Errors(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.ERROR)
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.messages.append(record.getMessage())


def check_pages(config_file: Path, pre: WikiCheck) -> list[Finding]:
    """The findings of a check-only build of the wiki configured by ``config_file`` (empty: the
    build would publish). ``pre`` is the wiki check already run with the same policy."""
    logger = logging.getLogger("mkdocs")
    errors = _Errors()
    saved = logger.propagate
    logger.addHandler(errors)
    logger.propagate = False
    token = PRECHECKED.set(pre)
    try:
        try:
            config = load_config(os.fspath(config_file))
        except MkDocsException as exc:
            said = errors.messages[0] if errors.messages else str(exc)
            raise UsageError(
                f"{config_file.name}: MkDocs refuses it ({one_line(said, 200)})",
                reason=Reason.SCHEMA_ERROR,
                path=config_file.name,
            ) from exc
        with tempfile.TemporaryDirectory(prefix="publisher-check-") as scratch:
            config.site_dir = os.path.join(scratch, "site")
            config.plugins.on_startup(command=CHECK_COMMAND, dirty=False)  # type: ignore[arg-type]
            try:
                build(config)
            except CheckDone as done:
                return done.findings
            except MkDocsException as exc:
                refusal = refusal_of(exc)  # a phase of the evidence build refused: its findings
                if refusal is not None:
                    return list(refusal.findings)
                said = errors.messages[-1] if errors.messages else str(exc)
                return [Finding(None, config_file.name, one_line(said, 300), check=CheckId.BUILD)]
            finally:
                config.plugins.on_shutdown()
    finally:
        PRECHECKED.reset(token)
        logger.removeHandler(errors)
        logger.propagate = saved
    return []  # pragma: no cover - a check-only build always stops in on_env
