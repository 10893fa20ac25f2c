"""MkDocs hook of an evidence wiki: the build runs the evidence preflight and publishes atomically.

A thin shim over the installed ``publisher`` package: one :class:`EvidencePlugin` per wiki, whose
event methods MkDocs calls as it calls a plugin's. Wire it in ``mkdocs.yml`` with
``hooks: [hooks/evidence.py]``, or drop this file and use ``plugins: [search, evidence]``.
"""

from publisher.cli.plugin import EvidencePlugin

_evidence = EvidencePlugin()
on_startup = _evidence.on_startup
on_config = _evidence.on_config
on_serve = _evidence.on_serve
on_shutdown = _evidence.on_shutdown

__all__ = ["on_startup", "on_config", "on_serve", "on_shutdown"]
