"""The wiki's policy: ``extra: evidence:`` of its configuration, validated once (CONTRACT 12).

One :class:`Policy` is made per build or command, from the configuration MkDocs itself resolved
(``INHERIT``, ``-f other.yml`` and ``!ENV`` honoured, :mod:`publisher.site.lifecycle.policy`), and handed
down to everything that needs a setting: the trusted keys to the fresh-fetch rule, the reader
options to the pages. Nothing below reads the configuration
again, so the build and ``publisher check`` cannot disagree about what a wiki trusts.

The options are allow-listed: an unknown key, a value of the wrong type, a trusted key file that
is missing or not an Ed25519 public key are each a one-line ``SCHEMA_ERROR``
:class:`~publisher.kernel.errors.UsageError` naming the setting and the fix. A wiki whose
configuration cannot be resolved has no policy at all (an error), never an empty one.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ..kernel.canonical import canonical_bytes
from ..kernel.errors import UsageError
from ..kernel.frozen import FrozenValue
from ..kernel.reasons import Reason
from ..kernel.trust import KeyRing, key_ring, trusted_key_entries

__all__ = ["Policy", "OPTIONS", "RETRACTED_MODES", "SOURCE_TEXT_MODES", "WINDOWS_ABOVE", "policy_from_evidence"]

SOURCE_TEXT_MODES = ("full", "windows", "proofs")
WINDOWS_ABOVE = 200_000
"""Code points above which a source page shows context windows, whatever ``source_text`` says."""

OPTIONS = (
    "trusted_keys",
    "source_text",
    "source_text_for",
    "context",
    "windows_above",
    "offline",
    "web_fonts",
    "retracted",
    "require_warrant",
)
"""Every key ``extra: evidence:`` may hold (an allow-list)."""

RETRACTED_MODES = ("warn", "fail")
"""What a build does when a claim rests on a work with a logged retraction (check ``C-NOTICE``)."""


class Policy(FrozenValue):
    """The evidence options of one wiki, resolved once (see the module docstring).

    ``key_files``: the key files as listed, relative to the wiki root; ``source_text_for``:
    per-source modes, ``(source id | origin:<origin> | access:<access>, mode)`` pairs, sorted;
    ``retracted``: ``fail``, a claim resting on a retracted work refuses the build
    (``C-NOTICE``), or ``warn``, the build says so and publishes, the work shown apart and giving
    no credit; ``require_warrant``: whether every claim needs a current ``confirmed`` or
    ``qualified`` warrant review (``C-WARRANT``). Frozen and equal by its fields
    (:class:`~publisher.kernel.frozen.FrozenValue`: every command that reads a wiki's policy
    imports this class, and a dataclass compiled its methods then)."""

    __slots__ = (
        "context",
        "key_files",
        "offline",
        "require_warrant",
        "retracted",
        "source_text",
        "source_text_for",
        "trusted_keys",
        "web_fonts",
        "wiki_root",
        "windows_above",
    )
    _fields = (
        "wiki_root",
        "trusted_keys",
        "key_files",
        "source_text",
        "source_text_for",
        "context",
        "windows_above",
        "offline",
        "web_fonts",
        "retracted",
        "require_warrant",
    )  # the constructor's order
    wiki_root: Path | None
    trusted_keys: KeyRing
    key_files: tuple[str, ...]
    source_text: str
    source_text_for: tuple[tuple[str, str], ...]
    context: int
    windows_above: int
    offline: bool
    web_fonts: bool
    retracted: str
    require_warrant: bool

    def __init__(
        self,
        wiki_root: Path | None,
        trusted_keys: KeyRing,
        key_files: tuple[str, ...] = (),
        source_text: str = "full",
        source_text_for: tuple[tuple[str, str], ...] = (),
        context: int = 400,
        windows_above: int = WINDOWS_ABOVE,
        offline: bool = False,
        web_fonts: bool = False,
        retracted: str = "warn",
        require_warrant: bool = False,
    ) -> None:
        self._init(
            wiki_root,
            trusted_keys,
            key_files,
            source_text,
            source_text_for,
            context,
            windows_above,
            offline,
            web_fonts,
            retracted,
            require_warrant,
        )

    @classmethod
    def unsigned(cls, wiki_root: Path | None = None) -> Policy:
        """The policy of a wiki that trusts no key, for a caller that means exactly that (a wiki
        without configuration, a test): every default option, unsigned provenance."""
        return cls(wiki_root, KeyRing())

    @property
    def signed(self) -> bool:
        """Whether fresh acquisition must be signed by a trusted key."""
        return bool(self.trusted_keys)

    @property
    def digest(self) -> str:
        """``sha256:`` of the options and key ids: equal digests, equal policies (no paths in it)."""
        body = {
            "trusted_keys": self.trusted_keys.ids,
            "roles": {kid: sorted(self.trusted_keys.roles_of(kid)) for kid in self.trusted_keys.ids},
            "source_text": self.source_text,
            "source_text_for": [list(pair) for pair in self.source_text_for],
            "context": self.context,
            "windows_above": self.windows_above,
            "offline": self.offline,
            "web_fonts": self.web_fonts,
            "retracted": self.retracted,
            "require_warrant": self.require_warrant,
        }
        return "sha256:" + hashlib.sha256(canonical_bytes(body)).hexdigest()


def _bad(where: str, message: str) -> UsageError:
    return UsageError(f"{where}: {message}", reason=Reason.SCHEMA_ERROR, path=where)


def _whole(evidence: Mapping[str, Any], key: str, default: int, most: int, where: str) -> int:
    value = evidence.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= most:
        raise _bad(where, f"extra.evidence.{key} must be a whole number of code points, 0 to {most}")
    return value


_OVERRIDE_KEY = re.compile(r"src-[0-9a-f]{64}|origin:[a-z-]+|access:[a-z_]+")


def _overrides(value: Any, where: str) -> tuple[tuple[str, str], ...]:
    """``extra.evidence.source_text_for``: a mapping of source id, ``origin:<origin>`` or
    ``access:<access>`` to a mode (e.g. ``origin:user-supplied-pdf: proofs``)."""
    if not isinstance(value, Mapping):
        raise _bad(where, "extra.evidence.source_text_for must map source ids, origin: or access: keys to a mode")
    out = []
    for key, mode in value.items():
        if not isinstance(key, str) or not _OVERRIDE_KEY.fullmatch(key):
            raise _bad(
                where,
                f"extra.evidence.source_text_for: {str(key)[:80]!r} is not a source id, "
                "origin:<origin> or access:<access>",
            )
        if mode not in SOURCE_TEXT_MODES:
            raise _bad(where, f"extra.evidence.source_text_for.{key} must be one of {', '.join(SOURCE_TEXT_MODES)}")
        out.append((key, mode))
    return tuple(sorted(out))


def policy_from_evidence(evidence: Any, wiki_root: Path | None, where: str = "mkdocs.yml") -> Policy:
    """Validate ``extra.evidence`` (as MkDocs resolved it) and load the keys it lists.

    ``where`` names the configuration in messages (a file name, never a machine path).
    """
    if evidence is None:
        return Policy.unsigned(wiki_root)
    if not isinstance(evidence, Mapping):
        raise _bad(where, "extra.evidence must be a mapping")
    if "scheduler" in evidence:
        raise _bad(
            where,
            "extra.evidence.scheduler is not read from the wiki's configuration (it decides whose results the "
            "check trusts): pass --scheduler ADDRESS or set PUBLISHER_SCHEDULER where the check runs",
        )
    unknown = sorted(str(k) for k in evidence if k not in OPTIONS)
    if unknown:
        raise _bad(where, f"extra.evidence.{unknown[0][:60]} is not an option (known: {', '.join(OPTIONS)})")
    mode = evidence.get("source_text", "full")
    if mode not in SOURCE_TEXT_MODES:
        raise _bad(where, f"extra.evidence.source_text must be one of {', '.join(SOURCE_TEXT_MODES)}")
    overrides = _overrides(evidence.get("source_text_for", {}), where)
    context = _whole(evidence, "context", 400, 1_000_000, where)
    above = _whole(evidence, "windows_above", WINDOWS_ABOVE, 2**53, where)
    flags = {}
    for key in ("offline", "web_fonts", "require_warrant"):
        value = evidence.get(key, False)
        if not isinstance(value, bool):
            raise _bad(where, f"extra.evidence.{key} must be true or false")
        flags[key] = value
    retracted = evidence.get("retracted", "warn")
    if retracted not in RETRACTED_MODES:
        raise _bad(where, f"extra.evidence.retracted must be one of {', '.join(RETRACTED_MODES)}")
    listed = evidence.get("trusted_keys")
    if listed is not None and wiki_root is None:
        raise _bad(where, "extra.evidence.trusted_keys needs a wiki root to resolve its paths")
    entries = trusted_key_entries(listed, where)
    return Policy(
        wiki_root,
        trusted_keys=key_ring(entries, Path(wiki_root) if wiki_root is not None else Path("."), where),
        key_files=tuple(e.path for e in entries),
        source_text=mode,
        source_text_for=overrides,
        context=context,
        windows_above=above,
        offline=flags["offline"],
        web_fonts=flags["web_fonts"],
        retracted=retracted,
        require_warrant=flags["require_warrant"],
    )
