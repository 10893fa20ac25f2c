"""The MkDocs side of an evidence wiki: preflight, generated pages, seal and atomic publication.

Wire it with ``hooks: [hooks/evidence.py]`` (a shim that re-exports :func:`on_config` and
:func:`on_serve`). A build then goes:

1. ``on_config`` runs the preflight (:mod:`publisher.preflight`) before anything is written; any
   finding raises ``PluginError`` listing every failure. It then points ``site_dir`` at a fresh
   staging folder beside the real one and registers a per-build :class:`EvidenceBuild` in
   ``config.plugins``, which receives the rest of this build's events. The module keeps no state:
   MkDocs does not reload a hook under ``serve``, and every build gets its own object.
2. ``on_files`` adds the generated pages (:mod:`publisher.site.pages`), the stylesheets, the
   reader's in-browser verifier (``verify.js``) and, for each source, its snapshot record as
   ``sources/<source_id>/record.json`` (the stored bytes, re-verified before publication).
3. ``on_page_content`` (last) checks each page's prose (:mod:`publisher.site.prose`: no script,
   style, handler, script-capable URL or evidence look-alike), then fills its slots with HTML:
   excerpts never pass through Markdown. ``on_env`` refuses the build, before anything is
   written, if any page's prose had findings. ``on_post_page`` (last) scans the final HTML of
   every page as a browser parses it (:mod:`publisher.site.scan`), checks each evidence element
   against the verified excerpts (:mod:`publisher.site.seal`; what it finds becomes the site
   seal) and inserts the page's Content-Security-Policy (:mod:`publisher.site.csp`);
   ``on_post_template`` does the same for ``404.html``.
4. ``on_post_build`` (last) refuses to publish if the build logged a warning under ``--strict``
   (MkDocs raises its strict-mode ``Abort`` only after ``on_post_build``; the hook reads the same
   warning counters first), writes ``evidence-manifest.json`` (every file of the site with its
   SHA-256) and swaps the staging folder into place (:mod:`publisher.site.publish`).
5. ``on_build_error`` removes the staging folder. Whatever fails, the published site is untouched.
"""

from __future__ import annotations

import logging
import os
from collections import Counter
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from mkdocs.exceptions import PluginError
from mkdocs.plugins import event_priority
from mkdocs.structure.files import File, Files, InclusionLevel
from mkdocs.structure.pages import Page
from mkdocs.utils import CountHandler, get_build_date

import publisher

from ..kernel.errors import PublisherError
from ..kernel.findings import Finding
from ..parallel import terminal_progress
from ..runs import RUN_LAYOUTS
from ..wiki.preflight import Preflight, run_preflight
from . import csp, publish
from .helper import BuildHelper, check_record_chunk
from .highlight import SourceText, source_job
from .manifest import MANIFEST_NAME, manifest_bytes, record_uri, seal_files
from .pages import (
    CSS_URI,
    READER_CSS_URI,
    READER_JS_URI,
    STATIC_DIR,
    TEMPLATES_DIR,
    SiteModel,
    content_date,
)
from .prose import check_prose, check_static, prose_file, source_text
from .scan import scan_page
from .seal import seal_page
from .trusted import TrustedOutput

__all__ = ["on_config", "on_serve", "EvidenceBuild", "PLUGIN_KEY", "format_findings"]

PLUGIN_KEY = "publisher-evidence-build"
"""Name of the per-build object in ``config.plugins``."""

LAST = -1000
"""Event priority that runs after every ordinary plugin."""

log = logging.getLogger("mkdocs.plugins.publisher")


def format_findings(pre: Preflight) -> str:
    """Every finding, one per line, under a summary line."""
    counts = ", ".join(f"{code} x{n}" for code, n in pre.counts_by_reason().items())
    lines = [f"evidence preflight failed: {len(pre.findings)} finding(s) ({counts}); nothing was published"]
    lines += [f"  {f.one_line()}" for f in pre.findings]
    return "\n".join(lines)


def _wiki_root(config: Any) -> Path:
    path = config.config_file_path
    if not path:
        raise PluginError("the evidence hook needs a wiki with an mkdocs.yml file")
    return Path(path).resolve().parent


def _evidence_extra(config: Any) -> Any:
    """``extra.evidence`` of mkdocs.yml (``extra`` is a mapping, though not a dict)."""
    extra = config.extra
    return extra.get("evidence") if isinstance(extra, Mapping) else None


def reader_options(config: Any) -> SourceText:
    """``extra: evidence:`` of mkdocs.yml: ``source_text`` (full | windows) and ``context`` (code points)."""
    extra = _evidence_extra(config)
    if extra is None:
        return SourceText()
    if not isinstance(extra, Mapping):
        raise PluginError("extra.evidence in mkdocs.yml must be a mapping (SCHEMA_ERROR)")
    mode = extra.get("source_text", "full")
    context = extra.get("context", SourceText.context)
    if mode not in SourceText.MODES:
        raise PluginError(f"extra.evidence.source_text must be one of {', '.join(SourceText.MODES)} (SCHEMA_ERROR)")
    if isinstance(context, bool) or not isinstance(context, int) or not 0 <= context <= 1_000_000:
        raise PluginError("extra.evidence.context must be a whole number of code points, 0 to 1000000 (SCHEMA_ERROR)")
    return SourceText(mode, context)


def _web_fonts(config: Any) -> bool:
    """``extra: evidence: web_fonts: true``: the theme may load its fonts from Google Fonts."""
    extra = _evidence_extra(config)
    return isinstance(extra, Mapping) and extra.get("web_fonts") is True


def _serve_offline(config: Any) -> None:
    """Material loads Roboto from Google Fonts unless told not to; an evidence site loads nothing
    from elsewhere (readers verify offline), so it uses the system fonts unless the wiki chose a
    font itself with ``extra: evidence: web_fonts: true``."""
    if _web_fonts(config):
        return
    theme = config.theme
    if getattr(theme, "name", None) == "material" and theme.get("font") is not False:
        theme["font"] = False


class EvidenceBuild:
    """The state of one build; registered in ``config.plugins`` by :func:`on_config`."""

    def __init__(self) -> None:
        self.wiki_root: Path | None = None
        self.site: Path | None = None
        self.staging: Path | None = None
        self.pre: Preflight | None = None
        self.model: SiteModel | None = None
        self.sealed: list[dict[str, Any]] = []
        self.sealed_snapshots: list[dict[str, Any]] = []
        self.sealed_windows: list[dict[str, Any]] = []
        self.seen: set[str] = set()
        self.counter: CountHandler | None = None
        self.config: Any = None
        self.helper: BuildHelper | None = None
        self.trusted: TrustedOutput | None = None
        self.prose: list[Finding] = []
        self.content_hashes: dict[str, str] = {}
        self.build_date: str | None = None

    # -- lifecycle -----------------------------------------------------------------------------

    def start(self, config: Any, wiki_root: Path, pre: Preflight) -> None:
        """Point the build at a fresh staging folder; called once the preflight passed."""
        source_text = reader_options(config)  # refuse bad options before anything is created
        self.finish()
        self.config = config
        self.wiki_root = wiki_root
        self.pre = pre
        self.site = Path(config.site_dir).resolve()
        publish.sweep_stale(self.site)
        self.staging = publish.new_staging(self.site)
        config.site_dir = str(self.staging)
        for uri in (CSS_URI, READER_CSS_URI):
            if uri not in [str(c) for c in config.extra_css]:
                config.extra_css.append(uri)
        if READER_JS_URI not in [str(c) for c in config.extra_javascript]:
            config.extra_javascript.append(READER_JS_URI)
        _serve_offline(config)
        self.trusted = next((e for e in config.markdown_extensions if isinstance(e, TrustedOutput)), None)
        if self.trusted is None:
            self.trusted = TrustedOutput()
            config.markdown_extensions.append(self.trusted)
        self.prose = []
        self.content_hashes = {sid: info.meta.content_hash for sid, info in pre.sources.items()}
        self.build_date = None if os.environ.get("SOURCE_DATE_EPOCH") else content_date(pre)
        self.counter = CountHandler()
        self.counter.setLevel(logging.WARNING)
        logging.getLogger("mkdocs").addHandler(self.counter)
        self.helper = BuildHelper(wiki_root, pre)
        self.model = SiteModel(
            pre,
            use_directory_urls=bool(config.use_directory_urls),
            report_body=self.helper,
            source_text=source_text,
            source_body=self.helper.source,
        )
        self.sealed, self.sealed_snapshots, self.sealed_windows, self.seen = [], [], [], set()

    def finish(self) -> None:
        """Restore ``site_dir``, drop the warning counter and stop the report helper (idempotent)."""
        if self.helper is not None:
            self.helper.close()
        if self.counter is not None:
            logging.getLogger("mkdocs").removeHandler(self.counter)
            self.counter = None
        if self.config is not None and self.site is not None:
            self.config.site_dir = str(self.site)

    def abandon(self) -> None:
        """Remove the staging folder and restore the config; the published site is untouched."""
        publish.discard(self.staging)
        self.staging = None
        self.finish()

    # -- events --------------------------------------------------------------------------------

    def on_files(self, files: Files, *, config: Any) -> Files:
        if self.model is None:
            return files
        docs = Path(config.docs_dir)
        for file in files:  # what docs/ publishes as it is: no page in HTML, no SVG that acts
            path = Path(file.abs_src_path) if file.abs_src_path else None
            if path is not None and not file.is_documentation_page() and path.is_relative_to(docs):
                self.prose += check_static(os.path.relpath(path, _wiki_root(config)).replace(os.sep, "/"), path)
        try:
            pages = self.model.build()
        except PublisherError as exc:
            raise PluginError(f"evidence pages: {exc.one_line()}") from exc
        if self.helper is not None and self.pre is not None:
            options = self.model.source_text
            sources = [source_job(sid, info, options) for sid, info in self.pre.sources.items()]
            self.helper.start(sources, list(self.pre.runs))
        taken = {f.dest_uri: f.src_uri for f in files}
        for page in pages:
            inclusion = InclusionLevel.INCLUDED if page.in_nav else InclusionLevel.NOT_IN_NAV
            generated = File.generated(config, page.src_uri, content=page.markdown, inclusion=inclusion)
            clash = taken.get(generated.dest_uri) or files.get_file_from_path(page.src_uri)
            if clash is not None:
                raise PluginError(
                    f"docs/{clash if isinstance(clash, str) else page.src_uri} would produce "
                    f"{generated.dest_uri}, a page the evidence hook generates; rename or remove it"
                )
            files.append(generated)
        if files.get_file_from_path(CSS_URI) is None:
            css = (TEMPLATES_DIR / "evidence.css").read_text(encoding="utf-8")
            files.append(File.generated(config, CSS_URI, content=css))
        for uri in (READER_CSS_URI, READER_JS_URI):
            if files.get_file_from_path(uri) is None:
                files.append(File.generated(config, uri, abs_src_path=str(STATIC_DIR / Path(uri).name)))
        for sid, info in sorted(self.pre.sources.items()) if self.pre else ():
            uri = record_uri(sid)
            if files.get_file_from_path(uri) is not None:
                raise PluginError(f"docs/{uri} collides with the snapshot record the evidence hook publishes")
            files.append(File.generated(config, uri, abs_src_path=os.fspath(Path(info.sources_dir) / f"{sid}.json")))
        return files

    @event_priority(LAST)
    def on_page_content(self, html: str, *, page: Page, config: Any, files: Files) -> str:
        """Check the page's prose (before any slot is filled: excerpts are ours), then fill its slots."""
        if self.model is None:
            return html
        if self.build_date is not None and page.update_date == get_build_date():
            page.update_date = self.build_date  # no build-time clock in the sitemap
        file, path = self._prose_source(page)
        trusted = self.trusted.take(page.content or "") if self.trusted is not None else []
        found = check_prose(html, file=file, source=source_text(path), trusted=trusted)
        if found:
            self.prose += found
            return html  # the build fails in on_env, once every page was checked
        try:
            return self.model.fill(page.file.src_uri, html)
        except PublisherError as exc:
            raise PluginError(f"evidence page {page.file.src_uri}: {exc.one_line()}") from exc

    def _prose_source(self, page: Page) -> tuple[str, Path | None]:
        generated = self.model.pages.get(page.file.src_uri) if self.model is not None else None
        source = None if generated is not None else page.file.abs_src_path
        origin = generated.origin if generated is not None else None
        return prose_file(self.wiki_root or Path("."), page.file.src_uri, source, origin)

    def on_env(self, env: Any, *, config: Any, files: Files) -> Any:
        """Every page is rendered and its prose checked: refuse the build before anything is written."""
        if self.prose:
            lines = [f"evidence prose check failed: {len(self.prose)} finding(s); nothing was published"]
            lines += [f"  {f.one_line()}" for f in self.prose]
            raise PluginError("\n".join(lines))
        return env

    @event_priority(LAST)
    def on_post_page(self, output: str, *, page: Page, config: Any) -> str:
        if self.model is None or self.pre is None:
            return output
        uri = page.file.src_uri
        scan = scan_page(output)
        generated = self.model.pages.get(uri)
        sealed = seal_page(
            scan,
            page.file.dest_uri,
            self.pre.excerpts,
            self.content_hashes,
            generated.excerpts if generated is not None else None,
            generated.windows if generated is not None else Counter(),
        )
        if generated is not None:
            self.seen.add(uri)
        if sealed.problems:
            problems = "; ".join(sealed.problems)
            raise PluginError(f"evidence seal: page {uri}: {problems} (EXCERPT_MISMATCH)")
        self.sealed += sealed.excerpts
        self.sealed_snapshots += sealed.snapshots
        self.sealed_windows += sealed.windows
        return self._with_policy(output, scan.scripts, scan.styles, uri)

    @event_priority(LAST)
    def on_post_template(self, output_content: str, *, template_name: str, config: Any) -> str:
        """Theme pages outside the navigation (``404.html``): no evidence, and the same policy."""
        if self.model is None or not template_name.endswith(".html"):
            return output_content
        scan = scan_page(output_content)
        if scan.malformed or scan.excerpts or scan.snapshots or scan.windows:
            raise PluginError(f"evidence seal: {template_name} shows evidence or what looks like it (EXCERPT_MISMATCH)")
        return self._with_policy(output_content, scan.scripts, scan.styles, template_name)

    def _with_policy(self, output: str, scripts: list[str], styles: list[str], where: str) -> str:
        """The page with its Content-Security-Policy (the prose check found no script of an author)."""
        value = csp.policy(scripts, styles, web_fonts=_web_fonts(self.config))
        try:
            return csp.insert(output, value)
        except ValueError as exc:
            raise PluginError(f"evidence page {where}: {exc}") from exc

    @event_priority(LAST)
    def on_post_build(self, *, config: Any) -> None:
        if self.staging is None or self.site is None or self.model is None:
            return
        if config.strict and _warned():
            log.info("evidence hook: warnings in strict mode; the published site is left as it was")
            self.abandon()
            return
        if Path(config.site_dir) != self.staging:
            self.abandon()
            raise PluginError("another plugin moved site_dir during the build; the published site is left as it was")
        unbuilt = sorted(set(self.model.pages) - self.seen)
        if unbuilt:
            self.abandon()
            raise PluginError(f"evidence pages were not built: {', '.join(unbuilt[:5])}")
        records: list[dict[str, Any]] = []
        try:
            sids = sorted(self.pre.sources) if self.pre else []
            items = [(os.fspath(self.staging / record_uri(sid)), sid) for sid in sids]
            digests = self.helper.record_digests(items) if self.helper else check_record_chunk(items)
            records = [{"source_id": sid, "sha256": digest} for sid, digest in zip(sids, digests, strict=True)]
        except (PublisherError, OSError) as exc:
            self.abandon()
            one_line = exc.one_line() if isinstance(exc, PublisherError) else f"{exc} (SNAPSHOT_HASH_MISMATCH)"
            raise PluginError(f"published snapshot record: {one_line}") from exc
        try:
            data = manifest_bytes(
                self.sealed,
                self.sealed_snapshots,
                f"publisher {publisher.__version__}",
                windows=self.sealed_windows,
                records=records,
                files=seal_files(self.staging),
            )
            (self.staging / MANIFEST_NAME).write_bytes(data)
            publish.publish(self.staging, self.site)
        except (PublisherError, OSError) as exc:
            self.abandon()
            raise PluginError(f"could not publish the site to {self.site}: {exc}") from exc
        self.staging = None
        self.finish()
        log.info(f"evidence hook: published {len(self.sealed)} sealed excerpt(s) to {self.site}")

    def on_build_error(self, *, error: Exception) -> None:
        self.abandon()


def _warned() -> bool:
    """Whether any warning counter on the ``mkdocs`` logger (MkDocs' strict counter, ours) counted."""
    return any(isinstance(h, CountHandler) and h.get_counts() for h in logging.getLogger("mkdocs").handlers)


def on_config(config: Any) -> Any:
    """Run the preflight before anything is written; stage the build beside the real site."""
    wiki_root = _wiki_root(config)
    build = config.plugins.get(PLUGIN_KEY)
    if isinstance(build, EvidenceBuild):
        build.abandon()
    with terminal_progress("evidence preflight") as progress:
        pre = run_preflight(wiki_root, progress=progress)
    if not pre.ok:
        raise PluginError(format_findings(pre))
    for notice in pre.notices:
        log.info(f"evidence preflight: {notice}")
    if not isinstance(build, EvidenceBuild):
        build = EvidenceBuild()
        config.plugins[PLUGIN_KEY] = build
    build.start(config, wiki_root, pre)
    return config


def on_serve(server: Any, *, config: Any, builder: Any) -> Any:
    """Rebuild when runs, concepts or the PDF library change."""
    root = _wiki_root(config)
    folders = {root / "concepts", root / "assets" / "papers"}
    folders.update(root / layout.split("/*")[0] for layout in RUN_LAYOUTS)
    for folder in sorted(folders):
        if folder.is_dir():
            server.watch(os.fspath(folder))
    return server
