"""The MkDocs side of an evidence wiki, in three rooms by job.

- :mod:`publisher.site.lifecycle`: the build lifecycle (the hook and plugin, each build's events, the
  helper processes, the seal written at the end, atomic publication);
- :mod:`publisher.site.pages`: the generated pages and what every page shows;
- :mod:`publisher.site.checks`: the prose allow-list, the seal and the checks of a built site
  (``check-site``).

:mod:`.scaffold` writes a new wiki (``publisher new``). The build draws no progress itself: it is
handed a reporter (:mod:`publisher.parallel.progress`; the command line's bar is
:mod:`publisher.cli.progress`). ``publisher.site.plugin`` and ``publisher.site.hook`` are the
former import paths of the plugin and the hook, kept for hook files that name them (they draw no
progress). The imports go one
way: ``pages`` < ``checks`` < ``build``.

Only the build's modules import MkDocs; importing this package does not, so ``check-site`` and
``new`` stay light.
"""

from pathlib import Path

from ..resources import TEMPLATES_DIR as _ROOT

__all__ = ["STATIC_DIR", "TEMPLATES_DIR"]

TEMPLATES_DIR = _ROOT / "site"
"""``templates/site`` of the repository: page skeletons, HTML fragments, stylesheet, ``new`` scaffold."""

STATIC_DIR = Path(__file__).resolve().parent / "static"
"""Files served as they are: the reader's stylesheet and the in-browser verifier."""
