"""The README and the docs say true things: commands that parse, examples as printed, no outside links.

The walk-through's records must be exactly what ``publisher schema --example`` prints (those are
assembled against the real articles in test_examples.py), every ``publisher`` command line in the
README and the walk-through must parse with the real argument parser, and the formats page must
cover every reason code, every command and every evidence id form.
"""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest
import yaml

from publisher.cli import build_parser
from publisher.cli.examples import EXAMPLES, example
from publisher.kernel.reasons import Reason

REPO = Path(__file__).resolve().parents[1]
README = REPO / "README.md"
DOCS = REPO / "docs"
FENCE = re.compile(r"^```(\w*)\n(.*?)^```", re.MULTILINE | re.DOTALL)


def _blocks(path: Path, language: str | None = None) -> list[str]:
    text = path.read_text(encoding="utf-8")
    return [body for lang, body in FENCE.findall(text) if language is None or lang == language]


def _section(path: Path, heading: str) -> str:
    text = path.read_text(encoding="utf-8")
    start = text.index(f"\n## {heading}\n")
    end = text.find("\n## ", start + 1)
    return text[start : end if end != -1 else len(text)]


def _command_lines(block: str) -> list[str]:
    """``publisher …`` invocations in a bash block, continuation lines joined, comments dropped."""
    joined = block.replace("\\\n", " ")
    lines = []
    for line in joined.splitlines():
        for part in line.split("&&"):
            part = part.strip()
            if part.startswith("publisher "):
                lines.append(part.split("  #")[0].strip())
    return lines


def test_quick_start_is_exactly_two_commands() -> None:
    section = _section(README, "Quick start")
    blocks = [body for lang, body in FENCE.findall(section) if lang == "bash"]
    assert len(blocks) == 1
    commands = [line for line in blocks[0].splitlines() if line.strip() and not line.lstrip().startswith("#")]
    assert len(commands) == 2
    assert all(line.startswith("python3 -m venv .venv && .venv/bin/pip install -q -e ") for line in commands)


def test_workflow_activates_the_environment_before_bare_commands() -> None:
    section = _section(README, "Workflow")
    assert ". .venv/bin/activate" in section.split("```bash", 1)[0]  # said in words, before the block
    first = next(line for line in section.split("```bash", 1)[1].splitlines() if line.strip())
    assert first.startswith(". .venv/bin/activate")


def test_readme_links_stay_inside_the_repository() -> None:
    text = README.read_text(encoding="utf-8")
    for target in re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", text):
        if "://" in target:
            continue
        path = (REPO / target).resolve()
        assert path.is_relative_to(REPO), f"README links outside the repository: {target}"
        assert path.exists(), f"README links to a missing file: {target}"


@pytest.mark.parametrize("doc", [README, DOCS / "walkthrough.md"], ids=lambda p: p.name)
def test_documented_command_lines_parse(doc: Path) -> None:
    parser = build_parser()
    lines = [line for block in _blocks(doc, "bash") for line in _command_lines(block)]
    assert lines, f"no publisher command in {doc.name}"
    for line in lines:
        argv = shlex.split(line.replace("$SRC", "src-" + "0" * 64).replace("src-…", "src-" + "0" * 64))[1:]
        try:
            parser.parse_args(argv)
        except SystemExit as exc:
            if exc.code != 0:  # --version and --help exit 0
                pytest.fail(f"{doc.name}: `{line}` does not parse (exit {exc.code})")


def test_walkthrough_shows_every_example_verbatim() -> None:
    text = (DOCS / "walkthrough.md").read_text(encoding="utf-8")
    blocks = [body for _, body in FENCE.findall(text)]
    for name in EXAMPLES:
        assert example(name) in blocks, f"the walk-through's {name} differs from `publisher schema --example {name}`"


def test_new_pages_are_in_the_nav() -> None:
    config = yaml.safe_load((REPO / "mkdocs.yml").read_text(encoding="utf-8"))
    pages = {next(iter(entry.values())) for entry in config["nav"]}
    assert {"walkthrough.md", "formats.md"} <= pages


def test_formats_covers_codes_commands_ids_and_limits() -> None:
    text = (DOCS / "formats.md").read_text(encoding="utf-8")
    for reason in Reason:
        assert f"`{reason.value}`" in text, reason
    subcommands = build_parser()._subparsers._group_actions[0].choices  # type: ignore[union-attr]
    for name in subcommands:
        assert f"`publisher {name}" in text, name
    for form in ("`pmid:N`", "`doi:X`", "`pmcid:PMCN`", "`web:<slug>`"):
        assert form in text
    assert "--max-bytes" in text and "64 MiB" in text
    for layout in ("config.json", "events.jsonl", "result.json", "verification.json", "report.md", "concepts/"):
        assert layout in text
