"""Page metadata the theme renders: an allow-list of front matter keys, each with its rule.

MkDocs reads a page's metadata from YAML front matter (or MultiMarkdown ``Key: value`` lines at
its top) and hands it to the theme as ``page.meta``; Material prints some of it into every page of
the site, unescaped (a status goes into a ``class`` attribute of the navigation), or uses it as a
template path (an icon is ``{% include ".icons/<icon>.svg" %}``, a template the page's whole
layout). So a page's metadata may hold only the keys of :data:`META_RULES`, each value of the
shape its rule gives:

* ``title``, ``description``, ``author``, ``subtitle``: plain text (a string without control
  characters); the build hands it to the theme escaped (:mod:`publisher.site.pages.titles`);
* ``status``: one of the statuses ``mkdocs.yml`` configures (``extra: status:``), itself a plain
  name (letters, digits, ``-`` and ``_``);
* ``icon``: a name of the theme's icon set, the path of an SVG below a ``.icons`` folder of one
  of the theme's folders (``material/emoticon-happy``), with no ``.`` in it;
* ``template``: ``main.html``;
* ``hide``: a list of the parts Material can hide (:data:`HIDEABLE`);
* ``search``: a mapping of ``exclude`` (true/false) and ``boost`` (a number);
* ``tags``: a list of plain tag names (letters, digits, spaces and ``-_.+#/:``);
* ``comments``: true or false.

Anything else (another key, a value of another shape) is a ``C-META`` finding naming the file,
the line of the key and the key, never a template traceback. Concept files are unaffected: their
front matter is the concept's own (:mod:`publisher.wiki.concepts`) and never reaches the theme.
This module does not import MkDocs.
"""

from __future__ import annotations

import os
import re
import stat
import unicodedata
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from ...kernel.checkids import CheckId
from ...kernel.findings import Finding

__all__ = ["CHECK", "HIDEABLE", "TEMPLATES", "META_RULES", "ThemeMeta", "check_meta", "meta_lines"]

CHECK = CheckId.META

HIDEABLE = frozenset({"navigation", "toc", "footer", "feedback", "path", "tags"})
"""What ``hide:`` may name: the parts of a page Material can hide."""

TEMPLATES = frozenset({"main.html"})
"""What ``template:`` may name: the theme's page template."""

_NAME = re.compile(r"[A-Za-z0-9_-]+")
_ICON = re.compile(r"[A-Za-z0-9_-]+(?:/[A-Za-z0-9_-]+)*")
_TAG_MARKS = frozenset(" -_.+#/:")
_YAML_FRONT = re.compile(r"-{3}[ \t]*\n(.*?\n)(?:\.{3}|-{3})[ \t]*\n", re.DOTALL)
_MMD_KEY = re.compile(r"[ ]{0,3}([A-Za-z0-9_-]+):")
_MMD_MORE = re.compile(r"(?:[ ]{4}|\t)")


@dataclass(frozen=True)
class ThemeMeta:
    """What the configuration allows a page's metadata to name: its statuses and icon folders."""

    statuses: frozenset[str]
    """The keys of ``extra: status:`` in ``mkdocs.yml``."""
    icon_dirs: tuple[Path, ...]
    """Each ``.icons`` folder of the theme's folders (``custom_dir`` first, as the theme looks)."""

    @classmethod
    def of(cls, extra: Any, theme_dirs: Iterable[str | Path]) -> ThemeMeta:
        """From ``config.extra`` and ``config.theme.dirs``."""
        status = extra.get("status") if isinstance(extra, Mapping) else None
        statuses = frozenset(k for k in status if isinstance(k, str)) if isinstance(status, Mapping) else frozenset()
        icons = tuple(Path(d) / ".icons" for d in theme_dirs if (Path(d) / ".icons").is_dir())
        return cls(statuses, icons)

    def has_icon(self, name: str) -> bool:
        """Whether ``name`` names an SVG of the icon set: a regular file, found below the folder."""
        for folder in self.icon_dirs:
            path = folder / f"{name}.svg"
            try:
                if not stat.S_ISREG(path.lstat().st_mode):
                    continue
            except OSError:
                continue
            if Path(os.path.realpath(path)).is_relative_to(os.path.realpath(folder)):
                return True
        return False


def _plain_text(value: Any, theme: ThemeMeta) -> str | None:
    if not isinstance(value, str):
        return "is not text"
    bad = next((c for c in value if unicodedata.category(c) == "Cc" and c not in "\t\n"), None)
    return f"holds the control character U+{ord(bad):04X}" if bad is not None else None


def _status(value: Any, theme: ThemeMeta) -> str | None:
    if not isinstance(value, str) or not _NAME.fullmatch(value) or value not in theme.statuses:
        known = ", ".join(sorted(s for s in theme.statuses if _NAME.fullmatch(s))) or "none"
        return f"is not a status mkdocs.yml configures under extra: status: (configured: {known})"
    return None


def _icon(value: Any, theme: ThemeMeta) -> str | None:
    if not isinstance(value, str) or not _ICON.fullmatch(value) or not theme.has_icon(value):
        return "is not an icon of the theme's icon set (such as material/emoticon-happy)"
    return None


def _template(value: Any, theme: ThemeMeta) -> str | None:
    return None if isinstance(value, str) and value in TEMPLATES else f"may only be {', '.join(sorted(TEMPLATES))}"


def _hide(value: Any, theme: ThemeMeta) -> str | None:
    if not isinstance(value, list) or not all(isinstance(v, str) and v in HIDEABLE for v in value):
        return f"is not a list of parts to hide ({', '.join(sorted(HIDEABLE))})"
    return None


def _search(value: Any, theme: ThemeMeta) -> str | None:
    if not isinstance(value, Mapping) or not set(value) <= {"exclude", "boost"}:
        return "is not a mapping of exclude and boost"
    if "exclude" in value and not isinstance(value["exclude"], bool):
        return "exclude is not true or false"
    boost = value.get("boost", 1)
    if isinstance(boost, bool) or not isinstance(boost, int | float) or not 0 <= boost <= 1000:
        return "boost is not a number from 0 to 1000"
    return None


def _tags(value: Any, theme: ThemeMeta) -> str | None:
    def plain(tag: Any) -> bool:
        return isinstance(tag, str) and bool(tag.strip()) and all(_tag_char(c) for c in tag)

    if not isinstance(value, list) or not all(plain(t) for t in value):
        return "is not a list of plain tag names (letters, digits, spaces and -_.+#/:)"
    return None


def _tag_char(c: str) -> bool:
    return c in _TAG_MARKS or unicodedata.category(c)[0] in "LN"


def _flag(value: Any, theme: ThemeMeta) -> str | None:
    return None if isinstance(value, bool) else "is not true or false"


META_RULES: Mapping[str, Callable[[Any, ThemeMeta], str | None]] = {
    "title": _plain_text,
    "description": _plain_text,
    "author": _plain_text,
    "subtitle": _plain_text,
    "status": _status,
    "icon": _icon,
    "template": _template,
    "hide": _hide,
    "search": _search,
    "tags": _tags,
    "comments": _flag,
}
"""Every front matter key a page may carry, and the rule its value keeps (None: it keeps it)."""


def meta_lines(source: str | None) -> dict[str, int]:
    """The 1-based line of each top-level metadata key in a page's Markdown ``source`` (YAML
    front matter, else MultiMarkdown lines, read as MkDocs reads them); empty when none is found."""
    if not source:
        return {}
    source = source.removeprefix("\ufeff")
    front = _YAML_FRONT.match(source)
    if front is not None:
        try:
            node = yaml.compose(front.group(1), Loader=yaml.SafeLoader)
        except yaml.YAMLError:
            return {}
        if not isinstance(node, yaml.MappingNode):
            return {}
        return {str(key.value): key.start_mark.line + 2 for key, _ in node.value if isinstance(key, yaml.ScalarNode)}
    lines: dict[str, int] = {}
    for number, line in enumerate(source.replace("\r\n", "\n").replace("\r", "\n").split("\n"), start=1):
        if not line.strip():
            break
        key = _MMD_KEY.match(line)
        if key is not None:
            lines.setdefault(key.group(1).lower(), number)
        elif _MMD_MORE.match(line) is None:
            break
    return lines


def check_meta(meta: Any, *, file: str, source: str | None, theme: ThemeMeta) -> list[Finding]:
    """A ``C-META`` finding for each key of a page's metadata ``meta`` outside the allow-list or
    with a value its rule refuses; ``file`` names the page, ``source`` (its Markdown) gives lines."""
    if not meta:
        return []
    if not isinstance(meta, Mapping):
        return [Finding(None, file, "the page's metadata is not a mapping", check=CHECK)]
    lines = meta_lines(source)
    found = []
    for key, value in meta.items():
        rule = META_RULES.get(key) if isinstance(key, str) else None
        if rule is None:
            detail = f"front matter key {str(key)[:40]!r} is not one the theme may render"
            fix: str | None = f"keep to {', '.join(META_RULES)}"
        else:
            fix = None
            problem = rule(value, theme)
            if problem is None:
                continue
            detail = f"front matter {key}: {problem}"
        line = lines.get(str(key).lower()) if lines else None
        found.append(Finding(None, file, detail, line=line, check=CHECK, field=str(key)[:40], fix=fix))
    return found
