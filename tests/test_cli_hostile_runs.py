"""The command line against hostile run folders: a link loop, an odd value or a broken file in
place of any file a command opens gives exit 1 with findings or a one-line exit 2, never an
internal error, and a refused command writes nothing."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest
from _gate_helpers import RunFixture, make_run
from _scaling import grows_linearly
from _wiki_helpers import make_wiki, tree_digest
from conftest import CliResult

from publisher.gate.reportmd import parse_report


def _published(tmp_path: Path, cli: Callable[..., CliResult]) -> RunFixture:
    """A valid run under a wiki, assembled, verified and promoted."""
    fx = make_run(tmp_path, 1)
    make_wiki(fx.wiki)
    for argv in (("assemble", "--run-dir", fx.run.path), ("verify", "--run-dir", fx.run.path)):
        assert cli(*argv).status == 0
    assert cli("promote", "--run-dir", fx.run.path, "--wiki", fx.wiki).status == 0
    return fx


def _loop(path: Path) -> None:
    """Replace ``path`` with a link to itself (reading it fails with ELOOP)."""
    path.chmod(0o644)
    path.unlink()
    path.symlink_to(path.name)


@pytest.mark.parametrize("where", ["config.json", "outputs/report.md", "outputs/verification.json"])
def test_a_run_file_that_is_a_link_loop_is_a_finding_of_check(
    tmp_path: Path, cli: Callable[..., CliResult], where: str
) -> None:
    fx = _published(tmp_path, cli)
    _loop(fx.run.path / where)
    before = tree_digest(fx.wiki)
    done = cli("check", "--wiki", fx.wiki, "--json")
    assert done.status == 1, done.err
    assert "internal error" not in done.err
    assert tree_digest(fx.wiki) == before


@pytest.mark.parametrize("where", ["outputs/report.md", "outputs/verification.json"])
def test_promote_refuses_a_run_file_that_is_a_link_loop(
    tmp_path: Path, cli: Callable[..., CliResult], where: str
) -> None:
    fx = _published(tmp_path, cli)
    _loop(fx.run.path / where)
    before = tree_digest(fx.wiki)
    done = cli("promote", "--run-dir", fx.run.path, "--wiki", fx.wiki, "--json")
    assert done.status in (1, 2), done.err
    assert "internal error" not in done.err
    assert tree_digest(fx.wiki) == before


@pytest.mark.parametrize("where", ["runs/corpus-run", "concepts"])
def test_a_wiki_folder_that_is_a_link_loop_ends_check_without_an_internal_error(
    tmp_path: Path, cli: Callable[..., CliResult], where: str
) -> None:
    fx = _published(tmp_path, cli)
    folder = fx.wiki / where
    aside = tmp_path / "aside"
    folder.rename(aside)
    folder.symlink_to(folder.name)
    before = tree_digest(fx.wiki)
    done = cli("check", "--wiki", fx.wiki, "--json")
    assert done.status == 1, done.err  # a looping concepts/ is a finding, never "no concepts"
    assert "internal error" not in done.err
    assert tree_digest(fx.wiki) == before


def _link_out(folder: Path, outside: Path) -> None:
    """Move ``folder`` to ``outside`` and leave a symbolic link to it in its place."""
    folder.rename(outside)
    folder.symlink_to(outside)


@pytest.mark.parametrize(
    ("folder", "argv"),
    [
        ("outputs", ("assemble",)),
        ("outputs", ("verify",)),
        ("outputs", ("render",)),
        ("sources", ("source", "register", "--url", "https://example.org/new", "--text-file", "{text}")),
    ],
    ids=["assemble", "verify", "render", "register"],
)
def test_a_run_folder_linked_elsewhere_is_never_written_through(
    tmp_path: Path, cli: Callable[..., CliResult], folder: str, argv: tuple[str, ...]
) -> None:
    fx = _published(tmp_path, cli)
    text = tmp_path / "text.txt"
    text.write_text("A new page.\n", encoding="utf-8")
    outside = tmp_path / "outside"
    _link_out(fx.run.path / folder, outside)
    before, outside_before = tree_digest(fx.wiki), tree_digest(outside)
    line = [a.replace("{text}", str(text)) for a in argv]
    done = cli(
        *line[:2] if argv[0] == "source" else line[:1],
        "--run-dir",
        fx.run.path,
        *line[2 if argv[0] == "source" else 1 :],
    )
    assert done.status == 2, done.err
    assert len(done.err_lines) == 1 and "internal error" not in done.err
    assert tree_digest(fx.wiki) == before and tree_digest(outside) == outside_before


def test_promote_never_writes_through_a_linked_concepts_folder(tmp_path: Path, cli: Callable[..., CliResult]) -> None:
    fx = _published(tmp_path, cli)
    (fx.wiki / "concepts" / "corpus-run.md").unlink()
    outside = tmp_path / "outside"
    _link_out(fx.wiki / "concepts", outside)
    before, outside_before = tree_digest(fx.wiki), tree_digest(outside)
    done = cli("promote", "--run-dir", fx.run.path, "--wiki", fx.wiki)
    assert done.status == 2, done.err
    assert "internal error" not in done.err
    assert tree_digest(fx.wiki) == before and tree_digest(outside) == outside_before


@pytest.mark.parametrize(
    "argv",
    [
        ("source", "register", "--url", "https://example.org/\udced\udca0\udc80", "--text-file", "{text}"),
        ("source", "register", "--url", "https://example.org/t", "--text-file", "{text}", "--title", "T\udcff"),
        ("review", "--source-id", "{sid}", "--claim", "lung \udcff", "--term", "lung"),
    ],
    ids=["register-url", "register-title", "review-claim"],
)
def test_an_argument_that_is_not_utf8_is_a_usage_error(
    tmp_path: Path, cli: Callable[..., CliResult], argv: tuple[str, ...]
) -> None:
    """Bytes that are not UTF-8 reach Python as lone surrogates (``surrogateescape``): refused
    up front, before anything is read or written, never an internal error when encoded later."""
    fx = _published(tmp_path, cli)
    text = tmp_path / "text.txt"
    text.write_text("A new page.\n", encoding="utf-8")
    words = [a.replace("{text}", str(text)).replace("{sid}", fx.articles[0].source_id) for a in argv]
    before = tree_digest(fx.wiki)
    done = cli(*words, "--run-dir", fx.run.path, "--json")
    assert done.status == 2, done.err
    assert len(done.err_lines) == 1 and "internal error" not in done.err
    assert done.json()["error"]["exit_status"] == 2
    assert tree_digest(fx.wiki) == before


def _one_note_cited(n: int, *, lines: bool) -> str:
    """A report citing one footnote ``n`` times: all in one line, or one line each in one paragraph."""
    cites = ("x[^a]\n" if lines else "x[^a]") * n
    return f"{cites}\n\n[^a]: {'src-' + '0' * 64}#0-5\n"


@pytest.mark.parametrize("lines", [False, True], ids=["one-line", "a-line-each"])
def test_one_footnote_cited_thousands_of_times_parses_in_linear_time(lines: bool) -> None:
    n = 1000
    notes = parse_report(_one_note_cited(n, lines=lines))
    assert [note.label for note in notes] == ["a"]
    assert notes[0].ref_lines == (tuple(range(1, n + 1)) if lines else (1,))
    # Finding the lines of every citation again at each citation was quadratic in their number
    # (a report of some 600 KB kept assemble, verify and check busy for hours).
    small, double = _one_note_cited(n, lines=lines), _one_note_cited(2 * n, lines=lines)
    grows_linearly(lambda: parse_report(small), lambda: parse_report(double))


def test_a_wiki_path_that_is_a_file_is_named_as_such(tmp_path: Path, cli: Callable[..., CliResult]) -> None:
    """``--wiki FILE`` is refused as what it is (a file), not as a folder that does not exist."""
    file = tmp_path / "notes.txt"
    file.write_text("x", encoding="utf-8")
    for argv in (("check", "--wiki", file), ("export", "annotations", "--wiki", file)):
        done = cli(*argv)
        assert done.status == 2 and len(done.err_lines) == 1, done.err
        assert "does not exist" not in done.err and str(file) in done.err
    missing = tmp_path / "nowhere"
    done = cli("check", "--wiki", missing)
    assert done.status == 2 and "does not exist" in done.err


def test_an_export_to_a_folder_names_the_folder_and_leaves_nothing(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    """``--out`` naming a folder (or a file in a folder that does not exist) is refused before any
    work, naming what was given, never the temporary file a write would have used."""
    fx = _published(tmp_path, cli)
    target = tmp_path / "out"
    target.mkdir()
    before = tree_digest(tmp_path)
    for out in (target, tmp_path / "missing" / "a.json"):
        done = cli("export", "annotations", "--wiki", fx.wiki, "--out", out)
        assert done.status == 2 and len(done.err_lines) == 1, done.err
        assert str(out) in done.err and ".tmp" not in done.err
    assert tree_digest(tmp_path) == before


@pytest.mark.parametrize("kind", ["file", "fifo", "link-loop", "dangling-link", "link-outside"])
@pytest.mark.parametrize("check", [False, True], ids=["promote", "promote-check"])
def test_promote_refuses_a_concepts_that_is_not_a_real_folder(
    tmp_path: Path, cli: Callable[..., CliResult], kind: str, check: bool
) -> None:
    """Refused up front, ``--check`` too, naming ``concepts`` (SCHEMA_ERROR): a file there is not
    "no concept yet", and a link of any kind is never written through."""
    fx = _published(tmp_path, cli)
    concepts = fx.wiki / "concepts"
    outside = tmp_path / "outside"
    concepts.rename(outside)
    if kind == "file":
        concepts.write_text("not a folder\n", encoding="utf-8")
    elif kind == "fifo":
        os.mkfifo(concepts)
    elif kind == "link-loop":
        concepts.symlink_to(concepts.name)
    elif kind == "dangling-link":
        concepts.symlink_to(tmp_path / "nowhere")
    else:
        (outside / "corpus-run.md").unlink()  # else promotion would find it there, up to date
        concepts.symlink_to(outside)
    before, outside_before = tree_digest(fx.wiki), tree_digest(outside)
    done = cli("promote", "--run-dir", fx.run.path, "--wiki", fx.wiki, *(["--check"] if check else []), "--json")
    assert done.status == 2, done.err
    assert len(done.err_lines) == 1 and "internal error" not in done.err
    error = done.json()["error"]
    assert (error["reason_code"], error["file"]) == ("SCHEMA_ERROR", "concepts")
    assert tree_digest(fx.wiki) == before and tree_digest(outside) == outside_before
