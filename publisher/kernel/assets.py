"""Stored files behind snapshots (a user-supplied PDF in the wiki's library): hashed without
following links, each once per command."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from . import _fs

if TYPE_CHECKING:
    from .models import Asset
    from .views import AssetView

__all__ = ["hash_asset", "AssetChecker", "HasAsset"]


class HasAsset(Protocol):
    """What an asset check needs of a verified snapshot (a record's model or a snapshot check's view)."""

    @property
    def asset(self) -> Asset | AssetView | None: ...
    @property
    def origin(self) -> object: ...


def hash_asset(wiki_root: Path | str, relative: str) -> str | None:
    """Bare hex sha256 of the regular file ``relative`` under ``wiki_root``; None if it is missing.

    Links are not followed and special files are not read (they count as missing).
    """
    return _fs.hash_regular(Path(wiki_root) / relative)


class AssetChecker:
    """Hashes each stored asset file once per command and says whether it still matches."""

    def __init__(self, wiki_root: Path | None) -> None:
        self.wiki_root = wiki_root
        self._digests: dict[str, str | None] = {}

    def digest(self, relative: str) -> str | None:
        """Bare hex sha256 of the asset at ``relative`` under the wiki root, None if missing."""
        if relative not in self._digests:
            self._digests[relative] = self._hash(relative)
        return self._digests[relative]

    def remember(self, relative: str, digest: str | None) -> None:
        """Adopt a digest this command already computed of the asset (a worker hashed it)."""
        self._digests.setdefault(relative, digest)

    def _hash(self, relative: str) -> str | None:
        return hash_asset(self.wiki_root, relative) if self.wiki_root is not None else None

    def check(self, snap: HasAsset) -> str | None:
        """Why the snapshot's asset fails (one line), or None when it has none or it matches."""
        if snap.asset is None:
            if str(snap.origin) == "user-supplied-pdf":
                return "user-supplied PDF snapshot has no asset"
            return None
        got = self.digest(snap.asset.path)
        if got is None:
            return f"asset {snap.asset.path} is missing"
        if got != snap.asset.sha256:
            return (
                f"asset {snap.asset.path} changed: it hashes to {got[:16]}…, not the {snap.asset.sha256[:16]}… stored"
            )
        return None
