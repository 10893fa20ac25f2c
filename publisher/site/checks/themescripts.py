"""The inline scripts an evidence site may carry: the theme's own, known by their exact text.

A page's Content-Security-Policy allows an inline script by its hash (:mod:`.csp`), so the policy
is only as good as the list of scripts it hashes. That list is not "whatever inline scripts the
page holds": it is the scripts the installed Material theme writes, read from its template files
(``material/templates``, never a wiki's ``custom_dir``), each matched in full. Where a template
fills a value into its script (``{{ base_url }}``, ``{{ config.extra.scope | d(base_url) }}``),
the value may only be made of URL characters (:data:`HOLE`: no quote, backslash, bracket,
parenthesis or white space), so it cannot leave the string it sits in; a script that a template
fills from a page's own data (``page.meta``) is never allowed. The evidence build writes no
inline script of its own (its scripts are files: ``verify.js``, ``offline.js``, proofs).

Everything else, anywhere on a page, is a script the build did not write: the seal refuses it
(:mod:`.seal`, check ``C-CSP``), at build time and in ``check-site``. This module does not import
MkDocs; it reads the theme's files, found without importing the theme.
"""

from __future__ import annotations

import importlib.util
import re
from functools import cache
from pathlib import Path

__all__ = ["HOLE", "theme_templates", "known_scripts", "is_theme_script"]

HOLE = r"[A-Za-z0-9_./:%?#=&+@~-]*"
"""What a value a theme template fills into one of its scripts may be made of."""

_SCRIPT = re.compile(r"<script(\s[^>]*)?>(.*?)</script\s*>", re.DOTALL | re.IGNORECASE)
_EXPR = re.compile(r"\{\{.*?\}\}", re.DOTALL)
_ATTR = re.compile(r"""([a-zA-Z-]+)\s*=\s*(?:"([^"]*)"|'([^']*)'|(\S+))""")
_JS_TYPES = frozenset({"", "module", "text/javascript", "application/javascript"})


def theme_templates() -> Path | None:
    """The folder of the installed Material theme's templates (None when it is not installed)."""
    spec = importlib.util.find_spec("material")
    if spec is None or spec.origin is None:
        return None
    folder = Path(spec.origin).parent / "templates"
    return folder if folder.is_dir() else None


def _pattern(body: str) -> re.Pattern[str] | None:
    """The script's text as a pattern, each value the template fills in a :data:`HOLE`; None for
    a script built by template logic or filled from a page's own data."""
    if "{%" in body or "{#" in body:
        return None
    parts, holes = _EXPR.split(body), _EXPR.findall(body)
    if any("page" in re.findall(r"[A-Za-z_]+", hole) for hole in holes):
        return None
    return re.compile(HOLE.join(re.escape(p) for p in parts))


def _runs(attrs: str | None) -> bool:
    """Whether a ``<script>`` tag with these attributes is an inline script that runs."""
    found = {m.group(1).lower(): m.group(2) or m.group(3) or m.group(4) or "" for m in _ATTR.finditer(attrs or "")}
    return "src" not in found and found.get("type", "").strip().lower() in _JS_TYPES


@cache
def known_scripts(folder: Path | None = None) -> tuple[re.Pattern[str], ...]:
    """Every inline script of the theme's templates under ``folder`` (the installed theme's by
    default), as a pattern a script of a built page must match in full."""
    folder = folder if folder is not None else theme_templates()
    if folder is None:
        return ()
    out: dict[str, re.Pattern[str]] = {}
    for path in sorted(folder.rglob("*.html")):
        if ".icons" in path.relative_to(folder).parts:
            continue
        for tag in _SCRIPT.finditer(path.read_text(encoding="utf-8")):
            pattern = _pattern(tag.group(2)) if _runs(tag.group(1)) else None
            if pattern is not None:
                out.setdefault(pattern.pattern, pattern)
    return tuple(out.values())


def is_theme_script(text: str, patterns: tuple[re.Pattern[str], ...] | None = None) -> bool:
    """Whether ``text`` (an inline script as the browser reads it) is one the theme writes."""
    return any(p.fullmatch(text) for p in (patterns if patterns is not None else known_scripts()))
