"""Warrant reviews (CONTRACT section 17): who may review a claim, what a review is bound to, and
what the wiki says of each claim afterwards.

The wiki trusts two keys: the maintainer's (acquire and assess: it signed the run's acquisitions
and the assessment) and a reviewer's (warrant only). Decisions are recorded through the library
with signers made in the test; the command's terminal-only passphrase is tested in
``test_warrant_keys.py``. Assertions name guards, check ids and states, never wording.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
from _claims_helpers import CONCEPT, ClaimsWiki, claims_wiki
from _policy import policy_of
from _wiki_helpers import refused_build, tree_digest
from conftest import CliResult
from test_claims_assess import assess

from publisher.acquire.signing import Signer, load_signer, new_key_pair
from publisher.kernel.canonical import canonical_bytes, sha256_hex
from publisher.kernel.eventlog import append_event, line_digest
from publisher.kernel.models import Receipt
from publisher.kernel.store import build_record
from publisher.runs import Run
from publisher.wiki.check import check_wiki
from publisher.wiki.claims.counts import claims_document
from publisher.wiki.claims.warrant import (
    SIGNED_FOR,
    WARRANTS_FILE,
    Correction,
    CorrectionKind,
    Decision,
    WarrantGuard,
    WarrantRefusal,
)
from publisher.wiki.policy import Policy
from publisher.wiki.warrant import awaiting_review, parse_correction, record_warrant

Cli = Callable[..., CliResult]

TRUST = (
    "extra:\n  evidence:\n    trusted_keys:\n      - keys/wiki.pub\n"
    "      - {path: keys/reviewer.pub, roles: [warrant]}\n      - keys/colleague.pub\n"
)


class Keys:
    """The private keys of the test: the maintainer's, the reviewer's, a colleague's the wiki trusts
    for acquisition and assessment only, and one the wiki does not list."""

    def __init__(self, folder: Path) -> None:
        self.wiki, _, self.wiki_id = new_key_pair(folder, "wiki")
        self.reviewer, _, self.reviewer_id = new_key_pair(folder, "reviewer")
        self.stranger, _, _ = new_key_pair(folder, "stranger")
        self.colleague, _, _ = new_key_pair(folder, "colleague")

    def signer(self, path: Path) -> Signer:
        return load_signer(path, SIGNED_FOR)


@pytest.fixture(scope="module")
def _built(tmp_path_factory: pytest.TempPathFactory, corpus_dir: Path) -> tuple[Path, Path, list[str]]:
    """One signed claims wiki with claim c1 (S) assessed by the maintainer's key, built once."""
    from publisher.cli import main

    root = tmp_path_factory.mktemp("warrant")
    keys = root / "keys"
    Keys(keys)
    (root / "wiki" / "keys").mkdir(parents=True)
    for name in ("wiki", "reviewer", "colleague"):
        shutil.copy(keys / f"{name}.pub", root / "wiki" / "keys" / f"{name}.pub")
    cw = claims_wiki(root / "wiki", corpus_dir, key=keys / "wiki.key", extra=TRUST)
    status = main(["assess", "--wiki", str(cw.wiki), "--concept", CONCEPT, "--claim-id", "c1",
                   "--statement", "It helps.", "--status", "S", "--evidence", cw.labels[0],
                   "--key", str(keys / "wiki.key")])  # fmt: skip
    assert status == 0
    return root, cw.wiki, cw.labels


@pytest.fixture
def ww(_built: tuple[Path, Path, list[str]], tmp_path: Path) -> tuple[Path, Keys, list[str]]:
    """A fresh copy of the built wiki and its keys."""
    root, _, labels = _built
    shutil.copytree(root, tmp_path / "w", symlinks=True)
    copy = tmp_path / "w" / "wiki"
    return copy, _reload(tmp_path / "w" / "keys"), labels


def _reload(folder: Path) -> Keys:
    keys = Keys.__new__(Keys)
    names = ("wiki", "reviewer", "stranger", "colleague")
    keys.wiki, keys.reviewer, keys.stranger, keys.colleague = (folder / f"{n}.key" for n in names)
    keys.wiki_id = load_signer(keys.wiki, SIGNED_FOR).key_id
    keys.reviewer_id = load_signer(keys.reviewer, SIGNED_FOR).key_id
    return keys


def policy(wiki: Path) -> Policy:
    return policy_of(wiki)


def decide(wiki: Path, signer: Signer, decision: Decision = Decision.CONFIRMED, **more: object) -> None:
    record_warrant(
        wiki,
        str(more.get("concept", CONCEPT)),
        str(more.get("claim", "c1")),
        decision,
        str(more.get("reason", "The excerpt reports this outcome in this population.")),
        more.get("correction"),  # type: ignore[arg-type]
        signer=signer,
        policy=policy(wiki),
    )


def warrant_of(wiki: Path, claim_id: str = "c1") -> dict[str, object]:
    doc = claims_document(check_wiki(wiki, policy=policy(wiki)))
    (view,) = [c for c in doc["claims"] if c["id"] == claim_id]
    return {**view["warrant"], "confirmed": view["counts"]["independently_confirmed"]}


def refused(call: Callable[[], object], guard: WarrantGuard, wiki: Path) -> None:
    before = tree_digest(wiki)
    with pytest.raises(WarrantRefusal) as info:
        call()
    assert info.value.guard is guard
    finding = info.value.finding()
    assert (finding.check, finding.field, info.value.exit_status) == ("C-WARRANT", guard.value, 1)
    assert tree_digest(wiki) == before  # nothing written


def test_a_claim_starts_as_its_authors_proposal(ww: tuple[Path, Keys, list[str]]) -> None:
    wiki, _, _ = ww
    assert warrant_of(wiki)["state"] == "author_proposal"
    assert warrant_of(wiki)["confirmed"] == 0
    assert [i.state.claim.id for i in awaiting_review(check_wiki(wiki, policy=policy(wiki)))] == ["c1"]


def test_a_second_key_with_the_warrant_role_confirms(ww: tuple[Path, Keys, list[str]]) -> None:
    wiki, keys, _ = ww
    decide(wiki, keys.signer(keys.reviewer))
    got = warrant_of(wiki)
    assert (got["state"], got["reviewer_key_id"], got["reviewer"], got["confirmed"]) == (
        "confirmed",
        keys.reviewer_id,
        "reviewer",
        1,
    )
    (line,) = (wiki / WARRANTS_FILE).read_text(encoding="utf-8").splitlines()
    entry = json.loads(line)
    # Bound to the claim, its assessment and every cited span with the excerpt's digest.
    assert entry["assessment_id"] == "as-0001" and entry["claim_hash"].startswith("sha256:")
    assert entry["spans"] and all(len(s["excerpt_sha256"]) == 64 for s in entry["spans"])
    assert entry["sig"]["key_id"] == keys.reviewer_id and entry["sig"]["run"] == SIGNED_FOR
    assert awaiting_review(check_wiki(wiki, policy=policy(wiki))) == []


def test_a_self_review_is_refused(ww: tuple[Path, Keys, list[str]]) -> None:
    wiki, keys, _ = ww
    # The maintainer's key gains the warrant role: it still signed the assessment and acquisitions.
    yml = wiki / "mkdocs.yml"
    yml.write_text(
        yml.read_text(encoding="utf-8").replace(
            "      - keys/wiki.pub\n", "      - {path: keys/wiki.pub, roles: [acquire, assess, warrant]}\n"
        ),
        encoding="utf-8",
    )
    refused(lambda: decide(wiki, keys.signer(keys.wiki)), WarrantGuard.SELF_REVIEW, wiki)


def test_a_key_without_the_warrant_role_is_refused(ww: tuple[Path, Keys, list[str]]) -> None:
    wiki, keys, _ = ww
    refused(lambda: decide(wiki, keys.signer(keys.wiki)), WarrantGuard.NOT_WARRANT_KEY, wiki)
    refused(lambda: decide(wiki, keys.signer(keys.stranger)), WarrantGuard.NOT_WARRANT_KEY, wiki)
    refused(lambda: decide(wiki, keys.signer(keys.colleague)), WarrantGuard.NOT_WARRANT_KEY, wiki)


def test_qualified_needs_a_correction_and_others_take_none(ww: tuple[Path, Keys, list[str]]) -> None:
    wiki, keys, _ = ww
    signer = keys.signer(keys.reviewer)
    refused(lambda: decide(wiki, signer, Decision.QUALIFIED), WarrantGuard.CORRECTION_REQUIRED, wiki)
    fix = Correction(kind=CorrectionKind.POPULATION, text="adults only")
    refused(lambda: decide(wiki, signer, Decision.CONFIRMED, correction=fix), WarrantGuard.CORRECTION_NOT_ALLOWED, wiki)
    refused(lambda: decide(wiki, signer, reason="   "), WarrantGuard.REASON_REQUIRED, wiki)
    refused(lambda: decide(wiki, signer, claim="nope"), WarrantGuard.CLAIM_UNKNOWN, wiki)
    decide(wiki, signer, Decision.QUALIFIED, correction=fix)
    got = warrant_of(wiki)
    assert (got["state"], got["correction"], got["confirmed"]) == (
        "qualified",
        {"kind": "population", "text": "adults only"},
        1,
    )
    assert parse_correction("magnitude: smaller than said") == Correction(kind="magnitude", text="smaller than said")


def test_rejected_gives_no_credit(ww: tuple[Path, Keys, list[str]]) -> None:
    wiki, keys, _ = ww
    decide(wiki, keys.signer(keys.reviewer), Decision.REJECTED)
    got = warrant_of(wiki)
    assert (got["state"], got["confirmed"]) == ("rejected", 0)


def test_a_review_made_before_the_claims_spans_changed_is_stale(ww: tuple[Path, Keys, list[str]], cli: Cli) -> None:
    wiki, keys, labels = ww
    decide(wiki, keys.signer(keys.reviewer))
    assert warrant_of(wiki)["state"] == "confirmed"
    # The claim is assessed again on other evidence: its cited spans are no longer those reviewed.
    other = next(label for label in labels if label != labels[0])
    cw = ClaimsWiki(wiki, None, "", "", "", "", labels, "")  # type: ignore[arg-type]
    out = assess(cli, cw, "c1", "It helps.", "S", "--evidence", other, "--key", str(keys.wiki))
    assert out.status == 0, out.err
    got = warrant_of(wiki)
    assert (got["state"], got["confirmed"]) == ("stale", 0)
    assert "cited spans" in got["changed"]  # type: ignore[operator]
    assert [i.state.claim.id for i in awaiting_review(check_wiki(wiki, policy=policy(wiki)))] == ["c1"]


@pytest.mark.parametrize("tamper", ["edit", "reorder", "delete", "torn"])
def test_warrant_log_edits_reorders_and_deletions_are_refused(ww: tuple[Path, Keys, list[str]], tamper: str) -> None:
    wiki, keys, _ = ww
    signer = keys.signer(keys.reviewer)
    decide(wiki, signer, Decision.REJECTED)
    decide(wiki, signer, Decision.CONFIRMED)
    decide(wiki, signer, Decision.REJECTED)
    log = wiki / WARRANTS_FILE
    lines = log.read_bytes().splitlines()
    if tamper == "edit":  # the middle decision turned into a confirmation, re-serialised canonically
        entry = json.loads(lines[0])
        entry["decision"] = "confirmed"
        lines[0] = canonical_bytes(entry)
    elif tamper == "reorder":
        lines[0], lines[1] = lines[1], lines[0]
    elif tamper == "delete":
        del lines[1]
    log.write_bytes(b"\n".join(lines) + (b"" if tamper == "torn" else b"\n"))
    if tamper == "torn":
        log.write_bytes(log.read_bytes()[:-5])
    found = [(f.check, f.field) for f in check_wiki(wiki, policy=policy(wiki)).findings]
    assert found and set(found) == {("C-WARRANT", "WARRANT_LOG")}


def test_an_edited_last_line_does_not_verify(ww: tuple[Path, Keys, list[str]]) -> None:
    """No later line guards the last one's bytes: its signature does."""
    wiki, keys, _ = ww
    decide(wiki, keys.signer(keys.reviewer), Decision.REJECTED)
    log = wiki / WARRANTS_FILE
    entry = json.loads(log.read_bytes())
    entry["decision"] = "confirmed"
    log.write_bytes(canonical_bytes(entry) + b"\n")
    found = [(f.check, f.field) for f in check_wiki(wiki, policy=policy(wiki)).findings]
    assert found == [("C-WARRANT", "WARRANT_LOG")]


def test_a_forged_line_signed_by_the_authors_key_gives_no_credit(ww: tuple[Path, Keys, list[str]]) -> None:
    """An agent holding the maintainer's key writes a well-chained, validly signed confirmation
    by hand: it is not a warrant key, so the claim stays the author's proposal."""
    from publisher.wiki.claims.warrant import append_warrant, current_spans

    wiki, keys, _ = ww
    check = check_wiki(wiki, policy=policy(wiki))
    (state,) = check.claims
    assert state.entry is not None
    spans = [s.model_dump(mode="json") for s in current_spans(check, state.entry)]
    fields = {
        "concept": CONCEPT,
        "claim_id": "c1",
        "claim_hash": state.claim_hash,
        "assessment_id": state.entry.assessment_id,
        "spans": spans,
        "decision": "confirmed",
        "correction": None,
        "reason": "forged",
    }
    append_warrant(wiki, fields, keys.signer(keys.wiki))
    append_warrant(wiki, fields, keys.signer(keys.stranger))
    append_warrant(wiki, fields, keys.signer(keys.colleague))  # trusted, not for warrant
    got = warrant_of(wiki)
    assert (got["state"], got["confirmed"]) == ("author_proposal", 0)
    # Even listed with the warrant role, the author's key is a self-review: no credit.
    yml = wiki / "mkdocs.yml"
    yml.write_text(
        yml.read_text(encoding="utf-8").replace(
            "      - keys/wiki.pub\n", "      - {path: keys/wiki.pub, roles: [acquire, assess, warrant]}\n"
        ),
        encoding="utf-8",
    )
    assert warrant_of(wiki)["state"] == "author_proposal"


def test_require_warrant_fails_the_build_with_the_site_untouched(ww: tuple[Path, Keys, list[str]]) -> None:
    from _wiki_helpers import build_wiki

    wiki, keys, _ = ww
    build_wiki(wiki)
    site = wiki / "site"
    before = tree_digest(site)
    yml = wiki / "mkdocs.yml"
    yml.write_text(yml.read_text(encoding="utf-8") + "    require_warrant: true\n", encoding="utf-8")
    found = [(f.check, f.field, f.artifact_id) for f in refused_build(wiki)]
    assert found == [("C-WARRANT", "WARRANT_REQUIRED", "claim:c1")]
    assert tree_digest(site) == before
    decide(wiki, keys.signer(keys.reviewer), Decision.REJECTED)  # a rejection is no warrant either
    assert [(f.check, f.field) for f in refused_build(wiki)] == [("C-WARRANT", "WARRANT_REQUIRED")]
    assert tree_digest(site) == before
    decide(wiki, keys.signer(keys.reviewer), Decision.CONFIRMED)
    build_wiki(wiki)
    doc = json.loads((site / "claims.json").read_text(encoding="utf-8"))
    (claim,) = doc["claims"]
    assert claim["warrant"]["state"] == "confirmed" and claim["counts"]["independently_confirmed"] == 1
    assert claim["warrant"]["reviewer_key_id"] == keys.reviewer_id


def test_trusted_key_roles_are_parsed_strictly(tmp_path: Path) -> None:
    from publisher.kernel.errors import UsageError
    from publisher.kernel.reasons import Reason
    from publisher.kernel.trust import Role
    from publisher.wiki.policy import policy_from_evidence

    _, public, kid = new_key_pair(tmp_path / "k", "r")
    (tmp_path / "w").mkdir()
    shutil.copy(public, tmp_path / "w" / "r.pub")
    reviewer = {"trusted_keys": [{"path": "r.pub", "roles": ["warrant"]}]}
    ring = policy_from_evidence(reviewer, tmp_path / "w").trusted_keys
    assert ring.has_role(kid, Role.WARRANT) and not ring.has_role(kid, Role.ACQUIRE)
    bare = policy_from_evidence({"trusted_keys": ["r.pub"]}, tmp_path / "w").trusted_keys
    assert bare.has_role(kid, Role.ACQUIRE) and bare.has_role(kid, Role.ASSESS) and not bare.has_role(kid, Role.WARRANT)
    for bad in ([{"path": "r.pub", "roles": ["admin"]}], [{"path": "r.pub"}], [{"path": "r.pub", "roles": []}],
                [{"path": "r.pub", "roles": ["warrant"], "extra": 1}]):  # fmt: skip
        with pytest.raises(UsageError) as info:
            policy_from_evidence({"trusted_keys": bad}, tmp_path / "w")
        assert info.value.reason is Reason.SCHEMA_ERROR
    with pytest.raises(UsageError):
        policy_from_evidence({"require_warrant": "yes"}, tmp_path / "w")


def test_a_ring_keeps_its_roles_through_a_pickle(tmp_path: Path) -> None:
    import pickle

    from publisher.kernel.trust import Role
    from publisher.wiki.policy import policy_from_evidence

    _, public, kid = new_key_pair(tmp_path / "k", "r")
    (tmp_path / "w").mkdir()
    shutil.copy(public, tmp_path / "w" / "r.pub")
    reviewer = {"trusted_keys": [{"path": "r.pub", "roles": ["warrant"]}]}
    ring = policy_from_evidence(reviewer, tmp_path / "w").trusted_keys
    again = pickle.loads(pickle.dumps(ring))
    assert again.has_role(kid, Role.WARRANT) and not again.has_role(kid, Role.ASSESS) and again.shown(kid) == "r.pub"


def test_line_digest_chain_of_a_written_log(ww: tuple[Path, Keys, list[str]]) -> None:
    wiki, keys, _ = ww
    decide(wiki, keys.signer(keys.reviewer))
    decide(wiki, keys.signer(keys.reviewer), Decision.REJECTED)
    first, second = (wiki / WARRANTS_FILE).read_bytes().splitlines()
    assert json.loads(first)["prev"] is None and json.loads(second)["prev"] == line_digest(first)


def test_new_require_warrant_scaffolds_the_policy_on(cli: Cli, tmp_path: Path) -> None:
    out = cli("new", tmp_path / "strict", "--require-warrant", "--json")
    assert out.status == 0 and out.json()["require_warrant"] is True, out.err
    assert policy(tmp_path / "strict").require_warrant is True
    assert check_wiki(tmp_path / "strict", policy=policy(tmp_path / "strict")).ok  # no claim yet: it builds
    assert cli("new", tmp_path / "plain", "--json").status == 0
    assert policy(tmp_path / "plain").require_warrant is False


def test_require_warrant_never_blocks_promotion_only_publication(ww: tuple[Path, Keys, list[str]]) -> None:
    from publisher.wiki.promote import promote

    wiki, _, _ = ww
    yml = wiki / "mkdocs.yml"
    yml.write_text(yml.read_text(encoding="utf-8") + "    require_warrant: true\n", encoding="utf-8")
    # The run promoted again into the concept whose claim awaits review: allowed.
    promote(wiki / "runs" / "trials", wiki, concept=CONCEPT, policy=policy(wiki))
    found = [(f.check, f.field) for f in check_wiki(wiki, policy=policy(wiki)).findings]
    assert found == [("C-WARRANT", "WARRANT_REQUIRED")]


# Attacks by someone who writes every file of the wiki but holds no trusted private key.


def _reassess(cli: Cli, wiki: Path, keys: Keys, labels: list[str], status: str, *extra: str) -> None:
    cw = ClaimsWiki(wiki, None, "", "", "", "", labels, "")  # type: ignore[arg-type]
    out = assess(cli, cw, "c1", "It helps.", status, "--evidence", labels[0], *extra, "--key", str(keys.wiki))
    assert out.status == 0, out.err


def test_a_warrant_replayed_from_a_fork_does_not_vouch_for_another_status(
    ww: tuple[Path, Keys, list[str]], cli: Cli, tmp_path: Path
) -> None:
    """Two copies of one wiki (a branch, a fork) each log their own ``as-0002`` for claim c1: the
    same statement and spans, but partially supported in one and contradicted in the other. The
    reviewer confirms the first; its warrant log copied into the second must not make the
    contradiction read as confirmed, though claim hash, assessment id and spans all match."""
    wiki, keys, labels = ww
    fork = tmp_path / "fork"
    shutil.copytree(wiki, fork, symlinks=True)
    _reassess(cli, wiki, keys, labels, "P", "--condition", "in adults")
    _reassess(cli, fork, keys, labels, "C")
    decide(wiki, keys.signer(keys.reviewer), Decision.CONFIRMED)
    assert warrant_of(wiki)["state"] == "confirmed"
    shutil.copy(wiki / WARRANTS_FILE, fork / WARRANTS_FILE)
    got = warrant_of(fork)
    assert (got["state"], got["confirmed"]) == ("stale", 0)


def test_an_assessment_logged_again_under_a_reviewed_id_is_not_the_one_reviewed(
    ww: tuple[Path, Keys, list[str]], cli: Cli
) -> None:
    """The threat of docs/warrant.md: an agent holding the maintainer's assess key. It drops the
    log's last line (a deleted tail is not seen), then assesses the reviewed claim again: the new
    line gets the same id, as-0002, for the same statement and spans, now contradicted."""
    from publisher.wiki.claims.log import ASSESSMENTS_FILE

    wiki, keys, labels = ww
    _reassess(cli, wiki, keys, labels, "P", "--condition", "in adults")
    decide(wiki, keys.signer(keys.reviewer), Decision.CONFIRMED)
    assert warrant_of(wiki)["state"] == "confirmed"
    log = wiki / ASSESSMENTS_FILE
    log.write_bytes(log.read_bytes().splitlines(keepends=True)[0])
    _reassess(cli, wiki, keys, labels, "C")
    assert check_wiki(wiki, policy=policy(wiki)).findings == []
    got = warrant_of(wiki)
    assert (got["state"], got["confirmed"]) == ("stale", 0)


def test_a_warrant_that_binds_no_assessment_content_gives_no_credit(ww: tuple[Path, Keys, list[str]]) -> None:
    """A line in the reviewer's key that names the assessment by its counter only (as lines
    written before the content was bound did) cannot tell which assessment was read: stale."""
    from publisher.wiki.claims.warrant import append_warrant, current_spans

    wiki, keys, _ = ww
    check = check_wiki(wiki, policy=policy(wiki))
    (state,) = check.claims
    assert state.entry is not None
    fields = {
        "concept": CONCEPT,
        "claim_id": "c1",
        "claim_hash": state.claim_hash,
        "assessment_id": state.entry.assessment_id,
        "spans": [s.model_dump(mode="json") for s in current_spans(check, state.entry)],
        "decision": "confirmed",
        "correction": None,
        "reason": "The excerpt reports this outcome.",
    }
    append_warrant(wiki, fields, keys.signer(keys.reviewer))
    (line,) = (wiki / WARRANTS_FILE).read_bytes().splitlines()
    assert "assessment_hash" not in json.loads(line)  # such a line verifies as it was signed
    assert check_wiki(wiki, policy=policy(wiki)).findings == []
    got = warrant_of(wiki)
    assert (got["state"], got["confirmed"]) == ("stale", 0)
    assert [c.split(" ", 1)[0] for c in got["changed"]] == ["assessment"]  # type: ignore[union-attr]


def test_the_review_walk_shows_no_line_the_claim_or_its_source_wrote(
    ww: tuple[Path, Keys, list[str]], cli: Cli, capsys: pytest.CaptureFixture[str]
) -> None:
    """The reviewer decides on what the walk shows. A statement, condition or source text with
    line breaks could print a line of its own ('  condition: adults over 65 only' under a claim
    without conditions, a second '>>>excerpt<<<'): each value shows on the line of its label, so
    the walk has as many lines for a hostile claim as for a plain one."""
    import dataclasses

    from publisher.cli.warrant import _show

    wiki, keys, labels = ww
    statement = "It helps. condition: in adults over 65 only"
    cw = ClaimsWiki(wiki, None, "", "", "", "", labels, "")  # type: ignore[arg-type]
    assert assess(cli, cw, "c1", statement, "S", "--evidence", labels[0], "--key", str(keys.wiki)).status == 0
    concept = wiki / "concepts" / f"{CONCEPT}.md"
    lines = concept.read_text(encoding="utf-8").splitlines(keepends=True)
    (at,) = [n for n, line in enumerate(lines) if line.startswith("  statement: ")]
    # The same claim hash (white space runs are one space): the front matter is anyone's to write.
    lines[at] = '  statement: "It helps.\\n  condition: in adults over 65 only"\n'
    concept.write_text("".join(lines), encoding="utf-8")
    check = check_wiki(wiki, policy=policy(wiki))
    assert check.ok, check.findings
    (item,) = awaiting_review(check)
    (plain,) = awaiting_review(check_wiki(wiki, policy=policy(wiki)))
    plain.view["statement"] = statement
    capsys.readouterr()
    _show(plain, 1, 1)
    expected = len(capsys.readouterr().out.splitlines())
    hostile_source = [
        {**ex, "before": "a\n  statement: It cures all.\r", "sentence_after": "b\n>>>c\u2028d", "after": "\n[2/2]"}
        for ex in item.excerpts
    ]
    for shown_item in (item, dataclasses.replace(item, excerpts=hostile_source)):
        _show(shown_item, 1, 1)
        lines = capsys.readouterr().out.splitlines()
        assert len(lines) == expected, lines
        assert sum(line.startswith("  statement:") for line in lines) == 1
        assert not any(line.startswith("  condition:") for line in lines)


def test_a_claim_no_concept_has_is_a_one_line_claim_unknown(ww: tuple[Path, Keys, list[str]], cli: Cli) -> None:
    """Named without --concept, an unknown claim (a look-alike of c1 among them) is refused like one
    named with it: exit 1, C-WARRANT CLAIM_UNKNOWN, one line, nothing written, no key asked."""
    wiki, _, _ = ww
    before = tree_digest(wiki)
    for claim in ("nope", "c\u0031\u200b", "\u04411", "C1"):
        for concept in ((), ("--concept", CONCEPT)):
            out = cli("warrant", "--wiki", wiki, "--claim", claim, *concept, "--decision", "confirmed",
                      "--reason", "r", "--json")  # fmt: skip
            assert out.status == 1 and len(out.err_lines) == 1, out.err
            error = out.json()["error"]
            assert (error["check"], error["field"]) == ("C-WARRANT", "CLAIM_UNKNOWN")
    assert tree_digest(wiki) == before


@pytest.mark.parametrize(
    "hostile",
    [
        b'{"decision": "rejected", "decision": "confirmed"}',  # a key twice: which one was signed?
        b'{"a": ' + b"[" * 100_000 + b"]" * 100_000 + b"}",
        b'{"spans": [{"start": 1e999}]}',
        b'{"reason": "\\ud800"}',
        b"\xff\xfe not UTF-8",
    ],
    ids=["duplicate-key", "deep", "huge-number", "lone-surrogate", "bytes"],
)
def test_a_hostile_line_in_the_warrant_log_is_a_finding_never_a_crash(
    ww: tuple[Path, Keys, list[str]], hostile: bytes
) -> None:
    """A reviewed log with a hostile line before its last line: the build fails with C-WARRANT
    WARRANT_LOG, the claim gets no credit from the log, and nothing raises."""
    wiki, keys, _ = ww
    decide(wiki, keys.signer(keys.reviewer))
    log = wiki / WARRANTS_FILE
    log.write_bytes(hostile + b"\n" + log.read_bytes())
    check = check_wiki(wiki, policy=policy(wiki))
    assert check.findings and {(f.check, f.field) for f in check.findings} == {("C-WARRANT", "WARRANT_LOG")}
    assert warrant_of(wiki)["state"] == "author_proposal"


def test_a_reason_or_correction_longer_than_a_warrant_holds_is_refused_never_cut(
    ww: tuple[Path, Keys, list[str]],
) -> None:
    """The reviewer signs what was typed or nothing: a reason cut to fit would be signed with
    words (an ellipsis) the reviewer never wrote, and without those that were."""
    from publisher.kernel.errors import UsageError
    from publisher.wiki.warrant import MAX_CORRECTION, MAX_REASON

    wiki, keys, _ = ww
    before = tree_digest(wiki)
    with pytest.raises(UsageError):
        decide(wiki, keys.signer(keys.reviewer), reason="x" * (MAX_REASON + 1))
    with pytest.raises(UsageError):
        parse_correction("scope:" + "y" * (MAX_CORRECTION + 1))
    assert tree_digest(wiki) == before
    decide(wiki, keys.signer(keys.reviewer), reason="x " * (MAX_REASON // 2))  # within the limit once collapsed
    assert warrant_of(wiki)["reason"] == ("x " * (MAX_REASON // 2)).strip()


def test_the_key_that_adjudicated_a_not_supported_claims_hits_cannot_review_it(
    ww: tuple[Path, Keys, list[str]], cli: Cli
) -> None:
    """A not_supported claim cites no excerpt: it rests on a document review whose every hit a
    person adjudicated "does not support". The key that made those judgements, or that acquired
    the reviewed source, proposed the claim as much as the key that signed its assessment: its
    review is a self-review, refused by the command and no credit at build."""
    from publisher.wiki.claims.warrant import append_warrant, assessment_digest, current_spans

    wiki, keys, _ = ww
    yml = wiki / "mkdocs.yml"
    yml.write_text(
        yml.read_text(encoding="utf-8").replace(
            "{path: keys/reviewer.pub, roles: [warrant]}", "{path: keys/reviewer.pub, roles: [assess, warrant]}"
        ),
        encoding="utf-8",
    )
    (state,) = check_wiki(wiki, policy=policy(wiki)).claims
    assert state.entry is not None and state.entry.bound is not None
    source = state.entry.bound.evidence[0].refs[0].source_id
    run = wiki / "runs" / "trials"
    text = json.loads((run / "sources" / f"{source}.json").read_text(encoding="utf-8"))["text"]
    words = [w.strip(".,;:()") for w in text[400:].split()]
    term = next(w for w in words if len(w) > 6 and w.isalpha() and 2 <= text.count(w) <= 6)
    claim = "The trial reports serious adverse events."
    out = cli("review", "--run-dir", run, "--source-id", source, "--claim", claim, "--term", term, "--json")
    assert out.status == 0, out.err
    rid, hits = out.json()["review_id"], out.json()["record"]["hits"]
    why = "the sentence names the term, not the claim"
    for number in range(1, len(hits) + 1):
        done = cli("review", "adjudicate", "--run-dir", run, "--review", rid, "--hit", str(number),
                   "--reason", why, "--key", keys.reviewer, "--json")  # fmt: skip
        assert done.status == 0, done.err
    cw = ClaimsWiki(wiki, None, "", "", "", "", [], "")  # type: ignore[arg-type]
    out = assess(cli, cw, "ns1", claim, "NS", "--review", rid, "--key", str(keys.wiki))
    assert out.status == 0, out.err
    reviewer = keys.signer(keys.reviewer)
    refused(lambda: decide(wiki, reviewer, claim="ns1"), WarrantGuard.SELF_REVIEW, wiki)
    check = check_wiki(wiki, policy=policy(wiki))
    ns = next(s for s in check.claims if s.claim.id == "ns1")
    assert ns.entry is not None and ns.provenance_valid
    spans = [s.model_dump(mode="json") for s in current_spans(check, ns.entry)]
    fields = {
        "concept": CONCEPT, "claim_id": "ns1", "claim_hash": ns.claim_hash, "assessment_id": ns.entry.assessment_id,
        "assessment_hash": assessment_digest(ns.entry), "spans": spans, "decision": "confirmed", "correction": None,
        "reason": "No hit supports it.",
    }  # fmt: skip
    append_warrant(wiki, fields, reviewer)
    assert warrant_of(wiki, "ns1")["state"] == "author_proposal"


@pytest.mark.parametrize("fact", ["fetch_failed", "acquisition"])
def test_the_key_that_signed_a_non_evaluable_claims_missingness_fact_cannot_review_it(
    ww: tuple[Path, Keys, list[str]], cli: Cli, fact: str
) -> None:
    """A non_evaluable claim cites no excerpt: it rests on a missingness record, and the record on a
    signed fact of the run (a ``fetch_failed`` event, or the acquisition of a snapshot whose text
    is restricted). The key that signed that fact, or any acquisition of the snapshot the record
    names, proposed the claim as much as the key that signed its assessment: its review is a
    self-review, refused by the command and no credit at build; a key that signed none of it may
    still confirm the claim."""
    from publisher.wiki.claims.warrant import append_warrant, assessment_digest

    wiki, keys, _ = ww
    yml = wiki / "mkdocs.yml"
    yml.write_text(
        yml.read_text(encoding="utf-8")
        .replace("{path: keys/reviewer.pub, roles: [warrant]}", "{path: keys/reviewer.pub, roles: [acquire, warrant]}")
        .replace("- keys/colleague.pub", "- {path: keys/colleague.pub, roles: [warrant]}"),
        encoding="utf-8",
    )
    run = Run.open(wiki / "runs" / "trials")
    for_run = run.name(run.load_config())
    by_reviewer, by_wiki = load_signer(keys.reviewer, for_run), load_signer(keys.wiki, for_run)
    url = "https://example.org/withdrawn-trial"
    claim = "The withdrawn trial cannot be evaluated."
    if fact == "fetch_failed":
        append_event(
            run.events_path, type="fetch_failed", source_id=None, url=url, fresh=False, sha256=None,
            detail="test: connection refused", signer=by_reviewer,
            receipt=Receipt(requested_url=url, final_url=None, redirects=None, status=None, media_type=None,
                            raw_sha256=None, raw_bytes=None, extractor=None),
        )  # fmt: skip
        event_id = json.loads(run.events_path.read_text(encoding="utf-8").splitlines()[-1])["event_id"]
        basis = ["--event", event_id]
    else:
        # The reviewer acquired the abstract; the maintainer's key acquired it again later, so the
        # record's basis event is the maintainer's and only the earlier acquisition names the reviewer.
        text = "Background. A trial of a withdrawn drug; only this abstract is available. " * 3
        record = build_record(url=url, text=text, title="A withdrawn trial", access="abstract", origin="pubmed",
                              retrieved_at="2026-01-01T00:00:00Z", paper=None)  # fmt: skip
        snap, _ = run.store.put(record)
        for signer in (by_reviewer, by_wiki):
            append_event(
                run.events_path, type="fetch", source_id=snap.source_id, url=url, fresh=True,
                sha256=sha256_hex(text.encode("utf-8")), detail="test fixture", record_hash=snap.record_hash,
                signer=signer, merkle_root=snap.merkle_root, merkle_size=snap.merkle_size,
            )  # fmt: skip
        basis = ["--source-id", snap.source_id]
    mis = cli("missing", "--run-dir", run.path, "--claim", claim, *basis, "--json")
    assert mis.status == 0, mis.err
    cw = ClaimsWiki(wiki, None, "", "", "", "", [], "")  # type: ignore[arg-type]
    out = assess(cli, cw, "ne1", claim, "NE", "--missingness", mis.json()["missingness_id"], "--key", str(keys.wiki))
    assert out.status == 0, out.err
    reviewer = keys.signer(keys.reviewer)
    refused(lambda: decide(wiki, reviewer, claim="ne1"), WarrantGuard.SELF_REVIEW, wiki)
    check = check_wiki(wiki, policy=policy(wiki))
    ne = next(s for s in check.claims if s.claim.id == "ne1")
    assert ne.entry is not None and ne.provenance_valid, ne.provenance
    fields = {
        "concept": CONCEPT, "claim_id": "ne1", "claim_hash": ne.claim_hash, "assessment_id": ne.entry.assessment_id,
        "assessment_hash": assessment_digest(ne.entry), "spans": [], "decision": "confirmed", "correction": None,
        "reason": "Nothing of the trial can be read.",
    }  # fmt: skip
    append_warrant(wiki, fields, reviewer)
    assert warrant_of(wiki, "ne1")["state"] == "author_proposal"
    decide(wiki, keys.signer(keys.colleague), claim="ne1", reason="Nothing of the trial can be read.")
    assert warrant_of(wiki, "ne1")["state"] == "confirmed"


def _acquired_again_by_the_reviewer(wiki: Path, keys: Keys) -> str:
    """The reviewer's key gains the acquire role (the colleague's the warrant role only) and
    acquires claim c1's cited source again: a signed fetch appended to the run's log after the
    run's last assembly. Returns the source's id."""
    yml = wiki / "mkdocs.yml"
    yml.write_text(
        yml.read_text(encoding="utf-8")
        .replace("{path: keys/reviewer.pub, roles: [warrant]}", "{path: keys/reviewer.pub, roles: [acquire, warrant]}")
        .replace("- keys/colleague.pub", "- {path: keys/colleague.pub, roles: [warrant]}"),
        encoding="utf-8",
    )
    (state,) = check_wiki(wiki, policy=policy(wiki)).claims
    assert state.entry is not None and state.entry.bound is not None
    source = state.entry.bound.evidence[0].refs[0].source_id
    run = Run.open(wiki / "runs" / "trials")
    snap = run.store.read(source)
    append_event(
        run.events_path, type="fetch", source_id=source, url=snap.url, fresh=True,
        sha256=sha256_hex(snap.text.encode("utf-8")), detail="test: acquired again", record_hash=snap.record_hash,
        signer=load_signer(keys.reviewer, run.name(run.load_config())), surface=snap.surface,
        merkle_root=snap.merkle_root, merkle_size=snap.merkle_size,
    )  # fmt: skip
    return source


def test_a_key_that_acquired_a_cited_source_after_the_runs_last_assembly_cannot_review_the_claim(
    ww: tuple[Path, Keys, list[str]],
) -> None:
    """Claim c1 is assessed and its run assembled; then the reviewer's key acquires the cited
    source again. The assembled events do not name it, the run's log does: the reviewer acquired
    a source the claim rests on, so its review is a self-review, refused by the command and no
    credit at build; a key that acquired nothing may still confirm the claim."""
    from publisher.wiki.claims.warrant import append_warrant, assessment_digest, current_spans

    wiki, keys, _ = ww
    _acquired_again_by_the_reviewer(wiki, keys)
    reviewer = keys.signer(keys.reviewer)
    refused(lambda: decide(wiki, reviewer), WarrantGuard.SELF_REVIEW, wiki)
    check = check_wiki(wiki, policy=policy(wiki))
    (run_ev,) = check.runs
    assert keys.reviewer_id not in {e.sig.key_id for e in run_ev.events if e.sig is not None}  # after the assembly
    (c1,) = check.claims
    assert c1.entry is not None and c1.provenance_valid, c1.provenance
    fields = {
        "concept": CONCEPT, "claim_id": "c1", "claim_hash": c1.claim_hash, "assessment_id": c1.entry.assessment_id,
        "assessment_hash": assessment_digest(c1.entry),
        "spans": [s.model_dump(mode="json") for s in current_spans(check, c1.entry)], "decision": "confirmed",
        "correction": None, "reason": "The excerpt reports this outcome in this population.",
    }  # fmt: skip
    append_warrant(wiki, fields, reviewer)
    assert warrant_of(wiki)["state"] == "author_proposal"
    decide(wiki, keys.signer(keys.colleague))
    assert warrant_of(wiki)["state"] == "confirmed"


@pytest.mark.parametrize("damage", ["torn", "folder"])
def test_a_run_log_that_reads_badly_never_crashes_the_authors_and_hides_no_acquisition(
    ww: tuple[Path, Keys, list[str]], damage: str
) -> None:
    """The run's log is torn after the reviewer's acquisition, or a folder stands in its place (the
    run's check reports either). Finding the claim's authors does not crash: a torn log still
    names every acquisition before its torn line; a log that cannot be read gives the events
    assembled from it, which name the assessment's signer's acquisitions."""
    from publisher.wiki.claims.warrant import acquisition_signers, author_keys

    wiki, keys, _ = ww
    source = _acquired_again_by_the_reviewer(wiki, keys)
    log = wiki / "runs" / "trials" / "events.jsonl"
    if damage == "torn":
        with log.open("ab") as out:
            out.write(b'{"event_id": "ev-')
    check = check_wiki(wiki, policy=policy(wiki))  # the run assembled while its log still read
    if damage == "folder":
        log.rename(log.with_name("events.moved"))
        log.mkdir()
    (c1,) = check.claims
    assert c1.entry is not None
    authors = author_keys(check, c1.entry)
    assert keys.wiki_id in authors and keys.wiki_id in acquisition_signers(check)[source]
    assert (keys.reviewer_id in authors) is (damage == "torn")


def test_the_claim_check_reads_each_run_log_once_whatever_its_claims(
    ww: tuple[Path, Keys, list[str]], cli: Cli, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The acquisition signers come from each run's whole log, read once per claim check: three
    claims citing the same run read its log once, not once per claim."""
    import publisher.kernel.eventlog as eventlog
    from publisher.wiki.check import check_claims

    wiki, keys, labels = ww
    cw = ClaimsWiki(wiki, None, "", "", "", "", [], "")  # type: ignore[arg-type]
    for number, label in enumerate(labels[1:3], start=2):
        out = assess(cli, cw, f"c{number}", f"It helps ({number}).", "S", "--evidence", label, "--key", str(keys.wiki))
        assert out.status == 0, out.err
    check = check_wiki(wiki, policy=policy(wiki))
    assert len(check.claims) == 3
    reads: list[Path] = []
    real = eventlog._read_locked

    def counted(path: Path) -> bytes | None:
        reads.append(Path(path))
        return real(path)

    monkeypatch.setattr(eventlog, "_read_locked", counted)
    check.claims.clear()
    check_claims(check, check.concepts)
    assert len(check.claims) == 3 and all(s.warrant is not None for s in check.claims)
    assert reads.count(wiki / "runs" / "trials" / "events.jsonl") == 1
