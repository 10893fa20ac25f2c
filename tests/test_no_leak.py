"""A build killed with SIGKILL leaves no process behind (issue 11, class 8).

A real ``mkdocs build`` of a copy of the example wiki runs with a slow extra hook, so its helper
processes (the build helper's forked renderers, and a pool the hook starts through the
project's own pool plumbing, from a forkserver, busy with a long task) are alive when the build is killed. Every
descendant must be gone shortly after, and the previous site stays as it was.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from _wiki_helpers import tree_digest
from test_example_wiki import _copy_wiki

from publisher.parallel import default_workers

pytestmark = pytest.mark.slow

_SLOW_HOOK = """
import time
from publisher.parallel import worker_pool

_pools = []

def on_post_page(output, page, config):
    if not _pools:  # after the build helper forked (threads now run: this pool comes from a forkserver)
        pool = worker_pool(1)
        pool.submit(time.sleep, 300)  # a worker busy for longer than the test
        _pools.append(pool)
    time.sleep(0.5)
    return output
"""


def _children(pid: int) -> set[int]:
    out: set[int] = set()
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return out
    for tid in tasks:
        try:
            text = Path(f"/proc/{pid}/task/{tid}/children").read_text()
        except OSError:
            continue
        out.update(int(p) for p in text.split())
    return out


def _descendants(pid: int) -> set[int]:
    found: set[int] = set()
    todo = [pid]
    while todo:
        for child in _children(todo.pop()):
            if child not in found:
                found.add(child)
                todo.append(child)
    return found


def _alive(pid: int) -> bool:
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return False
    state = next((line.split()[1] for line in status.splitlines() if line.startswith("State:")), "?")
    return state not in ("Z", "X")


@pytest.mark.skipif(not Path("/proc/self/task").is_dir(), reason="needs /proc (Linux)")
def test_sigkill_mid_build_leaves_no_process(tmp_path: Path) -> None:
    wiki = _copy_wiki(tmp_path)
    exe = Path(sys.executable).with_name("mkdocs")
    done = subprocess.run([str(exe), "build", "-q"], cwd=wiki, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    before = tree_digest(wiki / "site")
    (wiki / "hooks" / "slow.py").write_text(_SLOW_HOOK, encoding="utf-8")
    yml = (wiki / "mkdocs.yml").read_text(encoding="utf-8")
    (wiki / "mkdocs.yml").write_text(
        yml.replace("  - hooks/evidence.py\n", "  - hooks/evidence.py\n  - hooks/slow.py\n")
    )
    proc = subprocess.Popen([str(exe), "build", "-q"], cwd=wiki, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    want = 4 if default_workers() >= 2 else 2  # the build helper's two, the forkserver and its worker
    seen: set[int] = set()
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and proc.poll() is None:
            seen |= _descendants(proc.pid)
            if len(seen) >= want:
                break
            time.sleep(0.05)
        assert proc.poll() is None, "the build ended before its helpers were seen"
        time.sleep(0.5)
        seen |= _descendants(proc.pid)
        assert len(seen) >= want, f"only {len(seen)} helper process(es) were started"
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline and any(_alive(p) for p in seen):
        time.sleep(0.1)
    left = sorted(p for p in seen if _alive(p))
    what = {p: Path(f"/proc/{p}/cmdline").read_bytes().replace(b"\0", b" ")[:120] for p in left if _alive(p)}
    for pid in left:  # never leave them to the next test, whatever the outcome
        os.kill(pid, signal.SIGKILL)
    assert left == [], f"processes of the killed build still run: {what}"
    assert tree_digest(wiki / "site") == before
