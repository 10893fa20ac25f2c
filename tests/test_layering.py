"""The import layering: each module imports only modules ranked below it (STYLE, "Shape of the package").

Every module of ``publisher/`` has a rank: its layer (:data:`LAYERS`), then its place inside the
layer and inside its sub-package (:data:`ORDER`); a module outside the ranking fails. Every import
counts: lazy ones inside functions, those under ``TYPE_CHECKING``, a name taken from a package
whose ``__init__`` re-exports it (that imports the submodule defining it), and
``importlib.import_module`` / ``__import__`` with a literal name. A non-literal one fails unless
:data:`DYNAMIC` names the module with its reason and the modules it can load.

Third-party libraries have their places too (:data:`PLACES`, an allow-list that must name every
library the package imports): only the MkDocs side imports MkDocs, its theme and Python-Markdown;
only the command line draws on a terminal; only the agents' server and the CLI import the MCP SDK;
each other library is imported by the modules whose job it serves.
"""

from __future__ import annotations

import ast
import importlib
import sys
from collections.abc import Callable
from functools import cache
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "publisher"

LAYERS = ["resources", "kernel", "parallel", "runs", "acquire", "gate", "wiki", "site", "mcp", "cli"]
"""The layers, lowest first: each imports only layers before it (``cli`` includes ``__main__``)."""

Entry = str | tuple[str, "list[Entry]"]

ORDER: dict[str, list[Entry]] = {
    "kernel": [
        "frozen",
        "reasons",
        "checkids",
        "text",
        "sentences",
        "findings",
        "errors",
        "tty",
        "ids",
        "canonical",
        "segmented",
        "vocab",
        "merkletree",
        "shapes",
        "views",
        "eventviews",
        "models",
        "spans",
        "locate",
        "lookalike",
        "refs",
        "_fs",
        "trust",
        "blobs",
        "merkle",
        "store",
        "eventlog",
        "assets",
        "snapshots",
        "__init__",
    ],
    "parallel": ["gcpause", "progress", "checks", "pool", "reader", "cluster", "__init__"],
    "acquire": [
        "__init__",
        "signing",
        "select",
        "reading",
        "plain",
        "_inline_css",
        "_jats_flow",
        "jats",
        "identity",
        "html",
        "pdf",
        "surface",
        "metadata",
        "http",
        "receipts",
        "revisions",
        "notices",
        "sources",
        "agentrun",
    ],
    "gate": [
        "__init__",
        "urls",
        "recordshape",
        "recordschema",
        "records",
        "result",
        "resultshape",
        "reportmd",
        "mdparts",
        "quotations",
        "corpus",
        "verdicts",
        "freshness",
        "inputs",
        "artifacts",
        "claims",
        "assemble",
        (
            "checks",
            [
                "__init__",
                "runcheck",
                "collect",
                "assembler",
                "eventlog",
                "snapshot",
                "span",
                "freshfetch",
                "prose",
                "report",
                "gate",
                "publication",
            ],
        ),
        "pipeline",
        "render",
        "citations",
    ],
    "wiki": [
        "__init__",
        "markdown",
        "policy",
        "concepts",
        "discover",
        "spantables",
        "evidence",
        "promoted",
        "revisions",
        "works",
        "notices",
        (
            "claims",
            [
                "__init__",
                "model",
                "records",
                "log",
                "missingness",
                "reviews",
                "adjudications",
                "admission",
                "provenance",
                "warrant",
                "counts",
            ],
        ),
        "conceptcheck",
        "runchecks",
        "check",
        "audit",
        "promote",
        "annotations",
        "assess",
        "migrate",
        "warrant",
    ],
    "site": [
        "__init__",
        (
            "pages",
            [
                "__init__",
                "uris",
                "staged",
                "markup",
                "titles",
                "a11y",
                "offline",
                "proofs",
                "context",
                "highlight",
                "model",
                "source",
                "indexes",
                "claims",
                "generate",
            ],
        ),
        (
            "checks",
            [
                "__init__",
                "manifest",
                "csp",
                "themescripts",
                "scan",
                "seal",
                "trusted",
                "inert",
                "frontmatter",
                "prose",
                "checkrecords",
                "checksite",
            ],
        ),
        (
            "lifecycle",
            [
                "__init__",
                "refusal",
                "options",
                "plainyaml",
                "policy",
                "publish",
                "pageseal",
                "workers",
                "finish",
                "sitefiles",
                "events",
                "hook",
                "plugin",
                "checkpages",
            ],
        ),
        (
            "build",
            [
                "__init__",
                "refusal",
                "options",
                "policy",
                "publish",
                "pageseal",
                "workers",
                "finish",
                "sitefiles",
                "events",
                "hook",
                "plugin",
                "checkpages",
            ],
        ),
        "scaffold",
        "hook",
        "plugin",
    ],
    "mcp": ["__init__", "tools", "transport", "server"],
    "cli": [
        "_common",
        "progress",
        "run",
        "source",
        "examples",
        "schema",
        "gate",
        "wiki",
        "site",
        "provenance",
        "claims",
        "warrant",
        "agents",
        "proof",
        "plugin",
        "__init__",
        "__main__",
    ],
}
"""Inside each layer (and each sub-package), the order its modules may import each other in.

A package's ``__init__`` has a place like any module: first where it defines what its modules
import (``acquire``, ``site``), last where it re-exports them (``kernel``, ``parallel``, ``cli``).
"""

LAZY_CYCLES = {
    ("publisher.acquire", "publisher.acquire.plain"): "extract() loads the extractor of a media type on first use",
    ("publisher.acquire", "publisher.acquire.html"): "extract() loads the extractor of a media type on first use",
    ("publisher.acquire", "publisher.acquire.jats"): "extract() loads the extractor of a media type on first use",
    ("publisher.acquire", "publisher.acquire.pdf"): "extract() loads the extractor of a media type on first use",
}
"""Upward imports inside a function, each with its reason (the importer runs before the import)."""


def _command_modules() -> list[str]:
    return [f"publisher.cli.{name}" for name in importlib.import_module("publisher.cli").COMMAND_MODULES]


def _schema_models() -> list[str]:
    return sorted({module for module, _ in importlib.import_module("publisher.cli.schema")._MODELS.values()})


def _parallel_homes() -> list[str]:
    homes = importlib.import_module("publisher.parallel").HOMES.values()
    return sorted({f"publisher.parallel.{home}" for home in homes})


DYNAMIC: dict[str, tuple[str, Callable[[], list[str]]]] = {
    "publisher.cli": ("registers the command modules named in COMMAND_MODULES", _command_modules),
    "publisher.cli.schema": ("loads the model a schema name stands for (_MODELS)", _schema_models),
    "publisher.parallel": ("loads the submodule defining a name on first use (HOMES)", _parallel_homes),
}
"""Modules that import a computed name: why, and every module they can load (judged like imports)."""

PLACES: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "MkDocs, its theme and Python-Markdown": (
        ("mkdocs", "material", "markdown", "pymdownx"),
        ("publisher.site",),
    ),
    "the terminal progress library": (("rich",), ("publisher.cli",)),
    "the MCP SDK and the stream it runs on": (("mcp", "anyio"), ("publisher.mcp", "publisher.cli")),
    "record models and their validation": (("pydantic",), ("publisher",)),
    "canonical JSON bytes": (("orjson",), ("publisher.kernel.canonical", "publisher.gate.checks")),
    "Ed25519 keys and signatures": (
        ("cryptography",),
        (
            "publisher.kernel.trust",
            "publisher.acquire.signing",
            "publisher.site.pages.proofs",
        ),
    ),
    "sentence boundaries with offsets": (("nltk",), ("publisher.kernel.sentences",)),
    "Unicode's confusables data": (("confusables",), ("publisher.kernel.lookalike",)),
    "the Dask cluster client": (("distributed",), ("publisher.parallel.cluster",)),
    "HTTP retrieval": (("httpx",), ("publisher.acquire.http",)),
    "PDF text extraction": (("pypdfium2",), ("publisher.acquire.pdf",)),
    "HTML and XML parsing": (("lxml",), ("publisher.acquire", "publisher.site.checks")),
    "the built pages' HTML parser and the prose sanitiser": (("selectolax", "nh3"), ("publisher.site.checks",)),
    "Markdown of records, reports and concepts": (
        ("markdown_it", "mdit_py_plugins"),
        ("publisher.gate", "publisher.wiki"),
    ),
    "YAML front matter and configuration": (("yaml",), ("publisher.wiki.concepts", "publisher.site")),
    "MkDocs' configuration tags and INHERIT merge, without MkDocs": (
        ("yaml_env_tag", "mergedeep"),
        ("publisher.site.lifecycle.policy",),
    ),
    "templates and their escaping": (("jinja2", "markupsafe"), ("publisher.gate.render", "publisher.site")),
}
"""Third-party libraries (top-level names) and the only packages or modules that may import them.

An allow-list: a library the package imports that no entry names fails
(:func:`test_every_third_party_import_has_a_place`), so a new dependency is placed when it comes.
"""


def _rank_of(parts: list[str]) -> tuple[int, ...] | None:
    """The rank of ``publisher.<parts>`` (a module, or a package as its ``__init__``), or None."""
    if not parts:
        return (-1,)  # ``publisher`` itself: only ``__version__``
    head = "cli" if parts[0] == "__main__" else parts[0]
    if head not in LAYERS:
        return None
    rank = [LAYERS.index(head)]
    names = ["__main__"] if parts[0] == "__main__" else parts[1:]
    entries = ORDER.get(head)
    if entries is None:  # a one-module layer
        return tuple(rank) if not names else None
    while True:
        name = names[0] if names else "__init__"
        keys = [e if isinstance(e, str) else e[0] for e in entries]
        if name not in keys:
            return None
        index = keys.index(name)
        rank.append(index)
        entry = entries[index]
        if isinstance(entry, str):
            return tuple(rank) if len(names) <= 1 else None
        entries, names = entry[1], names[1:]


def _rank(module: str) -> tuple[int, ...] | None:
    parts = module.split(".")
    if parts[0] != "publisher":
        return None
    return _rank_of(parts[1:])


def _module_name(path: Path) -> str:
    rel = path.relative_to(PACKAGE.parent).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _path_of(dotted: str) -> Path | None:
    base = PACKAGE.parent / Path(*dotted.split("."))
    if base.with_suffix(".py").is_file():
        return base.with_suffix(".py")
    if (base / "__init__.py").is_file():
        return base / "__init__.py"
    return None


def _absolute(path: Path, node: ast.ImportFrom) -> str:
    """The absolute module a ``from … import`` in ``path`` names."""
    if not node.level:
        return node.module or ""
    name = _module_name(path)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    base_parts = package.split(".")
    if node.level > 1:
        base_parts = base_parts[: -(node.level - 1)]
    base = ".".join(base_parts)
    return f"{base}.{node.module}" if node.module else base


@cache
def _tree(path: Path) -> ast.Module:
    return ast.parse(path.read_text(encoding="utf-8"), filename=str(path))


def _top_level(tree: ast.Module) -> list[ast.stmt]:
    """The module's top-level statements, those under ``if TYPE_CHECKING:`` included (lazy re-exports)."""
    out: list[ast.stmt] = []
    for node in tree.body:
        guarded = isinstance(node, ast.If) and isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING"
        out.extend(node.body if guarded else [node])
    return out


@cache
def _exported(package: str, name: str) -> str | None:
    """The submodule whose ``name`` the package's ``__init__`` re-exports, or None."""
    init = _path_of(package)
    if init is None or init.name != "__init__.py":
        return None
    for node in _top_level(_tree(init)):
        if isinstance(node, ast.ImportFrom):
            target = _absolute(init, node)
            for alias in node.names:
                if (alias.asname or alias.name) == name and target.startswith("publisher"):
                    return _exported(target, alias.name) or target
    return None


def _literal_name(call: ast.Call) -> str | None:
    """The module a literal ``importlib.import_module(…)`` / ``__import__(…)`` names, or None."""
    if call.args and isinstance(call.args[0], ast.Constant) and isinstance(call.args[0].value, str):
        return call.args[0].value
    return None


def _is_dynamic_import(call: ast.Call) -> bool:
    """``import_module``, ``__import__``, and ``find_spec`` (a package whose files are read is used)."""
    func = call.func
    if isinstance(func, ast.Name):
        return func.id in ("__import__", "import_module", "find_spec")
    return isinstance(func, ast.Attribute) and func.attr in ("import_module", "find_spec")


def _imports(path: Path) -> list[tuple[int, str]]:
    """Every module ``path`` imports, absolute, with the line it is imported on.

    A computed ``import_module`` / ``__import__`` name comes back as ``"?"``.
    """
    found: list[tuple[int, str]] = []
    for node in ast.walk(_tree(path)):
        if isinstance(node, ast.Import):
            found.extend((node.lineno, alias.name) for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            target = _absolute(path, node)
            if not target.startswith("publisher"):
                found.append((node.lineno, target))
                continue
            for alias in node.names:
                candidate = f"{target}.{alias.name}"
                if _path_of(candidate) is not None:
                    found.append((node.lineno, candidate))  # ``from publisher import sources`` imports a module
                else:  # a re-export imports the module defining the name; anything else, the module itself
                    found.append((node.lineno, _exported(target, alias.name) or target))
        elif isinstance(node, ast.Call) and _is_dynamic_import(node):
            literal = _literal_name(node)
            found.append((node.lineno, literal if literal is not None else "?"))
    return found


def _modules() -> list[Path]:
    if not PACKAGE.is_dir():
        pytest.skip("publisher package not found")
    return sorted(PACKAGE.rglob("*.py"))


def _all_imports(path: Path) -> list[tuple[int, str]]:
    """:func:`_imports`, with the modules an allow-listed computed import can load."""
    name = _module_name(path)
    out = []
    for line, target in _imports(path):
        if target == "?" and name in DYNAMIC:
            out.extend((line, loaded) for loaded in DYNAMIC[name][1]())
        else:
            out.append((line, target))
    return out


def test_each_module_imports_only_modules_ranked_below_it() -> None:
    problems = []
    for path in _modules():
        name = _module_name(path)
        me = _rank(name)
        if me is None:
            continue  # reported by test_every_module_is_ranked
        for line, target in _all_imports(path):
            if target == "?":
                continue  # reported by test_computed_imports_are_allow_listed
            other = _rank(target)
            if other is None or target == name or (name, target) in LAZY_CYCLES:
                continue
            if other >= me:
                problems.append(f"{path.relative_to(PACKAGE.parent)}:{line} ({name}) imports {target}")
    assert problems == [], "\n".join(problems)


def test_every_module_is_ranked() -> None:
    # A module outside the ranking escapes every rule above: each must have a place.
    unranked = [_module_name(path) for path in _modules() if _rank(_module_name(path)) is None]
    assert unranked == []


def test_the_ranking_names_only_modules_that_exist() -> None:
    def walk(prefix: list[str], entries: list[Entry]) -> list[str]:
        out = []
        for entry in entries:
            parts = [*prefix, entry if isinstance(entry, str) else entry[0]]
            if isinstance(entry, tuple):
                out += walk(parts, entry[1])
            elif entry == "__main__":
                out += [] if _path_of("publisher.__main__") else ["publisher.__main__"]
            elif _path_of(".".join(parts[:-1] if entry == "__init__" else parts)) is None:
                out.append(".".join(parts))
        return out

    missing = [m for layer, entries in ORDER.items() for m in walk(["publisher", layer], entries)]
    assert missing == []


def test_computed_imports_are_allow_listed() -> None:
    problems = []
    for path in _modules():
        name = _module_name(path)
        for line, target in _imports(path):
            if target == "?" and name not in DYNAMIC:
                problems.append(f"{path.relative_to(PACKAGE.parent)}:{line} ({name}) imports a computed name")
    assert problems == [], "\n".join(problems)
    for name, (_, loads) in DYNAMIC.items():
        assert loads(), name
        assert all(_path_of(m) is not None for m in loads()), name


def test_third_party_libraries_stay_in_their_places() -> None:
    problems = []
    for path in _modules():
        name = _module_name(path)
        for line, target in _imports(path):
            top = target.split(".")[0]
            for what, (libraries, places) in PLACES.items():
                inside = any(name == p or name.startswith(p + ".") for p in places)
                if top in libraries and not inside:
                    problems.append(f"{path.relative_to(PACKAGE.parent)}:{line} imports {target} ({what})")
    assert problems == [], "\n".join(problems)


def _third_party(path: Path) -> list[tuple[int, str]]:
    """The imports of ``path`` outside the standard library and this package (top-level names)."""
    out = []
    for line, target in _imports(path):
        top = target.split(".")[0]
        if target != "?" and top and top != "publisher" and top not in sys.stdlib_module_names:
            out.append((line, top))
    return out


def test_every_third_party_import_has_a_place() -> None:
    placed = {library for libraries, _ in PLACES.values() for library in libraries}
    problems = [
        f"{path.relative_to(PACKAGE.parent)}:{line} imports {top}, which PLACES does not place"
        for path in _modules()
        for line, top in _third_party(path)
        if top not in placed
    ]
    assert problems == [], "\n".join(problems)


def test_the_third_party_discovery_sees_every_kind_of_import(tmp_path: Path) -> None:
    # Guard against a discovery that silently sees nothing: plain, from, lazy and literal imports.
    found = {top for path in _modules() for _, top in _third_party(path)}
    assert {"cryptography", "lxml", "httpx", "pypdfium2", "nh3", "selectolax", "distributed"} <= found
    assert {"confusables", "nltk", "pydantic", "markdown_it", "jinja2", "mkdocs", "rich", "yaml", "mcp"} <= found
    probe = tmp_path / "probe.py"
    probe.write_text(
        "from __future__ import annotations\nimport os, lxml.etree\nfrom collections import abc\n"
        "def f():\n    import httpx\n    importlib.util.find_spec('confusables')\n",
        encoding="utf-8",
    )
    assert [top for _, top in _third_party(probe)] == ["lxml", "httpx", "confusables"]


def test_nothing_below_the_edges_imports_the_cli() -> None:
    problems = []
    for path in _modules():
        name = _module_name(path)
        if name.startswith(("publisher.cli", "publisher.__main__")) or name == "publisher":
            continue
        for line, target in _all_imports(path):
            if target.startswith("publisher.cli"):
                problems.append(f"{path.relative_to(PACKAGE.parent)}:{line} imports {target}")
    assert problems == [], "\n".join(problems)


def test_the_checker_resolves_relative_imports_re_exports_and_literal_importlib(tmp_path: Path) -> None:
    # Guard against a checker that silently sees nothing.
    targets = {t for _, t in _imports(PACKAGE / "kernel" / "store.py")}
    assert {"publisher.kernel._fs", "publisher.kernel.canonical", "publisher.kernel.errors"} <= targets
    assert "publisher.runs" in {t for _, t in _imports(PACKAGE / "cli" / "source.py")}
    # ``from ..parallel import CheckedSnapshots`` imports the module that defines it.
    assert "publisher.parallel.reader" in {t for _, t in _imports(PACKAGE / "gate" / "assemble.py")}
    assert "publisher.cli.run" in {t for _, t in _all_imports(PACKAGE / "cli" / "__init__.py")}
    probe = tmp_path / "probe.py"
    probe.write_text(
        "import importlib\nimportlib.import_module('publisher.wiki.check')\n__import__('rich')\n"
        "importlib.import_module(name)\n",
        encoding="utf-8",
    )
    assert [t for _, t in _imports(probe)] == ["importlib", "publisher.wiki.check", "rich", "?"]


def test_the_ranking_orders_sub_packages() -> None:
    pages, checks = _rank("publisher.site.pages.markup"), _rank("publisher.site.checks.scan")
    assert pages < checks < _rank("publisher.site.lifecycle") < _rank("publisher.site.build")
    assert _rank("publisher.wiki.evidence") < _rank("publisher.wiki.claims.model") < _rank("publisher.wiki.check")
    assert _rank("publisher.site.pages.nothing") is None and _rank("publisher.gate.nothing") is None
    assert _rank("publisher.runs.anything") is None
