"""The plugin's former import path, kept for wikis and tools that name it.

The plugin lives in :mod:`publisher.site.lifecycle.plugin`; hook files written before the site
package was split import ``publisher.site.plugin.EvidencePlugin``, which is the same class (it
draws no progress bar; ``publisher.cli.plugin.EvidencePlugin``, which hook files name now, does).
"""

from .lifecycle.plugin import EvidencePlugin

__all__ = ["EvidencePlugin"]
