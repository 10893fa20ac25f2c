"""Portable publication: each way of replacing a site in one step, forced on Linux, keeps a site
in place at every moment; the kernel imports without ``fcntl`` (Windows)."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest

from publisher.site.build import publish


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
        "import publisher.site.build.publish\n"
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
    promote(sample_run(wiki).run.path, wiki)
    build_wiki(wiki)
    first = os.readlink(wiki / "site")
    build_wiki(wiki)
    assert (wiki / "site").is_symlink() and os.readlink(wiki / "site") != first
    outcome = check_site(wiki / "site", wiki)
    assert outcome.ok, [f.one_line() for f in outcome.findings]
