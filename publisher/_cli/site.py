"""Placeholder, replaced by the site commands."""


def register(sub):  # type: ignore[no-untyped-def]
    """Nothing yet."""
