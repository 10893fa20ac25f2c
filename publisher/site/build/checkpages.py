"""The old name of :mod:`publisher.site.lifecycle.checkpages` (kept for one release)."""

import importlib
import sys

sys.modules[__name__] = importlib.import_module("publisher.site.lifecycle.checkpages")
