"""What the evidence build takes from ``mkdocs.yml``: the wiki root, and the reader and font
options of the wiki's :class:`~publisher.wiki.policy.Policy` (resolved once per build by
:func:`publisher.site.policy.policy_of_config`; nothing here reads the configuration again)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from mkdocs.exceptions import PluginError

from ..wiki.policy import Policy
from .highlight import SourceText

__all__ = ["wiki_root", "reader_options", "serve_offline"]


def wiki_root(config: Any) -> Path:
    """The folder of the wiki's ``mkdocs.yml``."""
    path = config.config_file_path
    if not path:
        raise PluginError("the evidence build needs a wiki with an mkdocs.yml file")
    return Path(path).resolve().parent


def reader_options(policy: Policy) -> SourceText:
    """How source pages show their text: ``source_text``, ``context``, ``windows_above``."""
    return SourceText(policy.source_text, policy.context, policy.windows_above)


def serve_offline(config: Any, web_fonts: bool) -> None:
    """Material loads Roboto from Google Fonts unless told not to; an evidence site loads nothing
    from elsewhere (readers verify offline), so it uses the system fonts unless the wiki chose a
    font itself with ``extra: evidence: web_fonts: true``."""
    if web_fonts:
        return
    theme = config.theme
    if getattr(theme, "name", None) == "material" and theme.get("font") is not False:
        theme["font"] = False
