"""The benchmark scripts keep working: ``benchmarks/run_all.py --quick`` runs them all at tiny sizes.

Nothing here is timed; the figures are for people (see docs/performance.md). The subprocess
timeouts only stop a hang: ``--quick`` takes about a minute, more on a loaded machine.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_run_all_quick() -> None:
    proc = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "run_all.py"), "--quick"],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=ROOT,
    )
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    out = proc.stdout
    for title in (
        "The whole wiki check vs the in-run floor",
        "Peak memory of the whole check",
        "Commands vs the in-run floor",
        "MkDocs build (s)",
        "Linearity",
        "Claim check",
    ):
        assert title in out, f"missing table {title!r}"
    assert "== bench_build: exit 0" in out
    assert "== bench_claims: exit 0" in out


def test_build_with_claims_quick() -> None:
    """The build benchmark admits claims before building and times the claim-free build beside it."""
    proc = subprocess.run(
        [
            sys.executable,
            str(ROOT / "benchmarks" / "bench_build.py"),
            "--quick",
            "--claims-per-concept",
            "1",
            "--variants",
            "hook,bare",
        ],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=ROOT,
    )
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    out = proc.stdout
    assert "Build with claims (s)" in out
    assert "with hook, no claims" in out
    rows = out.split("Build with claims (s)", 1)[1].split("Linearity", 1)[0].splitlines()[4:6]
    claims = [int(row.split()[1]) for row in rows]
    assert 0 < claims[0] < claims[1], rows


def test_start_and_upstream_quick(tmp_path: Path) -> None:
    """The start-up benchmarks run without an upstream checkout and say the comparison was skipped."""
    for script, title in (("bench_start.py", "whole-process wall seconds"), ("bench_upstream.py", "3 articles")):
        proc = subprocess.run(
            [sys.executable, str(ROOT / "benchmarks" / script), "--quick"],
            capture_output=True,
            text=True,
            timeout=600,
            cwd=ROOT,
        )
        assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
        assert title in proc.stdout
    missing = tmp_path / "no-checkout"
    line = [sys.executable, str(ROOT / "benchmarks" / "bench_upstream.py"), "--sizes", "2", "--rounds", "1"]
    proc = subprocess.run(
        [*line, "--upstream", str(missing)],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=ROOT,
    )
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    assert "upstream comparison skipped" in proc.stdout and "median / upstream" in proc.stdout


def test_runcheck_quick() -> None:
    """The per-run benchmark times this library against a baseline checkout (here: itself) and
    breaks a run's check down by step."""
    proc = subprocess.run(
        [
            sys.executable,
            str(ROOT / "benchmarks" / "bench_runcheck.py"),
            "--quick",
            "--phases",
            "--baseline",
            str(ROOT),
        ],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=ROOT,
    )
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    out = proc.stdout
    assert "Per-run re-derivation" in out and "baseline / this" in out
    assert "wiki.runchecks:pack" in out
