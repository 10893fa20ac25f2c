"""The MkDocs side of an evidence wiki: wiki check, generated pages, seal and atomic publication.

This module is the way in (the wiki check that gates a build, the folders ``serve`` watches, the
entry points of hook files that predate the plugin); each build's own events are handled by
:class:`~publisher.site.lifecycle.events.EvidenceBuild` (:mod:`publisher.site.lifecycle.events`).

One implementation serves both wirings: the installable plugin (``plugins: - evidence``, see
:mod:`publisher.site.lifecycle.plugin`) and the hook file ``hooks/evidence.py`` (a shim over the same plugin
class). A build goes:

1. ``on_config`` (:func:`configure`) runs the wiki check (:mod:`publisher.wiki.check`) before
   anything is written; any finding raises one
   :class:`~publisher.site.lifecycle.refusal.EvidenceBuildError` carrying every finding (each phase
   below refuses the same way: every problem of the phase collected, raised once). It then
   points ``site_dir`` at a fresh staging folder beside the real one and registers a per-build
   :class:`~publisher.site.lifecycle.events.EvidenceBuild` in ``config.plugins``, which receives the
   rest of this build's events. Site-wide strings (``site_name`` ...) become HTML-safe for the
   theme (:mod:`publisher.site.pages.titles`).
2. ``on_files`` adds the generated pages (:mod:`publisher.site.pages.generate`), the stylesheets, the
   reader's in-browser verifier (``verify.js``) and, for each source, its snapshot record as
   ``sources/<source_id>/record.json`` (the stored bytes, re-verified before publication).
   ``on_nav`` makes section titles HTML-safe.
3. ``on_page_content`` (last) checks each page's prose (:mod:`publisher.site.checks.prose`: no script,
   style, handler, script-capable URL or evidence look-alike), then fills its slots with HTML
   (excerpts never pass through Markdown) and sets the page's title through the one escaping
   boundary. ``on_env`` refuses the build, before anything is written, if any page's prose had
   findings. ``on_post_page`` (last) scans the final HTML of every page as a browser parses it
   (:mod:`publisher.site.checks.scan`), checks each evidence element against the verified excerpts
   (:mod:`publisher.site.checks.seal`; what passes becomes the site seal, what does not a finding)
   and inserts the page's Content-Security-Policy (:mod:`publisher.site.checks.csp`);
   ``on_post_template`` does the same for ``404.html``. With helper processes the prose checks
   and the seals run on them while MkDocs goes on (:mod:`publisher.site.lifecycle.workers`): the
   prose findings are taken in ``on_env``, and each sealed page is written again with its policy
   by the first ``on_post_build`` handler, before any other plugin's.
4. ``on_post_build`` (last) refuses a build whose seal found anything (every finding of every
   page at once; the staging folder, never published, goes), then one that logged a warning
   under ``--strict``; it writes
   ``evidence-manifest.json`` (every file of the site with its SHA-256) and marks the staging
   folder ready. It does not publish yet:
   MkDocs has no event for "the build has succeeded" (other plugins' ``on_post_build`` and the
   strict-mode check still follow, and may fail it). Publication (:meth:`EvidenceBuild.publish_now`,
   which fsyncs every file and exchanges the folders) happens at the first point where success is
   known, chosen by :attr:`EvidenceBuild.publish_at`:

   - ``"shutdown"`` for ``mkdocs build`` and ``gh-deploy``: their ``on_shutdown`` runs in a
     ``finally`` right after the build function has returned or raised; our handler runs last
     and publishes only if no exception is propagating, no ``on_build_error`` reached us and
     the strict-mode counters are clean.
   - ``"caller"`` for rebuilds under ``mkdocs serve``: the builder that ``on_serve`` wrapped
     publishes once MkDocs' build function has returned.
   - ``"post_build"`` where no later point exists: the first build of ``mkdocs serve`` (into
     MkDocs' own empty temporary folder; serve stops if it fails), a build driven through the
     API without ``on_startup``, and wikis whose hook file predates the plugin. Publication then
     happens at the end of our last-running ``on_post_build``, after the strict-mode check.
5. ``on_build_error`` removes the staging folder. Whatever fails, the published site is untouched.
"""

from __future__ import annotations

import contextlib
import logging
import os
from concurrent.futures import Executor
from contextvars import ContextVar
from pathlib import Path
from typing import Any

from ...kernel.checkids import CheckId
from ...kernel.errors import PublisherError
from ...parallel import Workers, default_workers, warm_pool
from ...parallel.cluster import cluster_executor, scheduler_from
from ...parallel.progress import Reporter, no_progress
from ...runs import RUN_LAYOUTS
from ...wiki.check import check_wiki
from ...wiki.claims.log import ASSESSMENTS_FILE
from ...wiki.evidence import WikiCheck
from .events import EvidenceBuild, PublishAt
from .options import site_dir_apart, site_dir_ours, wiki_root
from .policy import policy_of_config
from .refusal import EvidenceBuildError, error_finding, refuse

__all__ = [
    "on_config",
    "on_serve",
    "configure",
    "watch",
    "EvidenceBuild",
    "PLUGIN_KEY",
    "CHECK_COMMAND",
    "PRECHECKED",
    "EvidenceBuildError",
]

PLUGIN_KEY = "publisher-evidence-build"
"""Name of the per-build object in ``config.plugins``."""

CHECK_COMMAND = "publisher-check"
"""The ``on_startup`` command of a check-only build (:mod:`publisher.site.lifecycle.checkpages`)."""

PRECHECKED: ContextVar[WikiCheck | None] = ContextVar("publisher_prechecked", default=None)
"""The wiki check a check-only build's caller already ran (with the same policy): not run twice."""

log = logging.getLogger("mkdocs.plugins.publisher")


def configure(config: Any, publish_at: PublishAt = "post_build", *, reporter: Reporter) -> EvidenceBuild:
    """Run the wiki check before anything is written; stage the build beside the real site.

    ``reporter`` shows the check's progress: whoever wires the build chooses it (the plugin MkDocs
    loads draws a bar on a terminal, :mod:`publisher.cli.plugin`; this package draws nothing itself).
    """
    root = wiki_root(config)
    site_dir_apart(config, root)  # before anything is read or written
    site_dir_ours(config)
    build = config.plugins.get(PLUGIN_KEY)
    if isinstance(build, EvidenceBuild):
        build.abandon()
    try:  # the configuration MkDocs resolved (INHERIT, -f, !ENV), read once for the whole build
        policy = policy_of_config(config, root)
    except PublisherError as exc:
        config_name = os.path.basename(config.config_file_path)
        raise refuse("evidence options", [error_finding(exc, config_name, CheckId.CONFIG)]) from exc
    known = PRECHECKED.get()
    if known is not None and known.wiki_root.resolve() == root and known.policy.digest == policy.digest:
        pre = known
    else:
        try:  # on a Dask cluster when whoever runs the build names one ($PUBLISHER_SCHEDULER), never the wiki
            with contextlib.ExitStack() as stack:
                scheduler = scheduler_from(None)
                executor, workers = (
                    stack.enter_context(cluster_executor(scheduler)) if scheduler else _server_pool(root)
                )
                progress = stack.enter_context(reporter("evidence check"))
                pre = check_wiki(root, policy=policy, workers=Workers(executor, workers, progress))
        except PublisherError as exc:
            raise refuse("evidence check", [error_finding(exc, ".", CheckId.BUILD)]) from exc
    if not pre.ok:
        raise refuse("evidence check", pre.findings)
    for notice in pre.notices:
        log.info(f"evidence check: {notice}")
    if not isinstance(build, EvidenceBuild):
        build = EvidenceBuild()
        config.plugins[PLUGIN_KEY] = build
    build.start(config, root, pre, publish_at)
    return build


_SERVED: set[Path] = set()
"""The wikis this process serves (``mkdocs serve``): it checks them on every change."""


def _server_pool(root: Path) -> tuple[Executor | None, int | None]:
    """For a wiki this process serves, the process's warm pool (its start-up paid once, not per
    rebuild); else none (the check makes its own pool when the wiki pays for one)."""
    count = default_workers()
    if root in _SERVED and count > 1:
        return warm_pool(count), count
    return None, None


def watch(server: Any, config: Any) -> Any:
    """Rebuild when runs, concepts, the PDF library or the claim assessments change (and keep the
    pool the wiki check runs on between rebuilds)."""
    _SERVED.add(wiki_root(config))
    root = wiki_root(config)
    folders = {root / "concepts", root / "assets" / "papers"}
    folders.update(root / layout.split("/*")[0] for layout in RUN_LAYOUTS)
    for folder in sorted(folders):
        if folder.is_dir():
            server.watch(os.fspath(folder))
    if (root / ASSESSMENTS_FILE).is_file():
        server.watch(os.fspath(root / ASSESSMENTS_FILE))
    return server


def on_config(config: Any) -> Any:
    """Hook files that predate the plugin: no ``on_startup``, so publication ends ``on_post_build``
    (and no progress is drawn: such a file names no reporter)."""
    configure(config, reporter=no_progress)
    return config


def on_serve(server: Any, *, config: Any, builder: Any) -> Any:
    """Hook files that predate the plugin: watch the wiki's evidence folders."""
    return watch(server, config)
