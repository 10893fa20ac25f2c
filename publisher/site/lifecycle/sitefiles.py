"""What an evidence build adds to MkDocs' own: in the config, the reader's stylesheets and script,
the offline and escaping settings and the prose marker extension (:func:`wire_config`); in the
files, the generated pages, the static files and the published snapshot records
(:func:`add_site_files`). A file of ``docs/`` in the way of any of them is never silently replaced
or shadowed by a generated one: each is a ``C-BUILD`` finding naming it, all of them returned for
the build to refuse at once."""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from mkdocs.structure.files import File, Files, InclusionLevel

from ...kernel.checkids import CheckId
from ...kernel.findings import Finding
from ...wiki.evidence import SourceInfo
from .. import STATIC_DIR, TEMPLATES_DIR
from ..checks.manifest import record_uri
from ..checks.prose import allowed_value, violations
from ..checks.seal import script_source_problem
from ..checks.trusted import TrustedOutput
from ..pages import offline as offline_site
from ..pages.generate import CSS_URI, READER_CSS_URI, READER_JS_URI
from ..pages.model import GeneratedPage
from ..pages.offline import OFFLINE_JS_URI, SEARCH_INDEX_JS, SEARCH_WORKER_URI, record_js_uri
from ..pages.titles import escape_site_strings
from .options import serve_offline

__all__ = [
    "add_site_files",
    "add_claims_json",
    "wire_config",
    "config_scripts",
    "config_links",
    "config_markup",
    "config_readers",
    "CHECK",
    "SCRIPT_CHECK",
]

CHECK = CheckId.BUILD
"""The check of a ``docs/`` file in the way of one the build publishes."""


SCRIPT_CHECK = CheckId.CONFIG
"""The check of a script the configuration names (``extra_javascript``, ``extra: polyfills``)."""

OWN_SCRIPTS = frozenset({READER_JS_URI, OFFLINE_JS_URI})
"""The scripts the evidence build ships itself."""


def config_scripts(config: Any, files: Files) -> tuple[list[Finding], frozenset[str]]:
    """Every script the configuration names must be one the site ships: the build's own, or a
    ``.js``/``.mjs`` file of ``docs/`` (whose bytes :func:`~publisher.site.checks.inert.check_static`
    then holds to JavaScript text). A ``C-CONFIG`` finding for each other one, and the files of
    ``docs/`` named as scripts."""
    found: list[Finding] = []
    own: set[str] = set()
    extra = config.get("extra")
    polyfills = extra.get("polyfills") if isinstance(extra, Mapping) else None
    named = [("extra_javascript", str(s)) for s in config.extra_javascript]
    named += [("extra.polyfills", str(s)) for s in polyfills or () if not isinstance(polyfills, str)]
    if isinstance(polyfills, str):
        named.append(("extra.polyfills", polyfills))
    config_name = os.path.basename(config.config_file_path or "mkdocs.yml")
    for field, path in named:
        if path in OWN_SCRIPTS:
            continue
        problem = script_source_problem(path)
        if problem is None and files.get_file_from_path(path) is None:
            problem = "names no file of docs/"
        if problem is None:
            own.add(path)
            continue
        fix = "name a .js or .mjs file of docs/, or drop it"
        found.append(
            Finding(None, config_name, f"script {path[:80]!r} {problem}", check=SCRIPT_CHECK, field=field, fix=fix)
        )
    return found, frozenset(own)


def config_links(items: Iterable[Any], config_name: str) -> list[Finding]:
    """Every link of the navigation (``nav:``) keeps to the URLs prose may hold (relative, or
    ``http``, ``https``, ``mailto``: :func:`~publisher.site.checks.prose.allowed_value`), since the
    theme prints it into every page: a ``C-CONFIG`` finding (field ``nav``) for each other one."""
    found: list[Finding] = []
    for item in items:
        url = getattr(item, "url", None)
        if getattr(item, "is_link", False) and isinstance(url, str) and not allowed_value("a", "href", url):
            detail = f"navigation link {url[:80]!r} is not a relative, http(s) or mailto URL"
            fix = "link to a page or an http(s) address"
            found.append(Finding(None, config_name, detail, check=SCRIPT_CHECK, field="nav", fix=fix))
        found += config_links(getattr(item, "children", None) or (), config_name)
    return found


def config_markup(config: Any) -> list[Finding]:
    """What the theme prints of the configuration as markup or as a link, held to the prose
    allow-list: ``copyright`` (HTML in every page's footer, as a hand-written page's prose is),
    ``repo_url`` and each ``extra: social:`` link (``href`` of every page's header and footer).
    A ``C-CONFIG`` finding for each thing outside it, named by its field."""
    name = os.path.basename(config.config_file_path or "mkdocs.yml")
    found: list[Finding] = []
    copyright = config.get("copyright")
    if isinstance(copyright, str):
        fix = "keep the copyright to the markup a page's prose may hold"
        found += [
            Finding(None, name, v.detail, check=SCRIPT_CHECK, field="copyright", fix=fix) for v in violations(copyright)
        ]
    extra = config.get("extra")
    social = extra.get("social") if isinstance(extra, Mapping) else None
    links = [("repo_url", config.get("repo_url"))]
    links += (
        [("extra.social", s.get("link")) for s in social if isinstance(s, Mapping)] if isinstance(social, list) else []
    )
    for field, url in links:
        if isinstance(url, str) and not allowed_value("a", "href", url):
            detail = f"link {url[:80]!r} is not a relative, http(s) or mailto URL"
            found.append(Finding(None, name, detail, check=SCRIPT_CHECK, field=field, fix="link to an http(s) address"))
    return found


_READERS = {"pymdownx.snippets": ["."], "pymdownx.b64": "."}
"""Markdown extensions that paste a file into a page, with their default base paths (relative to
the folder the build runs in)."""


def config_readers(config: Any, root: Path) -> list[Finding]:
    """An extension of :data:`_READERS` reads only inside the wiki ``root``: every base path lies
    in it, paths may not leave it (``restrict_base_path``) and nothing is downloaded
    (``url_download``). Its default base path is the folder the build runs in, so a build run
    from elsewhere would let a page's prose publish any file there. A ``C-CONFIG`` finding
    (field ``markdown_extensions``) for each extension that may read elsewhere."""
    name = os.path.basename(config.config_file_path or "mkdocs.yml")
    configured = [str(e) for e in config.markdown_extensions if isinstance(e, str)]
    found: list[Finding] = []
    for ext in (e for e in configured if e in _READERS):
        options = (config.get("mdx_configs") or {}).get(ext) or {}
        bases = options.get("base_path", _READERS[ext])
        bases = [bases] if isinstance(bases, str | os.PathLike) else list(bases or ())
        outside = [str(b) for b in bases if not Path(os.path.abspath(b)).resolve().is_relative_to(root.resolve())]
        why = None
        if outside:
            why = f"reads from {outside[0][:80]!r}, outside the wiki"
        elif options.get("restrict_base_path") is False or options.get("url_download"):
            why = "may read outside its base path (restrict_base_path: false, or url_download)"
        if why is not None:
            detail = f"{ext} {why}: a page's prose could publish any file there"
            fix = "run the build from the wiki's folder, or give base_path a folder of the wiki"
            found.append(Finding(None, name, detail, check=SCRIPT_CHECK, field="markdown_extensions", fix=fix))
    return found


def _in_the_way(where: str, detail: str) -> Finding:
    return Finding(None, where, detail, check=CHECK, fix="rename or remove it")


def wire_config(config: Any, *, offline: bool, web_fonts: bool = False) -> TrustedOutput:
    """Set what every page of an evidence build needs in MkDocs' config (once per config: a
    rebuild under ``mkdocs serve`` adds nothing twice); returns the prose marker extension."""
    if offline:
        offline_site.enable(config)
    for uri in (CSS_URI, READER_CSS_URI):
        if uri not in [str(c) for c in config.extra_css]:
            config.extra_css.append(uri)
    if READER_JS_URI not in [str(c) for c in config.extra_javascript]:
        config.extra_javascript.append(READER_JS_URI)
    serve_offline(config, web_fonts)
    escape_site_strings(config)
    trusted = next((e for e in config.markdown_extensions if isinstance(e, TrustedOutput)), None)
    if trusted is None:
        trusted = TrustedOutput()
        config.markdown_extensions.append(trusted)
    return trusted


def add_site_files(
    files: Files, config: Any, pages: list[GeneratedPage], sources: dict[str, SourceInfo], *, offline: bool
) -> list[Finding]:
    """Append the generated pages, static files and records of a build to ``files``; a finding
    for each file of ``docs/`` in the way of one of them (none: everything was added)."""
    found: list[Finding] = []
    taken = {f.dest_uri: f.src_uri for f in files}
    for page in pages:
        inclusion = InclusionLevel.INCLUDED if page.in_nav else InclusionLevel.NOT_IN_NAV
        generated = File.generated(config, page.src_uri, content=page.markdown, inclusion=inclusion)
        clash = taken.get(generated.dest_uri) or files.get_file_from_path(page.src_uri)
        if clash is not None:
            where = f"docs/{clash if isinstance(clash, str) else page.src_uri}"
            found.append(_in_the_way(where, f"would produce {generated.dest_uri}, a page the evidence hook generates"))
            continue
        files.append(generated)
    # The build's own stylesheets and scripts decide what "verified" looks like and does: one of
    # docs/ at their path would be published in their place (and pass as CSS the site names).
    for uri in (CSS_URI, READER_CSS_URI, READER_JS_URI, OFFLINE_JS_URI):
        if files.get_file_from_path(uri) is not None:
            found.append(_in_the_way(f"docs/{uri}", "would replace a stylesheet or script the evidence build ships"))
    if not found:
        css = (TEMPLATES_DIR / "evidence.css").read_text(encoding="utf-8")
        files.append(File.generated(config, CSS_URI, content=css))
        for uri in (READER_CSS_URI, READER_JS_URI, *([OFFLINE_JS_URI] if offline else [])):
            files.append(File.generated(config, uri, abs_src_path=str(STATIC_DIR / Path(uri).name)))
    written_later = [SEARCH_WORKER_URI, SEARCH_INDEX_JS] if offline else []
    for sid in sorted(sources):
        written_later += [record_js_uri(sid)] if offline else []
    for uri in [*written_later, *(record_uri(sid) for sid in sorted(sources))]:
        if files.get_file_from_path(uri) is not None:
            found.append(_in_the_way(f"docs/{uri}", "collides with a file the evidence hook publishes"))
    if found:
        return found
    for sid, info in sorted(sources.items()):
        source = os.fspath(Path(info.sources_dir) / f"{sid}.json")
        files.append(File.generated(config, record_uri(sid), abs_src_path=source))
    return found


def add_claims_json(files: Files, config: Any, content: str) -> list[Finding]:
    """Publish ``claims.json`` (every claim for machines); a ``docs/claims.json`` is a finding."""
    from ..pages.claims import CLAIMS_JSON_URI

    if files.get_file_from_path(CLAIMS_JSON_URI) is not None:
        return [_in_the_way(f"docs/{CLAIMS_JSON_URI}", "collides with the file the evidence hook publishes")]
    files.append(File.generated(config, CLAIMS_JSON_URI, content=content))
    return []
