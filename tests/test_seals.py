"""Seals required: on a wiki that trusts keys a stripped chain or seal fails the check; on a wiki
configured unsigned it is a warning with a note code; upstream-layout runs keep upstream's rules."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any

import pytest
from _policy import options_of, policy_of
from _wiki_helpers import make_wiki, sample_run

from publisher.acquire.signing import wiki_key_file
from publisher.gate.pipeline import check_run
from publisher.kernel.canonical import canonical_bytes
from publisher.kernel.findings import Finding, NoteCode
from publisher.site.scaffold import new_wiki
from publisher.wiki.check import check_wiki


def _signed(tmp_path: Path) -> tuple[Path, Any]:
    wiki = tmp_path / "w"
    new_wiki(wiki)
    return wiki, sample_run(wiki, key=wiki_key_file(policy_of(wiki).trusted_keys.ids))


def _unsigned(tmp_path: Path) -> tuple[Path, Any]:
    wiki = make_wiki(tmp_path / "wiki")
    assert not policy_of(wiki).signed
    return wiki, sample_run(wiki)


def _rewrite_log(run: Path, edit: Any) -> None:
    """Edit every line of the log and chain it again (as a forger would), where lines carry ``prev``."""
    path = run / "events.jsonl"
    out: list[bytes] = []
    for raw in path.read_bytes().splitlines():
        line = edit(json.loads(raw))
        if line.get("prev") is not None:
            line["prev"] = "sha256:" + hashlib.sha256(out[-1]).hexdigest()
        out.append(canonical_bytes(line))
    os.chmod(path, 0o644)
    path.write_bytes(b"".join(line + b"\n" for line in out))


def _strip_snapshot_seals(run: Path) -> None:
    for path in sorted((run / "sources").glob("src-*.json")):
        record = json.loads(path.read_bytes())
        record.pop("record_hash", None)
        os.chmod(path, 0o644)
        path.write_bytes(canonical_bytes(record) + b"\n")


def _noted(findings: list[Finding], code: NoteCode) -> list[Finding]:
    return [f for f in findings if f.field == code.value]


def _without(key: str) -> Any:
    return lambda line: {k: v for k, v in line.items() if k != key}


def test_a_stripped_chain_fails_the_check_of_a_signed_wiki(tmp_path: Path) -> None:
    wiki, rb = _signed(tmp_path)
    assert check_wiki(wiki, policy=policy_of(wiki)).ok
    _rewrite_log(rb.run.path, _without("prev"))
    checked = check_wiki(wiki, policy=policy_of(wiki))
    unchained = _noted(checked.findings, NoteCode.LOG_UNCHAINED)
    assert unchained and all(f.check == "C-EVENT-LOG" and f.severity == "fail" for f in unchained)
    assert not checked.ok


def test_unsealed_snapshots_and_events_fail_the_check_of_a_signed_wiki(tmp_path: Path) -> None:
    wiki, rb = _signed(tmp_path)
    _strip_snapshot_seals(rb.run.path)
    _rewrite_log(rb.run.path, _without("record_hash"))
    findings = check_wiki(wiki, policy=policy_of(wiki)).findings
    snapshots = _noted(findings, NoteCode.METADATA_UNSEALED)
    assert snapshots and {(f.check, f.code, f.severity) for f in snapshots} == {
        ("C-SNAPSHOT", "SNAPSHOT_HASH_MISMATCH", "fail")
    }
    events = _noted(findings, NoteCode.EVENT_UNSEALED)
    assert events and {(f.check, f.severity) for f in events} == {("C-EVENT-LOG", "fail")}


@pytest.mark.parametrize("strip", ["chain", "seals"])
def test_an_unsigned_wiki_warns_with_a_note_code(tmp_path: Path, strip: str) -> None:
    wiki, rb = _unsigned(tmp_path)
    if strip == "chain":
        _rewrite_log(rb.run.path, _without("prev"))
        codes = {NoteCode.LOG_UNCHAINED}
    else:
        _strip_snapshot_seals(rb.run.path)
        _rewrite_log(rb.run.path, _without("record_hash"))
        codes = {NoteCode.METADATA_UNSEALED, NoteCode.EVENT_UNSEALED}
    rb.assemble()  # the stripped log and snapshots are what the result now reads
    rc = check_run(rb.run, options_of(rb.run))
    noted = [f for f in rc.findings if f.field in {c.value for c in codes}]
    assert {f.field for f in noted} == {c.value for c in codes}
    assert {f.severity for f in noted} == {"warn"}  # visible on the run's report, never a refusal
    checked = check_wiki(wiki, policy=policy_of(wiki))
    assert checked.ok, [f.one_line() for f in checked.findings]
    assert {c.value for c in codes} <= {c.value for c in NoteCode if any(c.value in n for n in checked.notices)}
