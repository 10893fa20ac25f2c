"""Where a wiki keeps its runs and concepts, and paths relative to its root."""

from __future__ import annotations

import glob
import os
from collections.abc import Callable, Iterable
from pathlib import Path

from ..kernel._fs import NotAFolderError, real_folder, real_path
from ..kernel.errors import UsageError
from ..kernel.findings import Finding
from ..kernel.reasons import Reason
from ..runs import RUN_LAYOUTS, Run
from .concepts import CONCEPTS_DIR

__all__ = [
    "discover_runs",
    "discover_concepts",
    "concepts_folder",
    "ConceptsFolderError",
    "CONCEPTS_FIX",
    "relative",
    "inside",
]


def relative(path: Path, root: Path, real_root: Path | None = None, resolve: Callable[[Path], Path] = real_path) -> str:
    """``path`` relative to ``root`` in POSIX form, or the path itself when it lies outside.
    ``real_root``: ``root`` resolved already (a caller naming many paths resolves it once);
    ``resolve``: how ``path`` is resolved (a check resolving each path once passes its cache)."""
    try:
        return resolve(path).relative_to(real_root or real_path(root)).as_posix()
    except ValueError:
        return str(path)


def inside(root: Path, rel: str, real_root: Path | None = None) -> Path | None:
    """``root / rel`` resolved, or None when it leaves ``root`` (``..``, a link out).
    ``real_root``: ``root`` resolved already."""
    candidate = real_path(root / rel)
    try:
        candidate.relative_to(real_root or real_path(root))
    except ValueError:
        return None
    return candidate


def discover_runs(
    wiki_root: Path, layouts: Iterable[str] = RUN_LAYOUTS, resolve: Callable[[Path], Path] = real_path
) -> list[Path]:
    """Run folders holding ``outputs/result.json``, sorted; each listed once however it is reached
    (``resolve``: how a run's folder is resolved)."""
    runs: list[Path] = []
    seen: set[Path] = set()
    for pattern in layouts:
        for name in sorted(glob.glob(os.path.join(glob.escape(str(wiki_root)), pattern))):
            path = Path(name)
            if path.is_dir() and os.path.lexists(Run(path).result_path):
                real = resolve(path)
                if real not in seen:
                    seen.add(real)
                    runs.append(path)
    return runs


CONCEPTS_FIX = f"make {CONCEPTS_DIR}/ a real folder inside the wiki, or remove it: a wiki without one has no concepts"
"""What fixes a ``concepts`` that is not a real folder."""


class ConceptsFolderError(UsageError):
    """The wiki's ``concepts`` is present but no real folder: a file, a FIFO, a device or a
    symbolic link of any kind (to a folder elsewhere, to nothing, a loop). ``what`` names it."""

    def __init__(self, folder: Path, what: str) -> None:
        super().__init__(
            f"{folder} is {what}, not a folder: no concept file is read or written through it (fix: {CONCEPTS_FIX})",
            reason=Reason.SCHEMA_ERROR,
            file=CONCEPTS_DIR,
        )
        self.what = what

    def finding(self) -> Finding:
        """The refusal as the wiki check reports it: ``SCHEMA_ERROR`` on ``concepts``, with its fix."""
        detail = f"is {self.what}, not a folder: no concept file is read through it, so none is checked or published"
        return Finding(Reason.SCHEMA_ERROR, CONCEPTS_DIR, detail, fix=CONCEPTS_FIX)


def concepts_folder(wiki_root: Path) -> Path | None:
    """The wiki's ``concepts/`` folder, or None when the wiki has none.

    A ``concepts`` that is anything but a real folder raises :class:`ConceptsFolderError`: never
    taken for "no concepts" (a file or FIFO there would leave every concept page unchecked and
    unpublished in silence), never followed (a link would bring concept files from outside the
    wiki into its site, or put promoted ones there)."""
    folder = wiki_root / CONCEPTS_DIR
    try:
        return folder if real_folder(folder) else None
    except NotAFolderError as exc:
        raise ConceptsFolderError(folder, exc.what) from exc


def discover_concepts(wiki_root: Path) -> list[Path]:
    """Concept files (``concepts/*.md``), sorted; none when the wiki has no ``concepts/``, and
    :class:`ConceptsFolderError` when ``concepts`` is not a real folder (:func:`concepts_folder`)."""
    folder = concepts_folder(wiki_root)
    if folder is None:
        return []
    # Everything in it but a real folder: a link, FIFO or device named *.md is refused by the
    # reader, never skipped in silence (nor followed out of the wiki).
    return sorted(p for p in folder.glob("*.md") if p.is_symlink() or not p.is_dir())
