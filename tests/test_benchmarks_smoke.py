"""The benchmark scripts keep working: ``benchmarks/run_all.py --quick`` runs them all at tiny sizes.

Nothing here is timed; the figures are for people (see docs/performance.md).
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
        timeout=120,
        cwd=ROOT,
    )
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    out = proc.stdout
    for title in (
        "Preflight vs in-run floor",
        "Peak memory while verifying",
        "Commands vs the in-run floor",
        "MkDocs build (s)",
        "Linearity",
        "Claim check",
    ):
        assert title in out, f"missing table {title!r}"
    assert "== bench_build: exit 0" in out
    assert "== bench_claims: exit 0" in out
