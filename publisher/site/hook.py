"""The hook's former import path, kept for hook files that predate the plugin.

Such a ``hooks/evidence.py`` imports ``on_config`` and ``on_serve`` from here; they are the
functions of :mod:`publisher.site.lifecycle.hook`, where the build's way in lives now (with the rest
of its public names, imported from there).
"""

from .lifecycle.hook import on_config, on_serve

__all__ = ["on_config", "on_serve"]
