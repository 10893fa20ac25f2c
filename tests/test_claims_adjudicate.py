"""Reviews count their hits (CONTRACT section 14): each hit in its sentence, and NS on a review
that found hits only once every hit is adjudicated "does not support", signed on a signed wiki.

Refusals are asserted by the guard (``field``) or the exit status, never by wording; a refused
command leaves no file behind.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from _claims_helpers import ClaimsWiki, claims_wiki
from _policy import policy_of
from conftest import CliResult
from test_claims_assess import assess, assess_json, refused

from publisher.acquire.signing import new_key_pair
from publisher.kernel.canonical import canonical_bytes
from publisher.kernel.eventlog import line_digest
from publisher.wiki.check import check_wiki
from publisher.wiki.claims.adjudications import read_adjudications
from publisher.wiki.claims.counts import claims_document

Cli = Callable[..., CliResult]
CLAIM = "The trial reports serious adverse events."


@pytest.fixture
def cw(tmp_path: Path, corpus_dir: Path) -> ClaimsWiki:
    return claims_wiki(tmp_path / "wiki", corpus_dir)


@pytest.fixture
def signed_cw(tmp_path: Path, corpus_dir: Path) -> tuple[ClaimsWiki, Path]:
    private, public, _ = new_key_pair(tmp_path / "keys")
    (tmp_path / "wiki" / "keys").mkdir(parents=True)
    (tmp_path / "wiki" / "keys" / "wiki.pub").write_bytes(public.read_bytes())
    trusted = "extra:\n  evidence:\n    trusted_keys: [keys/wiki.pub]\n"
    return claims_wiki(tmp_path / "wiki", corpus_dir, key=private, extra=trusted), private


def a_word(cw: ClaimsWiki) -> str:
    """A word article A's text holds a few times (its first long word after the title)."""
    words = [w.strip(".,;:()") for w in cw.a_text[400:].split()]
    return next(w for w in words if len(w) > 6 and w.isalpha() and 2 <= cw.a_text.count(w) <= 6)


def review(cli: Cli, cw: ClaimsWiki, *terms: str, claim: str = CLAIM) -> dict[str, Any]:
    args = [a for t in terms for a in ("--term", t)]
    out = cli("review", "--run-dir", cw.rb.run.path, "--source-id", cw.a_full, "--claim", claim, *args, "--json")
    assert out.status == 0, out.err
    return out.json()


def adjudicate(cli: Cli, cw: ClaimsWiki, rid: str, hit: int, *extra: str) -> CliResult:
    return cli("review", "adjudicate", "--run-dir", cw.rb.run.path, "--review", rid, "--hit", str(hit),
               "--reason", "the sentence names the term, not the claim", *extra, "--json")  # fmt: skip


def test_each_hit_records_the_sentence_it_lies_in(cli: Cli, cw: ClaimsWiki) -> None:
    record = review(cli, cw, a_word(cw))["record"]
    assert record["hits"]
    for hit in record["hits"]:
        s = hit["sentence"]
        assert s["start"] <= hit["start"] < hit["end"] <= s["end"]
        assert cw.a_text[s["start"] : s["end"]] == s["text"]
        assert "\n\n" not in s["text"]  # a sentence, not the document


def test_ns_on_a_review_with_hits_is_refused_until_every_hit_is_adjudicated(cli: Cli, cw: ClaimsWiki) -> None:
    done = review(cli, cw, a_word(cw))
    rid, hits = done["review_id"], done["record"]["hits"]
    assert len(hits) >= 2
    refused(assess_json(cli, cw, "ns1", CLAIM, "NS", "--review", rid), "REVIEW_UNADJUDICATED")
    for number in range(1, len(hits)):  # all but the last
        out = adjudicate(cli, cw, rid, number)
        assert out.status == 0, out.err
        entry = out.json()["entry"]
        assert entry["decision"] == "does_not_support" and entry["review_id"] == rid
        assert entry["hit"] == {k: hits[number - 1][k] for k in ("term", "start", "end")}
    refused(assess_json(cli, cw, "ns1", CLAIM, "NS", "--review", rid), "REVIEW_UNADJUDICATED")
    assert cw.front().claims == ()
    assert adjudicate(cli, cw, rid, len(hits)).status == 0
    again = adjudicate(cli, cw, rid, 1)  # the same hit twice: kept as it is, nothing appended
    assert again.status == 0 and again.json()["created"] is False
    assert len(read_adjudications(cw.rb.run).events) == len(hits)
    assert assess(cli, cw, "ns1", CLAIM, "NS", "--review", rid).status == 0
    wiki = check_wiki(cw.wiki, policy=policy_of(cw.wiki))
    assert wiki.ok and [s.provenance_valid for s in wiki.claims] == [True]
    # claims.json carries the review: terms, hit counts, each hit in its sentence and its decision.
    claim = next(c for c in claims_document(wiki)["claims"] if c["id"] == "ns1")
    shown = claim["review"]
    assert shown["id"] == rid and shown["terms"] == [{"term": hits[0]["term"], "hits": len(hits)}]
    assert [h["sentence"]["text"] for h in shown["hits"]] == [h["sentence"]["text"] for h in hits]
    assert all(h["adjudication"]["decision"] == "does_not_support" for h in shown["hits"])


def test_a_review_without_hits_needs_no_adjudication(cli: Cli, cw: ClaimsWiki) -> None:
    rid = review(cli, cw, "zzzunfoundzzz")["review_id"]
    assert adjudicate(cli, cw, rid, 1).status == 2  # nothing to adjudicate
    assert not (cw.rb.run.path / "reviews" / "adjudications.jsonl").exists()
    assert assess(cli, cw, "ns1", CLAIM, "NS", "--review", rid).status == 0


def test_an_edited_adjudication_log_leaves_the_claim_invalid_now(cli: Cli, cw: ClaimsWiki) -> None:
    done = review(cli, cw, a_word(cw))
    rid = done["review_id"]
    for number in range(1, len(done["record"]["hits"]) + 1):
        assert adjudicate(cli, cw, rid, number).status == 0
    assert assess(cli, cw, "ns1", CLAIM, "NS", "--review", rid).status == 0
    log = cw.rb.run.path / "reviews" / "adjudications.jsonl"
    lines = log.read_bytes().splitlines()
    first = json.loads(lines[0])
    lines[0] = canonical_bytes({**first, "reason": "edited by hand"})
    log.write_bytes(b"\n".join(lines) + b"\n")
    wiki = check_wiki(cw.wiki, policy=policy_of(cw.wiki))
    assert wiki.ok  # historical admissibility stays; provenance now does not
    assert [s.provenance_valid for s in wiki.claims] == [False]


def test_out_of_range_hits_and_empty_reasons_write_nothing(cli: Cli, cw: ClaimsWiki) -> None:
    done = review(cli, cw, a_word(cw))
    rid, n = done["review_id"], len(done["record"]["hits"])
    for hit in (0, n + 1):
        assert adjudicate(cli, cw, rid, hit).status == 2
    empty = cli("review", "adjudicate", "--run-dir", cw.rb.run.path, "--review", rid, "--hit", "1", "--reason", "  ")
    assert empty.status == 2
    assert adjudicate(cli, cw, "rev-" + "0" * 64, 1).status == 2
    assert not (cw.rb.run.path / "reviews" / "adjudications.jsonl").exists()


def test_on_a_signed_wiki_an_adjudication_must_be_signed_by_a_trusted_key(
    cli: Cli, signed_cw: tuple[ClaimsWiki, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cw, private = signed_cw
    monkeypatch.delenv("PUBLISHER_SIGNING_KEY", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))  # no user key to find
    done = review(cli, cw, a_word(cw))
    rid, n = done["review_id"], len(done["record"]["hits"])
    log = cw.rb.run.path / "reviews" / "adjudications.jsonl"
    assert adjudicate(cli, cw, rid, 1).status == 2  # no key: refused before anything is written
    assert not log.exists()
    stranger, _, _ = new_key_pair(tmp_path / "stranger")
    assert adjudicate(cli, cw, rid, 1, "--key", str(stranger)).status == 2
    assert not log.exists()
    # Unsigned lines written by hand, chained as the tool chains them, decide nothing.
    lines: list[bytes] = []
    for number, hit in enumerate(done["record"]["hits"], start=1):
        entry = {
            "schema_version": 1,
            "adjudication_id": f"adj-{number:04d}",
            "prev": line_digest(lines[-1]) if lines else None,
            "at": "2026-12-01T00:00:00Z",
            "review_id": rid,
            "hit": {k: hit[k] for k in ("term", "start", "end")},
            "decision": "does_not_support",
            "reason": "forged",
        }
        lines.append(canonical_bytes(entry))
    log.parent.mkdir(exist_ok=True)
    log.write_bytes(b"\n".join(lines) + b"\n")
    assert read_adjudications(cw.rb.run).intact
    ns = assess_json(cli, cw, "ns1", CLAIM, "NS", "--review", rid, "--key", str(private))
    refused(ns, "REVIEW_UNADJUDICATED")
    for number in range(1, n + 1):
        out = adjudicate(cli, cw, rid, number, "--key", str(private))
        assert out.status == 0 and out.json()["entry"]["sig"]["key_id"], out.err
    assert assess(cli, cw, "ns1", CLAIM, "NS", "--review", rid, "--key", str(private)).status == 0
    assert check_wiki(cw.wiki, policy=policy_of(cw.wiki)).ok


def test_a_sentence_not_written_by_the_tool_is_never_shown(cli: Cli, cw: ClaimsWiki) -> None:
    """A review record rewritten by hand (its id recomputed) to put other words around a hit: the
    claim view shows only what the snapshot holds at the hit, and says the sentence did not verify."""
    from publisher.kernel import _fs
    from publisher.wiki.claims.counts import review_view
    from publisher.wiki.claims.records import ReviewRecord, record_id

    honest = review(cli, cw, a_word(cw))["record"]
    hit = honest["hits"][0]
    forged_hits = [{**hit, "sentence": {**hit["sentence"], "text": "No effect was found at all."}}, *honest["hits"][1:]]
    forged = ReviewRecord.model_validate({**honest, "hits": forged_hits})
    rid = record_id(forged)
    _fs.create_exclusive(cw.rb.run.path / "reviews" / f"{rid}.json", canonical_bytes(forged.model_dump(mode="json")))
    refused(assess_json(cli, cw, "ns1", CLAIM, "NS", "--review", rid), "REVIEW_UNRESOLVED")
    shown = review_view(check_wiki(cw.wiki, policy=policy_of(cw.wiki)), rid)["hits"]
    assert shown[0]["sentence_verified"] is False
    assert shown[0]["sentence"]["text"] == cw.a_text[hit["start"] : hit["end"]]
    assert all(h["sentence_verified"] for h in shown[1:])
