"""Guards for checks that once survived a mutation (docs/mutation.md, scripts/mutation.py).

Each test attacks exactly one check, with everything else left intact, so that disabling that
check (and nothing else) makes the test fail.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
from _policy import keys_of, options_of, policy_of
from _wiki_helpers import WARNING_HOOK, build_wiki, make_wiki, refused_build, sample_run, tree_digest, writable
from mkdocs.exceptions import Abort

from publisher.gate.assemble import assemble_run
from publisher.gate.checks.publication import refusals as publication_refusals
from publisher.gate.inputs import RunOptions
from publisher.gate.pipeline import check_run
from publisher.kernel.canonical import canonical_bytes
from publisher.kernel.reasons import Reason
from publisher.wiki.check import check_wiki
from publisher.wiki.promote import promote


def _rechain(path: Path, change_line: int) -> None:
    """Rewrite the log with line ``change_line`` (1-based) altered and every ``prev`` recomputed:
    a log whose chain is intact, but whose history differs from the one a result read."""
    lines = path.read_bytes().split(b"\n")[:-1]
    prev = None
    out = []
    for number, line in enumerate(lines, start=1):
        event = json.loads(line)
        if number == change_line:
            event["detail"] = "rewritten history"
        event["prev"] = prev
        data = canonical_bytes(event)
        prev = "sha256:" + hashlib.sha256(data).hexdigest()
        out.append(data)
    writable(path).write_bytes(b"\n".join(out) + b"\n")


def test_a_broken_chain_voids_every_fetch_event(tmp_path: Path) -> None:
    wiki = make_wiki(tmp_path / "wiki")
    rb = sample_run(wiki)
    lines = rb.run.events_path.read_bytes().split(b"\n")
    lines[0] = lines[0].replace(b"test fixture", b"test fixturE")  # line 2's prev no longer matches
    writable(rb.run.events_path).write_bytes(b"\n".join(lines))
    assembly = assemble_run(rb.run, RunOptions(keys_of(wiki), wiki_root=wiki), write=False)
    codes = {f.code for f in assembly.findings}
    assert codes == {"NO_FRESH_FETCH"} and not assembly.result["accepted"]
    assert [f.line for f in assembly.log.findings] == [2]  # the broken link, which voids every fetch
    assert not any(hit.fresh for hit in assembly.freshness.values())


def test_a_rechained_log_that_rewrites_history_fails_the_log_check(tmp_path: Path) -> None:
    wiki = make_wiki(tmp_path / "wiki")
    rb = sample_run(wiki)
    _rechain(rb.run.events_path, 1)
    rc = check_run(rb.run, RunOptions(keys_of(wiki), wiki_root=wiki))
    assert rc.failed("C-EVENT-LOG"), rc.check("C-EVENT-LOG")
    assert "C-EVENT-LOG" in {f.code for f in check_wiki(wiki, policy=policy_of(wiki)).findings}


_DROP_EXCERPT = """
import re

def on_post_page(output, page, config):
    if page.file.src_uri.startswith("concepts/") and not page.file.src_uri.endswith("index.md"):
        return re.sub(r'<span class="evidence-excerpt"[^>]*>.*?</span>', "", output, count=1, flags=re.S)
    return output
"""

_MOVE_HIGHLIGHT = """
import re

def on_post_page(output, page, config):
    if page.file.src_uri.startswith("sources/src-"):
        return re.sub(r'(<mark class="evidence-span"[^>]*>)([^<])', r"\\2\\1", output, count=1)
    return output
"""

_DROP_WINDOW = """
import re

def on_post_page(output, page, config):
    if page.file.src_uri.startswith("sources/src-"):
        return re.sub(r'<pre class="evidence-window".*?</pre>', "", output, count=1, flags=re.S)
    return output
"""


@pytest.mark.parametrize(
    ("source", "extra"),
    [
        (_DROP_EXCERPT, ""),
        (_MOVE_HIGHLIGHT, ""),
        (_DROP_WINDOW, "extra:\n  evidence:\n    source_text: windows\n    context: 5\n"),
    ],
    ids=["dropped-excerpt", "moved-highlight", "dropped-window"],
)
def test_a_plugin_that_alters_verified_evidence_fails_the_build(tmp_path: Path, source: str, extra: str) -> None:
    wiki = make_wiki(tmp_path / "wiki", extra=extra)
    rb = sample_run(wiki)
    promote(rb.run.path, wiki, policy=policy_of(wiki))
    build_wiki(wiki)
    before = tree_digest(wiki / "site")
    (wiki / "hooks" / "extra.py").write_text(source, encoding="utf-8")
    config = (wiki / "mkdocs.yml").read_text(encoding="utf-8")
    (wiki / "mkdocs.yml").write_text(
        config.replace("  - hooks/evidence.py\n", "  - hooks/evidence.py\n  - hooks/extra.py\n")
    )
    findings = refused_build(wiki)
    assert tree_digest(wiki / "site") == before
    altered = "concepts/" if source is _DROP_EXCERPT else "sources/src-"
    assert findings and all(f.reason is Reason.EXCERPT_MISMATCH and f.file.startswith(altered) for f in findings)


# --- the stored result, read by the pipeline ------------------------------------------------


def test_a_result_without_its_inputs_list_is_stale_not_edited(tmp_path: Path) -> None:
    """A result written before results carried their inputs is stale (re-assemble), not forged;
    the same result with any other difference is edited."""
    wiki = make_wiki(tmp_path / "wiki")
    rb = sample_run(wiki)
    data = json.loads(rb.run.result_path.read_text(encoding="utf-8"))
    del data["inputs"]
    writable(rb.run.result_path).write_text(json.dumps(data), encoding="utf-8")
    rc = check_run(rb.run, RunOptions(keys_of(wiki), wiki_root=wiki))
    assert rc.status("C-ASSEMBLER") == "warn" and rc.verdict == "Inconclusive"
    assert "C-ASSEMBLER" in {f.code for f in publication_refusals(rc)}
    data["accepted"][0]["claims"][0]["claim"] = "edited"
    rb.run.result_path.write_text(json.dumps(data), encoding="utf-8")
    assert check_run(rb.run, RunOptions(keys_of(wiki), wiki_root=wiki)).status("C-ASSEMBLER") == "fail"


def test_verification_says_whether_a_result_was_there(tmp_path: Path) -> None:
    wiki = make_wiki(tmp_path / "wiki")
    rb = sample_run(wiki)
    assert check_run(rb.run, RunOptions(keys_of(wiki), wiki_root=wiki)).report["result"]["present"] is True
    writable(rb.run.result_path).write_text("{not json", encoding="utf-8")
    assert check_run(rb.run, RunOptions(keys_of(wiki), wiki_root=wiki)).report["result"]["present"] is True
    rb.run.result_path.unlink()
    assert check_run(rb.run, RunOptions(keys_of(wiki), wiki_root=wiki)).report["result"]["present"] is False


def test_a_head_recorded_for_an_empty_log_fails_the_log_check(tmp_path: Path) -> None:
    wiki = make_wiki(tmp_path / "wiki")
    rb = sample_run(wiki)
    data = json.loads(rb.run.result_path.read_text(encoding="utf-8"))
    data["log"]["events"] = 0
    writable(rb.run.result_path).write_text(json.dumps(data), encoding="utf-8")
    rc = check_run(rb.run, RunOptions(keys_of(wiki), wiki_root=wiki))
    assert rc.failed("C-EVENT-LOG"), rc.check("C-EVENT-LOG")


def test_a_gate_failure_found_without_the_gate_lists_what_failed(tmp_path: Path) -> None:
    """A run assembled with --gate (config gate off) whose gate failed: checked without --gate, the
    refusal names the gate failure and lists the unresolved artifact's own finding under it."""
    wiki = make_wiki(tmp_path / "wiki")
    rb = sample_run(wiki)
    rb.unresolved()
    assert rb.assemble(gate=True)["gate"]["verdict"] == "fail"
    refusals = publication_refusals(check_run(rb.run, RunOptions(keys_of(wiki), wiki_root=wiki)))
    (root,) = [f for f in refusals if f.code == "C-GATE" and f.cause is None]
    assert {f.code for f in refusals if f.cause == root.key} == {"NO_PAPER_ID"}


# --- URLs a record cites, and ids a footnote states ------------------------------------------


def test_a_record_may_cite_another_retrieval_of_its_own_paper_only(tmp_path: Path) -> None:
    from _upstream_helpers import TRIAL, upstream_run

    from publisher.runs import Run

    up = upstream_run(tmp_path)
    sid = up.snapshot()
    supplement = "https://journal.example/trial/supplement"
    up.snapshot("Supplementary tables of the trial.", url=supplement)
    elsewhere = "https://journal.example/another-study"
    up.snapshot("Another study.", url=elsewhere, paper={"pmid": "27182818", "doi": None, "pmcid": None})
    span = up.span(sid, "Sleep-onset latency fell by 7.9 minutes", text=TRIAL)
    up.extraction([span], limitations=f"Dropouts are listed in {supplement}.")
    assert assemble_run(Run(up.path), options_of(Run(up.path)), write=False).findings == []
    up.extraction([span], limitations=f"Compare {elsewhere}.")
    codes = {(f.code, f.field) for f in assemble_run(Run(up.path), options_of(Run(up.path)), write=False).findings}
    assert codes == {("URL_NOT_RETRIEVED", "limitations")}


@pytest.mark.parametrize("which", ["corpus", "snapshot"])
def test_a_stated_id_must_agree_with_everything_known_of_the_label(tmp_path: Path, which: str) -> None:
    """With a corpus, a footnote's stated DOI must agree with the corpus record AND the snapshot."""
    from _upstream_helpers import PAPER, corpus_entry, upstream_run

    from publisher.runs import Run

    up = upstream_run(tmp_path)
    sid = up.snapshot()
    corpus_doi = {**PAPER, "doi": "10.5555/corpus.says"}
    up.corpus(corpus_entry(paper=corpus_doi, source_ids=[sid]))
    up.extraction([up.span(sid, "Sleep-onset latency fell by 7.9 minutes")])
    stated = corpus_doi["doi"] if which == "corpus" else PAPER["doi"]
    up.report("Light helps.[^pubmed-31415926]", [f"[^pubmed-31415926]: PMID 31415926. DOI {stated}."])
    findings = assemble_run(Run(up.path), options_of(Run(up.path)), write=False).findings
    assert {(f.code, f.field) for f in findings if f.artifact_id.startswith("report:")} == {
        ("SOURCE_OUTSIDE_ACCEPTED", "paper_ids")
    }


def test_an_empty_evidence_set_is_refused_once_whatever_the_gate(tmp_path: Path) -> None:
    from _wiki_helpers import RunBuilder

    wiki = make_wiki(tmp_path / "wiki")
    for gate in (False, True):
        rb = RunBuilder(wiki, f"empty-{gate}")
        rb.source("https://example.org/a", "A text nobody cited.")
        rb.assemble(gate=gate)
        refusals = publication_refusals(check_run(rb.run, RunOptions(keys_of(wiki), wiki_root=wiki)))
        assert [f.code for f in refusals] == ["NO_SPANS"], (gate, [f.one_line() for f in refusals])


def test_other_reason_codes_of_the_assembly_are_reported_under_c_gate(tmp_path: Path) -> None:
    wiki = make_wiki(tmp_path / "wiki")
    rb = sample_run(wiki)
    rb.unresolved()
    rb.assemble()
    rc = check_run(rb.run, RunOptions(keys_of(wiki), wiki_root=wiki))
    assert {(f.check, f.code, f.severity) for f in rc.findings} == {("C-GATE", "NO_PAPER_ID", "warn")}
    assert rc.verdict == "Inconclusive" and rc.exit_status == 0
    assert check_run(rb.run, RunOptions(keys_of(wiki), wiki_root=wiki), gate=True).exit_status == 1


def test_a_changed_pdf_is_named_by_its_file(tmp_path: Path) -> None:
    from _wiki_helpers import tamper

    wiki = make_wiki(tmp_path / "wiki")
    rb = sample_run(wiki)
    tamper("pdf-asset", rb)
    rc = check_run(rb.run, RunOptions(keys_of(wiki), wiki_root=wiki))
    (root,) = [f for f in rc.findings if f.code == "ASSET_HASH_MISMATCH" and f.cause is None]
    assert root.check == "C-SNAPSHOT" and root.file.startswith("runs/") is False
    assert root.file.startswith("assets/papers/") and root.file.endswith(".pdf")


def test_a_concept_promoted_before_its_run_changed_gets_a_notice(tmp_path: Path) -> None:
    wiki = make_wiki(tmp_path / "wiki")
    rb = sample_run(wiki)
    promote(rb.run.path, wiki, policy=policy_of(wiki))
    assert check_wiki(wiki, policy=policy_of(wiki)).notices == []
    rb.unresolved()
    rb.assemble()  # the same accepted evidence, other inputs: the concept still verifies
    wiki_check = check_wiki(wiki, policy=policy_of(wiki))
    assert wiki_check.ok and any("re-promote" in n for n in wiki_check.notices), wiki_check.notices


@pytest.mark.parametrize(
    ("quote", "at"),
    [
        ("Sleep-onset latency fell by 7.8 minutes", 30),
        ("Sleep-onset latency", 19),
        ("Sleep-onset latency fell by 7.9 minutes!", 39),
    ],
    ids=["changed", "shorter", "longer"],
)
def test_a_quote_that_differs_names_the_first_code_point_that_differs(tmp_path: Path, quote: str, at: int) -> None:
    """A record's quoted text that is not the re-slice is EXCERPT_MISMATCH, and the finding says where
    the two part (the first differing code point, or the end of the shorter one)."""
    from _upstream_helpers import upstream_run

    from publisher.runs import Run

    up = upstream_run(tmp_path)
    sid = up.snapshot()
    span = up.span(sid, "Sleep-onset latency fell by 7.9 minutes")
    span["text"] = quote  # what the record says the span reads
    up.extraction([span])
    (finding,) = assemble_run(Run(up.path), options_of(Run(up.path)), write=False).findings
    assert finding.code == "EXCERPT_MISMATCH"
    assert finding.differs_at == at and finding.to_dict()["differs_at"] == at


def test_two_records_of_one_artifact_each_name_the_other(tmp_path: Path) -> None:
    """Two records claiming one artifact id contradict each other: SCHEMA_ERROR on both, each
    finding naming the other record (never itself)."""
    from _upstream_helpers import upstream_run

    from publisher.runs import Run

    up = upstream_run(tmp_path)
    sid = up.snapshot()
    span = up.span(sid, "Sleep-onset latency fell by 7.9 minutes")
    up.extraction([span], name="first")
    up.extraction([span], name="second")
    findings = [
        f
        for f in assemble_run(Run(up.path), options_of(Run(up.path)), write=False).findings
        if f.code == "SCHEMA_ERROR"
    ]
    assert len(findings) == 2
    for finding in findings:
        own = "first" if "first" in finding.file else "second"
        other = "second" if own == "first" else "first"
        assert f"{other}.json" in finding.detail and f"{own}.json" not in finding.detail


def test_the_exit_status_of_a_check_follows_its_verdict_and_the_gate(tmp_path: Path) -> None:
    """Verified exits 0 with the gate on or off; Inconclusive exits 1 only with the gate on."""
    wiki = make_wiki(tmp_path / "wiki")
    rb = sample_run(wiki)
    for gate in (False, True):
        verified = check_run(rb.run, RunOptions(keys_of(wiki), wiki_root=wiki), gate=gate)
        assert (verified.verdict, verified.exit_status) == ("Verified", 0), gate
    rb.record(
        "extraction",
        "later",
        {"schema_version": 1, "evidence_id": "pmid:777", "pmid": "777", "design": "rct", "spans": []},
    )  # an input changed since assembly: the result is stale, a warning with the gate off
    stale = check_run(rb.run, RunOptions(keys_of(wiki), wiki_root=wiki), gate=False)
    assert (stale.verdict, stale.exit_status) == ("Inconclusive", 0)
    assert check_run(rb.run, RunOptions(keys_of(wiki), wiki_root=wiki), gate=True).exit_status == 1


def test_a_footnote_on_a_snapshot_that_fails_names_the_snapshot_not_the_claim(tmp_path: Path) -> None:
    """A concept footnote quoting a range no result accepted, of a snapshot that no longer verifies:
    the finding is the snapshot's (SNAPSHOT_HASH_MISMATCH, under its root), not 'not accepted'."""
    import re

    from _wiki_helpers import tamper

    wiki = make_wiki(tmp_path / "wiki")
    rb = sample_run(wiki)
    promote(rb.run.path, wiki, policy=policy_of(wiki))
    sid = next(iter(rb.texts))
    concept = next((wiki / "concepts").glob("*.md"))
    text = concept.read_text(encoding="utf-8")
    first = re.search(re.escape(sid) + r"#(\d+)-(\d+)", text)
    assert first is not None
    start, end = int(first.group(1)), int(first.group(2)) - 1  # a range of that source no result accepted
    writable(concept).write_text(text[: first.start()] + f"{sid}#{start}-{end}" + text[first.end() :], "utf-8")
    assert tamper("snapshot-text", rb) == "SNAPSHOT_HASH_MISMATCH"
    every = check_wiki(wiki, policy=policy_of(wiki)).findings
    (root,) = [f for f in every if f.check == "C-SNAPSHOT" and f.cause is None and f.source_id == sid]
    findings = [f for f in every if f.file.endswith(concept.name) and (f.start, f.end) == (start, end)]
    assert [(f.code, f.cause) for f in findings] == [("SNAPSHOT_HASH_MISMATCH", root.key)]


def test_concept_footnotes_broken_by_a_damaged_log_are_grouped_under_the_log(tmp_path: Path) -> None:
    """A damaged event log voids the run's fresh fetches: each concept footnote that quoted them is
    NO_FRESH_FETCH with the log's root finding as its cause (one cause, its consequences under it)."""
    from _wiki_helpers import tamper

    wiki = make_wiki(tmp_path / "wiki")
    rb = sample_run(wiki)
    promote(rb.run.path, wiki, policy=policy_of(wiki))
    assert tamper("event-line", rb) == "C-EVENT-LOG"
    findings = check_wiki(wiki, policy=policy_of(wiki)).findings
    (log_root,) = [f for f in findings if f.check == "C-EVENT-LOG" and f.cause is None]
    footnotes = [f for f in findings if f.file.startswith("concepts/")]
    assert footnotes and {(f.code, f.cause) for f in footnotes} == {("NO_FRESH_FETCH", log_root.key)}


@pytest.mark.parametrize(
    ("name", "data"),
    [
        ("corpus.jsonl", b"{not json\n"),
        ("workspace/verifier.json", b"[1, 2"),
        ("outputs/report.md", b"\xff\xfe not UTF-8"),
        ("outputs/verification.json", b'{"unsupported_claims": 7}'),
    ],
)
def test_an_input_that_cannot_be_read_is_a_finding_on_that_file(tmp_path: Path, name: str, data: bytes) -> None:
    """A run whose input cannot be read is one SCHEMA_ERROR finding, placed on that file (not on
    the run's config), and the run publishes nothing."""
    wiki = make_wiki(tmp_path / "wiki")
    rb = sample_run(wiki)
    target = rb.run.path / name
    if target.exists():
        writable(target)
    target.write_bytes(data)
    findings = check_wiki(wiki, policy=policy_of(wiki)).findings
    assert [(f.code, f.file) for f in findings] == [("SCHEMA_ERROR", f"runs/alpha/{name}")]


def test_each_source_lists_the_runs_that_hold_it_once(tmp_path: Path) -> None:
    """The source pages' 'held by runs' comes from here: every accepted source names its run, once."""
    wiki = make_wiki(tmp_path / "wiki")
    sample_run(wiki)
    sources = check_wiki(wiki, policy=policy_of(wiki)).sources
    assert sources and all(info.holders == ["alpha"] for info in sources.values())


_LEGACY_HOOK = '''"""A hook file that predates the plugin: no on_startup, so publication ends on_post_build."""

from publisher.site.hook import on_config, on_serve

__all__ = ["on_config", "on_serve"]
'''


def test_a_strict_warning_keeps_the_site_under_a_hook_file_that_predates_the_plugin(tmp_path: Path) -> None:
    """Where publication happens at the end of the hook's own on_post_build (no on_startup, so no
    later point), only the hook's strict-mode check keeps a build that MkDocs is about to abort
    from being published."""
    wiki = make_wiki(tmp_path / "wiki", hooks={"warn.py": WARNING_HOOK})
    rb = sample_run(wiki)
    promote(rb.run.path, wiki, policy=policy_of(wiki))
    (wiki / "hooks" / "evidence.py").write_text(_LEGACY_HOOK, encoding="utf-8")
    build_wiki(wiki)
    before = tree_digest(wiki / "site")
    (wiki / "docs" / "index.md").write_text("# Home\n\nChanged.\n", encoding="utf-8")
    with pytest.raises(Abort, match="strict"):
        build_wiki(wiki, strict=True)
    assert tree_digest(wiki / "site") == before
    build_wiki(wiki)
    assert "Changed." in (wiki / "site" / "index.html").read_text(encoding="utf-8")
