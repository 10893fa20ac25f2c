"""What the evidence build reads from ``mkdocs.yml``: the wiki root, ``extra.evidence`` reader
options and the font setting, each refused with a one-line error naming the setting."""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from mkdocs.exceptions import PluginError

from .highlight import SourceText

__all__ = ["web_fonts", "wiki_root", "reader_options", "serve_offline", "offline", "INPUT_FOLDERS", "site_dir_apart"]


def wiki_root(config: Any) -> Path:
    """The folder of the wiki's ``mkdocs.yml``."""
    path = config.config_file_path
    if not path:
        raise PluginError("the evidence build needs a wiki with an mkdocs.yml file")
    return Path(path).resolve().parent


INPUT_FOLDERS = ("concepts", "runs", "outputs/deep-research", "assets", "keys")
"""Folders of the wiki root a build reads (besides ``docs_dir``): promoted concepts, both run
layouts (``runs/``, ``outputs/deep-research/``), the PDF library and the signing keys."""


def site_dir_apart(config: Any, root: Path) -> None:
    """Refuse a ``site_dir`` that contains, equals or lies inside an input of the build.

    Publication replaces the site folder whole, so such a ``site_dir`` would overwrite (or
    delete) the very files the build had just read. Called before anything is read or
    written; compared on resolved paths, so a symlink or a ``..`` cannot hide the overlap.
    """
    site = Path(config.site_dir).resolve()
    inputs = [("docs_dir", Path(config.docs_dir).resolve())]
    inputs += [(name, (root / name).resolve()) for name in INPUT_FOLDERS]
    inputs.append(("the wiki's mkdocs.yml", Path(config.config_file_path).resolve()))
    for name, folder in inputs:
        if site == folder or folder.is_relative_to(site) or site.is_relative_to(folder):
            raise PluginError(
                f"C-CONFIG site_dir {config.site_dir} overlaps {name} ({folder.name}/), an input of the build; "
                "choose a site_dir outside the wiki's inputs (SCHEMA_ERROR)"
            )


def _evidence_extra(config: Any) -> Any:
    """``extra.evidence`` of mkdocs.yml (``extra`` is a mapping, though not a dict)."""
    extra = config.extra
    return extra.get("evidence") if isinstance(extra, Mapping) else None


def _whole(extra: Mapping[str, Any], key: str, default: int, most: int) -> int:
    value = extra.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= most:
        raise PluginError(f"extra.evidence.{key} must be a whole number of code points, 0 to {most} (SCHEMA_ERROR)")
    return value


def reader_options(config: Any) -> SourceText:
    """``extra: evidence:`` of mkdocs.yml: ``source_text`` (full | windows), ``context`` and
    ``windows_above`` (code points), ``offline`` and ``web_fonts`` (true | false)."""
    extra = _evidence_extra(config)
    if extra is None:
        return SourceText()
    if not isinstance(extra, Mapping):
        raise PluginError("extra.evidence in mkdocs.yml must be a mapping (SCHEMA_ERROR)")
    mode = extra.get("source_text", "full")
    if mode not in SourceText.MODES:
        raise PluginError(f"extra.evidence.source_text must be one of {', '.join(SourceText.MODES)} (SCHEMA_ERROR)")
    overrides = _overrides(extra.get("source_text_for", {}))
    context = _whole(extra, "context", SourceText.context, 1_000_000)
    above = _whole(extra, "windows_above", SourceText.windows_above, 2**53)
    for key in ("offline", "web_fonts"):
        if not isinstance(extra.get(key, False), bool):
            raise PluginError(f"extra.evidence.{key} must be true or false (SCHEMA_ERROR)")
    return SourceText(mode, context, above, overrides)


_OVERRIDE_KEY = re.compile(r"src-[0-9a-f]{64}|origin:[a-z-]+|access:[a-z_]+")


def _overrides(value: Any) -> tuple[tuple[str, str], ...]:
    """``extra.evidence.source_text_for``: a mapping of source id, ``origin:<origin>`` or
    ``access:<access>`` to a mode (e.g. ``origin:user-supplied-pdf: proofs``)."""
    if not isinstance(value, Mapping):
        raise PluginError(
            "extra.evidence.source_text_for must be a mapping of source ids, origin: or access: "
            "keys to a mode (SCHEMA_ERROR)"
        )
    out = []
    for key, mode in value.items():
        if not isinstance(key, str) or not _OVERRIDE_KEY.fullmatch(key):
            raise PluginError(
                f"extra.evidence.source_text_for: {str(key)[:80]!r} is not a source id, origin:<origin> "
                "or access:<access> (SCHEMA_ERROR)"
            )
        if mode not in SourceText.MODES:
            raise PluginError(
                f"extra.evidence.source_text_for.{key} must be one of {', '.join(SourceText.MODES)} (SCHEMA_ERROR)"
            )
        out.append((key, mode))
    return tuple(sorted(out))


def offline(config: Any) -> bool:
    """``extra: evidence: offline: true``: the site is read from disk as well as served (file://)."""
    extra = _evidence_extra(config)
    return isinstance(extra, Mapping) and extra.get("offline") is True


def web_fonts(config: Any) -> bool:
    """``extra: evidence: web_fonts: true``: the theme may load its fonts from Google Fonts."""
    extra = _evidence_extra(config)
    return isinstance(extra, Mapping) and extra.get("web_fonts") is True


def serve_offline(config: Any) -> None:
    """Material loads Roboto from Google Fonts unless told not to; an evidence site loads nothing
    from elsewhere (readers verify offline), so it uses the system fonts unless the wiki chose a
    font itself with ``extra: evidence: web_fonts: true``."""
    if web_fonts(config):
        return
    theme = config.theme
    if getattr(theme, "name", None) == "material" and theme.get("font") is not False:
        theme["font"] = False
