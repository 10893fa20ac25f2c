"""An attacker who can write the wiki's files forges the facts behind a claim (CONTRACT section 14).

Each test plays one forgery: a well-chained ``assessments.jsonl`` line written by hand, an
older admitted entry restored in front matter, a hand-written acquisition fact. None of them
may make the build show a claim as admissible with provenance valid now; assertions name the
guard (``field``) and the claim, never wording.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from _claims_helpers import CONCEPT, ClaimsWiki, claims_wiki, whole_text
from _policy import policy_of
from _wiki_helpers import Claim, RunBuilder
from conftest import CliResult
from test_claims_assess import _fetch_failed, assess, assess_json, refused

from publisher.acquire.signing import new_key_pair
from publisher.kernel.canonical import canonical_bytes
from publisher.kernel.errors import IntegrityError
from publisher.kernel.eventlog import append_event, line_digest
from publisher.kernel.models import Receipt
from publisher.kernel.reasons import Reason
from publisher.wiki.check import check_wiki
from publisher.wiki.claims.counts import claims_document
from publisher.wiki.claims.log import read_assessments
from publisher.wiki.claims.model import claim_hash
from publisher.wiki.claims.provenance import ClaimState
from publisher.wiki.concepts import parse_concept
from publisher.wiki.promote import promote

Cli = Callable[..., CliResult]


@pytest.fixture
def cw(tmp_path: Path, corpus_dir: Path) -> ClaimsWiki:
    return claims_wiki(tmp_path / "wiki", corpus_dir)


def forge_entry(cw: ClaimsWiki, claim_id: str, statement: str, status: str, **fields: Any) -> str:
    """Append an admitted entry by hand, chained exactly as the tool chains it; returns its id."""
    log = cw.wiki / "assessments.jsonl"
    lines = log.read_bytes().splitlines() if log.exists() else []
    entry = {
        "schema_version": 1,
        "assessment_id": f"as-{len(lines) + 1:04d}",
        "prev": line_digest(lines[-1]) if lines else None,
        "at": "2026-12-01T00:00:00Z",
        "concept": CONCEPT,
        "claim_id": claim_id,
        "statement": statement,
        "claim_hash": claim_hash(statement),
        "status": status,
        "conditions": [],
        "evidence": [],
        "review": None,
        "missingness": None,
        "admitted": True,
        "guard": None,
        "detail": None,
        "bound": {"evidence": [], "review": None, "missingness": None},
        **fields,
    }
    with log.open("ab") as fh:
        fh.write(canonical_bytes(entry) + b"\n")
    return str(entry["assessment_id"])


def write_claim(cw: ClaimsWiki, claim: dict[str, Any]) -> None:
    """Put ``claim`` into the concept's front matter by hand (as an agent's file write would)."""
    text = cw.concept.read_text(encoding="utf-8")
    assert "claims: []\n" in text
    cw.concept.write_text(text.replace("claims: []\n", "claims:\n- " + json.dumps(claim) + "\n"), encoding="utf-8")


def claim_state(wiki: Path, claim_id: str) -> ClaimState:
    """The wiki check's state of one claim."""
    (state,) = [s for s in check_wiki(wiki, policy=policy_of(wiki)).claims if s.claim.id == claim_id]
    return state


def findings_of(wiki: Path) -> list[tuple[str | None, str | None, str | None]]:
    """(check, field, artifact) of every finding of the wiki check."""
    return [(f.check, f.field, f.artifact_id) for f in check_wiki(wiki, policy=policy_of(wiki)).findings]


@pytest.mark.parametrize(
    ("status", "claim_fields", "bound"),
    [
        # S citing a label that quotes nothing, with a bound that lists no evidence at all.
        ("supported", {"evidence": ["NOT_A_FOOTNOTE"]}, {"evidence": [], "review": None, "missingness": None}),
        # S whose entry binds nothing (bound: null on an admitted line).
        ("supported", {"evidence": ["NOT_A_FOOTNOTE"]}, None),
        # NS naming a review that exists nowhere, with no bound review.
        ("not_supported", {"review": "rev-" + "0" * 64}, {"evidence": [], "review": None, "missingness": None}),
        # NE naming a missingness record that exists nowhere, with no bound record.
        ("non_evaluable", {"missingness": "mis-" + "0" * 64}, {"evidence": [], "review": None, "missingness": None}),
    ],
)
def test_a_forged_entry_whose_bound_misses_its_ids_is_never_valid_now(
    cw: ClaimsWiki, status: str, claim_fields: dict[str, Any], bound: dict[str, Any] | None
) -> None:
    statement = "The intervention cures everyone."
    aid = forge_entry(cw, "c1", statement, status, bound=bound, **claim_fields)
    write_claim(cw, {"id": "c1", "statement": statement, "status": status, **claim_fields, "assessment": aid})
    # Such a line is no assessment the command writes: the build fails naming the claim.
    assert ("C-CLAIM", "ASSESSMENT_LOG", "claim:c1") in findings_of(cw.wiki)
    assert not claim_state(cw.wiki, "c1").provenance_valid


def test_a_forged_entry_naming_another_claims_review_is_not_valid_now(cli: Cli, cw: ClaimsWiki) -> None:
    run = cw.rb.run.path
    out = cli(
        "review", "--run-dir", run, "--source-id", cw.a_full, "--claim", "Another.", "--term", "adverse", "--json"
    )
    assert out.status == 0, out.err
    rid = out.json()["review_id"]
    statement = "The intervention cures everyone."
    bound = {
        "evidence": [],
        "review": {
            "run": cw.rb.run.slug(),
            "source_id": cw.a_full,
            "surface_manifest_hash": out.json()["record"]["surface_manifest_hash"],
        },
        "missingness": None,
    }
    aid = forge_entry(cw, "c1", statement, "not_supported", review=rid, bound=bound)
    write_claim(cw, {"id": "c1", "statement": statement, "status": "not_supported", "review": rid, "assessment": aid})
    state = claim_state(cw.wiki, "c1")
    assert state.entry is not None and not state.provenance_valid


@pytest.fixture
def signed_cw(tmp_path: Path, corpus_dir: Path) -> tuple[ClaimsWiki, Path]:
    """The claims wiki with a trusted key: its acquisitions are signed, its assessments too."""
    private, public, _ = new_key_pair(tmp_path / "keys")
    (tmp_path / "wiki" / "keys").mkdir(parents=True)
    (tmp_path / "wiki" / "keys" / "wiki.pub").write_bytes(public.read_bytes())
    trusted = "extra:\n  evidence:\n    trusted_keys: [keys/wiki.pub]\n"
    return claims_wiki(tmp_path / "wiki", corpus_dir, key=private, extra=trusted), private


def test_with_trusted_keys_an_unsigned_fetch_failed_is_no_missingness_fact(
    cli: Cli, signed_cw: tuple[ClaimsWiki, Path]
) -> None:
    cw, private = signed_cw
    forged = _fetch_failed(cw, "https://example.org/gone")  # a line appended by hand, unsigned
    # The command reads the wiki's keys: an unsigned line is no fact, so no record is made ...
    mis = cli("missing", "--run-dir", cw.rb.run.path, "--claim", "Gone.", "--event", forged, "--json")
    refused(mis, "NOTHING_MISSING")
    assert not (cw.rb.run.path / "missingness").exists()
    # ... and a record derived while the wiki trusted no key grounds nothing once it does.
    yml = cw.wiki / "mkdocs.yml"
    trusting = yml.read_text(encoding="utf-8")
    yml.write_text(trusting.replace("trusted_keys: [keys/wiki.pub]", "trusted_keys: []"), encoding="utf-8")
    mis = cli("missing", "--run-dir", cw.rb.run.path, "--claim", "Gone.", "--event", forged, "--json")
    assert mis.status == 0, mis.err
    yml.write_text(trusting, encoding="utf-8")
    mid = mis.json()["missingness_id"]
    refused(assess_json(cli, cw, "n1", "Gone.", "NE", "--missingness", mid, "--key", str(private)),
            "MISSINGNESS_UNRESOLVED")  # fmt: skip
    assert cw.front().claims == ()


def _unsigned_complete_source(cw: ClaimsWiki) -> str:
    """A snapshot written by hand with a "complete" surface and an unsigned fetch line of its own."""
    signer, cw.rb.signer = cw.rb.signer, None
    try:
        return cw.rb.source("https://example.org/fake", "Nothing to see here.\n" * 20, surface=whole_text(True))
    finally:
        cw.rb.signer = signer


def _review_harm(cli: Cli, cw: ClaimsWiki, source_id: str, *more: str | Path) -> CliResult:
    """``publisher review`` of "It harms." over ``source_id`` with the term "harm" (and ``more``)."""
    return cli("review", "--run-dir", cw.rb.run.path, "--source-id", source_id, "--claim", "It harms.",
               "--term", "harm", *more, "--json")  # fmt: skip


def test_with_trusted_keys_a_hand_written_complete_surface_grounds_no_review(
    cli: Cli, signed_cw: tuple[ClaimsWiki, Path]
) -> None:
    cw, private = signed_cw
    # The signed full text of A, declared complete: a review over it grounds NS.
    rev = cli("review", "--run-dir", cw.rb.run.path, "--source-id", cw.a_full, "--claim", "It cures.",
              "--term", "zzzunfoundzzz", "--json")  # fmt: skip
    assert rev.status == 0 and rev.json()["record"]["protocol_complete"] is True, rev.err
    ok = assess(cli, cw, "n0", "It cures.", "NS", "--review", rev.json()["review_id"], "--key", str(private))
    assert ok.status == 0, ok.err
    fake = _unsigned_complete_source(cw)
    rev = _review_harm(cli, cw, fake)
    assert rev.status == 0, rev.err
    # The command reads the wiki's keys as the build does: the unsigned line declares nothing.
    assert rev.json()["record"]["surface_complete"] is False
    refused(
        assess_json(cli, cw, "n1", "It harms.", "NS", "--review", rev.json()["review_id"], "--key", str(private)),
        "REVIEW_INCOMPLETE",
    )
    # A review made while the wiki trusted no key calls that surface complete; it grounds nothing
    # once the wiki trusts a key again (the build re-executes it under the wiki's keys).
    yml = cw.wiki / "mkdocs.yml"
    trusting = yml.read_text(encoding="utf-8")
    yml.write_text(trusting.replace("trusted_keys: [keys/wiki.pub]", "trusted_keys: []"), encoding="utf-8")
    rev = _review_harm(cli, cw, fake, "--term", "nothing")
    yml.write_text(trusting, encoding="utf-8")
    assert rev.status == 0 and rev.json()["record"]["surface_complete"] is True, rev.err
    refused(
        assess_json(cli, cw, "n1", "It harms.", "NS", "--review", rev.json()["review_id"], "--key", str(private)),
        "REVIEW_INCOMPLETE",
    )
    assert [c.id for c in cw.front().claims] == ["n0"]


def test_the_claim_commands_read_the_keys_mkdocs_resolves(cli: Cli, signed_cw: tuple[ClaimsWiki, Path]) -> None:
    """A wiki whose mkdocs.yml inherits its settings (INHERIT): 'publisher review' and 'publisher
    missing' read the trusted keys through MkDocs' loader, as the build does, instead of refusing
    the file or reading no key."""
    cw, _ = signed_cw
    yml = cw.wiki / "mkdocs.yml"
    (cw.wiki / "base.yml").write_text(yml.read_text(encoding="utf-8"), encoding="utf-8")
    yml.write_text("INHERIT: base.yml\n", encoding="utf-8")
    fake = _unsigned_complete_source(cw)
    rev = _review_harm(cli, cw, fake)
    assert rev.status == 0, rev.err
    assert rev.json()["record"]["surface_complete"] is False  # the inherited key signed no such acquisition
    from publisher.mcp.tools import Workspace, run_document_review

    done = run_document_review(Workspace(cw.wiki), fake, "It harms.", ["harm", "sea"])  # the agents' tool alike
    assert done["record"]["surface_complete"] is False
    forged = _fetch_failed(cw, "https://example.org/gone")
    mis = cli("missing", "--run-dir", cw.rb.run.path, "--claim", "Gone.", "--event", forged, "--json")
    refused(mis, "NOTHING_MISSING")
    # --config names another configuration, as 'mkdocs build -f' would: one that trusts no key.
    (cw.wiki / "open.yml").write_text("site_name: open\n", encoding="utf-8")
    rev = _review_harm(cli, cw, fake, "--config", cw.wiki / "open.yml")
    assert rev.status == 0 and rev.json()["record"]["surface_complete"] is True, rev.err


def test_an_older_admitted_assessment_restored_in_front_matter_is_superseded(cli: Cli, cw: ClaimsWiki) -> None:
    assert assess(cli, cw, "c1", "It helps.", "S", "--evidence", cw.labels[0]).status == 0
    older = cw.concept.read_bytes()
    # The claim is assessed again: the latest admitted judgement is C.
    assert assess(cli, cw, "c1", "It helps.", "C", "--evidence", cw.labels[0]).status == 0
    latest = cw.concept.read_bytes()
    # A later rejected attempt supersedes nothing: the claim stays as last admitted.
    assert assess(cli, cw, "c1", "It helps.", "S").status == 1
    assert findings_of(cw.wiki) == []
    # Rolling the front matter back to the first admitted entry is no way back to S.
    cw.concept.write_bytes(older)
    assert findings_of(cw.wiki) == [("C-CLAIM", "ASSESSMENT_MISMATCH", "claim:c1")]
    cw.concept.write_bytes(latest)
    assert findings_of(cw.wiki) == []


def test_an_abstract_is_no_missingness_when_the_run_holds_the_works_full_text(cli: Cli, cw: ClaimsWiki) -> None:
    # The run acquired A's full text (complete) before its abstract: nothing of A is missing,
    # whichever snapshot a record names and in whatever order they were acquired.
    run = cw.rb.run.path
    refused(
        cli("missing", "--run-dir", run, "--claim", "Unknowable.", "--source-id", cw.a_abstract, "--json"),
        "NOTHING_MISSING",
    )
    assert not (run / "missingness").exists()
    # An abstract whose work has no other snapshot in the run is a fact of restricted access.
    out = cli("missing", "--run-dir", run, "--claim", "Unknowable.", "--source-id", cw.c_abstract, "--json")
    assert out.status == 0 and out.json()["record"]["kind"] == "ACCESS_RESTRICTED", out.err


def _works(sources: dict[str, tuple[dict[str, str] | None, str, str]]) -> dict[str, str]:
    """The work each source belongs to, for snapshots given as (paper ids, url, content hash)."""
    from types import SimpleNamespace

    from publisher.kernel.models import Paper
    from publisher.wiki.claims.counts import WorkIndex

    infos = {
        sid: SimpleNamespace(
            meta=SimpleNamespace(derived_ids=(Paper(**paper) if paper else Paper()).ids, url=url, content_hash=ch)
        )
        for sid, (paper, url, ch) in sources.items()
    }
    wiki = SimpleNamespace(sources=infos, runs=[], policy=SimpleNamespace(trusted_keys=None))
    index = WorkIndex(wiki)  # type: ignore[arg-type]
    return {sid: index.work(sid) for sid in sources}


def test_one_paper_cited_through_other_spellings_of_its_ids_or_url_is_one_work() -> None:
    h = "sha256:" + "1" * 64
    works = _works(
        {
            "pmc-a": ({"pmcid": "PMC123"}, "https://pmc.example/a", "sha256:" + "a" * 64),
            "pmc-b": ({"pmcid": "pmc0123"}, "https://mirror.example/b", "sha256:" + "b" * 64),
            "doi-a": ({"doi": "https://doi.org/10.1000/ABC"}, "https://journal.example/x", "sha256:" + "c" * 64),
            "doi-b": ({"doi": "10.1000/abc"}, "https://journal.example/y", "sha256:" + "d" * 64),
            "pmid-a": ({"pmid": "00042"}, "https://pubmed.example/42", "sha256:" + "e" * 64),
            "pmid-b": ({"pmid": "PMID: 42"}, "https://pubmed.example/0042", "sha256:" + "f" * 64),
            "url-a": (None, "https://Example.org/paper#results", "sha256:" + "2" * 64),
            "url-b": (None, "HTTPS://example.org:443/paper", "sha256:" + "3" * 64),
            "text-a": (None, "https://one.example/p", h),  # the same text at two addresses
            "text-b": (None, "https://two.example/q", h),
            "other": (None, "https://example.org/other-paper", "sha256:" + "4" * 64),
        }
    )
    for a, b in (
        ("pmc-a", "pmc-b"),
        ("doi-a", "doi-b"),
        ("pmid-a", "pmid-b"),
        ("url-a", "url-b"),
        ("text-a", "text-b"),
    ):
        assert works[a] == works[b], (a, b, works)
    assert len(set(works.values())) == 6


@pytest.mark.parametrize(
    "variant",
    [
        "It\u200b helps.",  # a zero-width space
        "It\u2060helps.".replace("\u2060", " \u2060"),  # a word joiner
        "It helps.\ufeff",  # a byte-order mark
        "\u202dIt helps.\u202c",  # a bidi override, invisible
        "It ｈelps.",  # a full-width letter (NFKC)
        "IT HELPS.",  # only the case differs
    ],
)
def test_an_invisibly_different_statement_is_the_same_claim_for_conflicts(
    cli: Cli, cw: ClaimsWiki, variant: str
) -> None:
    assert assess(cli, cw, "c1", "It helps.", "S", "--evidence", cw.labels[0]).status == 0
    refused(assess_json(cli, cw, "c2", variant, "C", "--evidence", cw.labels[1]), "CLAIM_CONFLICT")


def test_two_front_matter_claims_of_one_statement_fail_the_build(cli: Cli, cw: ClaimsWiki) -> None:
    assert assess(cli, cw, "c1", "It helps.", "S", "--evidence", cw.labels[0]).status == 0
    with_c1 = cw.concept.read_text(encoding="utf-8")
    # c1 taken out of the front matter while c2 of the same statement is assessed, then put back.
    cw.concept.write_text(with_c1.split("claims:\n")[0] + "claims: []\n---\n" + with_c1.split("\n---\n", 1)[1],
                          encoding="utf-8")  # fmt: skip
    assert assess(cli, cw, "c2", "It helps.", "C", "--evidence", cw.labels[1]).status == 0
    c2 = cw.concept.read_text(encoding="utf-8").split("claims:\n", 1)[1].split("\n---\n", 1)[0]
    c1 = with_c1.split("claims:\n", 1)[1].split("\n---\n", 1)[0]
    cw.concept.write_text(with_c1.replace("claims:\n" + c1, "claims:\n" + c1 + "\n" + c2), encoding="utf-8")
    assert [c.id for c in cw.front().claims] == ["c1", "c2"]
    assert ("C-CLAIM", "CLAIM_CONFLICT", "claim:c2") in findings_of(cw.wiki)


@pytest.mark.parametrize("field", ["conditions", "evidence"])
def test_a_yaml_set_is_no_list_of_conditions_or_labels(field: str) -> None:
    # A !!set has no order: its tuple would differ from the entry's from one run to the next.
    text = (
        "---\nschema_version: 1\ntitle: T\nconcept: trials\nclaims:\n"
        f"- {{id: c1, statement: X, status: partially_supported, {field}: !!set {{a: null, b: null}}}}\n---\nbody\n"
    )
    with pytest.raises(IntegrityError) as caught:
        parse_concept(text)
    assert caught.value.reason is Reason.SCHEMA_ERROR and caught.value.context.get("field") == f"claims.0.{field}"


def test_a_missingness_record_not_written_by_the_command_does_not_resolve(cli: Cli, cw: ClaimsWiki) -> None:
    run = cw.rb.run.path
    out = cli("missing", "--run-dir", run, "--claim", "Other claim.", "--source-id", cw.c_abstract, "--json")
    assert out.status == 0, out.err
    # The same facts, re-addressed by hand to another claim's hash (and its id recomputed so the file verifies).
    record = out.json()["record"]
    record["claim_hash"] = claim_hash("The target claim.")
    body = {k: v for k, v in record.items() if k != "created_at"}
    mid = "mis-" + hashlib.sha256(canonical_bytes(body)).hexdigest()
    (run / "missingness" / f"{mid}.json").write_bytes(canonical_bytes(record) + b"\n")
    refused(assess_json(cli, cw, "n1", "The target claim.", "NE", "--missingness", mid), "MISSINGNESS_UNRESOLVED")


def test_each_status_rests_on_its_own_kind_of_ground_only(cli: Cli, cw: ClaimsWiki) -> None:
    run = cw.rb.run.path
    rev = cli("review", "--run-dir", run, "--source-id", cw.a_full, "--claim", "It cures.", "--term", "zzqx", "--json")
    rid = rev.json()["review_id"]
    mis = cli("missing", "--run-dir", run, "--claim", "It cures.", "--source-id", cw.c_abstract, "--json")
    mid = mis.json()["missingness_id"]
    label = cw.labels[0]
    # NS and NE citing evidence would be counted as resting on works they do not rest on.
    refused(assess_json(cli, cw, "x", "It cures.", "NS", "--review", rid, "--evidence", label), "EVIDENCE_NOT_ALLOWED")
    refused(
        assess_json(cli, cw, "x", "It cures.", "NE", "--missingness", mid, "--evidence", label), "EVIDENCE_NOT_ALLOWED"
    )
    # A review grounds only NS; a missingness record only NE.
    refused(assess_json(cli, cw, "x", "It cures.", "S", "--evidence", label, "--review", rid), "REVIEW_REQUIRED")
    refused(assess_json(cli, cw, "x", "It cures.", "NS", "--review", rid, "--missingness", mid), "MISSINGNESS_REQUIRED")
    assert cw.front().claims == ()
    assert assess(cli, cw, "x", "It cures.", "NS", "--review", rid).status == 0


def test_a_label_cited_twice_is_refused_rather_than_counted_twice(cli: Cli, cw: ClaimsWiki) -> None:
    label = cw.labels[0]
    out = assess_json(cli, cw, "c1", "It helps.", "S", "--evidence", label, "--evidence", label)
    refused(out, "EVIDENCE_UNRESOLVED")
    # By hand in front matter (with a forged line to match) it fails the check too.
    aid = forge_entry(cw, "c1", "It helps.", "supported", evidence=[label, label])
    write_claim(cw, {"id": "c1", "statement": "It helps.", "status": "supported", "evidence": [label, label],
                     "assessment": aid})  # fmt: skip
    assert ("C-CLAIM", "EVIDENCE_UNRESOLVED", "claim:c1") in findings_of(cw.wiki)


def _with_fake_sig(path: Path, key_id: str, run: str) -> None:
    """Give the last line of a log a signature field that verifies against nothing."""
    lines = path.read_bytes().splitlines(keepends=True)
    last = json.loads(lines[-1])
    last["sig"] = {"alg": "ed25519", "key_id": key_id, "run": run, "value": "AAAA"}
    lines[-1] = canonical_bytes(last) + b"\n"
    path.write_bytes(b"".join(lines))


def test_an_unverified_signature_is_never_shown_as_signed(cli: Cli, cw: ClaimsWiki) -> None:
    # No trusted keys: nothing verifies an assessment's signature, so none may be claimed.
    assert assess(cli, cw, "c1", "It helps.", "S", "--evidence", cw.labels[0]).status == 0
    _with_fake_sig(cw.wiki / "assessments.jsonl", "ab" * 32, "assessments")
    checked = check_wiki(cw.wiki, policy=policy_of(cw.wiki))
    assert checked.ok, checked.findings
    (view,) = claims_document(checked)["claims"]
    assert view["assessment"]["signed_by"] is None
    assert all(event["signed_by"] is None for event in view["lineage"]["events"])


def test_a_forged_signature_on_an_acquisition_is_not_shown_as_signed(
    cli: Cli, signed_cw: tuple[ClaimsWiki, Path]
) -> None:
    cw, private = signed_cw
    assert assess(cli, cw, "c1", "It helps.", "S", "--evidence", cw.labels[0], "--key", str(private)).status == 0
    trusted = read_assessments(cw.wiki).events[-1].sig
    assert trusted is not None
    # A second fetch line of the cited snapshot, claiming the wiki's key with a signature that does not verify.
    signer, cw.rb.signer = cw.rb.signer, None
    cw.rb.source(cw.rb.records[cw.a_full]["url"], cw.rb.texts[cw.a_full], paper=cw.rb.records[cw.a_full]["paper"],
                 surface=whole_text(True))  # fmt: skip
    cw.rb.signer = signer
    _with_fake_sig(cw.rb.run.events_path, trusted.key_id, cw.rb.run.name())
    cw.rb.assemble()
    promote(cw.rb.run.path, cw.wiki, concept=CONCEPT, policy=policy_of(cw.wiki))
    checked = check_wiki(cw.wiki, policy=policy_of(cw.wiki))
    assert checked.ok, checked.findings
    (view,) = [v for v in claims_document(checked)["claims"] if v["id"] == "c1"]
    assert view["assessment"]["signed_by"] == trusted.key_id
    events = view["lineage"]["events"]
    assert len(events) >= 2 and events[0]["signed_by"] == trusted.key_id
    assert events[-1]["signed_by"] is None, events


def test_with_trusted_keys_a_signed_fetch_failed_grounds_ne(cli: Cli, signed_cw: tuple[ClaimsWiki, Path]) -> None:
    cw, private = signed_cw
    url = "https://example.org/gone"
    append_event(
        cw.rb.run.events_path, type="fetch_failed", source_id=None, url=url, fresh=False, sha256=None,
        detail="test: connection refused", signer=cw.rb.signer,
        receipt=Receipt(requested_url=url, final_url=None, redirects=None, status=None, media_type=None,
                        raw_sha256=None, raw_bytes=None, extractor=None),
    )  # fmt: skip
    event_id = json.loads(cw.rb.run.events_path.read_text(encoding="utf-8").splitlines()[-1])["event_id"]
    mis = cli("missing", "--run-dir", cw.rb.run.path, "--claim", "Gone.", "--event", event_id, "--json")
    assert mis.status == 0, mis.err
    mid = mis.json()["missingness_id"]
    out = assess(cli, cw, "n1", "Gone.", "NE", "--missingness", mid, "--key", str(private))
    assert out.status == 0, out.err
    (state,) = check_wiki(cw.wiki, policy=policy_of(cw.wiki)).claims
    assert state.provenance_valid, state.provenance


def test_no_missingness_while_another_run_of_the_wiki_quotes_the_works_full_text(
    cli: Cli, cw: ClaimsWiki, corpus_dir: Path
) -> None:
    run = cw.rb.run.path
    mis = cli("missing", "--run-dir", run, "--claim", "Unknowable.", "--source-id", cw.c_abstract, "--json")
    assert mis.status == 0, mis.err
    mid = mis.json()["missingness_id"]
    # A second run acquires C's full text and the wiki publishes an excerpt of it.
    paper = cw.rb.records[cw.c_abstract]["paper"]
    pmcid = paper["pmcid"]
    text = (corpus_dir / "evidence-inference" / "texts" / f"{pmcid}.txt").read_text(encoding="utf-8")
    other = RunBuilder(cw.wiki, "second", question="And the third trial?")
    full = other.source(f"https://pmc.ncbi.nlm.nih.gov/articles/{pmcid}/", text, paper=paper)
    other.extraction(f"pmcid:{pmcid}", [Claim("spans[0]", None, full, 0, 60)])
    other.assemble()
    promote(other.run.path, cw.wiki, concept="third", policy=policy_of(cw.wiki))
    refused(assess_json(cli, cw, "n1", "Unknowable.", "NE", "--missingness", mid), "MISSINGNESS_UNRESOLVED")


def test_a_failed_fetch_of_an_address_the_wiki_holds_is_no_missingness(cli: Cli, cw: ClaimsWiki) -> None:
    url = cw.rb.records[cw.a_full]["url"]
    # The same address, spelt with an upper-case host and a fragment, failed once.
    variant = url.replace("https://pmc.", "https://PMC.") + "#abstract"
    assert variant != url
    failed = _fetch_failed(cw, variant)
    out = cli("missing", "--run-dir", cw.rb.run.path, "--claim", "Gone.", "--event", failed, "--json")
    refused(out, "NOTHING_MISSING")


def test_a_failed_fetch_in_one_run_of_an_address_another_run_published_is_no_ground(cli: Cli, cw: ClaimsWiki) -> None:
    other = RunBuilder(cw.wiki, "second", question="Retry?")
    url = cw.rb.records[cw.a_full]["url"]
    append_event(
        other.run.events_path, type="fetch_failed", source_id=None, url=url, fresh=False, sha256=None,
        detail="test: connection refused",
        receipt=Receipt(requested_url=url, final_url=None, redirects=None, status=None, media_type=None,
                        raw_sha256=None, raw_bytes=None, extractor=None),
    )  # fmt: skip
    event_id = json.loads(other.run.events_path.read_text(encoding="utf-8").splitlines()[-1])["event_id"]
    other.assemble()  # a run of the wiki, with nothing accepted
    assert [ev.slug for ev in check_wiki(cw.wiki, policy=policy_of(cw.wiki)).runs] == ["second", "trials"]
    mis = cli("missing", "--run-dir", other.run.path, "--claim", "Gone.", "--event", event_id, "--json")
    assert mis.status == 0, mis.err  # nothing in that run shows the address available ...
    mid = mis.json()["missingness_id"]
    # ... but the wiki publishes evidence fetched from it.
    refused(assess_json(cli, cw, "n1", "Gone.", "NE", "--missingness", mid), "MISSINGNESS_UNRESOLVED")
