"""POSIX only, declared: the classifiers say so, and importing the package elsewhere is one line."""

from __future__ import annotations

import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_the_classifiers_declare_posix() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert "Operating System :: POSIX" in project["classifiers"]
    assert not any("Windows" in c for c in project["classifiers"])


def test_importing_on_a_system_without_posix_is_one_import_error() -> None:
    code = (
        "import os; os.name = 'nt'\n"
        "try:\n    import publisher\n"
        "except ImportError as exc:\n    print(type(exc).__name__, len(str(exc).splitlines()))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT)
    assert done.stdout.split() == ["ImportError", "1"]
