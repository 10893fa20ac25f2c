"""The import layering: each module imports only modules above it (STYLE, "Shape of the package").

Every import counts, including lazy ones inside functions and those under ``TYPE_CHECKING``.
Modules that do not exist yet are simply not checked; modules outside the listed order are not
ranked (their own imports are not judged, and importing them is not judged either).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "publisher"

LAYERS = ["resources", "kernel", "parallel", "runs", "acquire", "gate", "wiki", "site", "mcp", "cli"]
"""The layers, lowest first: each imports only layers before it (``cli`` includes ``__main__``)."""

WITHIN = {
    "kernel": [
        "reasons",
        "text",
        "findings",
        "errors",
        "ids",
        "canonical",
        "models",
        "merkle",
        "spans",
        "locate",
        "refs",
        "_fs",
        "blobs",
        "store",
        "eventlog",
        "assets",
    ],
    "parallel": ["gcpause", "progress", "checks", "pool", "reader", "cluster"],
    "gate": [
        "urls",
        "recordschema",
        "records",
        "result",
        "reportmd",
        "corpus",
        "verdicts",
        "freshness",
        "inputs",
        "artifacts",
        "claims",
        "assemble",
        "checks",
        "pipeline",
        "render",
        "citations",
    ],
    "wiki": [
        "policy",
        "markdown",
        "concepts",
        "discover",
        "evidence",
        "conceptcheck",
        "claims",
        "check",
        "assess",
        "audit",
        "promote",
        "annotations",
    ],
}
"""Inside a layer, the order its modules may import each other in (unlisted modules are unranked)."""

NESTED = {
    ("wiki", "claims"): [
        "model",
        "records",
        "log",
        "missingness",
        "reviews",
        "guards",
        "counts",
    ],
    ("gate", "checks"): [
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
}
"""Inside a sub-package of a layer, the order its modules may import each other in."""

TOP = {"cli", "__main__"}


def _group(module: str) -> tuple[int, ...] | None:
    """The rank of a dotted ``publisher.…`` module: (layer, position inside the layer).

    None for modules outside the ranking (the package itself, unlisted modules).
    """
    parts = module.split(".")
    if parts[0] != "publisher" or len(parts) == 1:
        return None
    head = "cli" if parts[1] in TOP else parts[1]
    if head not in LAYERS:
        return None
    layer = LAYERS.index(head)
    inner = WITHIN.get(head)
    if inner is None or len(parts) == 2:
        return (layer, -1 if inner is not None else 0, -1)
    if parts[2] not in inner:
        return None
    nested = NESTED.get((head, parts[2]))
    if nested is None or len(parts) == 3:
        return (layer, inner.index(parts[2]), -1)
    return (layer, inner.index(parts[2]), nested.index(parts[3])) if parts[3] in nested else None


def _module_name(path: Path) -> str:
    rel = path.relative_to(PACKAGE.parent).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _is_module(dotted: str) -> bool:
    rel = Path(*dotted.split("."))
    base = PACKAGE.parent / rel
    return base.with_suffix(".py").is_file() or (base / "__init__.py").is_file()


def _imports(path: Path) -> list[tuple[int, str]]:
    """Every module ``path`` imports, absolute, with the line it is imported on."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    name = _module_name(path)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.extend((node.lineno, alias.name) for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base_parts = package.split(".")
                if node.level > 1:
                    base_parts = base_parts[: -(node.level - 1)]
                base = ".".join(base_parts)
                target = f"{base}.{node.module}" if node.module else base
            else:
                target = node.module or ""
            found.append((node.lineno, target))
            for alias in node.names:  # ``from publisher import sources`` imports a module
                candidate = f"{target}.{alias.name}"
                if candidate.startswith("publisher") and _is_module(candidate):
                    found.append((node.lineno, candidate))
    return found


def _modules() -> list[Path]:
    if not PACKAGE.is_dir():
        pytest.skip("publisher package not found")
    return sorted(PACKAGE.rglob("*.py"))


def test_each_module_imports_only_layers_above_it() -> None:
    problems = []
    for path in _modules():
        name = _module_name(path)
        me = _group(name)
        if me is None:
            continue
        for line, target in _imports(path):
            other = _group(target)
            if other is None or target == name:
                continue
            if other[0] == me[0] and (LAYERS[me[0]] not in WITHIN or -1 in (other[1], me[1])):
                continue  # inside an unordered layer, or its package module
            if other[0] > me[0] or (other[0] == me[0] and other[1:] >= me[1:]):
                problems.append(f"{path.relative_to(PACKAGE.parent)}:{line} ({name}) imports {target}")
    assert problems == [], "\n".join(problems)


def test_only_site_imports_mkdocs() -> None:
    problems = []
    for path in _modules():
        if _module_name(path).startswith("publisher.site"):
            continue
        for line, target in _imports(path):
            if target == "mkdocs" or target.startswith(("mkdocs.", "material")):
                problems.append(f"{path.relative_to(PACKAGE.parent)}:{line} imports {target}")
    assert problems == [], "\n".join(problems)


def test_nothing_below_the_edges_imports_the_cli() -> None:
    problems = []
    for path in _modules():
        name = _module_name(path)
        if name.startswith(("publisher.cli", "publisher.__main__")) or name == "publisher":
            continue
        for line, target in _imports(path):
            if target.startswith("publisher.cli"):
                problems.append(f"{path.relative_to(PACKAGE.parent)}:{line} imports {target}")
    assert problems == [], "\n".join(problems)


def test_the_checker_resolves_relative_imports() -> None:
    # Guard against a checker that silently sees nothing.
    store = _imports(PACKAGE / "kernel" / "store.py")
    targets = {t for _, t in store}
    assert {"publisher.kernel._fs", "publisher.kernel.canonical", "publisher.kernel.errors"} <= targets
    cli_source = _imports(PACKAGE / "cli" / "source.py")
    assert "publisher.runs" in {t for _, t in cli_source}


def test_every_module_is_ranked() -> None:
    # A module outside the ranking escapes every rule above: each must belong to a layer.
    unranked = [
        _module_name(path)
        for path in _modules()
        if _group(_module_name(path)) is None and _module_name(path) not in ("publisher", "publisher.__main__")
    ]
    assert unranked == []
