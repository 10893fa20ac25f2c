"""The hook's former import path, kept for hook files that predate the plugin.

Such a ``hooks/evidence.py`` imports ``on_config`` and ``on_serve`` from here; they are the
functions of :mod:`publisher.site.build.hook`, where the build's way in lives now.
"""

from .build.hook import (
    CHECK_COMMAND,
    PLUGIN_KEY,
    PRECHECKED,
    EvidenceBuild,
    configure,
    format_findings,
    on_config,
    on_serve,
    watch,
)

__all__ = [
    "on_config",
    "on_serve",
    "configure",
    "watch",
    "EvidenceBuild",
    "PLUGIN_KEY",
    "CHECK_COMMAND",
    "PRECHECKED",
    "format_findings",
]
