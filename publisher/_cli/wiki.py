"""Placeholder, replaced by the wiki commands."""


def register(sub):  # type: ignore[no-untyped-def]
    """Nothing yet."""
