"""The old name of :mod:`publisher.site.lifecycle` (kept for one release).

A folder named ``build`` is skipped by tools and global ignore files that take it for build
output; the build's lifecycle now lives in ``site/lifecycle``. Each module here is the module of
the same name there, the very same object, so ``publisher.site.build.plugin:EvidencePlugin``
and every other old import path keep working.
"""

import warnings

warnings.warn(
    "publisher.site.build is now publisher.site.lifecycle; the old name goes in the next release",
    DeprecationWarning,
    stacklevel=2,
)
