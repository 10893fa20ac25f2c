"""What ``assemble`` and ``verify`` load to check a clean run: no validation library.

Agents call these commands hundreds of times a session, and importing pydantic and building the
record models was half of their start-up. Every input of a clean run is read by hand checks that
are never more lenient than the models (``kernel.shapes``, ``kernel.eventviews``,
``gate.recordshape``); the models load only for an input those checks are unsure of. Checked
structurally, by the modules the command loaded (no timing).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from _gate_helpers import make_run, make_upstream_run

ROOT = Path(__file__).resolve().parents[1]

_PROBE = (
    "import sys\n"
    "sys.argv = ['publisher', *sys.argv[1:]]\n"
    "from publisher.cli import entry\n"
    "try:\n"
    "    entry()\n"
    "finally:\n"
    "    bad = sorted(m for m in sys.modules if m in ('pydantic', 'pydantic_core', 'mkdocs', 'jinja2')"
    " or m in ('publisher.kernel.models', 'publisher.gate.recordschema', 'publisher.gate.result'))\n"
    "    print('LOADED', bad, file=sys.stderr)\n"
)


def _loaded(args: list[str]) -> str:
    env = {k: v for k, v in os.environ.items() if not k.startswith("COV")}
    done = subprocess.run([sys.executable, "-c", _PROBE, *args], capture_output=True, text=True, env=env, cwd=ROOT)
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stderr


@pytest.mark.parametrize("layout", ["ours", "upstream"])
def test_assembling_a_clean_run_loads_no_validation_library(tmp_path: Path, layout: str) -> None:
    fixture = make_run(tmp_path, 2, gate=True) if layout == "ours" else make_upstream_run(tmp_path, 2)
    run = str(fixture.run.path)
    assert "LOADED []" in _loaded(["assemble", "--gate", "--run-dir", run])


def test_an_odd_input_still_loads_the_model_which_words_the_refusal(tmp_path: Path) -> None:
    """The hand checks never refuse: a record they are unsure of goes to the model, loaded then."""
    fixture = make_run(tmp_path, 1)
    record = fixture.extractions[0]
    record.write_text(record.read_text(encoding="utf-8").replace('"schema_version": 1', '"schema_version": true'))
    out = _loaded(["assemble", "--run-dir", str(fixture.run.path)])
    assert "publisher.gate.recordschema" in out and "pydantic" in out


_MARKDOWN_PROBE = _PROBE.replace(
    "if m in ('pydantic', 'pydantic_core', 'mkdocs', 'jinja2')", "if m in ('markdown_it', 'mdit_py_plugins')"
)


def _probe_markdown(run: Path, command: str) -> str:
    env = {k: v for k, v in os.environ.items() if not k.startswith("COV")}
    if command == "verify":  # what verify checks: the result assemble wrote
        done = subprocess.run([sys.executable, "-m", "publisher", "assemble", "--gate", "--run-dir", str(run)], env=env)
        assert done.returncode == 0
    args = [command, "--gate", "--run-dir", str(run)]
    done = subprocess.run(
        [sys.executable, "-c", _MARKDOWN_PROBE, *args], capture_output=True, text=True, env=env, cwd=ROOT
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stderr


@pytest.mark.parametrize("command", ["assemble", "verify"])
def test_a_run_without_a_report_loads_no_markdown(tmp_path: Path, command: str) -> None:
    """An agent checks its records again and again before it writes the report: its fetched and
    cited URLs are plain, so nothing of that run needs a Markdown parser. A report loads it."""
    assert _MARKDOWN_PROBE != _PROBE
    (tmp_path / "without").mkdir()
    (tmp_path / "with").mkdir()
    assert "LOADED []" in _probe_markdown(make_run(tmp_path / "without", 2, gate=True, report=False).run.path, command)
    assert "'markdown_it'" in _probe_markdown(make_run(tmp_path / "with", 2, gate=True).run.path, command)
