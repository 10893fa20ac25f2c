"""The MkDocs side of an evidence wiki: build hook, generated pages, atomic publication, site seal.

Only :mod:`publisher.site.hook` and :mod:`publisher.site.pages` import MkDocs; importing this
package does not, so ``check-site`` and ``new`` stay light.
"""

from pathlib import Path

import publisher

__all__ = ["TEMPLATES_DIR"]

TEMPLATES_DIR = Path(publisher.__file__).resolve().parent.parent / "templates" / "site"
"""``templates/site`` of the repository: page skeletons, HTML fragments, stylesheet, ``new`` scaffold."""
