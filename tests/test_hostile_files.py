"""Hostile files an attacker can touch give one finding or a one-line error, never a traceback
(issue 11, class 8): event logs that are links, FIFOs or CRLF-converted, YAML bombs in concepts,
and every reader of an attackable file going through the fail-closed primitive."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from _policy import policy_of
from _wiki_helpers import (
    build_wiki,
    leftovers,
    logged_findings,
    make_wiki,
    refused_build,
    sample_run,
    tree_digest,
    writable,
)

from publisher.kernel.errors import IntegrityError, PublisherError
from publisher.kernel.reasons import Reason
from publisher.wiki.check import check_wiki as run_preflight
from publisher.wiki.concepts import parse_concept
from publisher.wiki.promote import promote


def _published(tmp_path: Path) -> tuple[Path, object, dict[str, str]]:
    wiki = make_wiki(tmp_path / "wiki")
    rb = sample_run(wiki)
    promote(rb.run.path, wiki, policy=policy_of(wiki))
    build_wiki(wiki)
    return wiki, rb, tree_digest(wiki / "site")


def _break_log(rb: object, how: str) -> None:
    events = rb.run.events_path  # type: ignore[attr-defined]
    data = events.read_bytes()
    if how == "symlink":
        outside = events.parent.parent / "outside.jsonl"
        outside.write_bytes(data)
        events.unlink()
        events.symlink_to(outside)
    elif how == "fifo":
        events.unlink()
        os.mkfifo(events)
    elif how == "folder":
        events.unlink()
        events.mkdir()
    elif how == "crlf":
        writable(events).write_bytes(data.replace(b"\n", b"\r\n"))


@pytest.mark.parametrize("how", ["symlink", "fifo", "folder", "crlf"])
def test_broken_event_log_is_one_finding_and_the_build_keeps_the_site(tmp_path: Path, how: str) -> None:
    wiki, rb, before = _published(tmp_path)
    _break_log(rb, how)
    pre = run_preflight(wiki, policy=policy_of(wiki))
    log_findings = [f for f in pre.findings if f.file.endswith("events.jsonl")]
    roots = [f for f in log_findings if f.cause is None]
    assert len(roots) == 1, [f.one_line() for f in pre.findings]  # one cause, whatever follows from it
    assert roots[0].code == "C-EVENT-LOG"
    assert all(f.cause == roots[0].key for f in log_findings if f is not roots[0])
    assert refused_build(wiki) == tuple(pre.findings)  # the build refuses with the check's findings
    assert tree_digest(wiki / "site") == before and leftovers(wiki) == []


@pytest.mark.parametrize("how", ["symlink", "fifo", "crlf"])
def test_mkdocs_build_with_a_broken_log_prints_no_traceback(tmp_path: Path, how: str) -> None:
    wiki, rb, before = _published(tmp_path)
    _break_log(rb, how)
    exe = Path(sys.executable).with_name("mkdocs")
    done = subprocess.run([str(exe), "build", "-v"], cwd=wiki, capture_output=True, text=True, timeout=120)
    assert done.returncode == 1 and "Traceback" not in done.stderr
    roots = [f for f in logged_findings(done.stderr) if f.cause is None and f.file.endswith("events.jsonl")]
    assert [f.code for f in roots] == ["C-EVENT-LOG"]
    assert tree_digest(wiki / "site") == before


def _front(extra: str) -> str:
    return f"---\nschema_version: 1\ntitle: T\nconcept: t\n{extra}---\nBody.\n"


@pytest.mark.parametrize(
    "extra",
    [
        "summary: " + "[" * 20000 + "]" * 20000 + "\n",
        "claims: " + "{a: " * 5000 + "1" + "}" * 5000 + "\n",
        "".join("  " * i + "- \n" for i in range(3000)).replace("- \n", "-\n", 1).join(["runs:\n", ""]),
    ],
    ids=["flow-lists", "flow-maps", "block-lists"],
)
def test_deeply_nested_yaml_is_a_schema_error(extra: str) -> None:
    with pytest.raises(IntegrityError) as info:
        parse_concept(_front(extra))
    assert info.value.reason is not None and info.value.reason.value == "SCHEMA_ERROR"


def test_deeply_nested_concept_fails_the_build_with_a_finding(tmp_path: Path) -> None:
    wiki, _, before = _published(tmp_path)
    concept = wiki / "concepts" / "alpha.md"
    text = concept.read_text(encoding="utf-8")
    concept.write_text(text.replace("---\n", "---\nsummary: " + "[" * 50000 + "]" * 50000 + "\n", 1))
    pre = run_preflight(wiki, policy=policy_of(wiki))
    assert pre.counts_by_reason() == {"SCHEMA_ERROR": 1}
    assert [(f.reason, f.file) for f in refused_build(wiki)] == [(Reason.SCHEMA_ERROR, "concepts/alpha.md")]
    assert tree_digest(wiki / "site") == before


def _never_blocks(call: object) -> BaseException:
    """Run ``call`` in a thread; a read that blocked on a FIFO would hang it. Returns what it raised."""
    outcome: list[BaseException | None] = []

    def target() -> None:
        try:
            call()  # type: ignore[operator]
            outcome.append(None)
        except BaseException as exc:
            outcome.append(exc)

    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    thread.join(timeout=30)
    assert outcome, "the read blocked on a FIFO"
    assert outcome[0] is not None, "a FIFO was read as if it were a file"
    return outcome[0]


def _returns(call: object) -> object:
    """What ``call`` returns, run in a thread. A generous join only turns a hang into a failure;
    what a test checks is how the FIFO was opened, never how long anything took."""
    outcome: list[object] = []
    thread = threading.Thread(target=lambda: outcome.append(call()), daemon=True)  # type: ignore[operator]
    thread.start()
    thread.join(timeout=300)
    assert outcome, "the command blocked on a FIFO"
    return outcome[0]


def test_report_fifo_is_refused_by_render(tmp_path: Path, cli: object, monkeypatch: pytest.MonkeyPatch) -> None:
    """The FIFO is only ever opened non-blocking (then refused by its type) and never read: a
    blocking open of it is refused by the spy below, so a reader that would hang fails at once."""
    import builtins
    import io

    _, rb, _ = _published(tmp_path)
    report = rb.run.report_md  # type: ignore[attr-defined]
    report.unlink(missing_ok=True)
    os.mkfifo(report)
    fifo = os.path.realpath(report)
    opens: list[str] = []
    real_os_open, real_open = os.open, builtins.open

    def is_fifo(path: object) -> bool:
        return isinstance(path, (str, bytes, os.PathLike)) and os.path.realpath(os.fsdecode(path)) == fifo

    def spy_os_open(path: object, flags: int, *args: object, **kwargs: object) -> int:
        if is_fifo(path):
            opens.append("non-blocking" if flags & os.O_NONBLOCK else "blocking")
            if not flags & os.O_NONBLOCK:
                raise OSError(f"test spy: a blocking open of the FIFO {fifo}")
        return real_os_open(path, flags, *args, **kwargs)  # type: ignore[arg-type]

    def spy_open(file: object, *args: object, **kwargs: object) -> object:
        if is_fifo(file):
            opens.append("blocking")
            raise OSError(f"test spy: open() of the FIFO {fifo}")
        return real_open(file, *args, **kwargs)  # type: ignore[call-overload]

    monkeypatch.setattr(os, "open", spy_os_open)
    monkeypatch.setattr(builtins, "open", spy_open)
    monkeypatch.setattr(io, "open", spy_open)
    outcome = _returns(lambda: cli("render", "--run-dir", rb.run.path))  # type: ignore[operator,attr-defined]
    assert outcome.status in (1, 2) and "Traceback" not in outcome.err  # type: ignore[attr-defined]
    assert set(opens) <= {"non-blocking"}, opens


def test_concept_swapped_for_a_fifo_is_refused_by_promote(tmp_path: Path) -> None:
    wiki, rb, _ = _published(tmp_path)
    concept = wiki / "concepts" / "alpha.md"
    concept.unlink()
    os.mkfifo(concept)
    refused = _never_blocks(lambda: promote(rb.run.path, wiki, policy=policy_of(wiki)))  # type: ignore[attr-defined]
    assert isinstance(refused, PublisherError) and refused.reason is Reason.SCHEMA_ERROR, refused


def test_text_file_fifo_is_refused_by_source_register(tmp_path: Path, cli: object) -> None:
    _, rb, _ = _published(tmp_path)
    run = rb.run  # type: ignore[attr-defined]
    fifo = tmp_path / "text.txt"
    os.mkfifo(fifo)
    before = sorted(os.listdir(run.sources_dir))
    outcome = cli(  # type: ignore[operator]
        "source", "register", "--run-dir", run.path, "--url", "https://example.org/t", "--text-file", fifo, "--json"
    )
    assert outcome.status == 2 and len(outcome.err.strip().splitlines()) == 1
    error = outcome.json()["error"]  # type: ignore[attr-defined]
    assert (error["file"], error["reason_code"], error["exit_status"]) == (str(fifo), None, 2), error
    assert sorted(os.listdir(run.sources_dir)) == before
