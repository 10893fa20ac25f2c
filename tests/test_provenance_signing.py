"""Signed acquisition (issue 12): keys, signature round trips, tampering, trusted keys in the wiki.

With trusted keys listed in ``mkdocs.yml``, a source is fresh only through an acquisition event
signed by one of them naming this run: forged, unsigned, foreign-run, relabelled and altered
events are NO_FRESH_FETCH. Tests assert reason codes, never wording.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import stat
from collections.abc import Callable
from pathlib import Path

import pytest
from _policy import keys_of, options_of
from _provenance_helpers import PAGE, forge_fetch, make_wiki, serve, write_extraction
from conftest import CliResult, minimal_pdf
from cryptography.hazmat.primitives import serialization

from publisher.acquire.signing import (
    KEY_ENV,
    KeyRing,
    load_public_key,
    load_signer,
    new_key_pair,
    signature_problem,
)
from publisher.acquire.sources import add_local_pdf, fetch
from publisher.gate.assemble import assemble_run
from publisher.kernel.canonical import canonical_bytes
from publisher.kernel.eventlog import line_digest, read_log
from publisher.kernel.models import Event
from publisher.runs import Run

Cli = Callable[..., CliResult]


@pytest.fixture(autouse=True)
def _loopback_only(no_proxy: None) -> None:
    return None


@pytest.fixture
def keys(tmp_path: Path) -> dict[str, tuple[Path, Path, str]]:
    """Two key pairs, outside any wiki: ``ci`` (trusted below) and ``agent`` (never trusted)."""
    return {name: new_key_pair(tmp_path / "keys", name) for name in ("ci", "agent")}


def _trusting_wiki(tmp_path: Path, public: Path, slug: str = "r") -> tuple[Path, Run]:
    wiki = tmp_path / "wiki"
    (wiki / "keys").mkdir(parents=True, exist_ok=True)
    (wiki / "keys" / public.name).write_bytes(public.read_bytes())
    return make_wiki(wiki, trusted=[f"keys/{public.name}"], slug=slug)


def _codes(run: Run) -> set[str]:
    return {f.code for f in assemble_run(run, options_of(run), write=False).findings}


def _rewrite_log(run: Run, lines: list[dict[str, object]]) -> None:
    """Write ``lines`` as a correctly chained log (what an attacker with write access can do)."""
    out = []
    prev = None
    for line in lines:
        body = canonical_bytes({**line, "prev": prev})
        out.append(body)
        prev = line_digest(body)
    os.chmod(run.events_path, 0o644)
    run.events_path.write_bytes(b"".join(b + b"\n" for b in out))


def _raw_lines(run: Run) -> list[dict[str, object]]:
    return [json.loads(line) for line in run.events_path.read_text().splitlines()]


# --- keys --------------------------------------------------------------------------------------


def test_keys_new_writes_a_pem_pair_with_a_private_mode(tmp_path: Path, cli: Cli) -> None:
    result = cli("keys", "new", "--out", tmp_path / "k", "--name", "ci", "--json")
    assert result.status == 0, result.err
    data = result.json()
    private, public = Path(data["private_key"]), Path(data["public_key"])
    assert stat.S_IMODE(private.stat().st_mode) == 0o600
    assert private.read_bytes().startswith(b"-----BEGIN PRIVATE KEY-----")
    assert public.read_bytes().startswith(b"-----BEGIN PUBLIC KEY-----")
    raw = load_public_key(public).public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    assert data["key_id"] == hashlib.sha256(raw).hexdigest()
    again = cli("keys", "new", "--out", tmp_path / "k", "--name", "ci")
    assert again.status == 2 and len(again.err_lines) == 1
    assert private.read_bytes().startswith(b"-----BEGIN PRIVATE KEY-----")


def test_unreadable_or_wrong_keys_are_one_line_errors(tmp_path: Path, cli: Cli, keys: dict) -> None:
    wiki, run = _trusting_wiki(tmp_path, keys["ci"][1])
    not_a_key = tmp_path / "junk.pem"
    not_a_key.write_text("-----BEGIN PRIVATE KEY-----\nnot base64\n-----END PRIVATE KEY-----\n")
    for key in (tmp_path / "missing.key", not_a_key, keys["ci"][1], tmp_path):
        result = cli("source", "fetch", "--run-dir", run.path, "--url", "http://127.0.0.1:9/x", "--key", key)
        assert result.status == 2 and len(result.err_lines) == 1 and "Traceback" not in result.err, key
    assert run.events_path.read_bytes() == b""  # a bad key fails before any attempt
    (wiki / "keys" / "ci.pub").write_text("garbage")
    result = cli("assemble", "--run-dir", run.path)
    assert result.status == 2 and len(result.err_lines) == 1


def test_the_signing_key_comes_from_the_environment(tmp_path: Path, keys: dict, cli: Cli, monkeypatch) -> None:
    _, run = _trusting_wiki(tmp_path, keys["ci"][1])
    monkeypatch.setenv(KEY_ENV, str(keys["ci"][0]))
    with serve() as pages:
        pages.pages["/p"] = ("text/plain", PAGE.encode())
        result = cli("source", "fetch", "--run-dir", run.path, "--url", pages.url("/p"), "--json")
    assert result.status == 0, result.err
    assert result.json()["signed_by"] == keys["ci"][2]


# --- signatures --------------------------------------------------------------------------------


def _signed_fetch(run: Run, private: Path) -> Event:
    with serve() as pages:
        pages.pages["/p"] = ("text/plain; charset=utf-8", PAGE.encode())
        outcome = fetch(run, pages.url("/p"), signer=load_signer(private, run.name()))
    start = PAGE.index("The effect")
    write_extraction(run, outcome.snapshot.source_id, start, start + 20)
    return outcome.event


def test_signature_round_trip_and_tampering(tmp_path: Path, keys: dict) -> None:
    _, run = _trusting_wiki(tmp_path, keys["ci"][1])
    event = _signed_fetch(run, keys["ci"][0])
    ring = KeyRing({keys["ci"][2]: load_public_key(keys["ci"][1])})
    assert event.sig is not None and event.sig.key_id == keys["ci"][2] and event.sig.run == run.name()
    assert signature_problem(event, ring, run.name()) is None
    [stored] = read_log(run.events_path).events
    assert signature_problem(stored, ring, run.name()) is None

    value = bytearray(base64.b64decode(event.sig.value))
    value[5] ^= 1
    flipped = event.model_copy(update={"sig": event.sig.model_copy(update={"value": base64.b64encode(value).decode()})})
    assert signature_problem(flipped, ring, run.name()) is not None
    for change in ({"at": "2099-01-01T00:00:00Z"}, {"sha256": "0" * 64}, {"event_id": "ev-0002"}):
        assert signature_problem(event.model_copy(update=change), ring, run.name()) is not None
    relabelled = event.model_copy(update={"sig": event.sig.model_copy(update={"run": "other@2020-01-01T00:00:00Z"})})
    assert signature_problem(relabelled, ring, "other@2020-01-01T00:00:00Z") is not None
    assert signature_problem(event, ring, "other@2020-01-01T00:00:00Z") is not None
    other = KeyRing({keys["agent"][2]: load_public_key(keys["agent"][1])})
    assert signature_problem(event, other, run.name()) is not None


def test_a_signed_fetch_is_fresh_with_trusted_keys(tmp_path: Path, keys: dict) -> None:
    _, run = _trusting_wiki(tmp_path, keys["ci"][1])
    _signed_fetch(run, keys["ci"][0])
    assembly = assemble_run(run, options_of(run), write=False)
    assert assembly.findings == [] and assembly.verdict == "pass"


def test_a_signed_local_pdf_is_fresh_with_trusted_keys(tmp_path: Path, keys: dict) -> None:
    wiki, run = _trusting_wiki(tmp_path, keys["ci"][1])
    pdf = tmp_path / "p.pdf"
    pdf.write_bytes(minimal_pdf(["The effect was large in every arm."]))
    outcome = add_local_pdf(run, pdf, wiki, signer=load_signer(keys["ci"][0], run.name()))
    write_extraction(run, outcome.snapshot.source_id, 0, 10)
    assert _codes(run) == set()
    unsigned = add_local_pdf(run, pdf, wiki)  # a later unsigned event neither helps nor harms
    assert unsigned.event.sig is None and _codes(run) == set()


@pytest.mark.parametrize("who", ["unsigned", "agent"])
def test_unsigned_or_untrusted_events_never_make_a_source_fresh(tmp_path: Path, keys: dict, who: str) -> None:
    _, run = _trusting_wiki(tmp_path, keys["ci"][1])
    if who == "unsigned":
        with serve() as pages:
            pages.pages["/p"] = ("text/plain", PAGE.encode())
            outcome = fetch(run, pages.url("/p"))
        write_extraction(run, outcome.snapshot.source_id, 0, 10)
    else:
        _signed_fetch(run, keys["agent"][0])
    assert _codes(run) == {"NO_FRESH_FETCH"}


def test_a_forged_chained_fetch_event_is_refused_with_trusted_keys(tmp_path: Path, keys: dict) -> None:
    _, run = _trusting_wiki(tmp_path, keys["ci"][1])
    source_id = forge_fetch(run, "https://journal.example/a", "Invented text.")
    write_extraction(run, source_id, 0, 8)
    assert read_log(run.events_path).intact
    assert _codes(run) == {"NO_FRESH_FETCH"}


def test_events_spliced_from_another_run_are_refused(tmp_path: Path, keys: dict) -> None:
    # This run exists first; another run of the same wiki then fetches the page with the trusted
    # key, properly, so its events are newer than this run's creation and pass the time rule.
    _, run = _trusting_wiki(tmp_path, keys["ci"][1], slug="r")
    _, other = make_wiki(tmp_path / "wiki", trusted=["keys/ci.pub"], slug="other")
    _signed_fetch(other, keys["ci"][0])
    foreign = _raw_lines(other)
    assert str(foreign[0]["at"]) >= str(run.load_config().created_at)
    # This run copies that run's snapshot, raw bytes, record and events (chain recomputed).
    sid = str(foreign[0]["source_id"])
    run.store.path_for(sid).write_bytes(other.store.path_for(sid).read_bytes())
    run.raw_dir.mkdir(exist_ok=True)
    for raw in other.raw_dir.iterdir():
        (run.raw_dir / raw.name).write_bytes(raw.read_bytes())
    (run.extractions_dir / "page.json").write_bytes((other.extractions_dir / "page.json").read_bytes())
    _rewrite_log(run, foreign)
    assert read_log(run.events_path).intact
    assert _codes(run) == {"NO_FRESH_FETCH"}
    # Relabelling the signature's run breaks it: the run it names is part of what is signed.
    relabelled = [{**e, "sig": {**e["sig"], "run": run.name()}} for e in foreign]  # type: ignore[dict-item]
    _rewrite_log(run, relabelled)
    assert _codes(run) == {"NO_FRESH_FETCH"}
    # The same events in their own run are fine: the rule is about the run, not the bytes.
    assert {f.code for f in assemble_run(other, options_of(other), write=False).findings} == set()


def test_a_reordered_signed_log_is_refused(tmp_path: Path, keys: dict) -> None:
    _, run = _trusting_wiki(tmp_path, keys["ci"][1])
    _signed_fetch(run, keys["ci"][0])
    with serve() as pages:
        pages.pages["/q"] = ("text/plain", b"another page")
        fetch(run, pages.url("/q"), signer=load_signer(keys["ci"][0], run.name()))
    lines = _raw_lines(run)
    _rewrite_log(run, [{**lines[1], "event_id": "ev-0001"}, {**lines[0], "event_id": "ev-0002"}])
    assert read_log(run.events_path).intact  # the chain was recomputed; only the signatures tell
    assert _codes(run) == {"NO_FRESH_FETCH"}


def test_trusted_keys_are_declared_by_the_result_not_hashed_into_it(tmp_path: Path, keys: dict, cli: Cli) -> None:
    # The trust policy is an input of the check, declared in the result: the run's inputs_hash
    # is the same in any wiki, and a change of keys is named as such (C-ASSEMBLER), not an edit.
    wiki, run = _trusting_wiki(tmp_path, keys["ci"][1])
    _signed_fetch(run, keys["ci"][0])
    assert cli("assemble", "--run-dir", run.path).status == 0
    stored = json.loads(run.result_path.read_text())
    assert stored["policy"] == {"trusted_keys": [keys["ci"][2]]}
    assert not any(entry[0] == "trusted_keys" for entry in stored["inputs"])
    assert keys_of(wiki).ids == [keys["ci"][2]]
    # Trusting another key that signed nothing in this run decides nothing here: not stale.
    (wiki / "keys" / "agent.pub").write_bytes(keys["agent"][1].read_bytes())
    text = (wiki / "mkdocs.yml").read_text() + "      - keys/agent.pub\n"
    (wiki / "mkdocs.yml").write_text(text)
    now = assemble_run(run, options_of(run), write=False)
    assert now.inputs_hash == stored["inputs_hash"]
    assert now.result["policy"] == stored["policy"]
    verify = cli("verify", "--run-dir", run.path, "--json")
    checks = {c["check_id"]: c for c in verify.json()["checks"]}
    assert checks["C-ASSEMBLER"]["status"] == "pass"
    # Dropping the key that signed its fetch changes what it decides: stale, never "edited" (fail).
    (wiki / "mkdocs.yml").write_text(text.replace("      - keys/ci.pub\n", ""))
    now = assemble_run(run, options_of(run), write=False)
    assert now.result["policy"] == {"trusted_keys": []}
    verify = cli("verify", "--run-dir", run.path, "--json")
    checks = {c["check_id"]: c for c in verify.json()["checks"]}
    assert checks["C-ASSEMBLER"]["status"] == "warn"


def test_only_a_key_that_signed_one_of_its_events_makes_a_result_stale(tmp_path: Path, keys: dict, cli: Cli) -> None:
    """A result declares the acquire keys that signed its events: a reviewer's warrant key, or
    an acquire key that signed none of them, leaves it current; trusting a key that signed one
    of its events makes it stale (it may now decide a source's freshness)."""
    wiki, run = _trusting_wiki(tmp_path, keys["ci"][1])
    _signed_fetch(run, keys["ci"][0])
    with serve() as pages:  # a second acquisition, signed by a key the wiki does not trust (yet)
        pages.pages["/q"] = ("text/plain", b"another page")
        fetch(run, pages.url("/q"), signer=load_signer(keys["agent"][0], run.name()))
    assert cli("assemble", "--run-dir", run.path).status == 0
    stored = json.loads(run.result_path.read_text())
    assert stored["policy"] == {"trusted_keys": [keys["ci"][2]]}
    reviewer = new_key_pair(tmp_path / "keys", "reviewer")
    (wiki / "keys" / "reviewer.pub").write_bytes(reviewer[1].read_bytes())
    (wiki / "keys" / "agent.pub").write_bytes(keys["agent"][1].read_bytes())
    yml = (wiki / "mkdocs.yml").read_text()
    with_reviewer = yml + "      - {path: keys/reviewer.pub, roles: [warrant]}\n"
    (wiki / "mkdocs.yml").write_text(with_reviewer)
    assert assemble_run(run, options_of(run), write=False).result["policy"] == stored["policy"]
    (wiki / "mkdocs.yml").write_text(with_reviewer + "      - keys/agent.pub\n")
    now = assemble_run(run, options_of(run), write=False)
    assert now.result["policy"] == {"trusted_keys": sorted([keys["ci"][2], keys["agent"][2]])}
    verify = cli("verify", "--run-dir", run.path, "--json")
    checks = {c["check_id"]: c for c in verify.json()["checks"]}
    assert checks["C-ASSEMBLER"]["status"] == "warn"
