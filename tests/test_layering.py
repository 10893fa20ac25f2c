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

ORDER = [
    "reasons",
    "resources",
    "errors",
    "canonical",
    "models",
    "spans",
    "refs",
    "_fs",
    "store",
    "eventlog",
    "batch",
    "runs",
    "acquire",
    "sources",
    "records",
    "reportmd",
    "assemble",
    "verify",
    "render",
    "concepts",
    "preflight",
    "promote",
    "site",
    "_cli",
]
RANK = {name: i for i, name in enumerate(ORDER)}
TOP = {"_cli", "cli", "__main__"}


def _group(module: str) -> str | None:
    """The layer of a dotted ``publisher.…`` module name; None for unranked ones."""
    parts = module.split(".")
    if parts[0] != "publisher":
        return None
    if len(parts) == 1:
        return "__init__"
    head = parts[1]
    if head in TOP:
        return "_cli"
    return head if head in RANK else None


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
        me = _group(_module_name(path))
        if me is None or me == "__init__":
            continue
        for line, target in _imports(path):
            other = _group(target)
            if other is None or other == "__init__" or other == me:
                continue
            if RANK[other] >= RANK[me]:
                problems.append(f"{path.relative_to(PACKAGE.parent)}:{line} ({me}) imports {target} ({other})")
    assert problems == [], "\n".join(problems)


def test_only_site_imports_mkdocs() -> None:
    problems = []
    for path in _modules():
        if _group(_module_name(path)) == "site":
            continue
        for line, target in _imports(path):
            if target == "mkdocs" or target.startswith(("mkdocs.", "material")):
                problems.append(f"{path.relative_to(PACKAGE.parent)}:{line} imports {target}")
    assert problems == [], "\n".join(problems)


def test_nothing_below_the_edges_imports_the_cli() -> None:
    problems = []
    for path in _modules():
        name = _module_name(path)
        if _group(name) == "_cli" or name == "publisher":
            continue
        for line, target in _imports(path):
            if _group(target) == "_cli":
                problems.append(f"{path.relative_to(PACKAGE.parent)}:{line} imports {target}")
    assert problems == [], "\n".join(problems)


def test_the_checker_resolves_relative_imports() -> None:
    # Guard against a checker that silently sees nothing.
    store = _imports(PACKAGE / "store.py")
    targets = {t for _, t in store}
    assert {"publisher._fs", "publisher.canonical", "publisher.errors"} <= targets
    cli_source = _imports(PACKAGE / "_cli" / "source.py")
    assert "publisher.runs" in {t for _, t in cli_source}
