"""The command line builds only the command group a line names: the same parser for that line."""

from __future__ import annotations

import argparse
import importlib
import json
import os
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


def _fresh(probe: str) -> str:
    """What ``probe`` prints in a fresh interpreter (nothing imported by this test run)."""
    return subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout.strip()


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
    assert _fresh(probe) == "[]"


def test_importing_the_read_path_builds_no_validator_and_loads_no_search_module() -> None:
    """A read builds the validators of the records it reads, on first use: importing the modules
    of ``source read`` completes no record model (each costs a few ms), loads none of acquisition's
    modules (metadata, receipts, identity: a read is :mod:`publisher.acquire.reading`), reads no package metadata
    (``importlib.metadata``: the fetch's receipts and the validation library's plugin search need
    it, a read's import does not), loads no ``ctypes`` (the pool's heap trim), none of the span
    search's modules and none of a revision's; the search module compiles its cut pattern on
    first use."""
    probe = (
        "import sys\n"
        "from pydantic import BaseModel\n"
        "from publisher.cli import build_parser\n"
        "build_parser(['source', 'read'])\n"
        "import publisher.cli.source, publisher.acquire.reading\n"
        "built = sorted(\n"
        "    f'{c.__module__}.{c.__name__}' for m in list(sys.modules.values())\n"
        "    if getattr(m, '__name__', '').startswith('publisher') for c in vars(m).values()\n"
        "    if isinstance(c, type) and issubclass(c, BaseModel) and c is not BaseModel and c.__pydantic_complete__\n"
        ")\n"
        "lazy = {'importlib.metadata', 'ctypes', 'publisher.kernel.locate', 'publisher.kernel.sentences',\n"
        "        'publisher.acquire.select', 'publisher.acquire.revisions', 'publisher.acquire.sources',\n"
        "        'publisher.acquire.metadata', 'publisher.acquire.receipts', 'publisher.acquire.identity'}\n"
        "loaded = sorted(lazy & set(sys.modules))\n"
        "import publisher.kernel.locate as locate\n"
        "print(built, loaded, locate._cut_re is None)\n"
    )
    assert _fresh(probe) == "[] [] True"


def test_assembling_an_unsigned_run_loads_no_module_only_a_mismatch_or_a_signature_needs() -> None:
    """What ``assemble`` imports before it runs: not the result's models (only a signed wiki's
    declared policy and the checks of a stored result use them), not the quote locator (a
    mismatched quote), not the look-alike tables (the prose checks of ``verify``)."""
    probe = (
        "import sys\n"
        "from publisher.cli import build_parser\n"
        "build_parser(['assemble'])\n"
        "import publisher.cli.gate, publisher.gate.assemble\n"
        "lazy = ('publisher.gate.result', 'publisher.kernel.locate', 'publisher.kernel.lookalike')\n"
        "print(sorted(set(lazy) & set(sys.modules)))\n"
    )
    assert _fresh(probe) == "[]"


def test_a_command_leaves_its_objects_to_the_process_end_and_still_writes_everything() -> None:
    """Once the command has returned, its objects are frozen out of the cyclic collector's reach
    (the interpreter's shutdown would walk them all again, as long as the command took) and no
    collection runs between its return and the exit handlers (the end of the command's burst
    would walk all its young objects once more); the exit handlers still run, the output is
    whole and the exit status is the command's."""
    probe = (
        "import atexit, gc, sys\n"
        "import publisher.cli as cli\n"
        "real, returned, after = cli.main, [], []\n"
        "def main(argv=None):\n"
        "    status = real(argv)\n"
        "    returned.append(gc.get_threshold()[0])\n"
        "    return status\n"
        "cli.main = main\n"
        "gc.callbacks.append(lambda phase, info: returned and phase == 'start' and after.append(info))\n"
        "atexit.register(lambda: sys.stderr.write(f'frozen={gc.get_freeze_count() > 0} after={len(after)} '\n"
        "                                         f'burst={returned[0] > 700}\\n'))\n"
        "sys.argv = ['publisher', 'schema', 'result']\n"
        "cli.entry()\n"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=False)
    assert done.returncode == 0 and done.stderr.strip() == "frozen=True after=0 burst=True"
    assert json.loads(done.stdout)["title"] == "Result"


def test_the_command_line_skips_the_plugin_search_unless_the_caller_decides(monkeypatch: pytest.MonkeyPatch) -> None:
    """``entry`` sets ``PYDANTIC_DISABLE_PLUGINS`` for its process; a value the caller set stays."""
    from publisher import cli

    seen: list[str | None] = []
    monkeypatch.setattr(cli, "main", lambda: seen.append(os.environ.get(cli.PLUGINS_VARIABLE)) or 0)
    monkeypatch.setattr(cli, "_leave_to_exit", lambda: None)  # the test process goes on: nothing frozen
    monkeypatch.delenv(cli.PLUGINS_VARIABLE, raising=False)
    with pytest.raises(SystemExit):
        cli.entry()
    monkeypatch.setenv(cli.PLUGINS_VARIABLE, "")
    with pytest.raises(SystemExit):
        cli.entry()
    assert seen == ["__all__", ""]


def test_with_plugins_off_the_command_line_validates_without_the_plugin_search() -> None:
    """The command line's process answers the validation library's plugin lookup itself while
    plugins are off: a model validates, no package metadata is loaded for it, and a name the
    library might ask of its loader besides ``get_plugins`` still comes from the real module."""
    probe = (
        "import os, sys\n"
        "os.environ['PYDANTIC_DISABLE_PLUGINS'] = '__all__'\n"
        "from publisher import cli\n"
        "cli._skip_plugin_loader()\n"
        "from pydantic import BaseModel\n"
        "class M(BaseModel):\n"
        "    n: int\n"
        "valid = M.model_validate({'n': 1}).n\n"
        "searched = 'importlib.metadata' in sys.modules\n"
        "from pydantic.plugin._loader import PYDANTIC_ENTRY_POINT_GROUP, get_plugins\n"
        "print(valid, searched, list(get_plugins()), PYDANTIC_ENTRY_POINT_GROUP)\n"
    )
    assert _fresh(probe) == "1 False [] pydantic"


@pytest.mark.parametrize("value", ["", "some-plugin"])
def test_with_plugins_on_the_real_plugin_loader_is_left_alone(value: str) -> None:
    """A caller who turns plugins on (or names some off) gets the library's own loader."""
    probe = (
        "import os, sys\n"
        f"os.environ['PYDANTIC_DISABLE_PLUGINS'] = {value!r}\n"
        "from publisher import cli\n"
        "cli._skip_plugin_loader()\n"
        "from pydantic import BaseModel\n"
        "class M(BaseModel):\n"
        "    n: int\n"
        "M(n=1)\n"
        "print(sys.modules['pydantic.plugin._loader'].__file__ is not None)\n"
    )
    assert _fresh(probe) == "True"


def test_forked_workers_inherit_the_validators_their_checks_use() -> None:
    """Models build their validators on first use; a check that forks workers builds first the
    one its workers use (the concept front matter's), so no worker builds its own copy. The
    snapshot's, the event's, the record's and the result's are built by nobody: hand checks read
    those inputs, and a model judges only what they are unsure of."""
    probe = (
        "from publisher.gate.recordschema import Extraction\n"
        "from publisher.gate.result import Result\n"
        "from publisher.kernel.models import Event, Snapshot\n"
        "from publisher.parallel.pool import worker_pool\n"
        "from publisher.wiki.check import _forked_pool\n"
        "from publisher.wiki.concepts import ConceptFrontMatter\n"
        "models = (Snapshot, Event, Extraction, Result, ConceptFrontMatter)\n"
        "before = [m.__pydantic_complete__ for m in models]\n"
        "with worker_pool(2) as pool:\n"
        "    plain = [pool.submit(getattr, m, '__pydantic_complete__').result() for m in models]\n"
        "with _forked_pool(2) as pool:\n"
        "    seen = [pool.submit(getattr, m, '__pydantic_complete__').result() for m in models]\n"
        "print(before, plain, seen)\n"
    )
    assert _fresh(probe) == (
        "[False, False, False, False, False] [False, False, False, False, False] [False, False, False, False, True]"
    )
