"""Evidence wiki publisher: every quoted sentence is provably a sentence of its source.

The library is layered (see the README's "Architecture" section); the CLI (:mod:`publisher.cli`)
and the MkDocs hook (:mod:`publisher.site.lifecycle.hook`) are thin adapters over it.
"""

import os as _os

__version__ = "0.1.0"

if _os.name != "posix":
    raise ImportError(
        "evidence-publisher runs on POSIX systems only (Linux, macOS): its file handling needs O_NOFOLLOW, "
        "flock and fsync of folders; use WSL on Windows"
    )
