"""Portable publication: each way of replacing a site in one step, forced on Linux, keeps a site
in place at every moment; the kernel imports without ``fcntl`` (Windows)."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from _policy import policy_of

from publisher.site.lifecycle import publish


def _site(folder: Path, text: str) -> Path:
    folder.mkdir(parents=True)
    (folder / "index.html").write_text(text, encoding="utf-8")
    return folder


def _publish_twice(tmp_path: Path) -> Path:
    site = tmp_path / "site"
    for n in (1, 2, 3):
        staging = publish.new_staging(site)
        (staging / "index.html").write_text(f"v{n}", encoding="utf-8")
        publish.publish(staging, site)
        assert (site / "index.html").read_text(encoding="utf-8") == f"v{n}"
    assert sorted(p.name for p in tmp_path.iterdir() if "staging" in p.name) == []
    return site


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="renameat2 is Linux's")
def test_exchange_forced(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(publish.METHOD_ENV, "exchange")
    site = _publish_twice(tmp_path)
    assert site.is_dir() and not site.is_symlink()


class _FakeMac:
    """A C library with macOS's renamex_np, done with Linux's renameat2 (the same exchange)."""

    def __init__(self) -> None:
        import ctypes

        self.real = ctypes.CDLL(None, use_errno=True)
        self.calls: list[tuple[bytes, bytes, int]] = []

    @property
    def renamex_np(self) -> Any:
        fake = self

        class _Fn:
            argtypes: Any = None
            restype: Any = None

            def __call__(self, a: bytes, b: bytes, flags: int) -> int:
                fake.calls.append((a, b, flags))
                assert flags == 0x2  # RENAME_SWAP
                return int(fake.real.renameat2(-100, a, -100, b, 2))

        return _Fn()


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the fake swap runs on renameat2")
def test_macos_swap_forced(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    fake = _FakeMac()
    monkeypatch.setattr(publish, "_libc", lambda: fake)
    monkeypatch.setenv(publish.METHOD_ENV, "swap")
    site = _publish_twice(tmp_path)
    assert site.is_dir() and not site.is_symlink()
    assert len(fake.calls) == 2  # the first site is renamed into place, then two swaps


def test_link_forced_never_leaves_a_moment_without_a_site(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(publish.METHOD_ENV, "link")
    site = tmp_path / "site"
    staging = publish.new_staging(site)
    (staging / "index.html").write_text("v0", encoding="utf-8")
    publish.publish(staging, site)
    assert site.is_symlink()
    seen: list[str] = []
    stop = threading.Event()

    def reader() -> None:
        while not stop.is_set():
            try:
                seen.append((site / "index.html").read_text(encoding="utf-8"))
            except FileNotFoundError:
                seen.append("MISSING")

    thread = threading.Thread(target=reader)
    thread.start()
    try:
        for n in range(1, 30):
            staging = publish.new_staging(site)
            (staging / "index.html").write_text(f"v{n}", encoding="utf-8")
            publish.publish(staging, site)
    finally:
        stop.set()
        thread.join()
    assert "MISSING" not in seen
    assert (site / "index.html").read_text(encoding="utf-8") == "v29"
    versions = [p for p in tmp_path.iterdir() if p.name.startswith(".site-v-")]
    assert [p.name for p in versions] == [os.readlink(site)]  # old versions removed


def test_no_method_leaves_the_old_site_and_says_how(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    site = _site(tmp_path / "site", "old")
    monkeypatch.setenv(publish.METHOD_ENV, "link")  # a real folder cannot become a link atomically
    staging = publish.new_staging(site)
    (staging / "index.html").write_text("new", encoding="utf-8")
    with pytest.raises(publish.NotAtomicError):
        publish.publish(staging, site)
    assert (site / "index.html").read_text(encoding="utf-8") == "old"


def test_the_package_imports_without_fcntl() -> None:
    code = (
        "import sys; sys.modules['fcntl'] = None\n"
        "import publisher, publisher.kernel._fs, publisher.kernel.eventlog, publisher.cli\n"
        "import publisher.site.lifecycle.publish\n"
        "print('ok')\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr


def test_mkdocs_build_through_the_link_method_twice(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from _wiki_helpers import build_wiki, make_wiki, sample_run

    from publisher.site.checks.checksite import check_site
    from publisher.wiki.promote import promote

    monkeypatch.setenv(publish.METHOD_ENV, "link")
    wiki = make_wiki(tmp_path / "wiki")
    promote(sample_run(wiki).run.path, wiki, policy=policy_of(wiki))
    build_wiki(wiki)
    first = os.readlink(wiki / "site")
    build_wiki(wiki)
    assert (wiki / "site").is_symlink() and os.readlink(wiki / "site") != first
    outcome = check_site(wiki / "site", wiki, policy=policy_of(wiki))
    assert outcome.ok, [f.one_line() for f in outcome.findings]


def _aside(parent: Path) -> list[Path]:
    return [p for p in parent.iterdir() if p.name.startswith(".site-old-")]


def _gone(path: Path, settle: float = 30.0) -> bool:
    deadline = time.monotonic() + settle
    while os.path.lexists(path):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.02)
    return True


def test_the_previous_site_is_retired_aside_and_removed_by_a_detached_process(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    site = _site(tmp_path / "site", "old")
    handed: list[Path] = []
    monkeypatch.setattr(publish, "_remove_detached", lambda folder: handed.append(folder) or True)
    staging = publish.new_staging(site)
    (staging / "index.html").write_text("new", encoding="utf-8")
    publish.publish(staging, site)
    # The build did not remove it: the old site was renamed aside in one step and handed over.
    assert (site / "index.html").read_text(encoding="utf-8") == "new"
    assert _aside(tmp_path) == handed and len(handed) == 1
    assert (handed[0] / "index.html").read_text(encoding="utf-8") == "old"
    monkeypatch.undo()
    assert publish._remove_detached(handed[0]) is True
    assert _gone(handed[0])


def test_a_retired_site_is_removed_here_when_no_process_can_be_started(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def refuse(*args: object, **kwargs: object) -> None:
        raise OSError("no processes here")

    site = _site(tmp_path / "site", "old")
    monkeypatch.setattr(publish.subprocess, "Popen", refuse)
    staging = publish.new_staging(site)
    (staging / "index.html").write_text("new", encoding="utf-8")
    publish.publish(staging, site)
    assert _aside(tmp_path) == [] and [p.name for p in tmp_path.iterdir()] == ["site"]
    assert (site / "index.html").read_text(encoding="utf-8") == "new"


def test_removing_a_retired_site_never_follows_its_links(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "keep.txt").write_text("keep", encoding="utf-8")
    site = _site(tmp_path / "wiki" / "site", "old")
    (site / "linked").symlink_to(outside, target_is_directory=True)
    (site / "sub").mkdir()
    (site / "sub" / "file-link").symlink_to(outside / "keep.txt")
    staging = publish.new_staging(site)
    (staging / "index.html").write_text("new", encoding="utf-8")
    publish.publish(staging, site)
    parent = site.parent
    deadline = time.monotonic() + 30
    while _aside(parent) and time.monotonic() < deadline:
        time.sleep(0.02)
    assert _aside(parent) == []
    assert (outside / "keep.txt").read_text(encoding="utf-8") == "keep"


def test_a_removal_finishes_when_another_removes_entries_first(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A sweep at the next build may remove a retired folder while its detached remover still
    runs: an entry the other removed first is not an error."""
    from publisher.kernel import _fs

    tree = tmp_path / "tree"
    for d in range(3):
        (tree / f"d{d}").mkdir(parents=True)
        for f in range(4):
            (tree / f"d{d}" / f"f{f}").write_bytes(b"x")
    real_unlink, real_rmdir = os.unlink, os.rmdir
    raced: list[str] = []

    def unlink(path: Any, *args: Any, **kwargs: Any) -> None:
        real_unlink(path, *args, **kwargs)  # the other remover was first
        raced.append(str(path))
        real_unlink(path, *args, **kwargs)

    def rmdir(path: Any, *args: Any, **kwargs: Any) -> None:
        real_rmdir(path, *args, **kwargs)
        raced.append(str(path))
        real_rmdir(path, *args, **kwargs)

    monkeypatch.setattr(os, "unlink", unlink)
    monkeypatch.setattr(os, "rmdir", rmdir)
    _fs.remove_tree(tree)
    monkeypatch.undo()
    assert not tree.exists() and len(raced) == 3 * 4 + 3 + 1


def test_a_retired_folder_left_by_a_dead_build_is_swept(tmp_path: Path) -> None:
    proc = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    dead = int(proc.stdout)
    site = _site(tmp_path / "site", "now")
    stale = tmp_path / f".site-old-{dead}-{'cd' * 6}"
    _site(stale, "before")
    assert publish.sweep_stale(site) == [stale]
    assert _gone(stale) and (site / "index.html").read_text(encoding="utf-8") == "now"


def test_a_retired_folder_that_cannot_be_removed_never_stops_a_build(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def refuse(*args: object, **kwargs: object) -> None:
        raise OSError("no processes here")

    def stuck(path: Path) -> None:
        raise PermissionError(13, "Permission denied", str(path))

    proc = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    site = _site(tmp_path / "site", "now")
    stale = _site(tmp_path / f".site-old-{int(proc.stdout)}-{'ef' * 6}", "before")
    monkeypatch.setattr(publish.subprocess, "Popen", refuse)
    monkeypatch.setattr(publish._fs, "remove_tree", stuck)
    assert publish.sweep_stale(site) == [stale]  # tried, left, and the build goes on
    assert stale.is_dir()


def _descriptors(pid: int) -> dict[str, str]:
    """What each open descriptor of a running process names (one closed meanwhile is left out)."""
    out = {}
    for fd in os.listdir(f"/proc/{pid}/fd"):
        try:
            out[fd] = os.readlink(f"/proc/{pid}/fd/{fd}")
        except FileNotFoundError:
            continue
    return out


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_a_remover_is_detached_from_the_build(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Its own session (a terminal's Ctrl-C to the build does not reach it) and /dev/null for its
    streams (a caller capturing the build's output does not wait for it)."""
    folder = _site(tmp_path / "aside", "old")
    monkeypatch.setattr(publish, "_REMOVER", "import time; time.sleep(60)")
    assert publish._remove_detached(folder) is True
    remover = publish._REMOVERS[-1]
    pid = remover.pid
    try:
        assert os.getsid(pid) == pid != os.getsid(0)
        fds = _descriptors(pid)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:  # past the interpreter's start (its imports open files)
            time.sleep(0.05)
            fds, before = _descriptors(pid), fds
            if fds == before:
                break
        assert [fds.get(fd) for fd in ("0", "1", "2")] == [os.devnull] * 3
        assert not [t for t in fds.values() if t.startswith(("pipe:", "socket:"))]
    finally:
        remover.kill()
        remover.wait()
        publish._REMOVERS.remove(remover)


def test_finished_removers_are_reaped(tmp_path: Path) -> None:
    for n in range(3):
        assert publish._remove_detached(_site(tmp_path / f"aside{n}", "old"))
    started = list(publish._REMOVERS)
    assert all(_gone(tmp_path / f"aside{n}") for n in range(3))
    deadline = time.monotonic() + 10
    while any(remover in publish._REMOVERS for remover in started) and time.monotonic() < deadline:
        publish._reap()
        time.sleep(0.02)
    assert not any(remover in publish._REMOVERS for remover in started)
    for remover in started:  # reaped: nothing of it is left to wait for
        assert remover.returncode == 0
        with pytest.raises(ChildProcessError):
            os.waitpid(remover.pid, os.WNOHANG)


def test_a_hand_made_site_link_is_never_taken_for_a_previous_version(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(publish.METHOD_ENV, "link")
    wiki = tmp_path / "wiki"
    wiki.mkdir()
    (wiki / "precious.md").write_text("a source", encoding="utf-8")
    (wiki / "site").symlink_to(".", target_is_directory=True)
    staging = publish.new_staging(wiki / "site")
    (staging / "index.html").write_text("new", encoding="utf-8")
    publish.publish(staging, wiki / "site")
    assert (wiki / "precious.md").read_text(encoding="utf-8") == "a source"
    assert (wiki / "site" / "index.html").read_text(encoding="utf-8") == "new"


@pytest.mark.skipif(not hasattr(os, "O_DIRECTORY"), reason="folders are locked where they can be opened")
def test_builds_of_one_site_take_turns_to_sweep_and_publish(tmp_path: Path) -> None:
    from publisher.kernel import _fs

    site = _site(tmp_path / "site", "old")
    staging = publish.new_staging(site)
    (staging / "index.html").write_text("new", encoding="utf-8")
    done: list[str] = []
    held = threading.Event()
    release = threading.Event()

    def other_build() -> None:
        with _fs.folder_lock(tmp_path):
            held.set()
            release.wait(30)

    holder = threading.Thread(target=other_build)
    holder.start()
    assert held.wait(30)
    workers = [
        threading.Thread(target=lambda: (publish.sweep_stale(site), done.append("sweep"))),
        threading.Thread(target=lambda: (publish.publish(staging, site), done.append("publish"))),
    ]
    for worker in workers:
        worker.start()
    time.sleep(0.5)
    assert done == [] and (site / "index.html").read_text(encoding="utf-8") == "old"  # waiting their turn
    release.set()
    for worker in [holder, *workers]:
        worker.join(30)
    assert sorted(done) == ["publish", "sweep"]
    assert (site / "index.html").read_text(encoding="utf-8") == "new"


def test_a_retired_name_that_is_a_link_never_reaches_what_it_points_to(tmp_path: Path) -> None:
    """Anyone who can write beside the site can name a link like a retired site of a dead build:
    the sweep removes the link, never the folder it points to."""
    proc = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    outside = _site(tmp_path / "precious", "keep")
    parent = tmp_path / "wiki"
    site = _site(parent / "site", "now")
    bait = parent / f".site-old-{int(proc.stdout)}-{'ab' * 6}"
    bait.symlink_to(outside, target_is_directory=True)
    assert publish.sweep_stale(site) == [bait]
    assert not os.path.lexists(bait)  # a link is removed itself, at once
    time.sleep(0.3)  # a remover handed what it points to would be at work now
    assert (outside / "index.html").read_text(encoding="utf-8") == "keep"
    assert (site / "index.html").read_text(encoding="utf-8") == "now"
