"""Workers only from what the site ships: with ``site_url`` the policy pins ``worker-src`` to the
theme's worker folder; without one it stays ``'self'``, and no script of ``docs/`` is published
(the inert-file allow-list), so 'self' names only the theme's and the build's own scripts."""

from __future__ import annotations

import re
from pathlib import Path

from _policy import policy_of
from _wiki_helpers import build_wiki, make_wiki, sample_run

from publisher.site.checks import csp
from publisher.site.checks.checksite import check_site
from publisher.wiki.promote import promote

_WORKER = re.compile(r"worker-src ([^;\"]+)")


def _workers(site: Path) -> set[str]:
    return {m.group(1) for p in site.rglob("*.html") for m in _WORKER.finditer(p.read_text(encoding="utf-8"))}


def test_site_url_pins_workers_to_the_themes_worker_folder(tmp_path: Path) -> None:
    wiki = make_wiki(tmp_path / "wiki", extra="site_url: https://example.org/wiki/\n")
    promote(sample_run(wiki).run.path, wiki, policy=policy_of(wiki))
    build_wiki(wiki)
    site = wiki / "site"
    assert _workers(site) == {"https://example.org/wiki/assets/javascripts/workers/"}
    assert list(site.glob("assets/javascripts/workers/search.*.min.js"))  # the worker it names is there
    outcome = check_site(site, wiki, policy=policy_of(wiki))
    assert outcome.ok, [f.one_line() for f in outcome.findings]


def test_without_site_url_workers_come_from_the_site(tmp_path: Path) -> None:
    wiki = make_wiki(tmp_path / "wiki")
    promote(sample_run(wiki).run.path, wiki, policy=policy_of(wiki))
    build_wiki(wiki)
    assert _workers(wiki / "site") == {"'self'"}
    site = wiki / "site"
    scripts = {p.relative_to(site).parts[0] for p in site.rglob("*.js")}
    assert scripts <= {"assets", "search", "sources"}  # the theme's, the build's, the records


def test_a_site_url_that_could_break_the_policy_is_not_pinned() -> None:
    assert csp.worker_source('https://example.org/"; script-src *') is None
    assert csp.worker_source("javascript:alert(1)//") is None
    assert csp.worker_source(None) is None
    value = csp.policy([], [], offline=True, worker=csp.worker_source("https://e.example/w"))
    assert "worker-src https://e.example/w/assets/javascripts/workers/ blob:" in value
    assert value in csp.policies([], [], value)
