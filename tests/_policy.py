"""The wiki's policy for tests that call the library directly: resolved as the commands resolve it.

Every library entry that checks trust takes the policy (or its key ring) as a required
argument; a test names the one it means here rather than leaning on a default.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from publisher.gate.inputs import RunOptions
from publisher.kernel.trust import KeyRing
from publisher.runs import Run, find_wiki_root
from publisher.site.lifecycle.policy import resolve_policy
from publisher.wiki.policy import Policy

__all__ = ["KeyRing", "policy_of", "keys_of", "options_of", "run_keys"]


def policy_of(wiki: Path | str | None) -> Policy:
    """The policy of ``wiki`` through MkDocs' loader (unsigned without a wiki)."""
    return resolve_policy(Path(wiki) if wiki is not None else None)


def keys_of(wiki: Path | str | None) -> KeyRing:
    """The key ring of :func:`policy_of`."""
    return policy_of(wiki).trusted_keys


def run_keys(run: Run | Path | str) -> KeyRing:
    """The key ring of the wiki holding ``run`` (none: unsigned)."""
    path = run.path if isinstance(run, Run) else Path(run)
    return keys_of(find_wiki_root(path))


def options_of(run: Run | Path | str, **kwargs: Any) -> RunOptions:
    """:class:`RunOptions` with the trusted keys of the run's wiki (``wiki_root`` when given)."""
    wiki = kwargs.get("wiki_root")
    keys = keys_of(wiki) if wiki is not None else run_keys(run)
    return RunOptions(keys, **kwargs)
