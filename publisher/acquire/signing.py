"""Acquisition keys: making Ed25519 key pairs for a wiki and its users (CONTRACT 12).

A signing key is a PKCS#8 PEM file (mode 0600) kept where the agent's tools cannot read it;
public keys are SubjectPublicKeyInfo PEM files listed under the wiki's ``trusted_keys``. The key
ring, signature verification and signer discovery live in :mod:`publisher.kernel.trust` (one
place for every signature); the names are re-exported here for the callers that import them
from this module.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from ..kernel import _fs
from ..kernel.errors import UsageError
from ..kernel.eventviews import EventView
from ..kernel.models import Event
from ..kernel.trust import (
    ALG,
    KEY_ENV,
    KeyRing,
    Role,
    Signer,
    event_signature_problem,
    find_signer,
    key_id_of,
    key_ring,
    load_public_key,
    load_signer,
    require_signer,
    user_key_dir,
    wiki_key_file,
)

__all__ = [
    "ALG",
    "KEY_ENV",
    "Signer",
    "KeyRing",
    "Role",
    "key_id_of",
    "new_key_pair",
    "new_wiki_key",
    "user_key_dir",
    "wiki_key_file",
    "key_home_problem",
    "load_signer",
    "find_signer",
    "require_signer",
    "load_public_key",
    "key_ring",
    "signature_problem",
]


def key_home_problem(folder: Path) -> str | None:
    """Why ``folder`` is no place for a private key, or None: inside a git work tree (``git add
    -A`` would stage it) or inside a wiki (its agents' tools may read it)."""
    here = Path(os.path.abspath(folder))
    for candidate in (here, *here.parents):
        if os.path.lexists(candidate / ".git"):
            return f"{folder} is inside the git work tree {candidate.name or candidate}"
        if any(os.path.lexists(candidate / n) for n in ("mkdocs.yml", "mkdocs.yaml")):
            return f"{folder} is inside the wiki {candidate.name or candidate}"
    return None


def new_key_pair(
    out_dir: Path, name: str = "publisher", *, force: bool = True, passphrase: bytes | None = None
) -> tuple[Path, Path, str]:
    """Write ``NAME.key`` (PKCS#8, mode 0600) and ``NAME.pub`` into ``out_dir``; never overwrites.

    With ``passphrase`` the private key is encrypted with it (PKCS#8's best available
    encryption): a warrant key, which signs only once a person types the passphrase. Without
    ``force``, a folder inside a git work tree or a wiki is refused (:func:`key_home_problem`).
    Returns (private path, public path, key id).
    """
    if not name or "/" in name or "\\" in name or name.startswith("."):
        raise UsageError(f"key name {name!r} must be a plain file name")
    out_dir = Path(out_dir)
    if not force:
        problem = key_home_problem(out_dir)
        if problem is not None:
            raise UsageError(
                f"{problem}: a private key there can be committed or read by agents; write it elsewhere "
                f"(default {user_key_dir()}) or pass --force",
                path=str(out_dir),
            )
    private_path, public_path = out_dir / f"{name}.key", out_dir / f"{name}.pub"
    for path in (private_path, public_path):
        if os.path.lexists(path):
            raise UsageError(f"{path} already exists; pick another --name or folder", path=str(path))
    if passphrase is not None and not passphrase:
        raise UsageError("an empty passphrase protects nothing; type one")
    private_pem, public_pem, key_id = _pem_pair(passphrase)
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
        if not _fs.create_exclusive(private_path, private_pem, mode=0o600):
            raise UsageError(f"{private_path} already exists", path=str(private_path))
        if not _fs.create_exclusive(public_path, public_pem, mode=0o644):
            raise UsageError(f"{public_path} already exists", path=str(public_path))
    except OSError as exc:
        raise UsageError(f"cannot write keys into {out_dir}: {exc.strerror or exc}", path=str(out_dir)) from exc
    return private_path, public_path, key_id


def _pem_pair(passphrase: bytes | None = None) -> tuple[bytes, bytes, str]:
    private = Ed25519PrivateKey.generate()
    public = private.public_key()
    protection: serialization.KeySerializationEncryption = (
        serialization.BestAvailableEncryption(passphrase) if passphrase else serialization.NoEncryption()
    )
    private_pem = private.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, protection)
    public_pem = public.public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
    return private_pem, public_pem, key_id_of(public)


def new_wiki_key(public_path: Path, environ: Mapping[str, str] | None = None) -> tuple[Path, str]:
    """A wiki's acquisition key pair: the public key at ``public_path`` (in the wiki, listed under
    ``trusted_keys``), the private key as ``<key id>.key`` in :func:`user_key_dir` (folder 0700,
    file 0600), where acquisition commands find it by the wiki's trusted key ids. Never overwrites.

    Returns (private path, key id).
    """
    private_pem, public_pem, key_id = _pem_pair()
    folder = user_key_dir(environ)
    private_path = folder / f"{key_id}.key"
    try:
        folder.mkdir(parents=True, exist_ok=True, mode=0o700)
        if not _fs.create_exclusive(private_path, private_pem, mode=0o600):
            raise UsageError(f"{private_path} already exists", path=str(private_path))
        try:
            public_path.parent.mkdir(parents=True, exist_ok=True)
            if not _fs.create_exclusive(public_path, public_pem, mode=0o644):
                raise UsageError(f"{public_path} already exists", path=str(public_path))
        except BaseException:
            private_path.unlink(missing_ok=True)
            raise
    except OSError as exc:
        raise UsageError(f"cannot write the wiki's key pair: {exc.strerror or exc}", path=str(folder)) from exc
    return private_path, key_id


def signature_problem(event: Event | EventView, ring: KeyRing, run: str, role: Role = Role.ACQUIRE) -> str | None:
    """Why ``event`` is not signed for ``run`` by a key of ``ring`` trusted for ``role`` (see
    :func:`publisher.kernel.trust.event_signature_problem`), or None when it is."""
    return event_signature_problem(event, ring, run, role)
