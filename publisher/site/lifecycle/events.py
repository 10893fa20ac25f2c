"""One MkDocs build of an evidence wiki, event by event: generated pages, prose check, seal,
policy and atomic publication (the lifecycle is told in :mod:`publisher.site.lifecycle.hook`).

:func:`publisher.site.lifecycle.hook.configure` creates or restarts the :class:`EvidenceBuild` once the
wiki check has passed; the plugin and the hook file hand it the rest of the build's events.
"""

from __future__ import annotations

import logging
import os
import sys
from collections import Counter
from pathlib import Path
from typing import Any, Literal

from mkdocs.plugins import CombinedEvent, event_priority
from mkdocs.structure.files import Files, InclusionLevel
from mkdocs.structure.pages import Page
from mkdocs.utils import CountHandler, get_build_date

from ...gate.render import report_prose_html
from ...kernel.checkids import CheckId
from ...kernel.errors import PublisherError
from ...kernel.findings import Finding
from ...kernel.reasons import Reason
from ...kernel.text import one_line
from ...kernel.trust import KeyRing
from ...wiki.evidence import WikiCheck
from ..checks import csp
from ..checks.frontmatter import ThemeMeta, check_meta
from ..checks.inert import check_inside, check_static
from ..checks.manifest import MANIFEST_NAME
from ..checks.prose import Author, check_page_quotations, check_prose, prose_file, source_text
from ..checks.scan import scan_page
from ..checks.seal import PageSeal, check_scripts
from ..checks.trusted import TrustedOutput
from ..pages.a11y import name_search_dialog
from ..pages.claims import claims_json
from ..pages.context import context_source
from ..pages.generate import (
    SiteModel,
    content_date,
)
from ..pages.highlight import source_job
from ..pages.proofs import ProofSource
from ..pages.staged import write_staged
from ..pages.titles import escape_edit_url, escape_nav, escape_toc, set_page_title
from ..pages.uris import SECTION_INDEX, source_uri
from . import publish
from .finish import mkdocs_logger, publish_proofs, publish_records, warnings_counted, write_manifest
from .options import reader_options
from .pageseal import BuiltPage, PagePolicy, seal_output, with_policy
from .refusal import error_finding, refuse
from .sitefiles import (
    add_claims_json,
    add_site_files,
    config_links,
    config_markup,
    config_readers,
    config_scripts,
    wire_config,
)
from .workers import BuildHelper, ProsePage

__all__ = ["EvidenceBuild", "PublishAt", "CheckDone", "LAST", "FINAL"]

LAST = -1000
"""Event priority that runs after every ordinary plugin."""

FIRST = 1000
"""Event priority that runs before every ordinary plugin."""

FINAL = float("-inf")
"""Event priority of publication at shutdown: after every other handler."""

PublishAt = Literal["shutdown", "caller", "post_build", "check"]
"""When a ready build is published; ``"check"`` never publishes: ``publisher check`` runs the build
up to rendering and stops (:class:`CheckDone`)."""


class CheckDone(Exception):
    """Raised by ``on_env`` of a check-only build (``publisher check``): every page's Markdown was
    converted and its prose checked, every file of ``docs/`` checked; nothing is rendered or
    written. Carries the findings (empty: the build would go on)."""

    def __init__(self, findings: list[Finding]) -> None:
        super().__init__(f"check-only build stopped before rendering ({len(findings)} finding(s))")
        self.findings = findings


log = logging.getLogger("mkdocs.plugins.publisher")


class EvidenceBuild:
    """The state of one build; registered in ``config.plugins`` by :func:`on_config`."""

    def __init__(self) -> None:
        self.wiki_root: Path | None = None
        self.site: Path | None = None
        self.staging: Path | None = None
        self.pre: WikiCheck | None = None
        self.model: SiteModel | None = None
        self.sealed: list[dict[str, Any]] = []
        self.sealed_snapshots: list[dict[str, Any]] = []
        self.sealed_windows: list[dict[str, Any]] = []
        self.seen: set[str] = set()
        self.counter: CountHandler | None = None
        self.config: Any = None
        self.helper: BuildHelper | None = None
        self.proof_sources: list[ProofSource] | None = None
        self._prose_later: list[tuple[int, int, list[Finding]]] = []
        """Pages whose prose the helpers check: where their findings go, their ticket, and the
        page's fill error (counted only where the prose passed)."""
        """The sources whose excerpt proofs the helpers write while the pages are rendered."""
        self.publish_at: PublishAt = "post_build"
        self.ready = False
        """The staging folder holds a complete, sealed site waiting for publication."""
        self.failed = False
        self.trusted: TrustedOutput | None = None
        self.prose: list[Finding] = []
        """Findings of the pages before rendering (prose, files of ``docs/``, slots): refused in ``on_env``."""
        self.seal_findings: list[Finding] = []
        """Findings of the rendered pages (seal, policy): refused in ``on_post_build``."""
        self.content_hashes: dict[str, str] = {}
        self.build_date: str | None = None
        self.offline = False
        self.web_fonts = False
        self.theme_meta = ThemeMeta(frozenset(), ())
        """What a page's metadata may name (statuses, icons), from this build's configuration."""

    # -- lifecycle -----------------------------------------------------------------------------

    def start(self, config: Any, wiki_root: Path, pre: WikiCheck, publish_at: PublishAt = "post_build") -> None:
        """Point the build at a fresh staging folder; called once the wiki check passed."""
        policy = pre.policy  # resolved once, before the wiki check (see hook.configure)
        source_text = reader_options(policy)
        self.abandon()
        self.config = config
        self.publish_at = publish_at
        self.ready = self.failed = False
        self.wiki_root = wiki_root
        self.pre = pre
        # Absolute, not resolved: where publication goes through a link (publish.py), the site
        # path is the link, never the version folder it names now.
        site = Path(os.path.abspath(config.site_dir))
        if os.path.lexists(site) and not site.is_dir():
            detail = "site_dir exists and is not a folder; refusing to replace it"
            finding = Finding(None, _relative(site, wiki_root), detail, check=CheckId.PUBLISH, field="site_dir")
            raise refuse("evidence publication", [finding])
        self.site = site
        self.offline = policy.offline
        self.web_fonts = policy.web_fonts
        try:
            publish.sweep_stale(self.site)
            self.staging = publish.new_staging(self.site)
        except OSError as exc:
            detail = f"could not make a staging folder beside the site: {exc.strerror or exc}"
            where = _relative(site, wiki_root)
            raise refuse("evidence publication", [Finding(None, where, detail, check=CheckId.PUBLISH)]) from exc
        config.site_dir = str(self.staging)
        self.trusted = wire_config(config, offline=self.offline, web_fonts=self.web_fonts)
        self.theme_meta = ThemeMeta.of(config.extra, config.theme.dirs)
        self.counter = CountHandler()
        self.counter.setLevel(logging.WARNING)
        mkdocs_logger().addHandler(self.counter)
        self.helper = BuildHelper(wiki_root, pre)
        self.model = SiteModel(
            pre,
            use_directory_urls=bool(config.use_directory_urls),
            report_body=self.helper,
            source_text=source_text,
            source_body=self.helper.source,
        )
        self.helper.links = self.model.source_links
        self.helper.contexts = self.model.report_contexts
        self.helper.context_sources = self.model.report_context_sources
        self.model.contexts.reader = self.helper.context_of
        self.sealed, self.sealed_snapshots, self.sealed_windows, self.seen = [], [], [], set()
        self.prose, self.seal_findings = [], []
        self.proof_sources = None
        self._prose_later = []
        self.content_hashes = {sid: info.meta.content_hash or "" for sid, info in pre.sources.items()}
        self.build_date = None if os.environ.get("SOURCE_DATE_EPOCH") else content_date(pre)

    def finish(self) -> None:
        """Restore ``site_dir``, drop the warning counter and stop the report helper (idempotent)."""
        if self.helper is not None:
            self.helper.close()
        if self.counter is not None:
            mkdocs_logger().removeHandler(self.counter)
            self.counter = None
        if self.config is not None and self.site is not None:
            self.config.site_dir = str(self.site)

    def abandon(self) -> None:
        """Remove the staging folder and restore the config; the published site is untouched."""
        if self.helper is not None:
            self.helper.close(wait=True)  # no helper writes into the staging folder once it is gone
        publish.discard(self.staging)
        self.staging = None
        self.ready = False
        self.finish()

    def publish_now(self) -> bool:
        """Swap a ready staging folder into place (files fsynced first); False if none is ready."""
        if not self.ready or self.staging is None or self.site is None:
            return False
        try:
            publish.publish(self.staging, self.site)
        except OSError as exc:
            where = _relative(self.site, self.wiki_root)
            self.abandon()
            finding = Finding(None, where, f"could not publish the site: {exc}", check=CheckId.PUBLISH)
            raise refuse("evidence publication", [finding]) from exc
        self.staging = None
        self.ready = False
        self.finish()
        log.info(f"evidence: published {len(self.sealed)} sealed excerpt(s) to {self.site}")
        return True

    def _strict_warned(self) -> bool:
        return bool(self.config is not None and self.config.strict and warnings_counted())

    # -- events --------------------------------------------------------------------------------

    def on_files(self, files: Files, *, config: Any) -> Files:
        if self.model is None:
            return files
        try:
            pages = self.model.build()
            if self.helper is not None and self.pre is not None and self.publish_at != "check":
                options = self.model.source_text
                # In the order of their pages, which is the order MkDocs asks for them: the helper
                # hands out its chunks in turn, and a text asked for out of turn is rendered here.
                at = {source_uri(sid): sid for sid in self.pre.sources}
                order = [at[page.src_uri] for page in pages if page.src_uri in at]
                sources = [source_job(sid, self.pre.sources[sid], options) for sid in order]
                contexts = [context_source(self.pre, sid) for sid in self.model.context_sources()]
                # A report handed out reads its result again here (a result changed since the
                # check is refused like any page's evidence).
                self.helper.start(sources, list(self.pre.runs), contexts)
        except PublisherError as exc:
            raise refuse("evidence pages", [error_finding(exc, ".", CheckId.BUILD)]) from exc
        docs = Path(config.docs_dir)
        root = self.wiki_root or Path(".")
        for ev in self.pre.runs if self.pre is not None else ():  # an agent's report prose
            check = ev.check
            text = check.inputs.report_text if check is not None else None
            if text is not None:
                where = f"{ev.rel}/outputs/report.md"
                self.prose += check_prose(report_prose_html(text), file=where, source=text, author="report")
        own_css = frozenset(str(c) for c in config.extra_css)
        scripts, own_js = config_scripts(config, files)
        self.prose += scripts + config_markup(config) + config_readers(config, root)
        for file in files:  # what docs/ publishes: its own files; as they are, inert types only
            path = Path(file.abs_src_path) if file.abs_src_path else None
            if file.inclusion == InclusionLevel.EXCLUDED or path is None or not path.is_relative_to(docs):
                continue
            rel = os.path.relpath(path, root).replace(os.sep, "/")
            outside = check_inside(rel, path, docs)
            self.prose += outside
            if not outside and not file.is_documentation_page():
                self.prose += check_static(rel, path, own_css=own_css, own_js=own_js, dest=file.src_uri)
            elif not outside and self.pre is not None:  # a hand-written page quotes as concept prose does
                self.prose += check_page_quotations(source_text(path), file=rel, texts=self.pre.snapshot_texts)
        in_the_way = add_site_files(files, config, pages, self.pre.sources if self.pre else {}, offline=self.offline)
        if self.model.has_claims:
            in_the_way += add_claims_json(files, config, claims_json(self.model))
        if in_the_way:  # files of docs/ where the build publishes its own
            raise refuse("evidence pages", in_the_way)
        return files

    @event_priority(LAST)
    def on_nav(self, nav: Any, *, config: Any, files: Files) -> Any:
        escape_nav(nav.items)
        if self.model is not None:  # refused in on_env with the pages' findings
            self.prose += config_links(nav.items, os.path.basename(config.config_file_path or "mkdocs.yml"))
        return nav

    @event_priority(LAST)
    def on_page_content(self, html: str, *, page: Page, config: Any, files: Files) -> str:
        """Check the page's prose (before any slot is filled: excerpts are ours), then fill its slots."""
        if self.model is None:
            return html
        generated = self.model.pages.get(page.file.src_uri)
        file, path = self._prose_source(page)
        # What the theme prints of the page's metadata, before any of it is set here: refused in on_env.
        self.prose += check_meta(page.meta, file=file, source=_meta_source(page, path), theme=self.theme_meta)
        set_page_title(page, generated.title if generated is not None and generated.title else None)
        escape_toc(page.toc)
        escape_edit_url(page)
        if self.build_date is not None and page.update_date == get_build_date():
            page.update_date = self.build_date  # no build-time clock in the sitemap
        trusted = self.trusted.take(page.content or "") if self.trusted is not None else []
        author: Author = "concept" if generated is not None and generated.origin is not None else "page"
        found: list[Finding] = []
        if generated is None or generated.origin is not None:
            # A generated page without a concept file (a source, index or report page) holds no
            # prose: its Markdown is the build's own template, every value in it a slot, and its
            # final HTML is scanned by the seal like every page.
            page_prose = ProsePage(html, file, str(path) if path else None, tuple(trusted), author)
            ticket = self.helper.check_later(page_prose) if self.helper is not None else None
            if ticket is not None:  # checked on the helpers; its findings are taken in on_env
                return self._fill_later(page, html, ticket)
            found = check_prose(html, file=file, source=source_text(path), trusted=trusted, author=author)
        if found:
            self.prose += found
            return html  # the build fails in on_env, once every page was checked
        if self.publish_at == "check":
            return html  # a check-only build renders nothing (it stops in on_env)
        try:
            return self.model.fill(page.file.src_uri, html)
        except PublisherError as exc:
            self.prose.append(error_finding(exc, page.file.src_uri, CheckId.BUILD))
            return html  # refused in on_env with the other pages' findings

    def _fill_later(self, page: Page, html: str, ticket: int) -> str:
        """Fill a page whose prose the helpers check: a fill error counts only where the prose
        passed (a page refused for its prose is never filled in-process either)."""
        failed: list[Finding] = []
        try:
            filled = self.model.fill(page.file.src_uri, html) if self.model is not None else html
        except PublisherError as exc:
            failed, filled = [error_finding(exc, page.file.src_uri, CheckId.BUILD)], html
        self._prose_later.append((len(self.prose), ticket, failed))
        return filled

    def _take_prose(self) -> None:
        """The helpers' prose findings, each page's where its in-process check would have put them."""
        if not self._prose_later or self.helper is None:
            return
        checked = self.helper.prose_findings()
        for at, ticket, failed in reversed(self._prose_later):
            self.prose[at:at] = checked[ticket] or failed
        self._prose_later = []

    def _prose_source(self, page: Page) -> tuple[str, Path | None]:
        generated = self.model.pages.get(page.file.src_uri) if self.model is not None else None
        source = None if generated is not None else page.file.abs_src_path
        origin = generated.origin if generated is not None else None
        return prose_file(self.wiki_root or Path("."), page.file.src_uri, source, origin)

    def on_env(self, env: Any, *, config: Any, files: Files) -> Any:
        """Every page is rendered and its prose checked: refuse the build before anything is written."""
        if self.publish_at == "check":
            found = list(self.prose)
            if self._strict_warned():  # what --strict would refuse once the build ended
                detail = "strict mode: MkDocs logged warnings while converting the pages ('mkdocs build' shows them)"
                found.append(Finding(None, "mkdocs.yml", detail, check=CheckId.BUILD))
            raise CheckDone(found)
        self._take_prose()
        if self.prose:
            raise refuse("evidence page check", self.prose)
        if self.helper is not None and self.staging is not None:
            # Every slot is filled: the helpers write the excerpt proofs while MkDocs renders the pages.
            self.proof_sources = self._proof_sources()
            self.helper.start_proofs(self.staging, self.proof_sources, self._trusted_keys())
        return env

    @event_priority(LAST)
    def on_page_context(self, context: Any, *, page: Page, config: Any, nav: Any) -> Any:
        """A generated page outside the navigation (a concept, a source, a report) marks the index
        page of its section as current, so the navigation shows where the reader is."""
        self._unmark_section()
        generated = self.model.pages.get(page.file.src_uri) if self.model is not None else None
        index = SECTION_INDEX.get(generated.kind) if generated is not None and not generated.in_nav else None
        if index is not None and nav is not None:
            item = next((p for p in nav.pages if p.file.src_uri == index), None)
            if item is not None and not item.active:
                item.active = True
                self._marked_section = item
        return context

    def _unmark_section(self) -> None:
        marked = getattr(self, "_marked_section", None)
        if marked is not None:
            marked.active = False
            self._marked_section = None

    @event_priority(LAST)
    def on_post_page(self, output: str, *, page: Page, config: Any) -> str:
        """Seal the page's final HTML and give it its policy: on the helpers where there are
        some (the page is written again with its policy once sealed), else here."""
        self._unmark_section()
        if self.model is None or self.pre is None:
            return output
        uri = page.file.src_uri
        generated = self.model.pages.get(uri)
        if generated is not None:
            self.seen.add(uri)
        built = BuiltPage(
            output,
            page.file.dest_uri,
            uri,
            generated.excerpts if generated is not None else None,
            generated.windows if generated is not None else Counter(),
            page.file.abs_dest_path,
        )
        if self.helper is not None:
            self.helper.pump()
            # the pages sealed so far (all written by MkDocs by now), before this one goes out
            self._take_seals(self.helper.sealed(wait=False))
            if self.helper.seal_later(built, self._page_policy()):
                return output
        sealed, final = seal_output(built, self.pre.excerpts, self.content_hashes, self._page_policy())
        self._take_seal(sealed)
        return final

    def _page_policy(self) -> PagePolicy:
        return PagePolicy(csp.worker_source(self.config.site_url), self.web_fonts, self.offline)

    def _take_seal(self, sealed: PageSeal) -> None:
        """Every page is sealed; a page with findings refuses the build in on_post_build."""
        if sealed.findings:
            self.seal_findings += sealed.findings
            return
        self.sealed += sealed.excerpts
        self.sealed_snapshots += sealed.snapshots
        self.sealed_windows += sealed.windows

    def _take_seals(self, done: list[tuple[BuiltPage, PageSeal, str | None]]) -> None:
        """Pages sealed by the helpers, in page order: each written again with its policy."""
        for built, sealed, value in done:
            final = with_policy(built, sealed, value)
            self._take_seal(sealed)
            if final is not built.output and not sealed.findings:
                write_staged(Path(built.path), final.encode("utf-8", errors="xmlcharrefreplace"))

    @event_priority(LAST)
    def on_post_template(self, output_content: str, *, template_name: str, config: Any) -> str:
        """Theme pages outside the navigation (``404.html``): no evidence, and the same policy."""
        if self.model is None or not template_name.endswith(".html"):
            return output_content
        scan = scan_page(output_content)
        if scan.malformed or scan.excerpts or scan.snapshots or scan.windows:
            detail = "a theme page shows evidence or what looks like it"
            self.seal_findings.append(Finding(Reason.EXCERPT_MISMATCH, template_name, detail))
            return output_content
        foreign = check_scripts(scan, template_name)
        if foreign:
            self.seal_findings += foreign
            return output_content
        return self._with_policy(output_content, scan.scripts, scan.styles, template_name)

    def _trusted_keys(self) -> KeyRing:
        """The keys of the policy this build resolved once (never the raw YAML again)."""
        return self.pre.policy.trusted_keys if self.pre is not None else KeyRing()

    def _with_policy(self, output: str, scripts: list[str], styles: list[str], where: str) -> str:
        """The page with its Content-Security-Policy (the prose check found no script of an author)
        and the accessible names the theme leaves out."""
        worker = csp.worker_source(self.config.site_url)
        value = csp.policy(scripts, styles, web_fonts=self.web_fonts, offline=self.offline, worker=worker)
        try:
            return csp.insert(name_search_dialog(output), value)
        except ValueError as exc:
            self.seal_findings.append(error_finding(exc, where, CheckId.CSP))
            return output

    @event_priority(FIRST)
    def _seal_pages(self, *, config: Any) -> None:
        """Every page sealed on the helpers is taken and written with its policy before any other
        plugin's ``on_post_build`` reads the site: they see the pages as MkDocs' process would
        have written them."""
        if self.helper is not None and self.model is not None:
            try:
                self._take_seals(self.helper.sealed(wait=True))
            except (PublisherError, OSError, ValueError) as exc:
                self.seal_findings.append(error_finding(exc, ".", CheckId.BUILD))

    @event_priority(LAST)
    def _finish_build(self, *, config: Any) -> None:
        if self.staging is None or self.site is None or self.model is None:
            return
        self._seal_pages(config=config)  # none left where the first handler ran
        unbuilt = sorted(set(self.model.pages) - self.seen)
        sealing = self.seal_findings + [
            Finding(None, uri, "a generated page was not built, so it was not sealed", check=CheckId.BUILD)
            for uri in unbuilt
        ]
        if sealing:
            self.abandon()
            raise refuse("evidence seal", sealing)
        if self._strict_warned():
            log.info("evidence: warnings in strict mode; the published site is left as it was")
            self.abandon()
            return
        if Path(config.site_dir) != self.staging:
            self.abandon()
            detail = "another plugin moved site_dir during the build"
            moved = Finding(None, "mkdocs.yml", detail, check=CheckId.PUBLISH, field="site_dir")
            raise refuse("evidence publication", [moved])
        try:
            sids = sorted(self.pre.sources) if self.pre else []
            records = publish_records(self.staging, sids, self.helper, offline=self.offline)
            sources = self.proof_sources if self.proof_sources is not None else self._proof_sources()
            proofs = publish_proofs(self.staging, sources, self._trusted_keys(), records, self.helper)
        except (PublisherError, OSError) as exc:
            self.abandon()
            reason = exc.reason if isinstance(exc, PublisherError) else None
            detail = exc.message if isinstance(exc, PublisherError) else str(exc)
            finding = Finding(
                reason or Reason.SNAPSHOT_HASH_MISMATCH, "sources", one_line(detail), check=CheckId.PUBLISH
            )
            raise refuse("published snapshot record", [finding]) from exc
        try:
            write_manifest(self.staging, self, records, proofs)
        except (PublisherError, OSError) as exc:
            self.abandon()
            raise refuse("evidence publication", [error_finding(exc, MANIFEST_NAME, CheckId.PUBLISH)]) from exc
        if self.helper is not None:
            self.helper.close()
        self.ready = True
        if self.publish_at == "post_build":
            self.publish_now()

    on_post_build = CombinedEvent(_seal_pages, _finish_build)
    """First the pages sealed on the helpers, then (last) the seal's verdict, the published
    records, the proofs and the manifest."""

    def _proof_sources(self) -> list[ProofSource]:
        """Every published source with its cited spans, its mode, its retrieval events and its
        stored snapshot (the file its published ``record.json`` is copied from)."""
        if self.pre is None or self.model is None:
            return []
        out = []
        for sid, info in sorted(self.pre.sources.items()):
            job = source_job(sid, info, self.model.source_text)
            events = [event for slug, event in self.model.events_of(sid) if slug in info.holders]
            stored = Path(info.sources_dir) / f"{sid}.json"
            out.append(ProofSource(sid, sorted(info.spans), job.mode == "proofs", events, stored))
        return out

    def on_build_error(self, *, error: Exception) -> None:
        self.failed = True
        self.abandon()

    @event_priority(FINAL)
    def on_shutdown(self) -> None:
        """Publish a ready build of ``mkdocs build``/``gh-deploy`` once it is known to have succeeded.

        MkDocs calls ``on_shutdown`` in a ``finally`` after its build function: an exception
        still propagating there (a later plugin, the strict-mode abort, an ``on_build_error``
        that raised before ours) means the build failed.
        """
        if self.publish_at == "shutdown" and sys.exc_info()[1] is None and not self.failed:
            if not self._strict_warned() and self.publish_now():
                return
        self.abandon()


def _meta_source(page: Page, path: Path | None) -> str | None:
    """The Markdown a page's metadata was read from, for line numbers: its file of ``docs/``
    (a generated page's lines are not those of a file an author wrote: none)."""
    return source_text(path) if page.file.abs_src_path is not None else None


def _relative(path: Path, root: Path | None) -> str:
    """``path`` relative to the wiki root where it lies inside it (a finding names no machine path)."""
    if root is not None and path.is_relative_to(root):
        return path.relative_to(root).as_posix() or "."
    return path.name
