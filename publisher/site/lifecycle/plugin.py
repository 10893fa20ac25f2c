"""The evidence build as an installable MkDocs plugin: ``plugins: - evidence``.

The ``mkdocs.plugins`` entry point (``evidence``) and the hook file ``hooks/evidence.py`` both use
:class:`publisher.cli.plugin.EvidencePlugin`, this class handed the terminal's progress bar (the
hook file creates one instance and exposes its event methods), so both wirings run this one
implementation over :mod:`publisher.site.lifecycle.hook`.

The instance outlives a single build on purpose: MkDocs keeps a plugin that has ``on_startup``
across the rebuilds of ``mkdocs serve`` (and a hook module is loaded once), and the instance is
where MkDocs tells which command runs. It keeps only that: the command (from ``on_startup``),
whether ``serve`` handed it the builder, and the current build; everything of one build lives in
the per-build :class:`~publisher.site.lifecycle.events.EvidenceBuild`. ``on_shutdown`` forgets it all.
"""

from __future__ import annotations

from typing import Any

from mkdocs.plugins import BasePlugin

from ...parallel.progress import Reporter, no_progress
from .events import EvidenceBuild, PublishAt
from .hook import CHECK_COMMAND, PLUGIN_KEY, configure, watch

__all__ = ["EvidencePlugin"]


class EvidencePlugin(BasePlugin):  # type: ignore[type-arg,no-untyped-call]
    """Preflight, generated pages, seal, and publication once the whole build has succeeded."""

    supports_multiple_instances = False

    def __init__(self, reporter: Reporter = no_progress) -> None:
        """``reporter`` shows the wiki check's progress (none by default: the plugin MkDocs loads,
        :class:`publisher.cli.plugin.EvidencePlugin`, hands this one the terminal's bar)."""
        super().__init__()
        self.reporter = reporter
        self.command: str | None = None
        self.serving = False
        self.current: EvidenceBuild | None = None

    def _publish_at(self) -> PublishAt:
        if self.command == CHECK_COMMAND:
            return "check"
        if self.serving:
            return "caller"
        if self.command in ("build", "gh-deploy"):
            return "shutdown"
        return "post_build"

    def on_startup(self, *, command: str, dirty: bool) -> None:
        self.command, self.serving, self.current = command, False, None

    def on_config(self, config: Any) -> Any:
        self.current = None
        self.current = configure(config, self._publish_at(), reporter=self.reporter)
        return config

    def on_serve(self, server: Any, *, config: Any, builder: Any) -> Any:
        """Publish the first build, then have every rebuild published once MkDocs has finished it.

        ``serve`` calls this only after its first build succeeded. The builder is wrapped so that
        a rebuild is published when MkDocs' build function has returned, never before another
        plugin or the strict-mode check could fail it (a failed rebuild raises out of the
        builder, and the server keeps showing the previous site).
        """
        first = config.plugins.get(PLUGIN_KEY)
        if isinstance(first, EvidenceBuild):
            first.publish_now()
        original = getattr(server, "builder", None)
        if not callable(original):  # not MkDocs' server: rebuilds publish at the end of on_post_build
            return watch(server, config)
        plugin = self

        def build_then_publish(*args: Any, **kwargs: Any) -> None:
            plugin.current = None
            original(*args, **kwargs)
            if plugin.current is not None:
                plugin.current.publish_now()

        server.builder = build_then_publish
        self.serving = True
        return watch(server, config)

    def on_shutdown(self) -> None:
        self.command, self.serving, self.current = None, False, None
