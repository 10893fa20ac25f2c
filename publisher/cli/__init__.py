"""The ``publisher`` console script: argument parsing, output and exit statuses.

A thin adapter: each command group lives in a module of :mod:`publisher._cli` that registers its
sub-commands and calls the library. Exit status 0 is success, 1 integrity findings or rejected
records, 2 usage or fatal errors. Errors are printed as one line, never as a traceback (set
``PUBLISHER_DEBUG=1`` to see one).
"""

from __future__ import annotations

import argparse
import gc
import importlib
import json
import os
import sys
import types
from collections.abc import Sequence
from typing import Any

from ..kernel.errors import PublisherError
from ..kernel.findings import Finding
from ..kernel.text import one_line
from ..parallel.gcpause import fewer_collections  # light: the package loads pool and checks on first use
from ._common import error_line

__all__ = ["main", "build_parser", "COMMANDS", "ERROR_FACTS", "PLUGINS_VARIABLE"]

COMMAND_MODULES = (
    "run",
    "source",
    "schema",
    "gate",
    "wiki",
    "site",
    "provenance",
    "claims",
    "warrant",
    "agents",
    "proof",
)
"""Sub-command groups, each a module of ``publisher._cli`` with ``register(subparsers)``."""

COMMANDS = {
    "run": "run",
    "source": "source",
    "schema": "schema",
    "assemble": "gate",
    "verify": "gate",
    "render": "gate",
    "promote": "wiki",
    "check": "wiki",
    "migrate": "wiki",
    "new": "wiki",
    "check-site": "site",
    "keys": "provenance",
    "audit": "provenance",
    "missing": "claims",
    "review": "claims",
    "assess": "claims",
    "warrant": "warrant",
    "import": "agents",
    "export": "agents",
    "mcp": "agents",
    "proof": "proof",
}
"""Each top-level command and the module of :data:`COMMAND_MODULES` that registers it: a command
line naming one is parsed with that module's commands only (importing and registering every group
costs an agent's call more than the call itself)."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # type: ignore[override]
        # One line, like every other error: the usage block would bury it.
        text = " ".join(message.split())
        if _USAGE_AS_JSON:  # --json: the usage error as JSON on stdout too
            error = {"reason_code": None, "message": f"{self.prog}: {text}", "exit_status": 2}
            error.update(dict.fromkeys(ERROR_FACTS))  # the same keys as every other error object
            sys.stdout.write(json.dumps({"ok": False, "error": error}, ensure_ascii=False) + "\n")
        self.exit(2, f"{self.prog}: error: {text} (see '{self.prog} --help')\n")


_USAGE_AS_JSON = False
"""Set by :func:`main` for the parse of a command line that asks for ``--json``."""


def build_parser(argv: Sequence[str] | None = None) -> argparse.ArgumentParser:
    """The argument parser: with every sub-command registered, or, when ``argv`` starts with a
    command of :data:`COMMANDS`, with that command's group only (the same parser for that line)."""
    from .. import __version__

    parser = _Parser(
        prog="publisher",
        description="Publish evidence wikis whose every quote is re-sliced from a verified snapshot.",
    )
    parser.add_argument("--version", action="version", version=f"publisher {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    sub.required = True
    group = COMMANDS.get(argv[0]) if argv else None
    for name in COMMAND_MODULES if group is None else (group,):
        module = importlib.import_module(f"publisher.cli.{name}")
        module.register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit status."""
    line = sys.argv[1:] if argv is None else list(argv)
    parser = build_parser(line)
    global _USAGE_AS_JSON
    _USAGE_AS_JSON = "--json" in line
    try:
        _refuse_undecodable(parser, line)
        args = parser.parse_args(line)
    finally:
        _USAGE_AS_JSON = False
    try:
        with fewer_collections():  # a command is one burst of long-lived objects (records, checks)
            status: int = args.func(args)
        return status
    except PublisherError as exc:
        error_line(f"publisher: error: {exc.one_line()}")
        _json_error(args, exc.reason.value if exc.reason else None, exc.message, exc.exit_status, exc.finding())
        return exc.exit_status
    except KeyboardInterrupt:
        print("publisher: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return 0
    except OSError as exc:  # a file system refusal (a folder where a file goes, a full disk): one line
        where = f": {exc.filename}" if exc.filename else ""
        error_line(f"publisher: error: {exc.strerror or exc}{where}")
        _json_error(args, None, f"{exc.strerror or exc}{where}", 2, Finding(None, str(exc.filename or ""), ""))
        return 2
    except Exception as exc:  # the edge: anything unexpected becomes one line, exit 2
        if os.environ.get("PUBLISHER_DEBUG"):
            import traceback  # only where a developer asks for it

            traceback.print_exc()
        detail = one_line(exc)
        error_line(f"publisher: internal error: {type(exc).__name__}: {detail}")
        return 2


def _refuse_undecodable(parser: argparse.ArgumentParser, line: Sequence[str]) -> None:
    """A usage error (exit 2) for an argument holding bytes that are not UTF-8: Python hands them
    over as lone surrogates, which no record, log line or message can encode, so refused here,
    before anything is read or written, naming the argument and its option."""
    for index, word in enumerate(line):
        if any("\ud800" <= char <= "\udfff" for char in word):
            option = f" (after {line[index - 1][:40]})" if index and line[index - 1].startswith("-") else ""
            shown = word.encode("utf-8", "surrogateescape")[:80]
            parser.error(f"argument {index + 1}{option} is not UTF-8 text: {shown!r}; pass text and paths as UTF-8")


ERROR_FACTS = ("file", "line", "check", "field", "source_id", "start", "end", "run", "artifact_id", "label")
"""The finding fields of a ``--json`` error object, beside ``reason_code``, ``message`` and
``exit_status``: each present, None where the error does not know it."""


def _json_error(args: argparse.Namespace, reason: str | None, message: str, status: int, finding: Finding) -> None:
    """With ``--json``, the error as JSON on stdout too: ``{"ok": false, "error": {...}}``, the
    error with the finding fields of :data:`ERROR_FACTS` (from ``finding``)."""
    if getattr(args, "json", False):
        error: dict[str, Any] = {"reason_code": reason, "message": one_line(message), "exit_status": status}
        facts = finding.to_dict()
        error.update({key: facts[key] for key in ERROR_FACTS})
        error["file"] = error["file"] or None
        try:
            sys.stdout.write(json.dumps({"ok": False, "error": error}, ensure_ascii=False) + "\n")
        except (BrokenPipeError, ValueError):
            pass


PLUGINS_VARIABLE = "PYDANTIC_DISABLE_PLUGINS"
"""Set to ``__all__`` for the command line's process unless the caller set it: the validation
library then skips its search of every installed distribution's entry points for validation
plugins (some 10 ms of CPU on each call); no plugin is meant to observe or alter the records a
command checks. A caller who sets the variable (to ``""`` for instance) decides for themselves."""


_PLUGIN_LOADER = "pydantic.plugin._loader"
_PLUGINS_OFF = ("__all__", "1", "true")  # the values with which the library looks for no plugin at all


def _skip_plugin_loader() -> None:
    """With plugins off, the validation library still imports its plugin loader when it builds the
    first validator, and with it ``importlib.metadata`` (some 20 ms), only to learn there are none.

    Stand in for that module with one whose ``get_plugins`` returns none, as the real one does when
    plugins are off; any other name is looked up in the real module, loaded then, so a library
    that asks its loader for more still gets it. Nothing is replaced when plugins are on or the
    loader is already loaded.
    """
    if os.environ.get(PLUGINS_VARIABLE) not in _PLUGINS_OFF or _PLUGIN_LOADER in sys.modules:
        return
    stand_in = types.ModuleType(_PLUGIN_LOADER, "Plugins are off for this process: no plugin search.")

    def get_plugins() -> tuple[()]:
        return ()

    loaded: list[types.ModuleType] = []

    def real(name: str) -> Any:
        if name.startswith("__"):  # the import system asks a module for __path__ and such
            raise AttributeError(name)
        if loaded:
            return getattr(loaded[0], name)
        import importlib.util
        from pathlib import Path

        import pydantic.plugin

        where = Path(pydantic.plugin.__file__ or "").with_name("_loader.py")
        spec = importlib.util.spec_from_file_location(_PLUGIN_LOADER, where)
        if spec is None or spec.loader is None:
            raise AttributeError(name)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        loaded.append(module)
        return getattr(module, name)

    stand_in.get_plugins = get_plugins  # type: ignore[attr-defined]
    stand_in.__getattr__ = real  # type: ignore[method-assign]
    sys.modules[_PLUGIN_LOADER] = stand_in


def entry() -> None:
    """Console-script entry point."""
    os.environ.setdefault(PLUGINS_VARIABLE, "__all__")
    _skip_plugin_loader()
    # One burst until the process ends: the command's own burst ending would otherwise set the
    # collector's young threshold back while tens of thousands of objects are young, and the next
    # allocation would walk them all (some 10 ms) just before the process exits.
    with fewer_collections():
        status = main()
        _leave_to_exit()
    sys.exit(status)


def _leave_to_exit() -> None:
    """Hand every object the command made to the process's end untouched by the cyclic collector.

    Once the command has returned, the interpreter's shutdown still walks the whole heap with the
    collector, more than once, as it clears the modules: with the validation library's schemas,
    the Markdown parser and a run's records loaded, that walk cost a short command (an agent's
    ``assemble`` or ``verify``) about as much as its own work. Frozen objects are left to the
    process's end, whose memory goes back to the system whole; files and output are closed and
    flushed as before, and the exit handlers run as before.
    """
    gc.freeze()
