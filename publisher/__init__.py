"""Evidence wiki publisher: every quoted sentence is provably a sentence of its source.

The library is layered (see the README's "Architecture" section); the CLI (:mod:`publisher.cli`)
and the MkDocs hook (:mod:`publisher.site.build.hook`) are thin adapters over it.
"""

__version__ = "0.1.0"
