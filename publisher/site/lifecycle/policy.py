"""The wiki's policy as MkDocs resolves its configuration (CONTRACT section 12).

The build reads ``extra: evidence:`` from the configuration MkDocs hands the plugin
(:func:`policy_of_config`); every command that reads a wiki loads that configuration file with
MkDocs' own loader (:func:`resolve_policy`: ``mkdocs.utils.yaml.yaml_load`` with the loader
``MkDocsConfig.load_file`` uses, the loading half of ``mkdocs.config.load_config``, without
validating the rest of the site or importing its theme machinery: a run command needs no theme,
Jinja2 or docs folder), so ``INHERIT``, ``-f other.yml``
(``--config``) and ``!ENV`` mean the same to ``publisher check`` as to ``mkdocs build``. A
configuration MkDocs refuses is a one-line ``SCHEMA_ERROR`` usage error naming MkDocs' own
complaint, never a wiki with no keys.

The loading runs without importing MkDocs itself (whose exceptions module imports Click): the same
YAML reading as MkDocs' loader class (``yaml.Loader``) except that a Python tag is never run (it is
read as an inert :class:`PythonTag`), the same ``!ENV`` constructor (``yaml_env_tag``), the same
``INHERIT`` rule (the parent beside the file, merged under it with ``mergedeep``); only a
``!relative`` tag, which builds MkDocs' own placeholder objects, imports MkDocs, when one is met.
Tests hold the result equal to MkDocs' ``yaml_load`` for each of these forms and refusals. A file
in plain block YAML (mappings and sequences of one-line plain scalars, the common case) is read
without importing PyYAML at all (:mod:`.plainyaml`, held equal to PyYAML's reading by its tests).

YAML keeps the last of two equal keys of a mapping without a word, so a second top-level
``extra:`` would silently drop the ``trusted_keys`` a reader sees in the first. Every
configuration file read (the one named and each ``INHERIT`` parent) is first checked for a key
given twice in any mapping (:func:`duplicate_keys`); one is a one-line ``SCHEMA_ERROR``.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ...kernel.errors import UsageError
from ...kernel.reasons import Reason
from ...kernel.text import one_line
from ...runs import config_file_of
from ...wiki.policy import Policy, policy_from_evidence
from .plainyaml import read_plain

if TYPE_CHECKING:
    import yaml

__all__ = [
    "policy_of_config",
    "resolve_policy",
    "config_file_for",
    "duplicate_keys",
    "check_config_files",
    "ConfigLoadError",
    "load_config_file",
    "PythonTag",
]

_INHERIT_DEPTH = 16


def duplicate_keys(text: str) -> tuple[str, int, int] | None:
    """The first key given twice in one mapping of a YAML document (its dotted path, and the
    lines of both), else None. The document is composed, never constructed: tags such as
    ``!ENV`` or ``!!python/name`` are not run."""
    import yaml

    root = yaml.compose(text, Loader=yaml.SafeLoader)
    todo: list[tuple[yaml.Node, str]] = [(root, "")] if root is not None else []
    while todo:
        node, where = todo.pop(0)
        if isinstance(node, yaml.MappingNode):
            seen: dict[str, int] = {}
            for key, value in node.value:
                name = str(key.value) if isinstance(key, yaml.ScalarNode) else ""
                path = f"{where}.{name}" if where else name
                if name and name != "<<":
                    if name in seen:
                        return path, seen[name], key.start_mark.line + 1
                    seen[name] = key.start_mark.line + 1
                todo.append((value, path))
        elif isinstance(node, yaml.SequenceNode):
            todo += [(item, f"{where}[{n}]") for n, item in enumerate(node.value)]
    return None


def check_config_files(path: Path) -> None:
    """Refuse a configuration file, or any ``INHERIT`` parent of it, that gives a key twice in
    one mapping (a one-line ``SCHEMA_ERROR`` naming the file, the key and both lines). A file in
    plain block YAML (:func:`~.plainyaml.read_plain`) is read without PyYAML: that reading gives
    up on a key given twice, so a file it reads has none."""
    seen: set[Path] = set()
    current: Path | None = Path(path)
    while current is not None and len(seen) < _INHERIT_DEPTH:
        name = current.name
        try:
            resolved = current.resolve(strict=True)
            data = resolved.read_bytes()
        except OSError:
            return  # MkDocs' own loader names an unreadable file
        if resolved in seen:
            return
        seen.add(resolved)
        plain = read_plain(data)
        parent = plain.get("INHERIT") if plain is not None else None
        if plain is None or not (parent is None or isinstance(parent, str)):
            parent = _composed_parent(name, data)
            if parent is _UNREADABLE:
                return
        current = Path(_inherited(current, parent)) if isinstance(parent, str) and parent else None


def _inherited(path: Path, relpath: str) -> str:
    """The ``INHERIT`` parent of ``path`` as MkDocs' ``yaml_load`` names it: beside the path as
    given (a symbolic link's own folder, not its target's), ``..`` folded without resolving links.
    The duplicate-key check walks the same chain as the loading, so it reads the files the build
    reads."""
    return os.path.normpath(os.path.join(os.path.dirname(os.fspath(path)), relpath))


_UNREADABLE = object()


def _composed_parent(name: str, data: bytes) -> object:
    """The ``INHERIT`` parent of a file PyYAML composes (None without one), after refusing a key
    it gives twice; ``_UNREADABLE`` for a file MkDocs' own loader will name as unreadable."""
    import yaml

    try:
        text = data.decode("utf-8-sig")
        found = duplicate_keys(text)
        parent = _inherit(text)
    except (UnicodeDecodeError, yaml.YAMLError):
        return _UNREADABLE  # MkDocs' own loader names malformed YAML
    if found is not None:
        key, first, second = found
        raise UsageError(
            f"{name}:{second}: key {key!r} is given twice (lines {first} and {second}); YAML keeps only "
            "the last, so the first would be dropped silently: merge them into one",
            reason=Reason.SCHEMA_ERROR,
            path=name,
            line=second,
        )
    return parent


def _inherit(text: str) -> str | None:
    """The ``INHERIT`` value of a configuration file's top-level mapping, if any."""
    import yaml

    root = yaml.compose(text, Loader=yaml.SafeLoader)
    if isinstance(root, yaml.MappingNode):
        for key, value in root.value:
            if isinstance(key, yaml.ScalarNode) and key.value == "INHERIT" and isinstance(value, yaml.ScalarNode):
                return str(value.value)
    return None


def policy_of_config(config: Any, wiki_root: Path | None = None) -> Policy:
    """The policy in a configuration MkDocs has loaded (``extra.evidence``), once its files are
    known to give no key twice (:func:`check_config_files`)."""
    path = config.config_file_path
    if path:
        check_config_files(Path(path))
    extra = config.get("extra") if hasattr(config, "get") else config.extra
    return _policy_of_extra(extra, path, wiki_root)


def _policy_of_extra(extra: Any, path: str | None, wiki_root: Path | None) -> Policy:
    """The policy in a loaded configuration's ``extra`` (``path``: the file it was loaded from)."""
    where = Path(path).name if path else "mkdocs.yml"
    root = wiki_root if wiki_root is not None else (Path(path).resolve().parent if path else None)
    evidence = extra.get("evidence") if isinstance(extra, Mapping) else None
    return policy_from_evidence(evidence, root, where)


def config_file_for(wiki_root: Path, config_file: Path | None = None) -> Path | None:
    """The configuration file a command reads: ``--config`` when given, else the wiki's own."""
    if config_file is not None:
        return Path(config_file)
    return config_file_of(Path(wiki_root))


def resolve_policy(wiki_root: Path | None, config_file: Path | None = None) -> Policy:
    """The wiki's policy, through MkDocs' own loader (``--config FILE`` or the wiki's mkdocs.yml).

    A wiki without a configuration (the upstream layout) has the empty policy: unsigned
    provenance, as its pages say. A configuration MkDocs cannot load is a UsageError.
    """
    if wiki_root is None and config_file is None:
        return Policy.unsigned(None)
    root = Path(wiki_root) if wiki_root is not None else Path(config_file or ".").resolve().parent
    path = config_file_for(root, config_file)
    if path is None:
        return Policy.unsigned(root)
    name = path.name
    if not path.is_file():
        raise UsageError(f"{name}: no such configuration file", reason=Reason.SCHEMA_ERROR, path=name)
    check_config_files(path)
    try:
        loaded = _load_config(path)
    except (ConfigLoadError, OSError, ValueError) as exc:
        raise UsageError(
            f"{name}: MkDocs cannot load it ({one_line(exc, 200)}); fix it until 'mkdocs build' accepts it",
            reason=Reason.SCHEMA_ERROR,
            path=name,
        ) from exc
    return _policy_of_extra(loaded.get("extra"), os.fspath(path), root)


class ConfigLoadError(ValueError):
    """A configuration file MkDocs' loader would refuse: malformed YAML, a missing ``INHERIT``
    parent, a ``!relative`` tag it does not know, or a document that is not a mapping."""


class _Loading:
    """What MkDocs' ``!relative`` placeholders read of the configuration being loaded (the file's
    path, the raw ``docs_dir``, no page being rendered), without building an ``MkDocsConfig``: its
    module imports the theme machinery (Jinja2, Babel)."""

    _current_page = None

    def __init__(self, path: Path) -> None:
        self.config_file_path = os.fspath(path)
        self.loaded: dict[str, Any] = {}
        self._loader: type[yaml.Loader] | None = None

    @property
    def docs_dir(self) -> Any:
        """The ``docs_dir`` as written (MkDocs' default when absent), as an unvalidated config has it."""
        return self.loaded.get("docs_dir", "docs")

    def loader(self) -> type[yaml.Loader]:
        """This loading's YAML loader class, made (and PyYAML imported) on first use."""
        if self._loader is None:
            self._loader = _loader_for(self)
        return self._loader


def _loader_for(loading: _Loading) -> type[yaml.Loader]:
    """A fresh loader reading what MkDocs' does (``yaml.Loader`` with its two tags), Python tags
    inert."""
    import yaml
    import yaml_env_tag

    def relative(loader: yaml.Loader, node: yaml.Node) -> Any:
        from mkdocs.exceptions import MkDocsException
        from mkdocs.utils import yaml as mkdocs_yaml

        try:
            return mkdocs_yaml._construct_dir_placeholder(loading, loader, node)  # type: ignore[arg-type]
        except MkDocsException as exc:
            raise ConfigLoadError(str(exc)) from exc

    def python(loader: yaml.Loader, suffix: str, node: yaml.Node) -> PythonTag:
        return PythonTag("tag:yaml.org,2002:python/" + suffix)

    class Loader(yaml.SafeLoader):  # type: ignore[misc]
        """MkDocs' configuration loader (``yaml.Loader`` with ``!ENV`` and ``!relative``) with one
        difference: a Python tag is read as an inert :class:`PythonTag`, never constructed."""

    Loader.add_constructor("!ENV", yaml_env_tag.construct_env_tag)
    Loader.add_constructor("!relative", relative)
    Loader.add_multi_constructor("tag:yaml.org,2002:python/", python)
    return Loader


class PythonTag:
    """A Python tag of a configuration (``!!python/name:…``, ``!!python/object/apply:…``) as the
    policy reads it: its tag only. MkDocs constructs these when it builds (an extension's function,
    say), which imports modules and may call any function the file names; reading the policy never
    does, so ``publisher check`` of a wiki someone else wrote runs none of its code. A tag inside
    ``extra.evidence`` is refused there as a value of the wrong type."""

    __slots__ = ("tag",)

    def __init__(self, tag: str) -> None:
        self.tag = tag

    def __repr__(self) -> str:
        return f"PythonTag({self.tag!r})"


def load_config_file(path: Path, loading: _Loading, depth: int = 0) -> Any:
    """One configuration file with its ``INHERIT`` chain merged in, as MkDocs' ``yaml_load``
    merges it: the parent named relative to the file, loaded with the same loader, the child
    deep-merged over it; an empty document is an empty mapping (any other document as it is). A
    file in plain block YAML is read without PyYAML (:func:`~.plainyaml.read_plain`, which
    reads it as PyYAML does)."""
    with open(path, "rb") as fd:
        result = read_plain(fd.read())
        if result is None:
            import yaml

            fd.seek(0)
            try:
                result = yaml.load(fd, Loader=loading.loader())  # Python tags inert: see PythonTag
            except yaml.YAMLError as exc:
                raise ConfigLoadError(f"the YAML cannot be parsed: {exc}") from exc
    if result is None:
        return {}
    if isinstance(result, dict) and "INHERIT" in result:
        relpath = result.pop("INHERIT")
        if not isinstance(relpath, str):
            raise ConfigLoadError(f"INHERIT names no file but holds {relpath!r}")
        parent = _inherited(path, relpath)
        if not os.path.exists(parent):
            raise ConfigLoadError(f"the INHERIT parent {relpath!r} does not exist at {parent!r}")
        if depth >= _INHERIT_DEPTH:
            raise ConfigLoadError(f"INHERIT goes deeper than {_INHERIT_DEPTH} files")
        import mergedeep

        return mergedeep.merge(load_config_file(Path(parent), loading, depth + 1), result)
    return result


def _load_config(path: Path) -> dict[str, Any]:
    """The file as ``MkDocsConfig.load_file`` loads it: MkDocs' YAML loader (``!ENV``, ``!relative``
    and ``INHERIT`` resolved) and ``load_dict``'s refusal of anything but a mapping."""
    loading = _Loading(path)
    data = load_config_file(path, loading)
    if not isinstance(data, dict):
        raise ConfigLoadError(f"the configuration is not a key-value mapping but a {type(data).__name__}")
    loading.loaded = data
    return data
