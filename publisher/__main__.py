"""``python -m publisher``."""

from .cli import entry

entry()
