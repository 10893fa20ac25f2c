"""MkDocs hook of an evidence wiki: the build runs the evidence preflight and publishes atomically.

A thin shim: the logic lives in the installed ``publisher`` package (``publisher.site.hook``).
Wire it in ``mkdocs.yml`` with ``hooks: [hooks/evidence.py]``.
"""

from publisher.site.hook import on_config, on_serve

__all__ = ["on_config", "on_serve"]
