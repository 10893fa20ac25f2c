"""Accessible names the theme leaves out.

Material's search overlay is a ``role="dialog"`` element without a name (axe-core's
``aria-dialog-name``, a serious violation on every page). The search field inside it already
carries the theme's translated label; :func:`name_search_dialog` gives the dialog the same
label, so the name follows the wiki's language. Any other page is returned unchanged.
"""

from __future__ import annotations

import re

__all__ = ["name_search_dialog"]

_DIALOG = re.compile(r'<div class="md-search" data-md-component="search" role="dialog"(?=>)')
_FIELD_LABEL = re.compile(r'<input type="text" class="md-search__input" name="query" aria-label="([^"<>]*)"')


def name_search_dialog(html: str) -> str:
    """``html`` with Material's search dialog named after its search field (once, if both are there)."""
    field = _FIELD_LABEL.search(html)
    if field is None:
        return html
    return _DIALOG.sub(lambda m: f'{m.group(0)} aria-label="{field.group(1)}"', html, count=1)
