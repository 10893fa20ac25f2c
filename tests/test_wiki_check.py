"""The wiki check: every run assembled now and every concept checked; every finding reported with its
reason code or check id, never raised."""

from __future__ import annotations

import json
import shutil
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from pathlib import Path

import pytest
from _policy import policy_of
from _wiki_helpers import TAMPERINGS, count_asset_hashes, make_wiki, sample_run, tamper

from publisher.kernel.checkids import CheckId
from publisher.kernel.reasons import Reason
from publisher.kernel.refs import format_ref
from publisher.parallel import Workers
from publisher.runs import Run
from publisher.wiki.check import check_wiki as run_preflight
from publisher.wiki.evidence import RunEvidence, WikiCheck
from publisher.wiki.promote import promote


@pytest.fixture
def wiki(tmp_path: Path) -> Path:
    return make_wiki(tmp_path / "wiki")


def _codes(wiki: Path) -> set[str]:
    return {f.code for f in run_preflight(wiki, policy=policy_of(wiki)).findings}


def test_clean_wiki_passes_with_every_excerpt_verified(wiki: Path) -> None:
    rb = sample_run(wiki)
    promote(rb.run.path, wiki, policy=policy_of(wiki))
    pre = run_preflight(wiki, policy=policy_of(wiki))
    assert pre.ok, [f.one_line() for f in pre.findings]
    assert len(pre.excerpts) == 5
    assert set(pre.sources) == set(rb.texts)
    for (sid, start, end), excerpt in pre.excerpts.items():
        assert rb.texts[sid][start:end] == excerpt
    assert [r.slug for r in pre.runs] == ["alpha"]
    assert pre.concepts[0].doc is not None


def test_new_wiki_has_nothing_to_verify_and_passes_with_notice(wiki: Path) -> None:
    pre = run_preflight(wiki, policy=policy_of(wiki))
    assert pre.ok and pre.notices


@pytest.mark.parametrize("kind", [*TAMPERINGS, "concept-excerpt", "concept-offsets"])
def test_each_tampering_is_found(wiki: Path, kind: str) -> None:
    rb = sample_run(wiki)
    promote(rb.run.path, wiki, policy=policy_of(wiki))
    reason = tamper(kind, rb)
    findings = run_preflight(wiki, policy=policy_of(wiki)).findings
    assert reason in {f.code for f in findings}
    for item in findings:
        assert item.file and item.one_line().startswith(item.code)


def test_findings_name_file_footnote_and_numbers(wiki: Path) -> None:
    rb = sample_run(wiki)
    promote(rb.run.path, wiki, policy=policy_of(wiki))
    tamper("concept-excerpt", rb)
    findings = run_preflight(wiki, policy=policy_of(wiki)).findings
    (finding,) = [f for f in findings if f.check is None]
    (bound,) = [f for f in findings if f.check == "C-PROMOTED"]  # the edited line, grouped under it
    assert bound.cause == finding.key and bound.line == finding.line
    assert finding.reason is Reason.EXCERPT_MISMATCH
    assert finding.file == "concepts/alpha.md"
    assert finding.label is not None and finding.label.startswith("alpha-extraction-pmid-111-q")
    assert (finding.start, finding.end) == (12, 166) and finding.source_id in rb.texts
    assert finding.line is not None and finding.line > 10
    assert finding.to_dict()["reason_code"] == "EXCERPT_MISMATCH"


def test_every_failure_is_listed_not_just_the_first(wiki: Path) -> None:
    rb = sample_run(wiki)
    promote(rb.run.path, wiki, policy=policy_of(wiki))
    tamper("result-url", rb)
    tamper("pdf-asset", rb)
    tamper("event-line", rb)
    tamper("concept-offsets", rb)
    assert _codes(wiki) >= {"C-ASSEMBLER", "ASSET_HASH_MISMATCH", "C-EVENT-LOG", "SOURCE_OUTSIDE_ACCEPTED"}


def test_concept_without_evidence_is_a_finding(wiki: Path) -> None:
    sample_run(wiki)
    (wiki / "concepts" / "empty.md").write_text(
        "---\nschema_version: 1\ntitle: Empty\nconcept: empty\nruns: []\nclaims: []\n---\nJust prose.\n",
        encoding="utf-8",
    )
    assert "NO_SPANS" in _codes(wiki)


def test_concept_citing_run_it_does_not_name(wiki: Path) -> None:
    rb = sample_run(wiki)
    sid, text = next(iter(rb.texts.items()))
    ref = format_ref(sid, 12, 166, text[12:166])
    (wiki / "concepts" / "other.md").write_text(
        f"---\nschema_version: 1\ntitle: Other\nconcept: other\nruns: []\nclaims: []\n---\nClaim.[^a]\n\n[^a]: {ref}\n",
        encoding="utf-8",
    )
    assert _codes(wiki) == {"SOURCE_OUTSIDE_ACCEPTED"}


def test_concept_naming_missing_run_and_wrong_slug(wiki: Path) -> None:
    rb = sample_run(wiki)
    promote(rb.run.path, wiki, policy=policy_of(wiki))
    shutil.move(wiki / "concepts" / "alpha.md", wiki / "concepts" / "renamed.md")
    assert "SCHEMA_ERROR" in _codes(wiki)
    shutil.move(wiki / "concepts" / "renamed.md", wiki / "concepts" / "alpha.md")
    shutil.rmtree(rb.run.path)
    assert "SCHEMA_ERROR" in _codes(wiki)


def test_result_schema_error_and_duplicate_slug(wiki: Path) -> None:
    rb = sample_run(wiki)
    upstream = wiki / "outputs" / "deep-research" / "alpha"
    shutil.copytree(rb.run.path, upstream)
    assert "SCHEMA_ERROR" in _codes(wiki)
    shutil.rmtree(upstream)
    rb.run.result_path.write_text("{not json", encoding="utf-8")
    assert _codes(wiki) == {"SCHEMA_ERROR"}


def test_upstream_layout_is_discovered(wiki: Path) -> None:
    rb = sample_run(wiki)
    target = wiki / "outputs" / "deep-research" / "alpha"
    target.parent.mkdir(parents=True)
    shutil.move(rb.run.path, target)
    pre = run_preflight(wiki, policy=policy_of(wiki))
    assert pre.ok and [r.rel for r in pre.runs] == ["outputs/deep-research/alpha"]


def test_concept_quoting_a_tampered_snapshot_names_the_tampering(wiki: Path) -> None:
    rb = sample_run(wiki)
    promote(rb.run.path, wiki, policy=policy_of(wiki))
    tamper("snapshot-text", rb)
    concept = [f for f in run_preflight(wiki, policy=policy_of(wiki)).findings if f.file.startswith("concepts/")]
    assert concept, "the concept quoting the tampered snapshot must be reported"
    assert {f.reason for f in concept} == {Reason.SNAPSHOT_HASH_MISMATCH}


def test_run_only_a_concept_names_is_verified_too(wiki: Path) -> None:
    """A run kept outside the usual layouts is found through the concept that names it, and its
    snapshots are verified like any other's (a second pass once the concepts are parsed)."""
    rb = sample_run(wiki)
    target = wiki / "archive" / "alpha"
    target.parent.mkdir()
    shutil.move(rb.run.path, target)
    rb.run = Run(target)
    promote(target, wiki, policy=policy_of(wiki))
    pre = run_preflight(wiki, policy=policy_of(wiki))
    assert pre.ok, [f.one_line() for f in pre.findings]
    assert [r.rel for r in pre.runs] == ["archive/alpha"]
    assert set(pre.sources) == set(rb.texts)
    assert all(pre.sources[sid].meta.ok and pre.sources[sid].meta.sealed for sid in rb.texts)
    # The kept check holds only failed snapshot checks: the verified ones' spans are the excerpts.
    assert pre.runs[0].check.assembly.reader.checks() == {}
    tamper("snapshot-text", rb)
    findings = run_preflight(wiki, policy=policy_of(wiki)).findings
    assert Reason.SNAPSHOT_HASH_MISMATCH in {f.reason for f in findings}
    assert {f.file.split("/")[0] for f in findings} == {"archive", "concepts"}


def test_assets_are_hashed_once_by_the_snapshot_workers(wiki: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The asset check takes the digest the verifying worker computed."""
    rb = sample_run(wiki)
    promote(rb.run.path, wiki, policy=policy_of(wiki))
    hashed = count_asset_hashes(monkeypatch)
    with ThreadPoolExecutor(max_workers=2) as pool:
        pre = run_preflight(wiki, workers=Workers(executor=pool), policy=policy_of(wiki))
    assert pre.ok, [f.one_line() for f in pre.findings]
    assert len(hashed) == 1 and hashed[0].startswith("assets/papers/")
    monkeypatch.undo()
    tamper("pdf-asset", rb)
    with ThreadPoolExecutor(max_workers=2) as pool:
        findings = run_preflight(wiki, workers=Workers(executor=pool), policy=policy_of(wiki)).findings
    assert Reason.ASSET_HASH_MISMATCH in {f.reason for f in findings}


def _many_concepts(wiki: Path, count: int) -> None:
    """``count`` copies of the promoted concept, each under its own slug; one is malformed."""
    original = (wiki / "concepts" / "alpha.md").read_text(encoding="utf-8")
    assert "concept: alpha\n" in original
    for n in range(count):
        slug = f"c{n:03d}"
        text = original.replace("concept: alpha\n", f"concept: {slug}\n", 1)
        if n == count // 2:
            text = text.replace("schema_version: 1", "schema_version: 2", 1)
        (wiki / "concepts" / f"{slug}.md").write_text(text, encoding="utf-8")


def _summary(pre: object) -> tuple[object, ...]:
    return (
        [(c.rel, c.slug, c.doc) for c in pre.concepts],  # type: ignore[attr-defined]
        [f.one_line() for f in pre.findings],  # type: ignore[attr-defined]
        sorted(pre.excerpts.items()),  # type: ignore[attr-defined]
        [r.rel for r in pre.runs],  # type: ignore[attr-defined]
    )


def test_many_concepts_are_parsed_on_the_workers_with_the_same_outcome(wiki: Path) -> None:
    """From 32 concepts on, the concepts are parsed in tasks on the pool that checks the
    snapshots (its own, or the caller's executor): same concepts, in the same order, same
    findings, same excerpts as parsed here; a run only a concept names is still verified."""
    rb = sample_run(wiki)
    target = wiki / "archive" / "alpha"
    target.parent.mkdir()
    shutil.move(rb.run.path, target)
    promote(target, wiki, policy=policy_of(wiki))
    _many_concepts(wiki, 40)
    serial = run_preflight(wiki, workers=Workers(count=1), policy=policy_of(wiki))
    assert len(serial.concepts) == 41 and [r.rel for r in serial.runs] == ["archive/alpha"]
    assert [f.code for f in serial.findings] == ["SCHEMA_ERROR"], [f.one_line() for f in serial.findings]
    pooled = run_preflight(wiki, workers=Workers(count=2), policy=policy_of(wiki))
    with ThreadPoolExecutor(max_workers=2) as pool:
        threaded = run_preflight(wiki, workers=Workers(executor=pool), policy=policy_of(wiki))
    assert _summary(pooled) == _summary(serial) == _summary(threaded)


def test_blocks_rendered_while_the_workers_parse_are_the_ones_compared(
    wiki: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With many concepts on a pool, the promoted blocks of the concepts that came back are
    rendered while the workers parse the rest, and the checks compare those: each set of runs
    rendered once in all, none for a concept whose run is refused, and the same findings, in the
    same order, as the check in this process (an edited block line among them)."""
    from publisher.wiki import promoted

    clean = sample_run(wiki, "alpha", base_url="https://alpha.example.org/")
    promote(clean.run.path, wiki, policy=policy_of(wiki))
    refused = sample_run(wiki, "beta", base_url="https://beta.example.org/")
    promote(refused.run.path, wiki, policy=policy_of(wiki))
    tamper("result-url", refused)
    _many_concepts(wiki, 40)
    edited = wiki / "concepts" / "c007.md"
    text = edited.read_text(encoding="utf-8")
    line = next(x for x in text.split("\n") if x.startswith("- ") and "[^" in x)
    edited.write_text(text.replace(line, line + " (edited)", 1), encoding="utf-8")
    serial = run_preflight(wiki, workers=Workers(count=1), policy=policy_of(wiki))
    rendered: list[tuple[str, ...]] = []
    render = promoted.render_block

    def counted(runs: list[RunEvidence], w: WikiCheck, *, legacy: bool = False) -> promoted.RenderedBlock:
        if not legacy:  # the edited concept's block is also compared with the labels of old
            rendered.append(tuple(ev.slug for ev in runs))
        return render(runs, w, legacy=legacy)

    monkeypatch.setattr(promoted, "render_block", counted)
    ahead: list[int] = []
    into = promoted.render_into
    monkeypatch.setattr(promoted, "render_into", lambda runs, w, blocks: ahead.append(1) or into(runs, w, blocks))
    from publisher.wiki import conceptcheck

    monkeypatch.setattr(conceptcheck, "render_into", promoted.render_into)
    pooled = run_preflight(wiki, workers=Workers(count=2), policy=policy_of(wiki))
    assert _summary(pooled) == _summary(serial)
    assert ahead, "blocks were rendered while the concepts were parsed"
    assert rendered == [("alpha",)], rendered
    assert any(f.file == "concepts/c007.md" and f.check is CheckId.PROMOTED for f in pooled.findings), [
        (f.one_line(), f.check) for f in pooled.findings
    ]
    assert any(f.run == "runs/beta" for f in pooled.findings)


def test_a_reference_passed_for_one_concept_is_still_checked_in_another(wiki: Path) -> None:
    """Concepts naming the same runs share what passed (the same span, quoted with the same words):
    a copy quoting other words there, or naming no run that accepts it, is still refused."""
    rb = sample_run(wiki)
    promote(rb.run.path, wiki, policy=policy_of(wiki))
    original = (wiki / "concepts" / "alpha.md").read_text(encoding="utf-8")
    definition = next(x for x in original.split("\n") if x.startswith("[^") and '"' in x)
    quoted = definition[definition.index('"') + 1 : definition.rindex('"')]
    doctored = definition.replace(quoted, "X" + quoted[1:], 1)
    for slug, text in (
        ("beta", original.replace(definition, doctored, 1)),
        ("gamma", original.replace("  path: ", "  path: nowhere/", 1)),
    ):
        (wiki / "concepts" / f"{slug}.md").write_text(text.replace("concept: alpha", f"concept: {slug}", 1), "utf-8")
    for workers in (1, 2):
        found = run_preflight(wiki, workers=Workers(count=workers), policy=policy_of(wiki)).findings
        assert not [f for f in found if f.file == "concepts/alpha.md"]
        assert any(f.file == "concepts/beta.md" and f.code == "EXCERPT_MISMATCH" and f.check is None for f in found)
        assert any(f.file == "concepts/gamma.md" and f.code == "SOURCE_OUTSIDE_ACCEPTED" for f in found)


def test_concepts_on_the_workers_are_parsed_in_tasks(wiki: Path) -> None:
    from publisher.wiki import check

    rb = sample_run(wiki)
    promote(rb.run.path, wiki, policy=policy_of(wiki))
    _many_concepts(wiki, 40)
    submitted: list[str] = []

    class Counting(ThreadPoolExecutor):
        def submit(self, fn, /, *args, **kwargs):  # type: ignore[no-untyped-def, override]
            submitted.append(fn.__name__)
            return super().submit(fn, *args, **kwargs)

    with Counting(max_workers=2) as pool:
        pre = run_preflight(wiki, workers=Workers(executor=pool), policy=policy_of(wiki))
    tasks = -(-41 // check._CONCEPTS_PER_TASK)
    assert submitted[-tasks:] == ["read_concepts"] * tasks, "the concepts are queued behind the runs"
    assert submitted[:-tasks] == ["check_whole_run"], "the small run is checked whole on a worker"
    assert len(pre.concepts) == 41


def _three_runs(wiki: Path) -> list[Path]:
    """Three runs in one wiki: one clean, one whose result was edited, one with a tampered snapshot."""
    runs = [sample_run(wiki, slug, base_url=f"https://{slug}.example.org/") for slug in ("alpha", "beta", "gamma")]
    tamper("result-url", runs[1])
    tamper("snapshot-text", runs[2])
    return [rb.run.path for rb in runs]


def test_runs_are_pipelined_one_ahead_and_findings_keep_their_order(
    wiki: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """In this process, run i + 1 is read (and its snapshots declared) before run i is checked; the
    findings are the same, in the same order, there, on a process pool and on threads."""
    from publisher.parallel import pool as pool_module
    from publisher.wiki import runchecks

    _three_runs(wiki)
    steps: list[str] = []
    load, finish = runchecks._load, runchecks._finish
    monkeypatch.setattr(runchecks, "_load", lambda item, *a: steps.append(f"load {item.ev.slug}") or load(item, *a))
    monkeypatch.setattr(
        runchecks, "_finish", lambda item, *a: steps.append(f"check {item.ev.slug}") or finish(item, *a)
    )
    serial = run_preflight(wiki, workers=Workers(count=1), policy=policy_of(wiki))
    assert steps == ["load alpha", "load beta", "check alpha", "load gamma", "check beta", "check gamma"]
    assert [r.slug for r in serial.runs] == ["alpha", "beta", "gamma"]
    codes = [f.code for f in serial.findings]
    assert "C-ASSEMBLER" in codes and "SNAPSHOT_HASH_MISMATCH" in codes
    assert not any(f.run == "runs/alpha" for f in serial.findings)
    monkeypatch.setattr(pool_module, "IN_PROCESS_BYTES", 0)  # a pool even for these small runs
    pooled = run_preflight(wiki, workers=Workers(count=2), policy=policy_of(wiki))
    with ThreadPoolExecutor(max_workers=2) as executor:
        threaded = run_preflight(wiki, workers=Workers(executor=executor), policy=policy_of(wiki))
    assert _summary(pooled) == _summary(serial) == _summary(threaded)


@pytest.mark.parametrize("whole_below", [-1, 1 << 40], ids=["large", "small"])
def test_runs_checked_on_the_workers_find_what_the_check_here_finds(
    wiki: Path, monkeypatch: pytest.MonkeyPatch, whole_below: int
) -> None:
    """On a pool every run is checked on a worker (records, re-assembly, comparison): a small one
    whole, a large one with the outcomes of its snapshots, which the workers checked first. The
    findings, field by field and in order, the runs' results and the excerpts are those of the
    check in this process, for a clean run, an edited result, a tampered snapshot and a run whose
    config cannot be read."""
    from publisher.parallel import pool as pool_module
    from publisher.wiki import runchecks

    paths = _three_runs(wiki)
    broken = sample_run(wiki, "delta", base_url="https://delta.example.org/")
    (broken.run.path / "config.json").write_text("{not json", encoding="utf-8")
    serial = run_preflight(wiki, workers=Workers(count=1), policy=policy_of(wiki))
    monkeypatch.setattr(pool_module, "IN_PROCESS_BYTES", 0)  # a pool even for these small runs
    monkeypatch.setattr(runchecks, "_WHOLE_RUN_BYTES", whole_below)
    pooled = run_preflight(
        wiki, workers=Workers(count=2), policy=policy_of(wiki)
    )  # worker processes: the outcome travels back pickled
    sent: list[str] = []
    whole = runchecks.check_whole_run
    monkeypatch.setattr(
        runchecks, "check_whole_run", lambda path, *a: sent.append((Path(path).name, bool(a[3]))) or whole(path, *a)
    )
    with ThreadPoolExecutor(max_workers=2) as executor:  # the patched task is seen on threads
        threaded = run_preflight(wiki, workers=Workers(executor=executor), policy=policy_of(wiki))
    fields = [(f.code, f.check, f.file, f.run, f.field, f.line) for f in serial.findings]
    assert [f.code for f in serial.findings if f.file == "runs/delta/config.json"] == ["SCHEMA_ERROR"]

    def results(pre: object) -> list[object]:
        return [
            (r.slug, r.result.model_dump(mode="json") | {"generated_at": ""} if r.result else None)
            for r in pre.runs  # type: ignore[attr-defined]
        ]

    for other in (threaded, pooled):
        assert [(f.code, f.check, f.file, f.run, f.field, f.line) for f in other.findings] == fields
        assert _summary(other) == _summary(serial)
        assert results(other) == results(serial)
    large = whole_below < 0  # a large run's check comes with its snapshots' outcomes
    assert sorted(sent) == sorted((p.name, large) for p in [*paths, broken.run.path])


def test_a_run_that_cannot_be_loaded_drops_its_snapshot_work(wiki: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """In this process the stored result's snapshots are declared before the run's config is
    read; a run whose config is broken is a finding, in its turn, and its snapshots are never read."""
    from publisher.kernel import snapshots as checks_module

    paths = _three_runs(wiki)
    (paths[0] / "config.json").write_text("{not json", encoding="utf-8")
    read: list[str] = []
    check_snapshot = checks_module.check_snapshot
    monkeypatch.setattr(
        checks_module, "check_snapshot", lambda task, *a: read.append(str(task[0])) or check_snapshot(task, *a)
    )
    pre = run_preflight(wiki, workers=Workers(count=1), policy=policy_of(wiki))
    assert read and not any("alpha" in folder for folder in read)
    broken = [f for f in pre.findings if f.run == "runs/alpha"]
    assert [(f.code, f.file) for f in broken] == [("SCHEMA_ERROR", "runs/alpha/config.json")]
    assert pre.findings.index(broken[0]) == 0  # alpha's turn comes first


def test_the_published_result_is_the_assembly_now(wiki: Path) -> None:
    """A result that equals its assembly is published from the model validated when it was read,
    which is the assembly's; a stored result that differs is never what is published."""
    from publisher.gate.result import Result

    _three_runs(wiki)
    pre = run_preflight(wiki, workers=Workers(count=1), policy=policy_of(wiki))
    by_slug = {r.slug: r for r in pre.runs}
    for slug in ("alpha", "beta"):
        ev = by_slug[slug]
        assert ev.check is not None and ev.result is not None
        assert ev.result == Result.model_validate(ev.check.result)
    assert by_slug["beta"].result.accepted[0].url != "https://evil.example/"  # type: ignore[union-attr]


def test_what_a_stored_result_names_is_read_without_trusting_it(wiki: Path) -> None:
    """The hint that hands a large run's snapshots out early names, for a valid result, exactly
    what the validated result declares; for a broken or hostile file it names nothing or only
    well-formed ids and integer spans, and never raises."""
    from publisher.gate.checks.assembler import stored_requests
    from publisher.gate.pipeline import prepare_stored
    from publisher.parallel import CheckedSnapshots

    run = sample_run(wiki).run
    reader = CheckedSnapshots(run.sources_dir)
    prepare_stored(run, reader).settle()  # what reading the stored result declares
    declared = sorted((sid, sorted(spans)) for _, sid, spans in reader.pending())
    assert declared and sorted(stored_requests(run)) == declared

    sid = "src-" + "a" * 64
    for body in (
        b"{not json",
        b"[1, 2]",
        b'{"accepted": "x", "sources": 3}',
        b'{"accepted": [1, {"source_ids": "x", "claims": [{"source_id": "../etc", "start": 0, "end": 1}]}]}',
    ):
        run.result_path.write_bytes(body)
        assert stored_requests(run) == []
    run.result_path.write_text(json.dumps({"sources": [{"source_id": sid}]}), encoding="utf-8")
    assert stored_requests(run) == [(sid, [])]  # a source the result lists without citing it
    claims = [{"source_id": sid, "start": True, "end": 2}, {"source_id": sid, "start": 1, "end": 2}]
    run.result_path.write_text(json.dumps({"accepted": [{"claims": claims}]}), encoding="utf-8")
    assert stored_requests(run) == [(sid, [(1, 2)])]


def test_a_large_runs_handed_out_checks_are_taken_only_when_its_stored_result_is_valid(wiki: Path) -> None:
    """The outcomes a large run's check receives were asked for by an unvalidated reading of its
    stored result; they are adopted only when the result validates (then they are exactly what it
    names). With a broken result they are left aside and whatever the run needs is read again."""
    from publisher.kernel.snapshots import check_snapshot
    from publisher.wiki.runchecks import check_whole_run

    run = sample_run(wiki).run
    from publisher.gate.checks.assembler import stored_requests

    # Marked so that an adopted outcome is told from one read again, even after pickling.
    handed = [
        replace(check_snapshot((str(run.sources_dir), sid, tuple(spans))), detail="handed over")
        for sid, spans in stored_requests(run)
    ]
    keys = run_preflight(wiki, workers=Workers(count=1), policy=policy_of(wiki)).policy.trusted_keys

    def adopted() -> list[object]:
        done = check_whole_run(str(run.path), str(wiki), keys, "runs/alpha", handed)
        assert done.check() is not None and done.sources is not None
        return [c for c in done.sources.values() if c.detail == "handed over"]

    assert adopted()
    run.result_path.write_text('{"accepted": []}', encoding="utf-8")  # not a valid result
    assert adopted() == []


def test_run_by_rel_follows_the_runs_as_they_are_appended(tmp_path: Path) -> None:
    from publisher.runs import Run
    from publisher.wiki.evidence import RunEvidence, WikiCheck
    from publisher.wiki.policy import Policy

    wiki = WikiCheck(tmp_path, Policy.unsigned(tmp_path))
    first = RunEvidence(Run(tmp_path / "runs" / "a"), "runs/a", "a", {})
    wiki.runs.append(first)
    assert wiki.run_by_rel("runs/a") is first and wiki.run_by_rel("runs/b") is None
    second = RunEvidence(Run(tmp_path / "runs" / "b"), "runs/b", "b", {})
    again = RunEvidence(Run(tmp_path / "runs" / "a"), "runs/a", "a2", {})
    wiki.runs += [second, again]
    assert wiki.run_by_rel("runs/b") is second
    assert wiki.run_by_rel("runs/a") is first  # the first listed, as a scan would find it


def test_a_worker_trims_its_heap_after_each_run(monkeypatch: pytest.MonkeyPatch, wiki: Path) -> None:
    """check_whole_run (a task of the wiki check's pool) trims the heap once its run is packed, so
    what the run freed does not stay resident under the next run's peak."""
    from publisher.acquire.signing import KeyRing
    from publisher.wiki import runchecks

    run = sample_run(wiki).run
    calls: list[int] = []
    monkeypatch.setattr(runchecks, "trim_heap", lambda: calls.append(1))
    done = runchecks.check_whole_run(str(run.path), str(wiki), KeyRing(), "runs/alpha")
    assert done.index is not None and done.index.accepted and calls == [1]


def test_a_worker_looks_at_its_heap_once_per_sixteen_small_runs(monkeypatch: pytest.MonkeyPatch, wiki: Path) -> None:
    """Asking glibc how much of the heap is free walks its free lists: after a small run (its
    snapshots under 1 MB) a worker asks only every sixteenth time; after a large run, or one of
    unknown size, at once."""
    from publisher.acquire.signing import KeyRing
    from publisher.wiki import runchecks

    run = sample_run(wiki).run
    calls: list[int] = []
    monkeypatch.setattr(runchecks, "trim_heap", lambda: calls.append(1))
    monkeypatch.setattr(runchecks, "_small_runs", 0)
    for _ in range(runchecks._TRIM_SMALL_RUNS - 1):
        runchecks.check_whole_run(str(run.path), str(wiki), KeyRing(), "runs/alpha", (), 1000)
    assert calls == []
    runchecks.check_whole_run(str(run.path), str(wiki), KeyRing(), "runs/alpha", (), 1000)
    assert calls == [1]
    runchecks.check_whole_run(str(run.path), str(wiki), KeyRing(), "runs/alpha", (), 2 * 1024 * 1024)
    assert calls == [1, 1]
    runchecks.check_whole_run(str(run.path), str(wiki), KeyRing(), "runs/alpha", (), 1000)
    assert calls == [1, 1], "the count starts again after any trim"


@pytest.mark.parametrize("kind", [*TAMPERINGS, "record-span"])
def test_a_small_run_checked_whole_on_a_worker_finds_each_tampering(wiki: Path, kind: str) -> None:
    """The worker's path (a small run checked whole, its heap looked at only now and then, its
    paths made once) still re-derives the run: each tampering of its result, records, log or
    snapshots is found in what it ships to the parent."""
    from publisher.acquire.signing import KeyRing
    from publisher.wiki import runchecks

    rb = sample_run(wiki)
    clean = runchecks.check_whole_run(str(rb.run.path), str(wiki), KeyRing(), "runs/alpha", (), 1000)
    assert clean.index is not None and not clean.index.refusals
    if kind == "record-span":
        record = sorted(rb.run.extractions_dir.glob("*.json"))[0]
        data = json.loads(record.read_text(encoding="utf-8"))
        data["spans"][0]["end"] = data["spans"][0]["end"] + 1
        record.write_text(json.dumps(data), encoding="utf-8")
        expected = "C-ASSEMBLER"  # the stored result is no longer this run's assembly
    else:
        expected = tamper(kind, rb)
    done = runchecks.check_whole_run(str(rb.run.path), str(wiki), KeyRing(), "runs/alpha", (), 1000)
    found = {f.code for f in done.index.refusals} if done.index is not None else set()
    check = done.check()
    found |= {f.code for f in check.findings} if check is not None else set()
    found |= {done.unreadable.code} if done.unreadable is not None else set()
    assert expected in found


@pytest.mark.parametrize("pooled", [False, True])
def test_claims_come_from_the_assembly_as_the_whole_result_gives_them(wiki: Path, pooled: bool) -> None:
    """A run's accepted artifacts (what promoted blocks are rendered from) are read from the JSON
    its check wrote out, validated on their own: the same models, in the same order, as the
    whole result validated from the check gives; the stored result is not read for them."""
    from publisher.gate.result import Result

    rb = sample_run(wiki)
    promote(rb.run.path, wiki, policy=policy_of(wiki))
    executor = ThreadPoolExecutor(2) if pooled else None
    try:
        workers = Workers(executor=executor) if executor is not None else Workers(count=1)
        checked = run_preflight(wiki, workers=workers, policy=policy_of(wiki))
    finally:
        if executor is not None:
            executor.shutdown()
    (ev,) = checked.runs
    check = ev.check
    assert check is not None
    whole = Result.model_validate(check.result).accepted
    rb.run.result_path.unlink()  # nothing below reads the stored file
    assert ev.accepted_artifacts() == whole and whole
    claims = list(ev.claims(checked))
    assert [artifact for artifact, _ in claims] == list(whole)
    assert all(verified for _, verified in claims)


def test_no_normal_form_stays_resident_after_a_run_or_the_claims(monkeypatch: pytest.MonkeyPatch, wiki: Path) -> None:
    """The locator keeps the last normal form it built whatever its length (a tool server searching
    one snapshot again and again); a worker's run and the wiki's claims let theirs go when done, so
    a large snapshot's (80 bytes a code point) does not stay resident under the next run or the site."""
    from publisher.acquire.signing import KeyRing
    from publisher.kernel import locate as locate_module
    from publisher.wiki import check as check_module
    from publisher.wiki import runchecks

    run = sample_run(wiki).run
    locate_module.normal_form("a text some search normalised " * 40)
    assert locate_module._remembered
    runchecks.check_whole_run(str(run.path), str(wiki), KeyRing(), "runs/alpha")
    assert not locate_module._remembered
    real = check_module.check_claims

    def claims_that_search(*args: object) -> None:
        real(*args)  # type: ignore[arg-type]
        locate_module.normal_form("a reviewed snapshot's text " * 40)

    monkeypatch.setattr(check_module, "check_claims", claims_that_search)
    assert run_preflight(wiki, workers=Workers(count=1), policy=policy_of(wiki)).ok
    assert not locate_module._remembered


@pytest.mark.parametrize("start,end", [(2**40, 2**40 + 3), (2**32 - 1, 2**32 + 1), (9, 4), ("alias", 0)])
def test_a_concept_citing_a_span_no_table_can_hold_is_a_finding(wiki: Path, start: int | str, end: int) -> None:
    """Offsets past what the compact span tables hold (or reversed) are simply not accepted spans:
    a finding with its code, never an error from the tables. ``alias``: the pair whose one-int code
    would equal an accepted span's if offsets past 2**32 were let in (start - 1, end + 2**32)."""
    rb = sample_run(wiki)
    promote(rb.run.path, wiki, policy=policy_of(wiki))
    pre = run_preflight(wiki, policy=policy_of(wiki))
    assert pre.ok
    sid = next(iter(rb.texts))
    if start == "alias":
        sid, accepted_start, accepted_end = next(key for key in pre.excerpts if key[1] >= 1)
        start, end = accepted_start - 1, accepted_end + 2**32
    assert isinstance(start, int)
    (concept,) = (wiki / "concepts").glob("*.md")
    ref = format_ref(sid, start, end, "x")
    concept.write_text(concept.read_text("utf-8") + f"\nFar.[^far]\n\n[^far]: {ref}\n", encoding="utf-8")
    assert _codes(wiki) == {"SOURCE_OUTSIDE_ACCEPTED"}


def test_concept_tasks_keep_order_and_share_large_concepts_among_the_workers(tmp_path: Path) -> None:
    """Concepts go to the pool in order, at most sixteen a task; a few large ones are cut small
    enough that two workers finish together, and a file that cannot be measured counts nothing."""
    from publisher.wiki import check

    small = []
    for n in range(40):
        path = tmp_path / f"s{n:02d}.md"
        path.write_text("x" * 100, encoding="utf-8")
        small.append(path)
    tasks = check._concept_tasks(small, 2)
    assert [p for task in tasks for p in task] == small
    assert [len(task) for task in tasks] == [16, 16, 8]
    large = []
    for n in range(12):
        path = tmp_path / f"l{n:02d}.md"
        path.write_bytes(b"y" * (2 << 20))
        large.append(path)
    tasks = check._concept_tasks([*large, tmp_path / "missing.md"], 2)
    assert [p for task in tasks for p in task] == [*large, tmp_path / "missing.md"]
    assert len(tasks) >= 8 and max(len(task) for task in tasks) <= 2
