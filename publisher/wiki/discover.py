"""Where a wiki keeps its runs and concepts, and paths relative to its root."""

from __future__ import annotations

import glob
import os
from collections.abc import Callable, Iterable
from pathlib import Path

from ..kernel._fs import real_path
from ..runs import RUN_LAYOUTS, Run
from .concepts import CONCEPTS_DIR

__all__ = ["discover", "relative", "inside"]


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


def discover(
    wiki_root: Path, layouts: Iterable[str] = RUN_LAYOUTS, resolve: Callable[[Path], Path] = real_path
) -> tuple[list[Path], list[Path]]:
    """Run folders holding ``outputs/result.json``, and concept files; each sorted. ``resolve``:
    how a run's folder is resolved (to list it once however it is reached)."""
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
    folder = wiki_root / CONCEPTS_DIR
    # Everything but a real folder: a link, FIFO or device named *.md is refused by the reader,
    # never skipped in silence (nor followed out of the wiki).
    concepts = sorted(p for p in folder.glob("*.md") if p.is_symlink() or not p.is_dir()) if folder.is_dir() else []
    return runs, concepts
