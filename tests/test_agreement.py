"""One pipeline, four doors: ``publisher check``, ``verify``, ``promote --check`` and the build agree.

Every tampering of a run (the kit of ``_wiki_helpers.tamper`` plus attacks on the result, the
records, the config and the log) is refused by all four, and the build leaves the published site
byte-identical. Concept tamperings concern the wiki, not a run: ``check`` and the build refuse
them (``verify`` and ``promote`` look at runs, and promotion rewrites its own block).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from _policy import policy_of
from _wiki_helpers import (
    TAMPERINGS,
    RunBuilder,
    build_wiki,
    codes,
    edit_json,
    make_wiki,
    refused_build,
    sample_run,
    tamper,
    tree_digest,
    writable,
)

from publisher.cli import main
from publisher.kernel.eventlog import append_event
from publisher.wiki.promote import promote


def _forged_accept(rb: RunBuilder) -> str:
    """An artifact backed by a source that was only registered moved into accepted[] as a pass."""
    text = "Registered, never fetched. Fabricated effect: 99% fewer events."
    sid = rb.run.store.put(_rebuilt("https://example.org/registered", text))[0].source_id
    append_event(
        rb.run.events_path,
        type="register",
        source_id=sid,
        url="https://example.org/registered",
        fresh=False,
        sha256=_digest(text),
    )
    rb.texts[sid] = text
    rb.record(
        "extraction",
        "forged",
        {
            "schema_version": 1,
            "evidence_id": "web:forged",
            "design": "x",
            "spans": [{"source_id": sid, "start": 0, "end": 10}],
        },
    )
    result = rb.assemble()
    (unresolved,) = {f["artifact_id"] for f in result["diagnostics"]["unresolved"]}

    def move(data: dict[str, Any]) -> None:
        data["accepted"].append(
            {
                "artifact_id": unresolved,
                "kind": "extraction",
                "evidence_id": "web:forged",
                "record": "workspace/extractions/forged.json",
                "source_ids": [sid],
                "paper": None,
                "url": "https://example.org/registered",
                "access": "full_text",
                "fresh": True,
                "claims": [
                    {
                        "claim": None,
                        "field": "spans[0]",
                        "source_id": sid,
                        "start": 0,
                        "end": 10,
                        "access": "full_text",
                        "excerpt": text[:10],
                        "section": None,
                        "page": None,
                    }
                ],
                "data": {},
                "quotes": [
                    {
                        "text": text[:10],
                        "source_id": sid,
                        "start": 0,
                        "end": 10,
                        "url": "https://example.org/registered",
                        "fresh": True,
                        "section": None,
                        "page": None,
                    }
                ],
            }
        )
        data["diagnostics"]["unresolved"] = []
        data["diagnostics"]["counts_by_reason"] = {}
        data["counts"]["accepted"] += 1
        data["counts"]["unresolved"] = 0
        data["gate"]["verdict"] = "pass"

    edit_json(rb.run.result_path, move)
    return "C-ASSEMBLER"


def _rebuilt(url: str, text: str) -> dict[str, Any]:
    from publisher.kernel.store import build_record

    return build_record(
        url=url,
        text=text,
        title=None,
        retrieved_at="2030-01-02T03:04:05Z",
        access="full_text",
        origin="web",
        paper=None,
    )


def _digest(text: str) -> str:
    import hashlib

    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _record_edited(rb: RunBuilder) -> str:
    path = next(rb.run.extractions_dir.glob("*.json"))
    data = json.loads(path.read_text(encoding="utf-8"))
    data["design"] = "edited after assembly"
    writable(path).write_text(json.dumps(data), encoding="utf-8")
    return "C-ASSEMBLER"


def _record_malformed(rb: RunBuilder) -> str:
    writable(next(rb.run.extractions_dir.glob("*.json"))).write_text("{not json", encoding="utf-8")
    return "C-ASSEMBLER"


def _inputs_hash_zeroed(rb: RunBuilder) -> str:
    def edit(data: dict[str, Any]) -> None:
        data["accepted"][0]["claims"][0]["claim"] = "A claim the agent never made."
        data["inputs_hash"] = "sha256:" + "0" * 64

    edit_json(rb.run.result_path, edit)
    return "C-ASSEMBLER"


def _result_duplicate_key(rb: RunBuilder) -> str:
    """result.json in exactly the layout the assembler writes, with a second ``accepted`` member
    whose excerpt is forged: a parser that keeps the last member would publish it."""
    data = json.loads(rb.run.result_path.read_text(encoding="utf-8"))
    forged = json.loads(json.dumps(data["accepted"]))
    forged[0]["claims"][0]["excerpt"] = "forged"
    text = json.dumps(data, ensure_ascii=False, indent=2)
    assert text.endswith("\n}")
    duplicate = json.dumps(forged, ensure_ascii=False, indent=2).replace("\n", "\n  ")
    writable(rb.run.result_path).write_text(text[:-2] + ',\n  "accepted": ' + duplicate + "\n}\n", encoding="utf-8")
    return "SCHEMA_ERROR"


def _config_broken(rb: RunBuilder) -> str:
    writable(rb.run.config_path).write_text("{", encoding="utf-8")
    return "SCHEMA_ERROR"


def _log_crlf(rb: RunBuilder) -> str:
    path = writable(rb.run.events_path)
    path.write_bytes(path.read_bytes().replace(b"\n", b"\r\n"))
    return "C-EVENT-LOG"


MORE: dict[str, Callable[[RunBuilder], str]] = {
    "result-forged-accept": _forged_accept,
    "record-edited": _record_edited,
    "record-malformed": _record_malformed,
    "inputs-hash-zeroed": _inputs_hash_zeroed,
    "result-duplicate-key": _result_duplicate_key,
    "config-broken": _config_broken,
    "log-crlf": _log_crlf,
}


def _cli(*args: str) -> tuple[int, str]:
    import contextlib
    import io

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        status = main(list(args))
    return status, out.getvalue() + err.getvalue()


@pytest.mark.parametrize("kind", [*TAMPERINGS, *MORE])
def test_every_run_tampering_is_refused_by_all_four(tmp_path: Path, kind: str) -> None:
    wiki = make_wiki(tmp_path / "wiki")
    rb = sample_run(wiki)
    promote(rb.run.path, wiki, policy=policy_of(wiki))
    build_wiki(wiki)
    published = tree_digest(wiki / "site")
    code = MORE[kind](rb) if kind in MORE else tamper(kind, rb)

    status, out = _cli("check", "--wiki", str(wiki), "--json")
    report = json.loads(out)
    assert status == 1 and code in {f["code"] for f in report["findings"]}, (kind, report["findings"])

    status, out = _cli("verify", "--run-dir", str(rb.run.path), "--gate", "--json")
    assert status != 0, (kind, out[-500:])

    status, out = _cli("promote", "--run-dir", str(rb.run.path), "--wiki", str(wiki), "--check", "--json")
    assert status != 0, (kind, out[-500:])

    assert code in codes(refused_build(wiki))
    assert tree_digest(wiki / "site") == published


@pytest.mark.parametrize("kind", ["concept-excerpt", "concept-offsets"])
def test_concept_tampering_is_refused_by_check_and_the_build(tmp_path: Path, kind: str) -> None:
    wiki = make_wiki(tmp_path / "wiki")
    rb = sample_run(wiki)
    promote(rb.run.path, wiki, policy=policy_of(wiki))
    build_wiki(wiki)
    published = tree_digest(wiki / "site")
    code = tamper(kind, rb)
    status, out = _cli("check", "--wiki", str(wiki), "--json")
    assert status == 1 and code in {f["code"] for f in json.loads(out)["findings"]}
    assert code in codes(refused_build(wiki))
    assert tree_digest(wiki / "site") == published
