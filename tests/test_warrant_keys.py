"""Passphrase-protected warrant keys: a person at a terminal, or no signature (CONTRACT 12, 17).

``publisher keys new --role warrant`` encrypts the private key with a passphrase read from the
controlling terminal, and ``publisher warrant`` asks it there again. A process without a
terminal (an agent's tool call: a new session, standard input from nowhere) can neither make
such a key nor sign with one, and nothing is written; under a pseudo-terminal (a person typing)
both work. The commands run as real subprocesses so that the terminal is really theirs.
"""

from __future__ import annotations

import json
import os
import pty
import select
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
from _claims_helpers import CONCEPT, claims_wiki
from _wiki_helpers import tree_digest

from publisher.acquire.signing import new_key_pair
from publisher.cli import main
from publisher.wiki.claims.warrant import WARRANTS_FILE

PASSPHRASE = b"correct horse battery staple"


def without_terminal(*argv: str | Path) -> subprocess.CompletedProcess[str]:
    """``publisher ARGV`` with no controlling terminal; the passphrase (twice) waits on standard
    input, as an agent would pipe it, and must never be read from there."""
    typed = (PASSPHRASE + b"\n") * 2
    return subprocess.run(
        [sys.executable, "-m", "publisher", *map(str, argv)],
        start_new_session=True,  # a new session has no controlling terminal
        input=typed.decode(),
        capture_output=True,
        text=True,
        check=False,
        timeout=300,
    )


def with_terminal(*argv: str | Path, answers: list[tuple[bytes, bytes]], timeout: float = 120) -> tuple[int, str]:
    """``publisher ARGV`` on a pseudo-terminal: each (prompt, answer) is typed once the prompt shows.

    Returns the exit status and everything the terminal showed.
    """
    pid, fd = pty.fork()
    if pid == 0:  # the child: the pty is its controlling terminal
        try:
            os.execv(sys.executable, [sys.executable, "-m", "publisher", *map(str, argv)])
        finally:
            os._exit(127)
    shown, seen, pending = b"", 0, list(answers)
    deadline = time.monotonic() + timeout
    try:
        while time.monotonic() < deadline:
            ready, _, _ = select.select([fd], [], [], 0.5)
            if not ready:
                continue
            try:
                chunk = os.read(fd, 65536)
            except OSError:  # the child closed the terminal
                break
            if not chunk:
                break
            shown += chunk
            while pending and (at := shown.find(pending[0][0], seen)) >= 0:
                seen = at + len(pending[0][0])
                os.write(fd, pending.pop(0)[1])
    finally:
        os.close(fd)
        done, status = os.waitpid(pid, os.WNOHANG)
        if done == 0:  # still waiting for an answer that will not come
            os.kill(pid, 9)
            _, status = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(status), shown.decode("utf-8", "replace")


def test_a_warrant_key_cannot_be_made_without_a_terminal(tmp_path: Path) -> None:
    out = without_terminal("keys", "new", "--out", tmp_path / "keys", "--name", "reviewer", "--role", "warrant")
    assert out.returncode == 2 and len(out.stderr.strip().splitlines()) == 1, out.stderr
    assert not (tmp_path / "keys").exists()


def test_a_warrant_key_is_encrypted_with_the_passphrase_typed_twice(tmp_path: Path) -> None:
    status, shown = with_terminal(
        "keys", "new", "--out", tmp_path / "keys", "--name", "reviewer", "--role", "warrant", "--json",
        answers=[(b"passphrase", PASSPHRASE + b"\n"), (b"again", PASSPHRASE + b"\n")],
    )  # fmt: skip
    assert status == 0, shown
    assert PASSPHRASE.decode() not in shown  # never echoed
    private = (tmp_path / "keys" / "reviewer.key").read_bytes()
    assert private.startswith(b"-----BEGIN ENCRYPTED PRIVATE KEY-----")
    assert (tmp_path / "keys" / "reviewer.key").stat().st_mode & 0o777 == 0o600
    # Two different passphrases: refused, nothing written.
    status, shown = with_terminal(
        "keys", "new", "--out", tmp_path / "other", "--role", "warrant",
        answers=[(b"passphrase", b"one\n"), (b"again", b"two\n")],
    )  # fmt: skip
    assert status == 2 and not (tmp_path / "other").exists(), shown


@pytest.fixture
def reviewed(tmp_path: Path, corpus_dir: Path) -> tuple[Path, Path, Path]:
    """A signed claims wiki with claim c1 assessed by the maintainer, and an encrypted reviewer
    key it trusts for warrant. Returns (wiki, reviewer's private key, maintainer's private key)."""
    keys = tmp_path / "keys"
    new_key_pair(keys, "wiki")
    new_key_pair(keys, "reviewer", passphrase=PASSPHRASE)
    (tmp_path / "wiki" / "keys").mkdir(parents=True)
    for name in ("wiki", "reviewer"):
        shutil.copy(keys / f"{name}.pub", tmp_path / "wiki" / "keys" / f"{name}.pub")
    trust = (
        "extra:\n  evidence:\n    trusted_keys:\n      - keys/wiki.pub\n"
        "      - {path: keys/reviewer.pub, roles: [warrant]}\n"
    )
    cw = claims_wiki(tmp_path / "wiki", corpus_dir, key=keys / "wiki.key", extra=trust)
    status = main(["assess", "--wiki", str(cw.wiki), "--concept", CONCEPT, "--claim-id", "c1",
                   "--statement", "It helps.", "--status", "S", "--evidence", cw.labels[0],
                   "--key", str(keys / "wiki.key")])  # fmt: skip
    assert status == 0
    return cw.wiki, keys / "reviewer.key", keys / "wiki.key"


def _decision(wiki: Path, key: Path) -> list[str | Path]:
    return ["warrant", "--wiki", wiki, "--claim", "c1", "--decision", "confirmed",
            "--reason", "The excerpt says so in this population.", "--key", key, "--json"]  # fmt: skip


def test_a_warrant_key_cannot_sign_without_a_terminal(reviewed: tuple[Path, Path, Path]) -> None:
    wiki, reviewer, _ = reviewed
    before = tree_digest(wiki)
    out = without_terminal(*_decision(wiki, reviewer))
    assert out.returncode == 2, out.stderr
    assert len(out.stderr.strip().splitlines()) == 1
    assert tree_digest(wiki) == before and not (wiki / WARRANTS_FILE).exists()


def test_a_warrant_key_signs_once_the_passphrase_is_typed(reviewed: tuple[Path, Path, Path]) -> None:
    wiki, reviewer, _ = reviewed
    status, shown = with_terminal(*_decision(wiki, reviewer), answers=[(b"passphrase", b"wrong\n")])
    assert status == 2 and not (wiki / WARRANTS_FILE).exists(), shown
    status, shown = with_terminal(*_decision(wiki, reviewer), answers=[(b"passphrase", PASSPHRASE + b"\n")])
    assert status == 0, shown
    (line,) = (wiki / WARRANTS_FILE).read_text(encoding="utf-8").splitlines()
    assert json.loads(line)["decision"] == "confirmed"
    listed = subprocess.run(
        [sys.executable, "-m", "publisher", "warrant", "--wiki", str(wiki), "--list", "--json"],
        capture_output=True, text=True, check=False, timeout=300,
    )  # fmt: skip
    assert listed.returncode == 0 and json.loads(listed.stdout)["awaiting"] == [], listed.stderr


def test_a_key_without_a_passphrase_never_signs_a_warrant(reviewed: tuple[Path, Path, Path]) -> None:
    """The maintainer's plain key is refused as a warrant key before any check of roles."""
    wiki, _, maintainer = reviewed
    out = without_terminal(*_decision(wiki, maintainer))
    assert out.returncode == 2 and not (wiki / WARRANTS_FILE).exists(), out.stderr


def test_the_interactive_review_shows_each_excerpt_and_records_the_answer(reviewed: tuple[Path, Path, Path]) -> None:
    wiki, reviewer, _ = reviewed
    status, shown = with_terminal(
        "warrant", "--wiki", wiki, "--key", reviewer,
        answers=[
            (b"passphrase", PASSPHRASE + b"\n"),
            (b"decision:", b"q\n"),
            (b"correction kind", b"population\n"),
            (b"correction:", b"adults only\n"),
            (b"reason:", b"The trial enrolled adults.\n"),
        ],
    )  # fmt: skip
    assert status == 0, shown
    assert ">>>" in shown and "<<<" in shown and "statement: It helps." in shown
    (line,) = (wiki / WARRANTS_FILE).read_text(encoding="utf-8").splitlines()
    entry = json.loads(line)
    assert (entry["decision"], entry["correction"]) == ("qualified", {"kind": "population", "text": "adults only"})
