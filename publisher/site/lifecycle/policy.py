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
YAML loader class (``yaml.Loader``), the same ``!ENV`` constructor (``yaml_env_tag``), the same
``INHERIT`` rule (the parent beside the file, merged under it with ``mergedeep``); only a
``!relative`` tag, which builds MkDocs' own placeholder objects, imports MkDocs, when one is met.
Tests hold the result equal to MkDocs' ``yaml_load`` for each of these forms and refusals.

A configuration resolved once is kept in the user's cache folder (:data:`CACHE_VARIABLE`),
under the digest of its path and bytes, with the digest of every file its resolution read: the
next command that finds each of those files unchanged takes ``extra.evidence`` from there without
loading YAML at all (agents assemble and verify hundreds of times a session; loading and parsing
the configuration was a sizeable part of each short command). A file holding a tag (``!ENV``,
``!relative``, ``!!python/...``: an answer that depends on more than its bytes) is never kept,
nor an ``evidence`` value JSON cannot hold exactly, nor a configuration that was refused.

YAML keeps the last of two equal keys of a mapping without a word, so a second top-level
``extra:`` would silently drop the ``trusted_keys`` a reader sees in the first. Every
configuration file read (the one named and each ``INHERIT`` parent) is first checked for a key
given twice in any mapping (:func:`duplicate_keys`); one is a one-line ``SCHEMA_ERROR``.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ... import __version__
from ...kernel import _fs
from ...kernel.errors import UsageError
from ...kernel.reasons import Reason
from ...kernel.text import one_line
from ...runs import config_file_of
from ...wiki.policy import Policy, policy_from_evidence

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
    "CACHE_VARIABLE",
    "cache_folder",
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


def check_config_files(path: Path, read: dict[str, str] | None = None) -> None:
    """Refuse a configuration file, or any ``INHERIT`` parent of it, that gives a key twice in
    one mapping (a one-line ``SCHEMA_ERROR`` naming the file, the key and both lines). ``read``
    gains the digest of each file read (see :func:`resolve_policy`)."""
    import yaml

    seen: set[Path] = set()
    current: Path | None = Path(path)
    while current is not None and len(seen) < _INHERIT_DEPTH:
        name = current.name
        try:
            resolved = current.resolve(strict=True)
            text = resolved.read_text(encoding="utf-8-sig")
        except (OSError, UnicodeDecodeError):
            return  # MkDocs' own loader names an unreadable file
        if resolved in seen:
            return
        seen.add(resolved)
        if read is not None:
            _note(read, resolved)
        try:
            found = duplicate_keys(text)
        except yaml.YAMLError:
            return  # MkDocs' own loader names malformed YAML
        if found is not None:
            key, first, second = found
            raise UsageError(
                f"{name}:{second}: key {key!r} is given twice (lines {first} and {second}); YAML keeps only "
                "the last, so the first would be dropped silently: merge them into one",
                reason=Reason.SCHEMA_ERROR,
                path=name,
                line=second,
            )
        parent = _inherit(text)
        current = (resolved.parent / parent) if parent else None


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
    folder = cache_folder()
    key = _cache_key(path) if folder is not None else None
    if folder is not None and key is not None:
        kept = _kept_evidence(folder, key)
        if kept is not _MISS:
            return _policy_of_extra({"evidence": kept}, os.fspath(path), root)
    import yaml

    read: dict[str, str] = {}
    check_config_files(path, read)
    try:
        loaded = _load_config(path, read)
    except (ConfigLoadError, OSError, ValueError, yaml.YAMLError) as exc:
        raise UsageError(
            f"{name}: MkDocs cannot load it ({one_line(exc, 200)}); fix it until 'mkdocs build' accepts it",
            reason=Reason.SCHEMA_ERROR,
            path=name,
        ) from exc
    extra = loaded.get("extra")
    policy = _policy_of_extra(extra, os.fspath(path), root)
    if folder is not None and key is not None:
        _keep_evidence(folder, key, read, extra.get("evidence") if isinstance(extra, Mapping) else None)
    return policy


CACHE_VARIABLE = "PUBLISHER_CACHE_DIR"
"""The folder of resolved configurations kept between commands (:func:`resolve_policy`); set
empty, none is kept or read. Unset: ``evidence-publisher/config`` in ``$XDG_CACHE_HOME`` (else
``~/.cache``)."""

_CACHE_FORMAT = b"evidence-publisher configuration 1"
"""Part of every entry's name: a later layout (or this package's next version) reads none of these."""

_MISS = object()


def cache_folder() -> Path | None:
    """Where resolved configurations are kept (:data:`CACHE_VARIABLE`), or None for nowhere."""
    value = os.environ.get(CACHE_VARIABLE)
    if value is not None:
        return Path(value) if value else None
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    if not os.path.isabs(base):  # no home to keep it in (the XDG rule: a relative path is ignored)
        return None
    return Path(base) / "evidence-publisher" / "config"


def _digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _note(read: dict[str, str], path: Path | str) -> None:
    """Record the digest of the file at ``path`` as read now (an unreadable file: an empty digest,
    which no file matches, so nothing is kept)."""
    try:
        read[os.fspath(path)] = _digest(_fs.read_regular(path))
    except OSError:
        read[os.fspath(path)] = ""


def _cache_key(path: Path) -> str | None:
    """The entry name of the configuration file at ``path``: the digest of this package's version,
    the file's absolute path and its bytes; None for a file that is never kept (unreadable, or
    holding a tag)."""
    try:
        data = _fs.read_regular(path)
    except OSError:
        return None
    if b"!" in data:
        return None
    named = b"\0".join((_CACHE_FORMAT, __version__.encode(), os.fsencode(os.path.abspath(path)), data))
    return _digest(named)


def _private(path: Path, *, folder: bool) -> bool:
    """Whether ``path`` is this user's own folder or file that no one else may write (not a link)."""
    try:
        info = os.lstat(path)
    except OSError:
        return False
    kind_ok = os.path.isdir(path) if folder else not os.path.islink(path)
    return kind_ok and not os.path.islink(path) and info.st_uid == os.getuid() and not info.st_mode & 0o022


def _kept_evidence(folder: Path, key: str) -> Any:
    """``extra.evidence`` as an earlier resolution of the same file found it, if every file that
    resolution read is unchanged (and the entry is this user's own); else ``_MISS``."""
    entry = folder / f"{key}.json"
    if not (_private(folder, folder=True) and _private(entry, folder=False)):
        return _MISS
    try:
        kept = json.loads(_fs.read_regular(entry, follow_symlinks=False, limit=1 << 20))
        files = kept["files"]
        if kept["key"] != key or not isinstance(files, list) or not files:
            return _MISS
        for name, digest in files:
            if not isinstance(name, str) or not isinstance(digest, str) or _digest(_fs.read_regular(name)) != digest:
                return _MISS
        return kept["evidence"]
    except (OSError, ValueError, KeyError, TypeError):
        return _MISS


def _keep_evidence(folder: Path, key: str, read: dict[str, str], evidence: Any) -> None:
    """Keep ``evidence`` under ``key`` with the digests in ``read``, when every file read is as it
    was read and holds no tag, and JSON holds ``evidence`` exactly; a failure to write is no error
    (the next command resolves the file again)."""
    if not read or not _json_exact(evidence):
        return
    try:
        for name, digest in read.items():
            data = _fs.read_regular(name)
            if b"!" in data or _digest(data) != digest:
                return
        body = json.dumps({"key": key, "files": sorted(read.items()), "evidence": evidence}, ensure_ascii=False)
        folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        if _private(folder, folder=True):
            _fs.write_atomic(folder / f"{key}.json", body.encode("utf-8"), mode=0o600)
    except (OSError, ValueError):
        return


def _json_exact(value: Any) -> bool:
    """Whether JSON gives ``value`` back as it is: dicts with string keys, lists, strings, ints,
    floats, booleans and None (exact types), each container met once (no alias, no cycle)."""
    stack = [value]
    seen: set[int] = set()
    while stack:
        item = stack.pop()
        kind = type(item)
        if kind is dict or kind is list:
            if id(item) in seen:
                return False
            seen.add(id(item))
            if kind is dict:
                if any(type(k) is not str for k in item):
                    return False
                stack.extend(item.values())
            else:
                stack.extend(item)
        elif not (kind is str or kind is int or kind is float or kind is bool or item is None):
            return False
    return True


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

    @property
    def docs_dir(self) -> Any:
        """The ``docs_dir`` as written (MkDocs' default when absent), as an unvalidated config has it."""
        return self.loaded.get("docs_dir", "docs")


def _loader_for(loading: _Loading) -> type[yaml.Loader]:
    """A fresh subclass of the loader MkDocs wraps (``yaml.Loader``) with its two tags."""
    import yaml
    import yaml_env_tag

    def relative(loader: yaml.Loader, node: yaml.Node) -> Any:
        from mkdocs.exceptions import MkDocsException
        from mkdocs.utils import yaml as mkdocs_yaml

        try:
            return mkdocs_yaml._construct_dir_placeholder(loading, loader, node)  # type: ignore[arg-type]
        except MkDocsException as exc:
            raise ConfigLoadError(str(exc)) from exc

    class Loader(yaml.Loader):  # type: ignore[misc]
        """MkDocs' configuration loader: ``!ENV`` and ``!relative`` on top of ``yaml.Loader``."""

    Loader.add_constructor("!ENV", yaml_env_tag.construct_env_tag)
    Loader.add_constructor("!relative", relative)
    return Loader


def load_config_file(path: Path, loader: type[yaml.Loader], depth: int = 0, read: dict[str, str] | None = None) -> Any:
    """One configuration file with its ``INHERIT`` chain merged in, as MkDocs' ``yaml_load``
    merges it: the parent named relative to the file, loaded with the same loader, the child
    deep-merged over it; an empty document is an empty mapping (any other document as it is).
    ``read`` gains the digest of each file loaded (see :func:`resolve_policy`)."""
    import yaml

    with open(path, "rb") as fd:
        try:
            result = yaml.load(fd, Loader=loader)  # MkDocs' own loader class, kept for parity
        except yaml.YAMLError as exc:
            raise ConfigLoadError(f"the YAML cannot be parsed: {exc}") from exc
        if read is not None:
            fd.seek(0)
            read[os.path.abspath(path)] = _digest(fd.read())  # the bytes just loaded, not a later version
    if result is None:
        return {}
    if isinstance(result, dict) and "INHERIT" in result:
        relpath = result.pop("INHERIT")
        parent = os.path.normpath(os.path.join(os.path.dirname(os.fspath(path)), relpath))
        if not os.path.exists(parent):
            raise ConfigLoadError(f"the INHERIT parent {relpath!r} does not exist at {parent!r}")
        if depth >= _INHERIT_DEPTH:
            raise ConfigLoadError(f"INHERIT goes deeper than {_INHERIT_DEPTH} files")
        import mergedeep

        return mergedeep.merge(load_config_file(Path(parent), loader, depth + 1, read), result)
    return result


def _load_config(path: Path, read: dict[str, str] | None = None) -> dict[str, Any]:
    """The file as ``MkDocsConfig.load_file`` loads it: MkDocs' YAML loader (``!ENV``, ``!relative``
    and ``INHERIT`` resolved) and ``load_dict``'s refusal of anything but a mapping."""
    loading = _Loading(path)
    data = load_config_file(path, _loader_for(loading), read=read)
    if not isinstance(data, dict):
        raise ConfigLoadError(f"the configuration is not a key-value mapping but a {type(data).__name__}")
    loading.loaded = data
    return data
