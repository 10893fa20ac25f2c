"""What the evidence build takes from ``mkdocs.yml``: the wiki root, and the reader and font
options of the wiki's :class:`~publisher.wiki.policy.Policy` (resolved once per build by
:func:`publisher.site.lifecycle.policy.policy_of_config`; nothing here reads the configuration again)."""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ...kernel import _fs
from ...kernel.checkids import CheckId
from ...kernel.findings import Finding
from ...kernel.reasons import Reason
from ...wiki.policy import Policy
from ..checks.manifest import MANIFEST_NAME, SITE_FILE_LIMIT, kept_entry
from ..pages.highlight import SourceText
from .refusal import refuse

__all__ = ["wiki_root", "reader_options", "serve_offline", "INPUT_FOLDERS", "site_dir_apart", "site_dir_ours"]


def wiki_root(config: Any) -> Path:
    """The folder of the wiki's ``mkdocs.yml``."""
    path = config.config_file_path
    if not path:
        detail = "the evidence build needs a wiki with an mkdocs.yml file"
        fix = "build from the wiki's mkdocs.yml"
        raise refuse(
            "evidence options", [Finding(Reason.SCHEMA_ERROR, "mkdocs.yml", detail, check=CheckId.CONFIG, fix=fix)]
        )
    return Path(path).resolve().parent


INPUT_FOLDERS = ("concepts", "runs", "outputs/deep-research", "assets", "keys")
"""Folders of the wiki root a build reads (besides ``docs_dir``): promoted concepts, both run
layouts (``runs/``, ``outputs/deep-research/``), the PDF library and the signing keys."""


def site_dir_apart(config: Any, root: Path) -> None:
    """Refuse a ``site_dir`` that contains, equals or lies inside an input of the build (the
    wiki's folders, ``mkdocs.yml``, the theme's ``custom_dir``, the hook files, the trusted keys).

    Publication replaces the site folder whole, so such a ``site_dir`` would overwrite (or
    delete) the very files the build had just read. Called before anything is read or
    written; compared on resolved paths, so a symlink or a ``..`` cannot hide the overlap (a link loop
    stays as named: the reader that opens it refuses it).
    Every overlap is one ``C-CONFIG`` finding (``SCHEMA_ERROR``, field ``site_dir``), all raised
    together.
    """
    site = _fs.real_path(config.site_dir)
    inputs = [("docs_dir", _fs.real_path(config.docs_dir))]
    inputs += [(name, _fs.real_path(root / name)) for name in INPUT_FOLDERS]
    inputs.append(("the wiki's mkdocs.yml", _fs.real_path(config.config_file_path)))
    inputs += _other_inputs(config, root)
    found = [
        Finding(
            Reason.SCHEMA_ERROR,
            Path(config.config_file_path).name,
            f"site_dir {config.site_dir} overlaps {name} ({folder.name}/), an input of the build; "
            "fix: choose a site_dir outside the wiki's inputs",
            check=CheckId.CONFIG,
            field="site_dir",
        )
        for name, folder in inputs
        if site == folder or folder.is_relative_to(site) or site.is_relative_to(folder)
    ]
    if found:
        raise refuse("evidence options", found)


def site_dir_ours(config: Any) -> None:
    """Refuse a ``site_dir`` that publication would delete something from that no build made.

    Publication replaces the site folder whole, so it may only be a folder that does not exist,
    one that holds nothing but entries whose names start with a dot (kept across builds,
    :func:`publisher.site.checks.manifest.kept_entry`), or a site an evidence build made (its
    ``evidence-manifest.json`` there). Anything else (a run folder, a ``.git`` folder, a folder
    of keys, a home folder) is one ``C-CONFIG`` finding (field ``site_dir``), raised before
    anything is read or written.
    """
    site = Path(os.path.abspath(config.site_dir))
    if not os.path.lexists(site):
        return
    why = None
    if not site.is_dir():
        why = "exists and is not a folder"
    else:
        try:
            names = [n for n in os.listdir(site) if not kept_entry(n)]
        except OSError as exc:
            names, why = [], f"cannot be read ({exc.strerror or exc})"
        if names and not _built_site(site):
            why = f"holds {sorted(names)[0][:40]!r} and {len(names) - 1} more entries, but no {MANIFEST_NAME}"
    if why is None:
        return
    detail = (
        f"site_dir {config.site_dir} {why}: publishing would delete what no build made; "
        "fix: choose a site_dir that is absent, empty or a site built before"
    )
    finding = Finding(None, Path(config.config_file_path).name, detail, check=CheckId.CONFIG, field="site_dir")
    raise refuse("evidence options", [finding])


def _built_site(site: Path) -> bool:
    """Whether ``site`` holds the manifest of an evidence build (a regular file, a JSON object
    with the manifest's ``schema_version``, ``generator`` and ``files``)."""
    try:
        data = _fs.read_regular(site / MANIFEST_NAME, follow_symlinks=False, limit=SITE_FILE_LIMIT)
        doc = json.loads(data)
    except (OSError, ValueError):
        return False
    return isinstance(doc, dict) and isinstance(doc.get("schema_version"), int) and {"generator", "files"} <= set(doc)


def _other_inputs(config: Any, root: Path) -> list[tuple[str, Path]]:
    """What else a build runs or reads from the wiki's configuration: the theme's ``custom_dir``
    (its templates), each hook file, each trusted key (``extra: evidence: trusted_keys``)."""
    out: list[tuple[str, Path]] = []
    custom = getattr(config.theme, "custom_dir", None)
    if custom:
        out.append(("the theme's custom_dir", _fs.real_path(custom)))
    for name, module in (config.get("hooks") or {}).items():
        path = getattr(module, "__file__", None)
        if path:
            out.append((f"the hook {name}", _fs.real_path(path)))
    extra = config.get("extra")
    evidence = extra.get("evidence") if isinstance(extra, Mapping) else None
    keys = evidence.get("trusted_keys") if isinstance(evidence, Mapping) else None
    for key in keys if isinstance(keys, list) else ():
        if isinstance(key, str) and key:
            out.append((f"the trusted key {key}", _fs.real_path(root / key)))
    return out


def reader_options(policy: Policy) -> SourceText:
    """How source pages show their text: ``source_text``, ``context``, ``windows_above``."""
    return SourceText(policy.source_text, policy.context, policy.windows_above, policy.source_text_for)


def serve_offline(config: Any, web_fonts: bool) -> None:
    """Material loads Roboto from Google Fonts unless told not to; an evidence site loads nothing
    from elsewhere (readers verify offline), so it uses the system fonts unless the wiki chose a
    font itself with ``extra: evidence: web_fonts: true``."""
    if web_fonts:
        return
    theme = config.theme
    if getattr(theme, "name", None) == "material" and theme.get("font") is not False:
        theme["font"] = False
