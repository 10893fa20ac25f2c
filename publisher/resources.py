"""Where the packaged templates live, in a source checkout and in an installed wheel alike."""

from __future__ import annotations

from pathlib import Path

__all__ = ["TEMPLATES_DIR"]

_PACKAGE = Path(__file__).resolve().parent


def _templates_dir() -> Path:
    """The repository's top-level ``templates/`` when running from a checkout (editable
    installs included), else the copy a wheel installs as ``publisher/_templates``."""
    checkout = _PACKAGE.parent / "templates"
    if (checkout / "report.html.j2").is_file():
        return checkout
    return _PACKAGE / "_templates"


TEMPLATES_DIR = _templates_dir()
"""Jinja2 templates: the HTML report and the generated wiki pages (``site/``)."""
