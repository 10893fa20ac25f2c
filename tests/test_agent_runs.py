"""Who proposed a claim: agent runs recorded from their traces, and runs that are not independent
(CONTRACT section 17).

Two runs quote the same article for one claim. When both were written by agents with the same
model profile and the same prompt, they are one class of evidence: the claim counts one
independent run, and its lineage carries the dependence edges between them.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from pathlib import Path

import pytest
from _claims_helpers import CONCEPT, ClaimsWiki, claims_wiki, corpus_rows
from _policy import policy_of
from _wiki_helpers import Claim, RunBuilder, tree_digest
from conftest import CliResult
from test_claims_assess import assess

from publisher.acquire.agentrun import AGENT_RUNS_FILE, BLOBS_DIR, run_classes
from publisher.wiki.check import check_wiki
from publisher.wiki.claims.counts import claims_document
from publisher.wiki.concepts import parse_concept
from publisher.wiki.promote import promote

Cli = Callable[..., CliResult]

PROMPT = "Find randomised trials of the intervention and extract their primary outcomes."


def trace(tmp_path: Path, name: str, profile: str, prompt: str = PROMPT) -> Path:
    path = tmp_path / f"{name}.json"
    path.write_text(
        json.dumps(
            {
                "requested_model_profile": profile,
                "reported_model_identity": f"{profile}-20261201",
                "prompt": prompt,
                "answer": f"The answer of {name}.",
                "tools": [{"name": "source_fetch"}],
                "retrieval_infrastructure": {"search": "pubmed-eutils"},
            }
        ),
        encoding="utf-8",
    )
    return path


@pytest.fixture
def two_runs(tmp_path: Path, corpus_dir: Path) -> tuple[ClaimsWiki, RunBuilder, str, str]:
    """The claims wiki (run ``trials``) and a second run ``again`` quoting article A's full text,
    promoted into the same concept; returns one label of each run."""
    cw = claims_wiki(tmp_path / "wiki", corpus_dir)
    rows = corpus_rows(corpus_dir)
    result = (cw.rb.run.path / "outputs" / "result.json").read_text(encoding="utf-8")
    pmcid = next(p for p in sorted(rows) if f"PMC{p}" in result)
    again = RunBuilder(cw.wiki, "again", question="The same question, asked again.")
    text = (corpus_dir / "evidence-inference" / "texts" / f"PMC{pmcid}.txt").read_text(encoding="utf-8")
    sid = again.source(
        f"https://europepmc.org/article/PMC/PMC{pmcid}",  # another snapshot of the same work
        text,
        paper={"pmid": None, "doi": None, "pmcid": f"PMC{pmcid}"},
    )
    row = rows[pmcid][0]
    again.extraction(f"pmcid:PMC{pmcid}", [Claim("spans[0]", row["label"], sid, row["start"], row["end"])])
    again.assemble()
    promote(again.run.path, cw.wiki, concept=CONCEPT, policy=policy_of(cw.wiki))
    doc = parse_concept(cw.concept.read_text(encoding="utf-8"))
    ours = [n.label for n in doc.footnotes if any(r.source_id == sid for r in n.refs)]
    first = next(n.label for n in doc.footnotes if any(r.source_id == cw.a_full for r in n.refs))
    return cw, again, first, ours[0]


def claim_of(wiki: Path, claim_id: str) -> dict[str, object]:
    doc = claims_document(check_wiki(wiki, policy=policy_of(wiki)))
    (view,) = [c for c in doc["claims"] if c["id"] == claim_id]
    return view


def test_two_runs_with_one_profile_and_prompt_are_one_independent_run(
    cli: Cli, tmp_path: Path, two_runs: tuple[ClaimsWiki, RunBuilder, str, str]
) -> None:
    cw, again, first, second = two_runs
    out = assess(cli, cw, "c1", "It helps.", "S", "--evidence", first, "--evidence", second)
    assert out.status == 0, out.err
    # No agent recorded: nothing says the runs share anything, each is its own class.
    view = claim_of(cw.wiki, "c1")
    assert view["counts"]["independent_runs"] == 2  # type: ignore[index]
    for run, name in ((cw.rb.run.path, "a"), (again.run.path, "b")):
        done = cli("run", "agent", "--run-dir", run, "--trace", trace(tmp_path, name, "research-large"), "--json")
        assert done.status == 0, done.err
    view = claim_of(cw.wiki, "c1")
    assert view["counts"]["independent_runs"] == 1  # type: ignore[index]
    kinds = {e["kind"] for e in view["lineage"]["dependence"]}  # type: ignore[index]
    assert {"model_profile", "prompt", "retrieval_infrastructure", "upstream_citation"} <= kinds
    assert {p["requested_model_profile"] for p in view["proposed_by"]} == {"research-large"}  # type: ignore[attr-defined]
    # Another prompt makes the second run a class of its own (the latest record of a run counts).
    done = cli("run", "agent", "--run-dir", again.run.path,
               "--trace", trace(tmp_path, "c", "research-large", "Another question."), "--json")  # fmt: skip
    assert done.status == 0, done.err
    view = claim_of(cw.wiki, "c1")
    assert view["counts"]["independent_runs"] == 2  # type: ignore[index]
    assert "prompt" not in {e["kind"] for e in view["lineage"]["dependence"]}  # type: ignore[index]


def test_the_trace_is_kept_content_addressed_and_the_entry_chained(cli: Cli, tmp_path: Path, corpus_dir: Path) -> None:
    cw = claims_wiki(tmp_path / "wiki", corpus_dir)
    run = cw.rb.run.path
    done = cli("run", "agent", "--run-dir", run, "--trace", trace(tmp_path, "a", "research-large"), "--json")
    assert done.status == 0, done.err
    entry = done.json()["agent_run"]
    assert entry["type"] == "agent_run" and entry["prev"] is None and entry["run"].startswith("trials@")
    assert entry["prompt_sha256"] == hashlib.sha256(PROMPT.encode()).hexdigest()
    kept = run / BLOBS_DIR / entry["prompt_sha256"]
    assert kept.read_text(encoding="utf-8") == PROMPT
    before = tree_digest(run)
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"prompt": "p", "answer": "a"}), encoding="utf-8")  # no model profile
    refused = cli("run", "agent", "--run-dir", run, "--trace", bad, "--json")
    assert refused.status == 2 and tree_digest(run) == before
    again = cli("run", "agent", "--run-dir", run, "--trace", trace(tmp_path, "b", "small"), "--json")
    lines = (run / AGENT_RUNS_FILE).read_bytes().splitlines()
    assert again.json()["agent_run"]["prev"] == "sha256:" + hashlib.sha256(lines[0]).hexdigest()
    # Recording an agent leaves the run's result current: its event log is untouched.
    assert check_wiki(cw.wiki, policy=policy_of(cw.wiki)).ok


def test_run_classes_group_by_profile_and_prompt() -> None:
    from types import SimpleNamespace

    one = SimpleNamespace(requested_model_profile="p", prompt_sha256="a" * 64)
    same = SimpleNamespace(requested_model_profile="p", prompt_sha256="a" * 64)
    other = SimpleNamespace(requested_model_profile="q", prompt_sha256="a" * 64)
    assert len(run_classes([("r1", one), ("r2", same)])) == 1  # type: ignore[list-item]
    assert len(run_classes([("r1", one), ("r2", other)])) == 2  # type: ignore[list-item]
    assert len(run_classes([("r1", None), ("r2", None)])) == 2


def test_a_trace_is_never_written_through_a_linked_agent_folder(tmp_path: Path) -> None:
    """The trace's write-once copy goes into the run's ``agent/``: a link there is refused."""
    from publisher.acquire import agentrun
    from publisher.kernel._fs import LinkedFolderError
    from publisher.runs import Run

    run_dir = tmp_path / "run"
    run_dir.mkdir()
    outside = tmp_path / "outside"
    outside.mkdir()
    (run_dir / agentrun.BLOBS_DIR).symlink_to(outside)
    with pytest.raises(LinkedFolderError):
        agentrun._keep(Run(run_dir), b"a trace")
    assert list(outside.iterdir()) == []
