"""Promotion: result.json -> concept file, verified twice, all or nothing (CONTRACT section 10)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from _policy import policy_of
from _wiki_helpers import TAMPERINGS, RunBuilder, make_wiki, sample_run, tamper, tree_digest

from publisher.kernel.errors import UsageError
from publisher.kernel.refs import parse_refs
from publisher.wiki import promote as promote_module
from publisher.wiki.check import check_wiki as run_preflight
from publisher.wiki.concepts import GENERATED_BEGIN, GENERATED_END, parse_concept
from publisher.wiki.promote import PlannedWrite, PromotionRefused, commit_writes, promote
from publisher.wiki.promoted import is_stable_label


@pytest.fixture
def wiki(tmp_path: Path) -> Path:
    return make_wiki(tmp_path / "wiki")


def test_promote_writes_concept_with_every_accepted_claim(wiki: Path) -> None:
    rb = sample_run(wiki)
    outcome = promote(rb.run.path, wiki, now="2030-05-06T07:08:09Z", policy=policy_of(wiki))
    assert outcome.written and outcome.created
    doc = parse_concept((wiki / "concepts" / "alpha.md").read_text(encoding="utf-8"))
    assert doc.front.title == "Does CBT help?"
    assert doc.front.concept == "alpha"
    (entry,) = doc.front.runs
    result = json.loads(rb.run.result_path.read_text(encoding="utf-8"))
    assert (entry.run, entry.path, entry.inputs_hash) == ("alpha", "runs/alpha", result["inputs_hash"])
    assert entry.promoted_at == "2030-05-06T07:08:09Z"
    claims = {(c["source_id"], c["start"], c["end"]): c["excerpt"] for a in result["accepted"] for c in a["claims"]}
    quoted = {(r.source_id, r.start, r.end): r.quoted for n in doc.footnotes for r in n.refs}
    assert quoted == claims
    assert outcome.claims == len(claims) and outcome.artifacts == len(result["accepted"])
    labels = [n.label for n in doc.footnotes]
    assert len(set(labels)) == len(labels)
    assert all(is_stable_label(label) for label in labels)
    assert any(label.startswith("alpha-extraction-pmid-111-q") for label in labels)
    assert sorted(p.name for p in (wiki / "concepts").iterdir()) == ["alpha.md"]
    assert run_preflight(wiki, policy=policy_of(wiki)).ok


def test_footnote_lines_hold_plain_text_reference(wiki: Path) -> None:
    rb = sample_run(wiki)
    promote(rb.run.path, wiki, policy=policy_of(wiki))
    text = (wiki / "concepts" / "alpha.md").read_text(encoding="utf-8")
    lines = [line for line in text.splitlines() if line.startswith("[^")]
    assert lines
    for line in lines:
        body = line.split("]: ", 1)[1]
        parsed = parse_refs(body)
        assert parsed.error is None and len(parsed.refs) == 1 and parsed.refs[0].quoted is not None


def test_check_writes_nothing(wiki: Path) -> None:
    rb = sample_run(wiki)
    before = tree_digest(wiki)
    outcome = promote(rb.run.path, wiki, check=True, policy=policy_of(wiki))
    assert not outcome.written and outcome.created and outcome.claims > 0
    assert tree_digest(wiki) == before


def test_repromotion_keeps_maintainer_prose_and_is_stable(wiki: Path) -> None:
    rb = sample_run(wiki)
    promote(rb.run.path, wiki, now="2030-01-01T00:00:00Z", policy=policy_of(wiki))
    path = wiki / "concepts" / "alpha.md"
    text = path.read_text(encoding="utf-8")
    text = text.replace("title: Does CBT help?", "title: CBT for adolescent depression")
    text = text.replace(GENERATED_BEGIN, "Maintainer intro, kept.\n\n" + GENERATED_BEGIN)
    text += "\n## Maintainer notes\n\nWritten by hand.\n"
    path.write_text(text, encoding="utf-8")
    rb.assemble()  # re-assembled: the run's inputs change, the block is promoted again
    again = promote(rb.run.path, wiki, now="2031-01-01T00:00:00Z", policy=policy_of(wiki))
    new = path.read_text(encoding="utf-8")
    assert "Maintainer intro, kept." in new and "Written by hand." in new
    assert "title: CBT for adolescent depression" in new
    assert new.count(GENERATED_BEGIN) == 1 and new.count(GENERATED_END) == 1
    assert again.written == again.changed
    third = promote(rb.run.path, wiki, now="2032-01-01T00:00:00Z", policy=policy_of(wiki))
    assert not third.changed and not third.written
    assert path.read_text(encoding="utf-8") == new


def test_an_edit_inside_the_block_is_refused_by_promotion_until_the_block_is_removed(wiki: Path) -> None:
    rb = sample_run(wiki)
    promote(rb.run.path, wiki, now="2030-01-01T00:00:00Z", policy=policy_of(wiki))
    path = wiki / "concepts" / "alpha.md"
    clean = path.read_text(encoding="utf-8")
    edited = clean.replace(GENERATED_BEGIN + "\n", GENERATED_BEGIN + "\nstale generated line\n")
    path.write_text(edited, encoding="utf-8")
    for check in (True, False):
        with pytest.raises(PromotionRefused) as caught:
            promote(rb.run.path, wiki, check=check, policy=policy_of(wiki))
        (finding,) = caught.value.findings
        assert finding.check == "C-PROMOTED" and finding.found == "stale generated line"
        assert finding.line == edited.split("\n").index("stale generated line") + 1
        assert path.read_text(encoding="utf-8") == edited  # nothing written
    # The way out: remove the whole block; promotion writes it again.
    start, end = edited.index(GENERATED_BEGIN), edited.index(GENERATED_END) + len(GENERATED_END) + 1
    path.write_text(edited[:start] + edited[end:], encoding="utf-8")
    promote(rb.run.path, wiki, now="2030-01-01T00:00:00Z", policy=policy_of(wiki))
    assert "stale generated line" not in path.read_text(encoding="utf-8")
    assert run_preflight(wiki, policy=policy_of(wiki)).ok


def test_second_run_joins_the_concept(wiki: Path) -> None:
    first = sample_run(wiki, "alpha")
    second = sample_run(wiki, "beta", question="Second look")
    promote(first.run.path, wiki, concept="cbt", policy=policy_of(wiki))
    promote(second.run.path, wiki, concept="cbt", policy=policy_of(wiki))
    doc = parse_concept((wiki / "concepts" / "cbt.md").read_text(encoding="utf-8"))
    assert [r.run for r in doc.front.runs] == ["alpha", "beta"]
    labels = [n.label for n in doc.footnotes]
    assert any(label.startswith("alpha-") for label in labels) and any(label.startswith("beta-") for label in labels)
    assert len(labels) == len(set(labels))
    assert run_preflight(wiki, policy=policy_of(wiki)).ok


@pytest.mark.parametrize("kind", TAMPERINGS)
def test_tampering_refuses_and_writes_nothing(wiki: Path, kind: str) -> None:
    rb = sample_run(wiki)
    reason = tamper(kind, rb)
    before = tree_digest(wiki)
    with pytest.raises(PromotionRefused) as info:
        promote(rb.run.path, wiki, policy=policy_of(wiki))
    assert reason in {f.code for f in info.value.findings}
    assert info.value.exit_status == 1
    assert tree_digest(wiki) == before


def test_tampering_refuses_repromotion_leaving_concept(wiki: Path) -> None:
    rb = sample_run(wiki)
    promote(rb.run.path, wiki, policy=policy_of(wiki))
    before = tree_digest(wiki)
    tamper("result-excerpt", rb)
    after_tamper = tree_digest(wiki)
    with pytest.raises(PromotionRefused):
        promote(rb.run.path, wiki, policy=policy_of(wiki))
    assert tree_digest(wiki) == after_tamper
    assert before["concepts/alpha.md"] == after_tamper["concepts/alpha.md"]


def test_gate_fail_refuses(wiki: Path) -> None:
    rb = sample_run(wiki)
    rb.unresolved()
    assert rb.assemble(gate=True)["gate"]["verdict"] == "fail"
    with pytest.raises(PromotionRefused) as info:
        promote(rb.run.path, wiki, policy=policy_of(wiki))
    assert "C-GATE" in {f.code for f in info.value.findings}
    assert not (wiki / "concepts" / "alpha.md").exists()


def test_gate_off_warn_promotes_accepted_only(wiki: Path) -> None:
    rb = sample_run(wiki)
    rb.unresolved()
    result = rb.assemble()
    assert result["gate"]["verdict"] == "warn" and result["counts"]["unresolved"] == 1
    outcome = promote(rb.run.path, wiki, policy=policy_of(wiki))
    assert outcome.written and outcome.artifacts == result["counts"]["accepted"]
    assert "pmid:999999" not in (wiki / "concepts" / "alpha.md").read_text(encoding="utf-8")


def test_empty_evidence_set_refuses(wiki: Path) -> None:
    rb = RunBuilder(wiki, "empty")
    rb.source("https://example.org/a", "A text nobody cited.")
    rb.assemble()
    with pytest.raises(PromotionRefused) as info:
        promote(rb.run.path, wiki, policy=policy_of(wiki))
    assert "NO_SPANS" in {f.code for f in info.value.findings}


def test_run_outside_wiki_is_a_usage_error(tmp_path: Path, wiki: Path) -> None:
    other = make_wiki(tmp_path / "other")
    rb = sample_run(other)
    with pytest.raises(UsageError):
        promote(rb.run.path, wiki, policy=policy_of(wiki))


def test_bad_concept_slug_and_missing_result(wiki: Path) -> None:
    rb = sample_run(wiki)
    with pytest.raises(UsageError):
        promote(rb.run.path, wiki, concept="index", policy=policy_of(wiki))
    rb.run.result_path.unlink()
    with pytest.raises(UsageError):
        promote(rb.run.path, wiki, policy=policy_of(wiki))


def test_broken_existing_concept_is_refused(wiki: Path) -> None:
    rb = sample_run(wiki)
    promote(rb.run.path, wiki, policy=policy_of(wiki))
    path = wiki / "concepts" / "alpha.md"
    path.write_text(path.read_text(encoding="utf-8").replace(GENERATED_END, ""), encoding="utf-8")
    before = tree_digest(wiki)
    with pytest.raises(Exception) as info:
        promote(rb.run.path, wiki, policy=policy_of(wiki))
    assert getattr(info.value, "reason", None) is not None and info.value.reason.value == "SCHEMA_ERROR"
    assert tree_digest(wiki) == before


def test_commit_is_all_or_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    old = tmp_path / "old.md"
    old.write_bytes(b"old bytes")
    new = tmp_path / "new.md"
    third = tmp_path / "third.md"
    third.write_bytes(b"third")
    real = promote_module._fs.write_atomic
    calls = {"n": 0}

    def flaky(path: Path, data: bytes, *, mode: int = 0o644) -> None:
        calls["n"] += 1
        if path == third and data != b"third":
            raise OSError(28, "No space left on device")
        real(path, data, mode=mode)

    monkeypatch.setattr(promote_module._fs, "write_atomic", flaky)
    writes = [
        PlannedWrite(old, b"new old", b"old bytes"),
        PlannedWrite(new, b"created", None),
        PlannedWrite(third, b"changed", b"third"),
    ]
    with pytest.raises(OSError):
        commit_writes(writes)
    assert old.read_bytes() == b"old bytes"
    assert not new.exists()
    assert third.read_bytes() == b"third"


def test_commit_refuses_when_file_changed_since_plan(tmp_path: Path) -> None:
    target = tmp_path / "c.md"
    target.write_bytes(b"edited meanwhile")
    with pytest.raises(Exception) as info:
        commit_writes([PlannedWrite(target, b"new", b"planned from")])
    assert info.value.__class__.__name__ == "ConflictError"
    assert target.read_bytes() == b"edited meanwhile"


def test_cli_promote_check_json_and_refusal(cli, wiki: Path) -> None:  # type: ignore[no-untyped-def]
    rb = sample_run(wiki)
    result = cli("promote", "--run-dir", str(rb.run.path), "--wiki", str(wiki), "--check", "--json")
    assert result.status == 0
    data = result.json()
    assert data["ok"] and data["created"] and not data["written"]
    assert not (wiki / "concepts" / "alpha.md").exists()
    result = cli("promote", "--run-dir", str(rb.run.path), "--wiki", str(wiki))
    assert result.status == 0 and (wiki / "concepts" / "alpha.md").exists()
    tamper("snapshot-text", rb)
    result = cli("promote", "--run-dir", str(rb.run.path), "--wiki", str(wiki), "--json")
    assert result.status == 1
    codes = {f["reason_code"] for f in result.json()["findings"]}
    assert "SNAPSHOT_HASH_MISMATCH" in codes
    result = cli("promote", "--run-dir", str(rb.run.path), "--wiki", str(wiki))
    assert result.status == 1
    assert result.err_lines and "Traceback" not in result.err  # the refusal, on stderr (its codes: above)


def test_cli_promote_usage_error(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    result = cli("promote", "--run-dir", str(tmp_path / "nope"), "--wiki", str(tmp_path))
    assert result.status == 2 and len(result.err_lines) == 1
