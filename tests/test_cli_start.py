"""The command line builds only the command group a line names: the same parser for that line."""

from __future__ import annotations

import argparse
import importlib
import subprocess
import sys

import pytest

from publisher.cli import COMMAND_MODULES, COMMANDS, _Parser, build_parser


def _choices(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    return dict(parser._subparsers._group_actions[0].choices)  # type: ignore[union-attr]


def test_commands_names_every_command_with_the_module_that_registers_it() -> None:
    registered: dict[str, str] = {}
    for name in COMMAND_MODULES:
        parser = _Parser(prog="publisher")
        sub = parser.add_subparsers(dest="command", parser_class=_Parser)
        importlib.import_module(f"publisher.cli.{name}").register(sub)
        registered.update(dict.fromkeys(_choices(parser), name))
    assert registered == COMMANDS
    assert list(_choices(build_parser())) == list(COMMANDS)


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_a_line_naming_a_command_gets_that_command_as_the_full_parser_builds_it(command: str) -> None:
    lazy, full = _choices(build_parser([command, "--help"])), _choices(build_parser())
    assert command in lazy and set(lazy) <= set(full)
    assert lazy[command].format_help() == full[command].format_help()


@pytest.mark.parametrize("line", [[], ["--help"], ["-h", "source"], ["--version"], ["no-such-command"]])
def test_a_line_naming_no_command_first_gets_every_command(line: list[str]) -> None:
    assert list(_choices(build_parser(line))) == list(COMMANDS)


def test_the_reading_and_assembling_commands_import_no_build_or_signing_library() -> None:
    """What a read, a span search, an assembly or a verification loads before it runs: no MkDocs
    (nor Click, Jinja2, Babel) and no cryptography, which only keys and signatures need."""
    probe = (
        "import sys\n"
        "from publisher.cli import build_parser\n"
        "for line in (['source', 'read'], ['assemble'], ['verify']):\n"
        "    build_parser(line)\n"
        "import publisher.acquire.sources, publisher.acquire.select, publisher.gate.assemble, publisher.gate.pipeline\n"
        "import publisher.site.lifecycle.policy\n"
        "heavy = ('mkdocs', 'click', 'jinja2', 'babel', 'cryptography', 'material')\n"
        "print(sorted({m.split('.')[0] for m in sys.modules} & set(heavy)))\n"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"
