"""The MkDocs side of an evidence wiki: build hook, generated pages, atomic publication, site seal.

Only the build's modules (:mod:`~publisher.site.hook`, :mod:`~publisher.site.build`, the pages
and files it adds) import MkDocs; importing this package does not, so ``check-site`` and ``new``
stay light.
"""

from ..resources import TEMPLATES_DIR as _ROOT

__all__ = ["TEMPLATES_DIR"]

TEMPLATES_DIR = _ROOT / "site"
"""``templates/site`` of the repository: page skeletons, HTML fragments, stylesheet, ``new`` scaffold."""
