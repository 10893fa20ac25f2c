"""Run directories: layout, creation and the run configuration (CONTRACT section 1)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from pydantic import ValidationError

from .kernel import _fs
from .kernel.canonical import StrictJSONError, canonical_bytes, format_ts, loads_strict, utc_now
from .kernel.errors import UsageError
from .kernel.models import RunConfig
from .kernel.reasons import Reason
from .kernel.store import SnapshotStore

__all__ = ["Run", "init_run", "SLUG_RE", "find_wiki_root", "RUN_LAYOUTS", "slug_problem"]

SLUG_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}")
_UNSAFE_SLUG_RE = re.compile(r"[/\\\x00-\x1f\x7f]")


def slug_problem(slug: str) -> str | None:
    """Why ``slug`` cannot name a run, or None.

    ``run init`` writes slugs matching :data:`SLUG_RE`; upstream runs may carry other names (their
    folder's), so any single path segment is accepted. The slug becomes part of the site's page
    paths: a ``/``, ``..`` or control character in it would write pages outside the site.
    """
    if not slug or slug in (".", "..") or _UNSAFE_SLUG_RE.search(slug) or len(slug) > 255:
        return f"run slug {slug[:80]!r} is not a single path segment"
    return None


RUN_LAYOUTS = ("runs/*", "outputs/deep-research/*")
"""Where a wiki keeps its runs: our default layout first, then the upstream one."""


@dataclass(frozen=True)
class Run:
    """One run directory and the well-known paths inside it."""

    path: Path

    @property
    def config_path(self) -> Path:
        return self.path / "config.json"

    @property
    def sources_dir(self) -> Path:
        return self.path / "sources"

    @property
    def events_path(self) -> Path:
        return self.path / "events.jsonl"

    @property
    def corpus_path(self) -> Path:
        return self.path / "corpus.jsonl"

    @property
    def extractions_dir(self) -> Path:
        return self.path / "workspace" / "extractions"

    @property
    def appraisals_dir(self) -> Path:
        return self.path / "workspace" / "appraisals"

    @property
    def verifier_path(self) -> Path:
        return self.path / "workspace" / "verifier.json"

    @property
    def outputs_dir(self) -> Path:
        return self.path / "outputs"

    @property
    def report_md(self) -> Path:
        return self.outputs_dir / "report.md"

    @property
    def result_path(self) -> Path:
        return self.outputs_dir / "result.json"

    @property
    def verification_path(self) -> Path:
        return self.outputs_dir / "verification.json"

    @property
    def own_verification_path(self) -> Path:
        """Where ``publisher verify`` writes its report when ``verification.json`` is the upstream
        verifier's (which it never overwrites, see :mod:`publisher.gate.verdicts`)."""
        return self.outputs_dir / "publisher-verification.json"

    @property
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
        return self.path.resolve().name

    @classmethod
    def open(cls, path: Path | str) -> Run:
        """An existing run directory; a clear usage error when it is not one."""
        run = cls(Path(path))
        if not run.path.is_dir():
            raise UsageError(f"run directory {run.path} does not exist (create it with 'publisher run init')")
        if not run.config_path.is_file():
            raise UsageError(f"{run.path} is not a run: no config.json (create it with 'publisher run init')")
        return run

    def load_config(self) -> RunConfig:
        """The run's config, strictly parsed; a malformed config is a SCHEMA_ERROR usage error."""
        try:
            raw = loads_strict(_fs.read_regular(self.config_path))
            config = RunConfig.model_validate(raw)
            problem = None if config.run_slug is None else slug_problem(config.run_slug)
            if problem is not None:
                raise ValueError(problem)
            return config
        except (OSError, ValueError, StrictJSONError, ValidationError) as exc:
            detail = " ".join(str(exc).split())[:200]
            raise UsageError(
                f"{self.config_path}: not a valid run config ({detail})",
                reason=Reason.SCHEMA_ERROR,
                path=str(self.config_path),
            ) from exc

    def slug(self, config: RunConfig | None = None) -> str:
        """The run's slug: ``run_slug`` from the config, else the folder name."""
        config = config or self.load_config()
        return config.run_slug or self.slug_default


def init_run(path: Path | str, slug: str, *, gate: bool = False) -> Run:
    """Create a run directory with its config; refuses to overwrite an existing run."""
    if not SLUG_RE.fullmatch(slug):
        raise UsageError(f"slug {slug!r} must be letters, digits, '.', '_' or '-' (at most 128)")
    run = Run(Path(path))
    if run.config_path.exists():
        raise UsageError(f"{run.path} is already a run (config.json exists); pick another folder")
    config = {
        "schema_version": 1,
        "run_slug": slug,
        "created_at": format_ts(utc_now()),
        "gates": {"evidence_kernel": gate},
    }
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


def find_wiki_root(start: Path) -> Path | None:
    """The wiki root of ``start`` (a run folder or any folder inside a wiki), if one can be told.

    A run in the upstream layout, ``<wiki>/outputs/deep-research/<slug>/``, names its wiki by
    where it sits, as the upstream kit derives it: such a wiki need not hold ``mkdocs.yml``. Any
    other folder's wiki is the nearest folder at or above it holding ``mkdocs.yml``.
    """
    here = start.resolve()
    parents = here.parents
    if len(parents) >= 3 and parents[0].name == "deep-research" and parents[1].name == "outputs":
        return parents[2]
    for folder in (here, *parents):
        if (folder / "mkdocs.yml").is_file() or (folder / "mkdocs.yaml").is_file():
            return folder
    return None
