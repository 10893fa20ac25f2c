"""``publisher proof`` and ``publisher proof verify`` (CONTRACT section 16): exit statuses and the
reason codes and checks a refusal names; the proof verified with nothing but the file."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from conftest import CliResult, make_record

from publisher.kernel.merkle import merkle_root
from publisher.runs import Run, init_run

Cli = Callable[..., CliResult]
TEXT = "".join(f"Sentence {i} of a long source, with ünïcode and 😀. " for i in range(300))


@pytest.fixture
def stored(tmp_path: Path) -> tuple[Run, str]:
    run = init_run(tmp_path / "run", "run")
    snap, _ = run.store.put(make_record(text=TEXT))
    return run, snap.source_id


def _proof(cli: Cli, run: Run, sid: str, start: int, end: int, tmp_path: Path) -> tuple[Path, dict[str, Any]]:
    result = cli("proof", "--run-dir", run.path, "--source-id", sid, "--start", start, "--end", end, "--json")
    assert result.status == 0, result.err
    data = result.json()
    path = tmp_path / f"proof-{start}-{end}.json"
    path.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
    return path, data


def _refusal(result: CliResult) -> list[tuple[str, str]]:
    assert result.status == 1, (result.out, result.err)
    return [(f["code"], f["field"]) for f in result.json()["findings"]]


def test_proof_prints_the_contract_object_and_verifies_offline(cli: Cli, stored: tuple[Run, str], tmp_path: Path):
    run, sid = stored
    start, end = 1000, 1100
    path, data = _proof(cli, run, sid, start, end, tmp_path)
    assert list(data) == [
        "source_id",
        "start",
        "end",
        "chunk_size",
        "tree_size",
        "first_chunk",
        "chunks",
        "paths",
        "merkle_root",
    ]
    snap = run.store.read(sid)
    assert data["merkle_root"] == snap.merkle_root == merkle_root(TEXT)
    assert data["tree_size"] == snap.merkle_size
    # No snapshot needed: the run is gone.
    import shutil

    shutil.rmtree(run.path)
    ok = cli("proof", "verify", path, "--root", snap.merkle_root, "--tree-size", snap.merkle_size, "--json")
    assert ok.status == 0, ok.err
    assert ok.json()["excerpt"] == TEXT[start:end]
    assert ok.json()["anchored"] is True and ok.json()["anchor"]["kind"] == "root"
    # Consistent with its own root only: not anchored, exit 1.
    alone = cli("proof", "verify", path, "--json")
    assert alone.status == 1 and alone.json()["anchored"] is False
    assert [(f["field"], f["code"]) for f in alone.json()["findings"]] == [("anchor", "SNAPSHOT_HASH_MISMATCH")]


def _mutated(path: Path, change: Callable[[dict[str, Any]], None]) -> Path:
    data = json.loads(path.read_text(encoding="utf-8"))
    change(data)
    out = path.with_name("mutated.json")
    out.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
    return out


def _flip_char(data: dict[str, Any]) -> None:
    chunk = data["chunks"][0]
    i = 700
    data["chunks"][0] = chunk[:i] + ("Z" if chunk[i] != "Z" else "Y") + chunk[i + 1 :]


def _swap_path(data: dict[str, Any]) -> None:
    path = data["paths"][0]
    path[0], path[1] = path[1], path[0]


def test_proof_verify_refuses_each_forgery(cli: Cli, stored: tuple[Run, str], tmp_path: Path) -> None:
    run, sid = stored
    path, data = _proof(cli, run, sid, 5000, 5010, tmp_path)
    root, size = data["merkle_root"], str(data["tree_size"])
    anchor = ("--root", root, "--tree-size", size, "--json")
    assert cli("proof", "verify", path, *anchor).status == 0
    assert _refusal(cli("proof", "verify", _mutated(path, _flip_char), *anchor)) == [("SNAPSHOT_HASH_MISMATCH", "path")]
    assert _refusal(cli("proof", "verify", _mutated(path, _swap_path), *anchor)) == [("SNAPSHOT_HASH_MISMATCH", "path")]
    wrong_size = _mutated(path, lambda d: d.update(tree_size=d["tree_size"] + 1))
    got = _refusal(cli("proof", "verify", wrong_size, *anchor))
    assert ("SNAPSHOT_HASH_MISMATCH", "tree_size") in got or ("SNAPSHOT_HASH_MISMATCH", "path") in got
    other = merkle_root(TEXT + ".")
    other_anchor = ("--root", other, "--tree-size", size, "--json")
    assert _refusal(cli("proof", "verify", path, *other_anchor)) == [("SNAPSHOT_HASH_MISMATCH", "root")]
    forged_root = _mutated(path, lambda d: d.update(merkle_root=other))
    assert _refusal(cli("proof", "verify", forged_root, "--json")) == [("SNAPSHOT_HASH_MISMATCH", "path")]


def test_a_proof_made_for_its_own_root_is_not_anchored(cli: Cli, stored: tuple[Run, str], tmp_path: Path) -> None:
    """A hand-made proof of text the snapshot never held: consistent with the root it carries, so
    every path recomputes, but nothing anchors that root (exit 1, ``anchored: false``); the
    record and the wiki anchor it to the stored text and refuse it."""
    from publisher.kernel.merkle import build_proof

    run, sid = stored
    forged_text = TEXT.replace("Sentence 7 ", "Sentence 8 ")
    forged = build_proof(sid, forged_text, 0, 200).wire()
    path = tmp_path / "forged.json"
    path.write_text(json.dumps(forged, ensure_ascii=False), encoding="utf-8")
    alone = cli("proof", "verify", path, "--json")
    assert alone.status == 1 and alone.json()["anchored"] is False
    assert [f["field"] for f in alone.json()["findings"]] == ["anchor"]
    record = run.path / "sources" / f"{sid}.json"
    assert _refusal(cli("proof", "verify", path, "--record", record, "--json")) == [("SNAPSHOT_HASH_MISMATCH", "root")]
    honest, _ = _proof(cli, run, sid, 0, 200, tmp_path)
    ok = cli("proof", "verify", honest, "--record", record, "--json")
    assert ok.status == 0 and ok.json()["anchor"]["kind"] == "record", ok.err
    # A record that does not verify anchors nothing.
    bad = tmp_path / "bad-record.json"
    bad.write_text(record.read_text(encoding="utf-8").replace("Sentence 7 ", "Sentence 8 "), encoding="utf-8")
    refused = cli("proof", "verify", honest, "--record", bad, "--json")
    assert refused.status == 1 and refused.json()["anchored"] is False


def test_a_root_alone_does_not_anchor_where_an_excerpt_lies(cli: Cli, tmp_path: Path) -> None:
    # Chunk 2 of a tree of 3 is also leaf 1 of a tree of 2 under the same root: with only the root
    # trusted, a proof could move the excerpt 1,024 code points earlier and still verify.
    from publisher.kernel.merkle import MerkleTree

    text = "a" * 1024 + "b" * 1024 + "c" * 52
    tree = MerkleTree.of_text(text)
    forged = {
        "source_id": "src-" + "0" * 64,
        "start": 1024,
        "end": 1076,
        "chunk_size": 1024,
        "tree_size": 2,
        "first_chunk": 1,
        "chunks": ["c" * 52],
        "paths": [[tree.levels[1][0].hex()]],
        "merkle_root": tree.root,
    }
    path = tmp_path / "forged.json"
    path.write_text(json.dumps(forged), encoding="utf-8")
    alone = cli("proof", "verify", path, "--root", tree.root, "--json")
    assert alone.status == 2 and len(alone.err_lines) == 1 and alone.json()["error"]["field"] == "tree_size"
    anchored = cli("proof", "verify", path, "--root", tree.root, "--tree-size", tree.size, "--json")
    assert _refusal(anchored) == [("SNAPSHOT_HASH_MISMATCH", "tree_size")]


def test_a_root_beside_a_record_or_wiki_is_a_usage_error(cli: Cli, stored: tuple[Run, str], tmp_path: Path) -> None:
    """A forged proof's own root given beside ``--record`` would be trusted and the record never
    read: two anchors are refused (exit 2), so the one the reader named is the one checked."""
    from publisher.kernel.merkle import build_proof

    run, sid = stored
    forged = build_proof(sid, TEXT.replace("Sentence 7 ", "Sentence 8 "), 0, 200).wire()
    path = tmp_path / "forged.json"
    path.write_text(json.dumps(forged, ensure_ascii=False), encoding="utf-8")
    record = run.path / "sources" / f"{sid}.json"
    own = ("--root", forged["merkle_root"], "--tree-size", str(forged["tree_size"]))
    for anchor in (("--record", record), ("--wiki", tmp_path)):
        both = cli("proof", "verify", path, *own, *anchor, "--json")
        assert both.status == 2 and len(both.err_lines) == 1, (both.out, both.err)
        assert both.json()["error"]["field"] == "root"
    assert _refusal(cli("proof", "verify", path, "--record", record, "--json")) == [("SNAPSHOT_HASH_MISMATCH", "root")]


def test_a_proof_or_record_past_the_limit_is_refused_unread(
    cli: Cli, stored: tuple[Run, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A huge file (here a sparse one of 8 GiB) is refused from its stated size, one line, exit 2:
    never read whole into memory first."""
    import os

    from publisher.kernel import _fs

    read = os.read
    taken = [0]

    def counted(fd: int, n: int) -> bytes:
        data = read(fd, n)
        taken[0] += len(data)
        return data

    monkeypatch.setattr(_fs.os, "read", counted)
    run, sid = stored
    honest, _ = _proof(cli, run, sid, 0, 200, tmp_path)
    huge = tmp_path / "huge.json"
    with huge.open("wb") as f:
        f.truncate(8 << 30)
    taken[0] = 0
    for argv in (("proof", "verify", huge), ("proof", "verify", honest, "--record", huge)):
        result = cli(*argv, "--json")
        assert result.status == 2 and len(result.err_lines) == 1, (argv, result.err)
    assert taken[0] < 1 << 20


def test_proof_verify_refuses_what_is_not_a_proof(cli: Cli, tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    for body, code in (("{", "SCHEMA_ERROR"), ('{"a": 1, "a": 2}', "SCHEMA_ERROR"), ("[]", "SCHEMA_ERROR")):
        bad.write_text(body)
        result = cli("proof", "verify", bad, "--json")
        assert _refusal(result)[0][0] == code
        assert len(result.err_lines) == 1


def test_hostile_proof_files_are_one_line_refusals(cli: Cli, stored: tuple[Run, str], tmp_path: Path) -> None:
    """Text spelt otherwise (the chunk in NFD: the same text to a reader, other code points), numbers
    spelt otherwise (1000.0, an integer of 5,000 digits), a lone surrogate escape and nesting too
    deep for a parser: each is exit 1 with its reason code in one line, never a traceback."""
    import unicodedata

    run, sid = stored
    path, data = _proof(cli, run, sid, 1000, 1100, tmp_path)
    anchor = ("--root", data["merkle_root"], "--tree-size", str(data["tree_size"]), "--json")
    text = path.read_text(encoding="utf-8")
    nfd = {**data, "chunks": [unicodedata.normalize("NFD", c) for c in data["chunks"]]}
    assert nfd["chunks"] != data["chunks"]
    bodies = {
        "nfd": json.dumps(nfd, ensure_ascii=False),
        "float": text.replace('"start": 1000', '"start": 1000.0', 1),
        "huge": text.replace('"start": 1000', '"start": 1' + "0" * 5000, 1),
        "surrogate": text.replace('"chunks": ["', '"chunks": ["\\ud800', 1),
        "deep": "[" * 100_000 + "]" * 100_000,
    }
    for name, body in bodies.items():
        assert body != text, name
        bad = tmp_path / f"{name}.json"
        bad.write_text(body, encoding="utf-8")
        result = cli("proof", "verify", bad, *anchor)
        codes = _refusal(result)
        assert codes and len(result.err_lines) == len(codes), (name, result.err)
        assert {code for code, _ in codes} <= {"SCHEMA_ERROR", "SNAPSHOT_HASH_MISMATCH"}, (name, codes)


def test_usage_errors_exit_2(cli: Cli, stored: tuple[Run, str], tmp_path: Path) -> None:
    run, sid = stored
    assert cli("proof", "verify", tmp_path / "missing.json").status == 2
    path, _ = _proof(cli, run, sid, 0, 5, tmp_path)
    assert cli("proof", "verify", path, "--root", "sha256:XYZ").status == 2
    assert cli("proof", "--run-dir", run.path).status == 2
    out_of_range = cli("proof", "--run-dir", run.path, "--source-id", sid, "--start", 5, "--end", 10**9, "--json")
    error = out_of_range.json()["error"]
    assert out_of_range.status == 1 and len(out_of_range.err_lines) == 1
    assert (error["reason_code"], error["source_id"], error["start"], error["end"]) == (
        "SPAN_OUT_OF_RANGE",
        sid,
        5,
        10**9,
    ), error
    unknown = cli("proof", "--run-dir", run.path, "--source-id", "src-" + "0" * 64, "--start", 0, "--end", 1)
    assert unknown.status != 0 and len(unknown.err_lines) == 1


# --- the documentation's worked example and standalone verifier --------------------------------

DOC = Path(__file__).resolve().parents[1] / "docs" / "proofs.md"


def _doc_blocks(lang: str) -> list[str]:
    import re

    return re.findall(rf"```{lang}\n(.*?)```", DOC.read_text(encoding="utf-8"), flags=re.S)


def test_the_worked_example_is_what_the_code_prints() -> None:
    import hashlib

    from publisher.kernel.merkle import build_proof

    text = "a" * 1024 + "b" * 1024 + "c" * 52
    sid = "src-" + hashlib.sha256(b"https://example.org/abc\x00" + text.encode()).hexdigest()
    proof = build_proof(sid, text, 1020, 1030).wire()
    [shown] = [json.loads(b.replace('"aaa…"', '"a"').replace('"bbb…"', '"b"')) for b in _doc_blocks("json")]
    assert {k: v for k, v in shown.items() if k != "chunks"} == {k: v for k, v in proof.items() if k != "chunks"}
    assert [c[0] for c in proof["chunks"]] == shown["chunks"]


def test_the_documented_standalone_verifier_accepts_and_refuses(tmp_path: Path) -> None:
    import hashlib
    import subprocess
    import sys

    from publisher.kernel.merkle import build_proof

    [snippet] = _doc_blocks("python")
    script = tmp_path / "verify.py"
    script.write_text(snippet, encoding="utf-8")
    text = TEXT[:9000]
    sid = "src-" + hashlib.sha256(b"u\x00" + text.encode()).hexdigest()
    proof = build_proof(sid, text, 3000, 3100).wire()
    root, size = proof["merkle_root"], str(proof["tree_size"])

    def run(data: dict[str, Any], *anchor: str) -> subprocess.CompletedProcess[str]:
        path = tmp_path / "p.json"
        path.write_text(json.dumps(data), encoding="utf-8")
        return subprocess.run([sys.executable, script, path, *anchor], capture_output=True, text=True, timeout=60)

    ok = run(proof, root, size)
    assert ok.returncode == 0 and ok.stdout == text[3000:3100] + "\n"
    flipped = json.loads(json.dumps(proof))
    _flip_char(flipped)
    swapped = json.loads(json.dumps(proof))
    _swap_path(swapped)
    assert run(flipped, root, size).returncode != 0
    assert run(swapped, root, size).returncode != 0
    assert run(proof, root, str(int(size) + 1)).returncode != 0
    assert run(proof, merkle_root(text + "x"), size).returncode != 0


def test_the_wiki_anchors_a_proof_to_a_signed_acquisition(cli: Cli, tmp_path: Path, corpus_dir: Path) -> None:
    from _claims_helpers import claims_wiki

    from publisher.acquire.signing import new_key_pair

    private, public, _ = new_key_pair(tmp_path / "keys")
    (tmp_path / "wiki" / "keys").mkdir(parents=True)
    (tmp_path / "wiki" / "keys" / "wiki.pub").write_bytes(public.read_bytes())
    trusted = "extra:\n  evidence:\n    trusted_keys: [keys/wiki.pub]\n"
    cw = claims_wiki(tmp_path / "wiki", corpus_dir, key=private, extra=trusted)
    path, _ = _proof(cli, cw.rb.run, cw.a_full, 100, 180, tmp_path)
    ok = cli("proof", "verify", path, "--wiki", cw.wiki, "--json")
    assert ok.status == 0, ok.err
    anchor = ok.json()["anchor"]
    assert anchor["kind"] == "wiki" and anchor["signed_by"] and anchor["event_id"]
    # A snapshot the wiki does not hold anchors nothing.
    stranger = init_run(tmp_path / "elsewhere", "elsewhere")
    snap, _ = stranger.store.put(make_record(text=TEXT))
    other, _ = _proof(cli, stranger, snap.source_id, 0, 10, tmp_path)
    refused = cli("proof", "verify", other, "--wiki", cw.wiki, "--json")
    assert refused.status == 1 and refused.json()["anchored"] is False
    assert [f["field"] for f in refused.json()["findings"]] == ["anchor"]
