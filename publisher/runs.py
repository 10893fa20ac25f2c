"""Run directories: layout, creation and the run configuration (CONTRACT section 1)."""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Callable
from pathlib import Path
from typing import Any, Generic, TypeVar, overload

from .kernel import _fs
from .kernel.canonical import StrictJSONError, canonical_bytes, format_ts, loads_strict, utc_now
from .kernel.errors import UsageError
from .kernel.frozen import FrozenValue
from .kernel.reasons import Reason
from .kernel.shapes import ConfigView, config_shape
from .kernel.store import SnapshotStore
from .kernel.text import one_line

__all__ = [
    "Run",
    "init_run",
    "SLUG_RE",
    "find_wiki_root",
    "RUN_LAYOUTS",
    "slug_problem",
    "config_file_of",
    "read_workspace",
    "write_workspace",
]

SLUG_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}")
"""Every slug (run or concept): letters, digits, ``.``, ``_``, ``-``; at most 128; no leading dot."""


def slug_problem(slug: str) -> str | None:
    """Why ``slug`` cannot name a run, or None.

    A slug becomes part of the site's page paths, URLs and titles, so it is held to
    :data:`SLUG_RE`, a safe alphabet, whoever wrote it. That includes an upstream run's folder
    name, which is its slug when ``config.json`` has no ``run_slug``: an unsafe one is refused,
    never mapped (a mapping could make two runs collide or one run look like another); the fix is
    to set ``run_slug`` in the run's ``config.json`` (metadata, not evidence) or rename the folder.
    """
    if not isinstance(slug, str) or not SLUG_RE.fullmatch(slug):
        shown = repr(slug[:80]) if isinstance(slug, str) else type(slug).__name__
        return (
            f"run slug {shown} is not letters, digits, '.', '_' or '-' (at most 128, starting with a letter "
            "or digit); set run_slug in the run's config.json or rename its folder"
        )
    return None


RUN_LAYOUTS = ("runs/*", "outputs/deep-research/*")
"""Where a wiki keeps its runs: our default layout first, then the upstream one."""


_T = TypeVar("_T")


class _made_once(Generic[_T]):
    """``functools.cached_property`` without its lock: a run's paths are made from its folder
    alone, so two threads that make one at once store equal values, and Python 3.11 takes a lock
    on each first reading (a run check makes a dozen paths of every run it reads)."""

    def __init__(self, make: Callable[[Any], _T]) -> None:
        self._make = make
        self._name = make.__name__
        self.__doc__ = make.__doc__

    def __set_name__(self, owner: type, name: str) -> None:
        self._name = name

    @overload
    def __get__(self, instance: None, owner: type | None = None) -> _made_once[_T]: ...
    @overload
    def __get__(self, instance: object, owner: type | None = None) -> _T: ...
    def __get__(self, instance: object | None, owner: type | None = None) -> _T | _made_once[_T]:
        if instance is None:
            return self
        made = instance.__dict__[self._name] = self._make(instance)
        return made


class Run(FrozenValue):
    """One run directory and the well-known paths inside it (each made once per object: a wiki
    check asks a run for its paths some thirty times; a pickle carries the folder alone). Frozen,
    equal and hashed by its folder (:class:`~publisher.kernel.frozen.FrozenValue`); the paths made
    are kept in the object's own ``__dict__``."""

    _fields = ("path",)
    path: Path

    def __init__(self, path: Path) -> None:
        object.__setattr__(self, "path", path)

    @_made_once
    def config_path(self) -> Path:
        return self.path / "config.json"

    @_made_once
    def sources_dir(self) -> Path:
        return self.path / "sources"

    @_made_once
    def events_path(self) -> Path:
        return self.path / "events.jsonl"

    @_made_once
    def raw_dir(self) -> Path:
        """Raw bytes behind retrieval receipts, write-once under their SHA-256."""
        return self.path / "raw"

    @_made_once
    def corpus_path(self) -> Path:
        return self.path / "corpus.jsonl"

    @_made_once
    def workspace_dir(self) -> Path:
        """The agents' folder: the records and the checker's verdicts (each path below made once
        from it, not from the run's folder in two steps)."""
        return self.path / "workspace"

    @_made_once
    def extractions_dir(self) -> Path:
        return self.workspace_dir / "extractions"

    @_made_once
    def appraisals_dir(self) -> Path:
        return self.workspace_dir / "appraisals"

    @_made_once
    def verifier_path(self) -> Path:
        return self.workspace_dir / "verifier.json"

    @_made_once
    def outputs_dir(self) -> Path:
        return self.path / "outputs"

    @_made_once
    def report_md(self) -> Path:
        return self.outputs_dir / "report.md"

    @_made_once
    def result_path(self) -> Path:
        return self.outputs_dir / "result.json"

    @_made_once
    def verification_path(self) -> Path:
        return self.outputs_dir / "verification.json"

    @_made_once
    def own_verification_path(self) -> Path:
        """Where ``publisher verify`` writes its report when ``verification.json`` is the upstream
        verifier's (which it never overwrites, see :mod:`publisher.gate.verdicts`)."""
        return self.outputs_dir / "publisher-verification.json"

    @_made_once
    def report_html(self) -> Path:
        return self.outputs_dir / "report.html"

    @property
    def store(self) -> SnapshotStore:
        return SnapshotStore(self.sources_dir)

    @property
    def slug_default(self) -> str:
        """The folder name, which is the slug of an upstream run without ``run_slug``.

        Resolved first: ``--run-dir .`` or ``runs/x/..`` must not name the run ``''`` or ``..``.
        """
        return _fs.real_path(self.path).name

    @classmethod
    def open(cls, path: Path | str) -> Run:
        """An existing run directory; a clear usage error when it is not one."""
        run = cls(Path(path))
        if not run.path.is_dir():
            raise UsageError(
                f"run directory {run.path} does not exist (create it with 'publisher run init')", path=str(run.path)
            )
        if not run.config_path.is_file():
            raise UsageError(
                f"{run.path} is not a run: no config.json (create it with 'publisher run init')",
                path=str(run.config_path),
            )
        return run

    def load_config(self, data: bytes | None = None) -> ConfigView:
        """The run's config, strictly parsed; a malformed config is a SCHEMA_ERROR usage error.
        ``data``: the file's bytes, already read by the caller (None: read here). A config
        :func:`~publisher.kernel.shapes.config_shape` accepts is read without the validation
        library; any other is judged by the model, which accepts it or says why."""
        try:
            raw = loads_strict(_fs.read_regular(self.config_path) if data is None else data)
            if not config_shape(raw):
                from .kernel.models import RunConfig  # the validation library only for an unusual config

                raw = RunConfig.model_validate(raw).model_dump(mode="json")
            config = ConfigView(raw)
            problem = None if config.run_slug is None else slug_problem(config.run_slug)
            if problem is not None:
                raise ValueError(problem)
            return config
        except (OSError, ValueError, StrictJSONError) as exc:  # the library's validation error is a ValueError
            detail = one_line(exc, 200)
            raise UsageError(
                f"{self.config_path}: not a valid run config ({detail})",
                reason=Reason.SCHEMA_ERROR,
                path=str(self.config_path),
            ) from exc

    def created_at(self) -> str | None:
        """The config's ``created_at``, read as :meth:`load_config` reads the config (without the
        validation library for a usual one: listing a wiki's revisions reads every run's config)."""
        return self.load_config().created_at

    @property
    def upstream_layout(self) -> bool:
        """Whether the run sits where the upstream kit writes runs (``outputs/deep-research/<slug>``):
        such runs keep upstream's rules (no seals, no chain; see docs/upstream.md)."""
        folder = _real_folder(self.path)
        if folder is None:
            parents = _fs.real_path(self.path).parents
            return len(parents) >= 2 and parents[0].name == "deep-research" and parents[1].name == "outputs"
        above, here = os.path.split(folder)
        return here == "deep-research" and os.path.basename(above) == "outputs"

    def slug(self, config: ConfigView | None = None) -> str:
        """The run's slug: ``run_slug`` from the config, else the folder name (held to :data:`SLUG_RE`)."""
        config = config or self.load_config()
        slug = config.run_slug or self.slug_default
        problem = slug_problem(slug)
        if problem is not None:
            raise UsageError(f"{self.path}: {problem}", reason=Reason.SCHEMA_ERROR, path=str(self.config_path))
        return slug

    def name(self, config: ConfigView | None = None) -> str:
        """``<run_slug>@<created_at>``: the run a signed acquisition event names (CONTRACT 12)."""
        config = config or self.load_config()
        return f"{self.slug(config)}@{config.created_at or ''}"


MAX_QUESTION = 500
"""Longest review question ``run init --question`` accepts, in code points."""

_CONTROL = r"[\x00-\x1f\x7f-\x9f\u2028\u2029]"
"""What a question may not hold (compiled when a run is made: the only reader)."""


def init_run(path: Path | str, slug: str, *, gate: bool = False, question: str | None = None) -> Run:
    """Create a run directory with its config; refuses to overwrite an existing run.

    ``question`` (the review question, one line) is stored as the config's ``question``, which
    the wiki shows as the title of the run's concept.
    """
    if not SLUG_RE.fullmatch(slug):
        raise UsageError(f"slug {slug!r} must be letters, digits, '.', '_' or '-' (at most 128)")
    if question is not None:
        question = question.strip()
        if not question or len(question) > MAX_QUESTION or re.search(_CONTROL, question):
            raise UsageError(f"the question must be one line of 1 to {MAX_QUESTION} characters, no control characters")
    run = Run(Path(path))
    if run.config_path.exists():
        raise UsageError(f"{run.path} is already a run (config.json exists); pick another folder")
    config = {
        "schema_version": 1,
        "run_slug": slug,
        "created_at": format_ts(utc_now()),
        "gates": {"evidence_kernel": gate},
    }
    if question is not None:
        config["question"] = question
    try:
        for folder in (run.sources_dir, run.extractions_dir, run.appraisals_dir, run.outputs_dir):
            folder.mkdir(parents=True, exist_ok=True)
        created = _fs.create_exclusive(run.config_path, canonical_bytes(config) + b"\n", mode=0o644)
        if created:
            _fs.create_exclusive(run.events_path, b"", mode=0o644)
    except OSError as exc:
        raise UsageError(f"cannot create run {run.path}: {exc.strerror or exc}", path=str(run.path)) from exc
    if not created:
        raise UsageError(f"{run.path} is already a run (config.json exists)")
    return run


MAX_COPIED_FILES = 10_000
"""Most files ``run init --from`` copies (agent records, report, corpus)."""


def read_workspace(old: Run) -> list[tuple[str, bytes]]:
    """What ``run init --from OLD`` copies, read before anything is created: ``workspace/``
    (records, ``verifier.json``), ``outputs/report.md`` and ``corpus.jsonl`` of ``old``, as
    (path relative to the run, bytes). Never the snapshots, raw bytes or event log: the new run
    fetches its sources itself (a source fetched again from the same URL with the same text has
    the same id, so the records still cite it, now with the ids given to the fetch).

    Only regular files are read (a link is refused, never followed); a usage error names
    anything that cannot be copied.
    """
    wanted: list[Path] = []
    workspace = old.path / "workspace"
    if workspace.is_dir() and not workspace.is_symlink():
        for path in sorted(workspace.rglob("*")):
            if path.is_symlink() or (not path.is_dir() and not path.is_file()):
                rel = path.relative_to(old.path).as_posix()
                raise UsageError(f"--from: {rel} is not a regular file; refusing to copy it")
            if path.is_file():
                wanted.append(path)
    for path in (old.report_md, old.corpus_path):
        if os.path.lexists(path):
            wanted.append(path)
    if len(wanted) > MAX_COPIED_FILES:
        raise UsageError(f"--from: {len(wanted)} files is more than the {MAX_COPIED_FILES} a run init copies")
    out = []
    for path in wanted:
        rel = path.relative_to(old.path).as_posix()
        try:
            out.append((rel, _fs.read_regular(path, follow_symlinks=False)))
        except OSError as exc:
            raise UsageError(f"--from: {rel} cannot be read ({exc.strerror or exc})") from exc
    return out


def write_workspace(new: Run, files: list[tuple[str, bytes]]) -> list[str]:
    """Write :func:`read_workspace`'s files into the fresh run ``new``; returns their paths."""
    for rel, data in files:
        target = new.path / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        if not _fs.create_exclusive(target, data, mode=0o644):
            raise UsageError(f"{rel} already exists in the new run")
    return [rel for rel, _ in files]


_REAL_FOLDERS: dict[str, tuple[int, int, str]] = {}
"""A folder as given -> its device, inode and real path (:func:`_real_folder`): the runs of a wiki
share a few folders, whose components need not be walked again for each run."""

_REAL_FOLDERS_HELD = 256
"""Folders :data:`_REAL_FOLDERS` holds at most (it starts again when full)."""


def _same(path: str, info: os.stat_result) -> bool:
    """Whether ``path`` names the file ``info`` was taken of (same device and inode)."""
    try:
        there = os.stat(path)
    except OSError:
        return False
    return there.st_dev == info.st_dev and there.st_ino == info.st_ino


def _real_folder(path: Path) -> str | None:
    """The real path of the folder that ``path`` (no link itself) sits in, or None when it must be
    resolved whole: a link, a relative or dotted path, or anything that cannot be looked at.

    Resolving walks every component with ``lstat`` (some 60 microseconds a run for a wiki check
    that asks each run where it sits), and the runs of a wiki share a few folders: a folder's real
    path is held (:data:`_REAL_FOLDERS`) and taken again while the folder at the given path and
    at the real path held are still the same one (device and inode). ``path`` itself is looked at
    every time."""
    name = path.name
    if not path.is_absolute() or name in ("", "..", "."):
        return None
    folder = os.fspath(path.parent)
    try:
        if stat.S_ISLNK(os.lstat(path).st_mode):
            return None
        here = os.stat(folder)
        held = _REAL_FOLDERS.get(folder)
        if held is not None and held[0] == here.st_dev and held[1] == here.st_ino and _same(held[2], here):
            return held[2]
        real = os.path.realpath(folder)
    except OSError:
        return None
    if not _same(real, here):  # changed while resolved
        return None
    if len(_REAL_FOLDERS) >= _REAL_FOLDERS_HELD:
        _REAL_FOLDERS.clear()
    _REAL_FOLDERS[folder] = (here.st_dev, here.st_ino, real)
    return real


def find_wiki_root(start: Path) -> Path | None:
    """The wiki root of ``start`` (a run folder or any folder inside a wiki), if one can be told.

    A run in the upstream layout, ``<wiki>/outputs/deep-research/<slug>/``, names its wiki by
    where it sits, as the upstream kit derives it: such a wiki need not hold ``mkdocs.yml``. Any
    other folder's wiki is the nearest folder at or above it holding ``mkdocs.yml``.
    """
    here = _fs.real_path(start)
    parents = here.parents
    if len(parents) >= 3 and parents[0].name == "deep-research" and parents[1].name == "outputs":
        return parents[2]
    for folder in (here, *parents):
        if (folder / "mkdocs.yml").is_file() or (folder / "mkdocs.yaml").is_file():
            return folder
    return None


def config_file_of(wiki_root: Path) -> Path | None:
    """The wiki's ``mkdocs.yml`` (or ``mkdocs.yaml``), or None."""
    for name in ("mkdocs.yml", "mkdocs.yaml"):
        if os.path.lexists(wiki_root / name):
            return wiki_root / name
    return None
