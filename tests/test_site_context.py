"""The sentence context of each excerpt (``publisher.site.pages.context``): read where the page
needs it (in-process for a concept page, on the report's helper for a report), always from the
snapshot as the wiki check verified it."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import pytest
from _policy import policy_of
from _wiki_helpers import (
    REPO,
    RecordingHelpers,
    build_wiki,
    leftovers,
    make_wiki,
    refused_build,
    sample_run,
    tree_digest,
    writable,
)

from publisher.kernel.errors import IntegrityError
from publisher.kernel.reasons import Reason
from publisher.site.pages.context import SentenceContexts, context_source, keyed_contexts, source_contexts
from publisher.wiki.check import check_wiki
from publisher.wiki.promote import promote


def _checked(tmp_path: Path) -> tuple[Path, Any]:
    wiki = make_wiki(tmp_path / "wiki")
    rb = sample_run(wiki)
    promote(rb.run.path, wiki, policy=policy_of(wiki))
    pre = check_wiki(wiki, policy=policy_of(wiki))
    assert pre.ok
    return wiki, pre


def test_a_context_source_reads_what_the_wiki_contexts_read(tmp_path: Path) -> None:
    """What a helper reads (a small, picklable :class:`ContextSource`) gives the contexts the
    build's own reader gives, keyed as a report shows them."""
    _, pre = _checked(tmp_path)
    contexts = SentenceContexts(pre)
    sources = [context_source(pre, sid) for sid in sorted(pre.sources)]
    keyed = keyed_contexts(sources)
    assert keyed and len(keyed) == sum(len(s.spans) for s in sources)
    for source in sources:
        for start, end in source.spans:
            c = contexts.around(source.source_id, start, end)
            assert keyed[f"{source.source_id}#{start}-{end}"] == (c.before, c.after, c.cut_before, c.cut_after)


def test_a_context_is_refused_unless_the_snapshot_is_the_one_the_check_verified(tmp_path: Path) -> None:
    _, pre = _checked(tmp_path)
    sid = sorted(pre.sources)[0]
    source = context_source(pre, sid)
    with pytest.raises(IntegrityError) as other:
        source_contexts(dataclasses.replace(source, content_hash="sha256:" + "0" * 64))
    assert other.value.reason == Reason.SNAPSHOT_HASH_MISMATCH
    with pytest.raises(IntegrityError) as none:
        source_contexts(dataclasses.replace(source, content_hash=""))
    assert none.value.reason == Reason.SNAPSHOT_HASH_MISMATCH
    start, end = source.spans[0]
    with pytest.raises(IntegrityError) as outside:
        context_source(pre, sid, [(start, end + 1)])
    assert outside.value.reason == Reason.SOURCE_OUTSIDE_ACCEPTED
    with pytest.raises(IntegrityError) as unknown:
        context_source(pre, "src-" + "0" * 64)
    assert unknown.value.reason == Reason.UNKNOWN_SOURCE


def test_a_snapshot_changed_after_the_check_refuses_every_page_its_helpers_read_it_for(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The helpers read the excerpts' contexts from the snapshots (the concept pages' while the
    pages are made, each report's beside it): one changed after the wiki check refuses the
    concept and report pages quoting it (and the source page showing it), nothing published."""
    from publisher.site.lifecycle import workers

    wiki, pre = _checked(tmp_path)
    build_wiki(wiki)
    before = tree_digest(wiki / "site")
    pools: list[RecordingHelpers] = []
    monkeypatch.setattr(workers, "default_workers", lambda: 2)
    monkeypatch.setattr(workers, "helper_pool", lambda workers=1: pools.append(RecordingHelpers()) or pools[-1])
    start = workers.BuildHelper.start
    sid = pre.concepts[0].doc.footnotes[0].refs[0].source_id  # a source a concept quotes
    stored = Path(pre.sources[sid].sources_dir) / f"{sid}.json"

    def then_change(self: workers.BuildHelper, *args: Any) -> None:
        data = stored.read_bytes()  # once the pages are generated, before any is filled
        writable(stored).write_bytes(data.replace(b"a", b"b", 1))
        start(self, *args)

    monkeypatch.setattr(workers.BuildHelper, "start", then_change)
    findings = refused_build(wiki)
    assert {"context_chunk", "render_report_job"} <= set(pools[-1].jobs)
    assert {f.reason for f in findings} == {Reason.SNAPSHOT_HASH_MISMATCH}
    files = {f.file for f in findings}
    assert any(f.startswith("runs/") and f.endswith("/report.md") for f in files), files
    assert f"sources/{sid}.md" in files
    quoting = [ce for ce in pre.concepts if ce.doc and sid in {r.source_id for n in ce.doc.footnotes for r in n.refs}]
    assert quoting and {ce.rel for ce in quoting} <= files, files
    assert tree_digest(wiki / "site") == before
    assert leftovers(wiki) == []


class _Texts:
    """One verified text, as check-site's WikiTexts gives it."""

    def __init__(self, text: str, wrapped: bool) -> None:
        self.text, self.wrapped = text, wrapped

    def get(self, source_id: str) -> str:
        return self.text

    def sentences(self, source_id: str) -> Any:
        from publisher.kernel.sentences import Sentences

        return Sentences(self.text, wrapped=self.wrapped)


@pytest.mark.parametrize(
    ("text", "wrapped"),
    [
        ("Methods. The drug was given\rto adults <65> for 8 weeks. End.", True),  # a PDF keeps a lone CR
        ("Methods. The drug was given\rto adults for 8 weeks\r\nin all. End.", False),
        ("Methods. The drug was\x00 given to adults for 8 weeks. End.", False),
    ],
    ids=["wrapped-cr", "plain-cr", "nul"],
)
def test_a_context_as_the_templates_write_it_is_the_one_check_site_derives(text: str, wrapped: bool) -> None:
    """A carriage return in the rest of an excerpt's sentence, written raw, is read back by every
    HTML parser as a line feed: check-site found the context of a fresh build changed
    (EXCERPT_MISMATCH) while the build had passed. Both templates write it as the excerpt is written."""
    from types import SimpleNamespace

    from publisher.gate.render import _environment as report_environment
    from publisher.site.checks.checksite import _check_context
    from publisher.site.checks.scan import scan_page
    from publisher.site.pages.context import context_around
    from publisher.site.pages.markup import excerpt_html
    from publisher.site.pages.model import _environment as site_environment

    sid = "src-" + "a" * 64
    start = text.index("adults")
    end = start + len("adults")
    texts = _Texts(text, wrapped)
    context = context_around(texts.sentences(sid), text, start, end)
    assert "\r" in context.before or "\x00" in context.before  # the case under test
    fragments = site_environment(REPO / "templates" / "site", autoescape=True)
    in_sentence = fragments.get_template("fragments.html.j2").make_module({}).in_sentence
    report = report_environment().get_template("report.html.j2").make_module({"page": False})
    cited = SimpleNamespace(source_id=sid, start=start, end=end, excerpt=text[start:end])
    contexts = {f"{sid}#{start}-{end}": (context.before, context.after, context.cut_before, context.cut_after)}
    for html in (
        str(in_sentence(excerpt_html(sid, start, end, text[start:end]), context)),
        str(report.excerpt_block(cited, contexts)),
    ):
        scan = scan_page(f"<html><body><p>{html}</p></body></html>")
        assert not scan.malformed and len(scan.excerpts) == 1
        found: list[Any] = []
        _check_context("page.html", scan.excerpts[0], texts, found.append)  # type: ignore[arg-type]
        assert found == []
