"""The wiki's policy as MkDocs resolves its configuration (CONTRACT section 12).

The build reads ``extra: evidence:`` from the configuration MkDocs hands the plugin
(:func:`policy_of_config`); every command that reads a wiki loads that configuration file with
MkDocs' own loader (:func:`resolve_policy`: ``MkDocsConfig.load_file``, the loading half of
``mkdocs.config.load_config``, without validating the rest of the site: a run command needs no
theme or docs folder), so ``INHERIT``, ``-f other.yml``
(``--config``) and ``!ENV`` mean the same to ``publisher check`` as to ``mkdocs build``. A
configuration MkDocs refuses is a one-line ``SCHEMA_ERROR`` usage error naming MkDocs' own
complaint, never a wiki with no keys.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import yaml
from mkdocs.config.defaults import MkDocsConfig
from mkdocs.exceptions import MkDocsException

from ...kernel.errors import UsageError
from ...kernel.reasons import Reason
from ...kernel.text import one_line
from ...runs import config_file_of
from ...wiki.policy import Policy, policy_from_evidence

__all__ = ["policy_of_config", "resolve_policy", "config_file_for"]


def policy_of_config(config: Any, wiki_root: Path | None = None) -> Policy:
    """The policy in a configuration MkDocs has loaded (``extra.evidence``)."""
    path = config.config_file_path
    extra = config.get("extra") if hasattr(config, "get") else config.extra
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
    config = MkDocsConfig(config_file_path=os.fspath(path))
    try:
        with open(path, "rb") as fd:
            config.load_file(fd)  # MkDocs' own YAML loader: !ENV, !relative and INHERIT resolved
    except (MkDocsException, OSError, ValueError, yaml.YAMLError) as exc:
        raise UsageError(
            f"{name}: MkDocs cannot load it ({one_line(exc, 200)}); fix it until 'mkdocs build' accepts it",
            reason=Reason.SCHEMA_ERROR,
            path=name,
        ) from exc
    return policy_of_config(config, root)
