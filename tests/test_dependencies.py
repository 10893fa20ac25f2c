"""pyproject.toml: bounds that hold for what is installed, and the packaging metadata a fresh machine needs.

How the lower bounds were found (issue 14): in a scratch virtual environment with this project
installed editable, each candidate release was installed on its own and the tests that use the
package were run. ``mdit-py-plugins`` 0.4.0 fails the footnote tests (its footnote plugin takes no
``inline``/``move_to_end``); 0.4.1 to 0.7.0 pass, with ``markdown-it-py`` 3.0.0 as well as 4.x.
``mkdocs-material`` releases before 9.5.19 require MkDocs 1.5; 9.5.19 passes the build tests with
MkDocs 1.6.1. ``httpx`` 0.27.0 passes the retrieval tests. Then every dependency at its lower
bound at once (Jinja2 3.1.0, pydantic 2.6.0, PyYAML 6.0.1, lxml 5.0.0, rich 13.0.0, orjson 3.9.0,
markdown-it-py 3.0.0, mdit-py-plugins 0.4.1, httpx 0.27.0, MkDocs 1.6.0, Material 9.5.19) passed
695 tests: records, store, event log, every extractor, fetch, report parsing, concepts, assembly,
verification, promotion and real builds; PyYAML 6.0 then passed the 284 front-matter, promotion
and build tests. Upper bounds stop at the next major release (``httpx`` 1.0 and Material 10
announce breaking changes).
"""

from __future__ import annotations

import tomllib
from importlib import metadata
from pathlib import Path
from typing import Any

import pytest

requirements = pytest.importorskip("packaging.requirements")
version = pytest.importorskip("packaging.version")

REPO = Path(__file__).resolve().parents[1]
UPPER_BOUNDED = ("mkdocs", "mkdocs-material", "httpx", "pydantic")
"""Dependencies whose next major release is known to break their API or output."""


@pytest.fixture(scope="module")
def project() -> dict[str, Any]:
    with open(REPO / "pyproject.toml", "rb") as fh:
        data: dict[str, Any] = tomllib.load(fh)
    return data


def _requirements(project: dict[str, Any]) -> list[Any]:
    return [requirements.Requirement(line) for line in project["project"]["dependencies"]]


def test_every_dependency_has_a_lower_bound_the_installed_release_meets(project: dict[str, Any]) -> None:
    for req in _requirements(project):
        assert any(spec.operator in (">=", "==", "~=") for spec in req.specifier), f"{req.name} has no lower bound"
        installed = metadata.version(req.name)
        assert req.specifier.contains(installed, prereleases=True), f"{req.name} {installed} is outside {req}"


def test_breaking_major_releases_are_excluded(project: dict[str, Any]) -> None:
    by_name = {req.name: req for req in _requirements(project)}
    for name in UPPER_BOUNDED:
        assert any(spec.operator in ("<", "<=", "~=") for spec in by_name[name].specifier), f"{name} has no upper bound"
    assert not by_name["mdit-py-plugins"].specifier.contains("0.4.0")  # its footnote plugin lacks our options
    assert by_name["mdit-py-plugins"].specifier.contains("0.4.1")
    assert not by_name["mkdocs-material"].specifier.contains("9.5.18")  # requires MkDocs 1.5


def test_license_is_an_spdx_expression_with_its_file(project: dict[str, Any]) -> None:
    meta = project["project"]
    assert meta["license"] == "MIT"
    for pattern in meta["license-files"]:
        assert list(REPO.glob(pattern)), f"license file {pattern} is missing"
    build = [requirements.Requirement(r) for r in project["build-system"]["requires"]]
    setuptools = next(r for r in build if r.name == "setuptools")
    # PEP 639 license metadata is read from setuptools 77 on; an older one would refuse the string.
    assert not setuptools.specifier.contains("76.1.0") and setuptools.specifier.contains("77.0.3")


def test_installed_metadata_carries_the_license_expression() -> None:
    try:
        meta = metadata.metadata("evidence-publisher")
    except metadata.PackageNotFoundError:
        pytest.skip("evidence-publisher is not installed in this environment")
    if meta.get("License-Expression") is None:
        pytest.skip("installed from an older pyproject; reinstall with `pip install -e .` to refresh its metadata")
    assert meta["License-Expression"] == "MIT"
    assert "LICENSE" in (meta.get_all("License-File") or [])


def _third_party_imports() -> dict[str, list[str]]:
    """Every top-level module the package imports (lazy imports too), with the files importing it."""
    import ast
    import sys

    found: dict[str, list[str]] = {}
    for path in sorted((REPO / "publisher").rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
                names = [node.module]
            else:
                continue
            for name in names:
                top = name.split(".")[0]
                if top != "publisher" and top not in sys.stdlib_module_names and top != "__future__":
                    found.setdefault(top, []).append(str(path.relative_to(REPO)))
    return found


def test_every_imported_library_is_declared(project: dict[str, Any]) -> None:
    declared = {req.name.lower().replace("_", "-") for req in _requirements(project)}
    for extra in project["project"].get("optional-dependencies", {}).values():
        declared |= {requirements.Requirement(line).name.lower().replace("_", "-") for line in extra}
    distributions = metadata.packages_distributions()
    missing = []
    for module, files in _third_party_imports().items():
        names = {d.lower().replace("_", "-") for d in distributions.get(module, [])}
        if not names & declared:
            missing.append(f"{module} (imported by {files[0]}, installed as {sorted(names) or 'nothing'})")
    assert missing == [], "imported but not declared in pyproject.toml: " + "; ".join(missing)


def test_every_dependency_has_an_upper_bound_or_a_reason(project: dict[str, Any]) -> None:
    # selectolax 1.0 changed its API once already; its next major release is excluded.
    by_name = {req.name: req for req in _requirements(project)}
    assert any(spec.operator == "<" for spec in by_name["selectolax"].specifier)


def test_every_package_ships_in_the_wheel(project: dict[str, Any]) -> None:
    # setuptools is given the packages by name: a sub-package left off the list is left out of
    # the wheel, and an installed publisher fails on its first import of it.
    listed = set(project["tool"]["setuptools"]["packages"])
    found = {".".join(init.parent.relative_to(REPO).parts) for init in (REPO / "publisher").rglob("__init__.py")}
    assert found - listed == set()
    data = project["tool"]["setuptools"]["package-data"]
    assert (REPO / "publisher" / "site" / "static").is_dir() and data["publisher.site"] == ["static/*"]
