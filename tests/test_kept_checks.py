"""What a wiki check keeps of each run until the site is built: the check packed as compact JSON
(:meth:`RunCheck.pack`), a result the stored file holds kept as that file's digest
(:meth:`RunCheck.settle`), and what is published read again from the file and verified, never
from a file changed since the check."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest
from _policy import options_of, policy_of
from _wiki_helpers import edit_json, make_wiki, sample_run, writable

from publisher.gate.pipeline import check_run
from publisher.gate.render import ReportView
from publisher.kernel.errors import IntegrityError
from publisher.parallel import Workers, worker_pool
from publisher.wiki.check import check_wiki


def _unpacked(rc):  # type: ignore[no-untyped-def]
    return copy.deepcopy(rc.result), copy.deepcopy(rc.stored), copy.deepcopy(rc.report)


def test_a_packed_check_reads_as_the_check_it_was(tmp_path: Path) -> None:
    wiki = make_wiki(tmp_path / "wiki")
    rb = sample_run(wiki)
    rc = check_run(rb.run, options_of(rb.run))
    assert rc.stored_is_assembly
    before = _unpacked(rc)
    rc.pack()
    assert _unpacked(rc) == before
    # What was the assembly's result is no longer read from the assembly: reading it is an error,
    # never an empty result.
    with pytest.raises(RuntimeError):
        _ = rc.assembly.result["accepted"]
    with pytest.raises(RuntimeError):
        rc.assembly.result.get("accepted")
    with pytest.raises(RuntimeError):
        rc.stored = {}
    rc.settle()  # the stored file is the assembly: from now on it is read again
    assert _unpacked(rc) == before
    rc.pack()  # idempotent
    assert _unpacked(rc) == before


def test_a_stale_stored_result_is_kept_whole_not_read_again(tmp_path: Path) -> None:
    wiki = make_wiki(tmp_path / "wiki")
    rb = sample_run(wiki)
    edit_json(rb.run.result_path, lambda d: d["accepted"][0].__setitem__("url", "https://evil.example/"))
    rc = check_run(rb.run, options_of(rb.run))
    assert not rc.stored_is_assembly and rc.failed("C-ASSEMBLER")
    before = _unpacked(rc)
    rc.pack()
    rc.settle()
    # The file is not the assembly, so nothing is re-read from it: both stay as checked even if
    # the file goes away.
    rb.run.result_path.unlink()
    assert _unpacked(rc) == before


@pytest.mark.parametrize("workers", [1, 2])
def test_a_result_changed_after_the_wiki_check_is_never_rendered(tmp_path: Path, workers: int) -> None:
    wiki = make_wiki(tmp_path / "wiki")
    rb = sample_run(wiki)
    executor = worker_pool(workers) if workers > 1 else None
    try:
        checked = check_wiki(wiki, workers=Workers(executor, workers, None), policy=policy_of(wiki))
    finally:
        if executor is not None:
            executor.shutdown()
    assert checked.ok, checked.findings
    (ev,) = checked.runs
    assert ev.check is not None and ev.inputs_hash == ev.check.result["inputs_hash"]
    view = ReportView.of(ev.check)
    assert view.result["accepted"] and view.result == ev.check.result
    # Another time, another layout: the same value, so still the result checked.
    edit_json(rb.run.result_path, lambda d: d.__setitem__("generated_at", "2020-01-01T00:00:00Z"))
    assert ReportView.of(ev.check).result["accepted"] == view.result["accepted"]
    # A changed value is refused wherever it would be read from.
    edit_json(rb.run.result_path, lambda d: d["counts"].__setitem__("unresolved", 7))
    with pytest.raises(IntegrityError) as changed:
        _ = ev.check.result
    assert changed.value.context["path"] == "outputs/result.json"  # the file that changed, by its path
    with pytest.raises(IntegrityError):
        _ = ev.check.stored
    with pytest.raises(IntegrityError):
        ReportView.of(ev.check)
    with pytest.raises(IntegrityError):
        _ = ev.result
    writable(rb.run.result_path).write_text("not json", encoding="utf-8")
    with pytest.raises(IntegrityError):
        _ = ev.check.result
    rb.run.result_path.unlink()
    with pytest.raises(IntegrityError):
        _ = ev.check.result


def test_the_wiki_check_indexes_the_same_evidence_on_a_pool_and_here(tmp_path: Path) -> None:
    wiki = make_wiki(tmp_path / "wiki")
    for n in range(11):  # more runs than are handed to the pool ahead of the one recorded
        sample_run(wiki, f"run-{n:02d}")
    (tmp_path / "wiki" / "runs" / "run-03" / "config.json").write_text("{", encoding="utf-8")
    here = check_wiki(wiki, workers=Workers(None, 1, None), policy=policy_of(wiki))
    executor = worker_pool(2)
    try:
        pooled = check_wiki(wiki, workers=Workers(executor, 2, None), policy=policy_of(wiki))
    finally:
        executor.shutdown()
    assert [f.key for f in here.findings] == [f.key for f in pooled.findings]
    assert [f.file for f in here.findings] == ["runs/run-03/config.json"]
    here.findings.clear()
    pooled.findings.clear()
    assert here.ok and pooled.ok
    assert here.excerpts == pooled.excerpts and here.excerpts
    assert [ev.accepted for ev in here.runs] == [ev.accepted for ev in pooled.runs]
    assert [ev.inputs_hash for ev in here.runs] == [ev.inputs_hash for ev in pooled.runs]
    assert {sid: (i.holders, i.spans) for sid, i in here.sources.items()} == {
        sid: (i.holders, i.spans) for sid, i in pooled.sources.items()
    }
    assert json.dumps([ev.check.report for ev in here.runs if ev.check]) == json.dumps(
        [ev.check.report for ev in pooled.runs if ev.check]
    )
    assert [ev.events for ev in here.runs] == [ev.events for ev in pooled.runs]
    assert {sid: i.meta.content_hash for sid, i in here.sources.items()} == {
        sid: i.meta.content_hash for sid, i in pooled.sources.items()
    }
    # What the pool sent back is held packed (bytes), never as the objects, and read as a copy.
    pooled_run = pooled.runs[0]
    assert isinstance(pooled_run._check, bytes) and isinstance(pooled_run._events, bytes)
    assert pooled_run.check is not pooled_run.check and pooled_run.assembled
    assert all(not i.meta.spans for i in pooled.sources.values()), "the excerpts travel once, in the index"


@pytest.mark.parametrize("helper", [False, True], ids=["in-process", "helper"])
def test_a_result_changed_between_the_check_and_the_pages_refuses_the_build(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, helper: bool
) -> None:
    """Whether the report is rendered by a helper or by MkDocs' process, the result it reads again
    must be the one checked: else the build is refused (C-BUILD), never a traceback."""
    from concurrent.futures import ThreadPoolExecutor

    from _wiki_helpers import build_wiki, leftovers, refused_build, tree_digest

    from publisher.site.lifecycle import hook
    from publisher.site.lifecycle import workers as build_workers
    from publisher.wiki.promote import promote

    monkeypatch.setattr(build_workers, "default_workers", lambda: 2)
    monkeypatch.setattr(build_workers, "helper_pool", lambda workers=1: ThreadPoolExecutor(workers) if helper else None)

    wiki = make_wiki(tmp_path / "wiki")
    rb = sample_run(wiki)
    promote(rb.run.path, wiki, policy=policy_of(wiki))
    build_wiki(wiki)
    before = tree_digest(wiki / "site")
    real = hook.check_wiki

    def check_then_edit(*args, **kwargs):  # type: ignore[no-untyped-def]
        checked = real(*args, **kwargs)
        edit_json(rb.run.result_path, lambda d: d["counts"].__setitem__("unresolved", 7))
        return checked

    monkeypatch.setattr(hook, "check_wiki", check_then_edit)
    findings = refused_build(wiki)
    # Every reader of the result refuses it: the report, a source page whose contexts a helper
    # read, or the evidence pages as a whole when the result is read again as the helpers are
    # handed their work ("."). Which reads first depends on the jobs' timing on the machine.
    refused = {f.file for f in findings}
    assert {f.check for f in findings} == {"C-BUILD"}, findings
    assert refused and all(f in ("runs/alpha/report.md", ".") or f.startswith("sources/") for f in refused), refused
    assert tree_digest(wiki / "site") == before
    assert leftovers(wiki) == []


def test_the_excerpt_table_gives_back_exactly_the_text_it_was_given() -> None:
    """Excerpts are held as UTF-8 (about half the memory of a str with one character past U+00FF)
    and read back as the very same text: astral characters, lone surrogates, NUL, line breaks."""
    from publisher.wiki.spantables import ExcerptTable, span_code

    texts = ["plain", "β-blockers ≥ 2 – 3 mg", "𝛼 and 😀 outside the BMP", "\ud800 lone\udfff", "a\x00b\r\nc", ""]
    table = ExcerptTable()
    for n, text in enumerate(texts):
        table[("src-x", n, n + len(text))] = text
    assert [table[("src-x", n, n + len(t))] for n, t in enumerate(texts)] == texts
    assert len(table) == len(texts) and ("src-x", 1, 1 + len(texts[1])) in table
    assert dict(table) == {("src-x", n, n + len(t)): t for n, t in enumerate(texts)}
    assert table.get(("src-x", 99, 100)) is None
    held = table._by_source["src-x"].get(span_code(1, 1 + len(texts[1])))
    assert held is not None
    assert held == texts[1].encode("utf-8") and len(held) < 2 * len(texts[1])
    with pytest.raises(TypeError):
        table[("src-x", 0, 1)] = b"bytes"  # type: ignore[assignment]
