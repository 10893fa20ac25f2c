"""Placeholder, replaced by the gate commands."""


def register(sub):  # type: ignore[no-untyped-def]
    """Nothing yet."""
