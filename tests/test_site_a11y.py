"""The accessible name given to Material's search dialog (the browser check is test_browser_a11y.py)."""

from __future__ import annotations

from publisher.site.pages.a11y import name_search_dialog

DIALOG = '<div class="md-search" data-md-component="search" role="dialog">'
FIELD = '<input type="text" class="md-search__input" name="query" aria-label="Rechercher" placeholder="x">'


def test_the_dialog_takes_the_search_fields_label() -> None:
    page = f"<body>{DIALOG}<form>{FIELD}</form></div></body>"
    out = name_search_dialog(page)
    assert '<div class="md-search" data-md-component="search" role="dialog" aria-label="Rechercher">' in out
    assert out.count("aria-label=") == 2


def test_a_page_without_the_theme_search_is_unchanged() -> None:
    assert name_search_dialog(f"<body>{DIALOG}</div></body>") == f"<body>{DIALOG}</div></body>"
    assert name_search_dialog(f"<p>{FIELD}</p>") == f"<p>{FIELD}</p>"


def test_only_the_labels_attribute_value_is_copied() -> None:
    hostile = FIELD.replace("Rechercher", 'x" onmouseover="alert(1)')
    dialog = name_search_dialog(f"{DIALOG}{hostile}</div>").split(">", 1)[0]
    assert dialog.endswith('aria-label="x"') and "onmouseover" not in dialog
