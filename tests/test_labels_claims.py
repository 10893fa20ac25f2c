"""Claims bind their evidence by what it cites (CONTRACT sections 10 and 14).

A re-promotion after a span is added leaves every label and every claim as it was; a claim whose
cited span changed shows "provenance invalid now" and is never re-pointed; ``publisher migrate
labels`` rewrites the positional labels of earlier versions and the claims bound to them, all or
nothing, idempotently, leaving the append-only assessment log as it is.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from _claims_helpers import ClaimsWiki, claims_wiki
from _policy import policy_of
from conftest import CliResult
from test_claims_assess import assess

from publisher.kernel import _fs
from publisher.wiki.check import check_wiki
from publisher.wiki.claims.log import ASSESSMENTS_FILE
from publisher.wiki.concepts import parse_concept, with_generated
from publisher.wiki.promote import promote
from publisher.wiki.promoted import CHECK, is_stable_label, render_block

Cli = Callable[..., CliResult]


@pytest.fixture
def cw(tmp_path: Path, corpus_dir: Path) -> ClaimsWiki:
    return claims_wiki(tmp_path / "wiki", corpus_dir)


def _extraction(cw: ClaimsWiki) -> Path:
    (path,) = [p for p in cw.rb.run.extractions_dir.glob("*.json") if cw.a_full in p.read_text(encoding="utf-8")]
    return path


def _footnotes(cw: ClaimsWiki) -> dict[str, tuple[tuple[str, int, int], ...]]:
    doc = parse_concept(cw.concept.read_text(encoding="utf-8"))
    return {n.label: tuple((r.source_id, r.start, r.end) for r in n.refs) for n in doc.footnotes}


def _state(cw: ClaimsWiki, claim_id: str) -> tuple[bool, list[str], list[tuple[str | None, str | None]]]:
    wiki = check_wiki(cw.wiki, policy=policy_of(cw.wiki))
    (state,) = [s for s in wiki.claims if s.claim.id == claim_id]
    return state.provenance_valid, state.provenance, [(f.check, f.field) for f in wiki.findings]


def test_repromotion_after_a_span_is_added_moves_no_label_and_no_claim(cli: Cli, cw: ClaimsWiki) -> None:
    second = cw.labels_of(cw.a_full)[1]
    assert assess(cli, cw, "c1", "It helps.", "S", "--evidence", second).status == 0
    notes, front = _footnotes(cw), cw.front()
    path = _extraction(cw)
    record = json.loads(path.read_text(encoding="utf-8"))
    first = record["spans"][0]
    # A new span at the front of the artifact: a positional label would now name it.
    record["spans"].insert(0, {"claim": "A new first span.", "source_id": cw.a_full, "start": 0, "end": 40})
    path.write_text(json.dumps(record), encoding="utf-8")
    cw.rb.assemble()
    promote(cw.rb.run.path, cw.wiki, concept="trials", policy=policy_of(cw.wiki))
    now = _footnotes(cw)
    assert len(now) == len(notes) + 1
    assert {label: now[label] for label in notes} == notes
    assert cw.front().claims == front.claims
    assert first["start"] != 0
    valid, reasons, findings = _state(cw, "c1")
    assert valid and reasons == [] and findings == []


def test_a_claim_whose_span_changed_is_provenance_invalid_never_repointed(cli: Cli, cw: ClaimsWiki) -> None:
    label = cw.labels_of(cw.a_full)[0]
    assert assess(cli, cw, "c1", "It helps.", "S", "--evidence", label).status == 0
    (cited,) = _footnotes(cw)[label]
    path = _extraction(cw)
    record = json.loads(path.read_text(encoding="utf-8"))
    spans = record["spans"]
    moved = next(s for s in spans if (s["source_id"], s["start"], s["end"]) == cited)
    moved["end"] -= 1
    path.write_text(json.dumps(record), encoding="utf-8")
    cw.rb.assemble()
    promote(cw.rb.run.path, cw.wiki, concept="trials", policy=policy_of(cw.wiki))
    assert label not in _footnotes(cw)  # the label named that span: it went with it
    assert cw.front().claims[0].evidence == (label,)
    valid, reasons, findings = _state(cw, "c1")
    assert not valid and any(label in reason for reason in reasons)
    assert findings == []


def _to_legacy(cw: ClaimsWiki) -> list[str]:
    """Rewrite the concept's block as an earlier version wrote it (positional labels); its labels."""
    wiki = check_wiki(cw.wiki, policy=policy_of(cw.wiki))
    text = cw.concept.read_text(encoding="utf-8")
    doc = parse_concept(text)
    runs = [wiki.run_by_rel(entry.path) for entry in doc.front.runs]
    legacy = render_block([r for r in runs if r is not None], wiki, legacy=True)
    head = text[: len(text) - len(doc.body)]
    cw.concept.write_text(head + with_generated(doc.body, legacy.text), encoding="utf-8")
    return list(legacy.labels)


def test_migrate_labels_round_trip(cli: Cli, cw: ClaimsWiki) -> None:
    labels = _to_legacy(cw)
    assert not any(is_stable_label(label) for label in labels)
    old = next(label for label in labels if label in _footnotes(cw) and cw.a_full in _footnotes(cw)[label][0])
    assert assess(cli, cw, "c1", "It helps.", "S", "--evidence", old).status == 0
    (cited,) = _footnotes(cw)[old]
    assert [(f.check, f.field) for f in check_wiki(cw.wiki, policy=policy_of(cw.wiki)).findings] == [(CHECK, "labels")]
    log = (cw.wiki / ASSESSMENTS_FILE).read_bytes()
    legacy_text = cw.concept.read_bytes()

    planned = cli("migrate", "labels", "--wiki", cw.wiki, "--check", "--json")
    assert planned.status == 0, planned.err
    assert cw.concept.read_bytes() == legacy_text  # --check writes nothing

    done = cli("migrate", "labels", "--wiki", cw.wiki, "--json")
    assert done.status == 0, done.err
    summary = json.loads(done.out)
    assert summary["written"] and summary["claims"] == 1 and summary["concepts"] == ["concepts/trials.md"]
    assert summary["labels"] == json.loads(planned.out)["labels"]
    new = summary["labels"]["concepts/trials.md"][old]
    assert is_stable_label(new) and _footnotes(cw)[new] == (cited,)
    assert all(is_stable_label(label) for label in _footnotes(cw))
    assert cw.front().claims[0].evidence == (new,)
    assert (cw.wiki / ASSESSMENTS_FILE).read_bytes() == log  # append-only: nothing appended, nothing edited
    valid, reasons, findings = _state(cw, "c1")
    assert valid and reasons == [] and findings == []

    migrated = cw.concept.read_bytes()
    again = cli("migrate", "labels", "--wiki", cw.wiki, "--json")
    assert again.status == 0 and json.loads(again.out)["concepts"] == []
    assert cw.concept.read_bytes() == migrated
    # The promoted block is what promotion writes now: a re-promotion changes nothing.
    assert not promote(cw.rb.run.path, cw.wiki, concept="trials", policy=policy_of(cw.wiki)).changed


def test_a_migrated_claim_cannot_be_pointed_at_another_span(cli: Cli, cw: ClaimsWiki) -> None:
    labels = _to_legacy(cw)
    notes = _footnotes(cw)
    old = next(label for label in labels if label in notes)
    assert assess(cli, cw, "c1", "It helps.", "S", "--evidence", old).status == 0
    assert cli("migrate", "labels", "--wiki", cw.wiki).status == 0
    (new,) = cw.front().claims[0].evidence
    other = next(label for label, refs in _footnotes(cw).items() if label != new and refs != _footnotes(cw)[new])
    text = cw.concept.read_text(encoding="utf-8")
    cw.concept.write_text(text.replace(f"evidence:\n  - {new}", f"evidence:\n  - {other}", 1), encoding="utf-8")
    assert cw.front().claims[0].evidence == (other,)
    assert ("C-CLAIM", "ASSESSMENT_MISMATCH") in [
        (f.check, f.field) for f in check_wiki(cw.wiki, policy=policy_of(cw.wiki)).findings
    ]


def test_migrate_labels_is_all_or_nothing(cli: Cli, cw: ClaimsWiki, monkeypatch: pytest.MonkeyPatch) -> None:
    promote(cw.rb.run.path, cw.wiki, concept="second", policy=policy_of(cw.wiki))
    second = cw.wiki / "concepts" / "second.md"
    _to_legacy(cw)
    text = second.read_text(encoding="utf-8")
    doc = parse_concept(text)
    wiki = check_wiki(cw.wiki, policy=policy_of(cw.wiki))
    runs = [wiki.run_by_rel(entry.path) for entry in doc.front.runs]
    legacy = render_block([r for r in runs if r is not None], wiki, legacy=True)
    second.write_text(text[: len(text) - len(doc.body)] + with_generated(doc.body, legacy.text), encoding="utf-8")
    before = {p: p.read_bytes() for p in (cw.concept, second)}

    real = _fs.write_atomic
    calls: list[Path] = []

    def failing(path: Path, data: bytes, **kw: object) -> None:
        calls.append(path)
        if len(calls) == 2:
            raise OSError(28, "No space left on device")
        real(path, data, **kw)  # type: ignore[arg-type]

    monkeypatch.setattr(_fs, "write_atomic", failing)
    out = cli("migrate", "labels", "--wiki", cw.wiki)
    assert out.status != 0
    monkeypatch.undo()
    assert {p: p.read_bytes() for p in before} == before

    # A wiki with another finding is refused before anything is written.
    (cw.wiki / "concepts" / "broken.md").write_text("---\nschema_version: 1\n---\n", encoding="utf-8")
    out = cli("migrate", "labels", "--wiki", cw.wiki, "--json")
    assert out.status == 1
    assert {p: p.read_bytes() for p in before} == before
