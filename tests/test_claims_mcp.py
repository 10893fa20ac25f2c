"""The claim tools of ``publisher mcp`` on real articles: the agent's server runs reviews and
validates assessments exactly as ``publisher review`` and ``publisher assess`` do (same records,
same log, rejected attempts too), and cannot create a missingness record or declare a review
complete."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from _claims_helpers import CONCEPT, ClaimsWiki, claims_wiki

mcp = pytest.importorskip("mcp")

from mcp import ClientSession, StdioServerParameters  # noqa: E402
from mcp.client.stdio import stdio_client  # noqa: E402

from publisher.mcp.tools import (  # noqa: E402
    TOOLS,
    ToolProblem,
    Workspace,
    build_evidence_matrix,
    list_claims_awaiting_review,
    run_document_review,
    validate_evidence_assessment,
)
from publisher.wiki.claims.counts import ADMISSIBLE  # noqa: E402
from publisher.wiki.claims.log import read_assessments  # noqa: E402

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture
def cw(tmp_path: Path, corpus_dir: Path) -> ClaimsWiki:
    return claims_wiki(tmp_path / "wiki", corpus_dir)


def test_reviews_and_assessments_through_the_tools(cw: ClaimsWiki) -> None:
    ws = Workspace(cw.wiki)
    claim = "The trial reported serious adverse events."
    review = run_document_review(ws, cw.a_full, claim, ["serious adverse"], ["does it report harms?"])
    record = review["record"]
    assert record["protocol_complete"] is True and record["semantic_search_executed"] is False
    assert record["semantic_queries_declared_not_executed"] == ["does it report harms?"]
    again = run_document_review(ws, cw.a_full, claim, ["serious adverse"], ["does it report harms?"])
    assert again["review_id"] == review["review_id"] and again["created"] is False
    rejected = validate_evidence_assessment(ws, CONCEPT, "c1", "It helps.", "S", evidence=["MADE_UP"])
    assert rejected["admitted"] is False and rejected["guard"] == "EVIDENCE_UNRESOLVED"
    confident = validate_evidence_assessment(ws, CONCEPT, "c1", "It helps.", "S")
    assert confident["guard"] == "EVIDENCE_REQUIRED"
    ns = validate_evidence_assessment(ws, CONCEPT, "ns1", claim, "NS", review=review["review_id"])
    assert ns["admitted"] is True and ns["meaning"] == ADMISSIBLE.format(status="not_supported")
    entries = read_assessments(cw.wiki).events
    assert [(e.admitted, e.sig) for e in entries] == [(False, None), (False, None), (True, None)]
    matrix = build_evidence_matrix(ws)
    (shown,) = matrix["claims"]
    assert shown["id"] == "ns1" and shown["code"] == "NS" and shown["provenance_now"]["valid"] is True
    # The agent can see what awaits a person's review; nothing it can call writes a warrant.
    awaiting = list_claims_awaiting_review(ws)
    assert [(c["id"], c["warrant"]) for c in awaiting["awaiting"]] == [("ns1", "author_proposal")]
    with pytest.raises(ToolProblem):
        validate_evidence_assessment(ws, CONCEPT, "c2", "X.", "likely")


def test_the_matrix_of_a_wiki_that_fails_its_check_is_its_findings_as_data(cw: ClaimsWiki) -> None:
    ws = Workspace(cw.wiki)
    assert validate_evidence_assessment(ws, CONCEPT, "c1", "It helps.", "S", evidence=[cw.labels[0]])["admitted"]
    original = cw.concept.read_text(encoding="utf-8")
    cw.concept.write_text(original.replace("status: supported", "status: contradicted"), encoding="utf-8")
    refused = build_evidence_matrix(ws)
    assert refused["ok"] is False and "claims" not in refused
    found = [(f["check"], f["field"], f["artifact_id"]) for f in refused["findings"]]
    assert found == [("C-CLAIM", "ASSESSMENT_MISMATCH", "claim:c1")]


def test_no_tool_makes_facts_or_declares_completeness() -> None:
    names = {spec.name for spec in TOOLS}
    assert not any(word in name for name in names for word in ("missing", "fetch", "register", "complete", "surface"))
    assert {spec.name for spec in TOOLS if spec.writes} == {"run_document_review", "validate_evidence_assessment"}


def test_the_server_answers_an_assessment_over_stdio(cw: ClaimsWiki) -> None:
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "publisher", "mcp", "--wiki", str(cw.wiki)], cwd=str(REPO)
    )
    outcome: dict[str, Any] = {}

    async def main() -> None:
        with anyio.fail_after(120):
            async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
                await session.initialize()
                arguments = {"concept": CONCEPT, "claim_id": "c1", "statement": "It helps.", "status": "S",
                             "evidence": [cw.labels[0]]}  # fmt: skip
                result = await session.call_tool("validate_evidence_assessment", arguments)
                outcome["error"] = result.is_error
                outcome["text"] = "".join(getattr(block, "text", "") for block in result.content)

    anyio.run(main)
    assert outcome["error"] is False and '"admitted": true' in outcome["text"].replace('":true', '": true')
    assert cw.front().claims[0].assessment == "as-0001"


@pytest.fixture
def signed_cw(tmp_path: Path, corpus_dir: Path) -> tuple[ClaimsWiki, Path]:
    from publisher.acquire.signing import new_key_pair

    private, public, _ = new_key_pair(tmp_path / "keys")
    (tmp_path / "wiki" / "keys").mkdir(parents=True)
    (tmp_path / "wiki" / "keys" / "wiki.pub").write_bytes(public.read_bytes())
    trusted = "extra:\n  evidence:\n    trusted_keys: [keys/wiki.pub]\n"
    return claims_wiki(tmp_path / "wiki", corpus_dir, key=private, extra=trusted), private


def test_on_a_signed_wiki_a_server_without_a_key_only_proposes(signed_cw: tuple[ClaimsWiki, Path]) -> None:
    """An agent calling the tool as documented never bricks a signed wiki: without the key of the
    person running the server, nothing is written, the answer says what would be admitted, and the
    build still passes; with it, the entry is signed and the build passes too."""
    from _wiki_helpers import build_wiki, tree_digest

    from publisher.acquire.signing import load_signer
    from publisher.wiki.claims.log import SIGNED_FOR

    cw, private = signed_cw
    build_wiki(cw.wiki)
    before = tree_digest(cw.wiki)
    ws = Workspace(cw.wiki)
    would = validate_evidence_assessment(ws, CONCEPT, "c1", "It helps.", "S", evidence=[cw.labels[0]])
    assert (would["admitted"], would["written"], would["would_admit"], would["guard"]) == (False, False, True, None)
    wont = validate_evidence_assessment(ws, CONCEPT, "c2", "It helps more.", "S", evidence=["MADE_UP"])
    assert (wont["written"], wont["would_admit"], wont["guard"]) == (False, False, "EVIDENCE_UNRESOLVED")
    assert tree_digest(cw.wiki) == before  # no log line, no front matter, nothing
    assert not (cw.wiki / "assessments.jsonl").exists()
    build_wiki(cw.wiki)
    # Started with the wiki's key by the person running it: written, signed, and the build passes.
    signed = Workspace(cw.wiki, signer=load_signer(private, SIGNED_FOR))
    done = validate_evidence_assessment(signed, CONCEPT, "c1", "It helps.", "S", evidence=[cw.labels[0]])
    assert done["admitted"] is True and done["written"] is True and done["signed_by"]
    assert [e.sig is not None for e in read_assessments(cw.wiki).events] == [True]
    build_wiki(cw.wiki)


def test_the_server_refuses_to_start_with_a_key_the_wiki_does_not_trust(
    signed_cw: tuple[ClaimsWiki, Path], tmp_path: Path, cli: Any
) -> None:
    from publisher.acquire.signing import new_key_pair

    cw, _ = signed_cw
    stranger, _, _ = new_key_pair(tmp_path / "stranger")
    out = cli("mcp", "--wiki", cw.wiki, "--key", stranger)
    assert out.status == 2 and len(out.err_lines) == 1
