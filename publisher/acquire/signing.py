"""Signed acquisition: Ed25519 keys, event signatures and the wiki's trusted keys (CONTRACT 12).

A signing key is a PKCS#8 PEM file (mode 0600) that ``source fetch`` and ``source local`` read
from ``--key`` or ``PUBLISHER_SIGNING_KEY``; it must live where the agent's tools cannot read it.
Public keys are SubjectPublicKeyInfo PEM files; a key's id is the lowercase hex SHA-256 of its
raw 32 bytes. A signature covers :func:`~publisher.kernel.models.signed_payload` of the event:
its canonical JSON without ``sig.value``, so the run it names is covered too.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import os
from dataclasses import dataclass, field
from pathlib import Path

from cryptography.exceptions import InvalidSignature, UnsupportedAlgorithm
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

from ..kernel import _fs
from ..kernel.errors import UsageError
from ..kernel.models import Event, signed_payload
from ..runs import trusted_key_paths

__all__ = [
    "ALG",
    "KEY_ENV",
    "Signer",
    "KeyRing",
    "key_id_of",
    "new_key_pair",
    "load_signer",
    "signer_from",
    "load_public_key",
    "load_trusted_keys",
    "signature_problem",
]

ALG = "ed25519"
KEY_ENV = "PUBLISHER_SIGNING_KEY"
"""Environment variable naming the signing key file when ``--key`` is not given."""

_MAX_KEY_FILE = 64 * 1024


def key_id_of(public: Ed25519PublicKey) -> str:
    """Lowercase hex SHA-256 of the raw 32-byte public key."""
    raw = public.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    return hashlib.sha256(raw).hexdigest()


@dataclass(frozen=True)
class Signer:
    """A private key bound to the run whose events it signs (an :class:`EventSigner`)."""

    private: Ed25519PrivateKey = field(repr=False)
    key_id: str
    run: str

    def sign(self, payload: bytes) -> str:
        """The base64 Ed25519 signature of ``payload``."""
        return base64.b64encode(self.private.sign(payload)).decode("ascii")


def _read_key_file(path: Path, what: str) -> bytes:
    try:
        data = _fs.read_regular(path)
    except FileNotFoundError as exc:
        raise UsageError(f"{what} {path}: no such file", path=str(path)) from exc
    except OSError as exc:
        raise UsageError(f"{what} {path}: cannot be read ({exc.strerror or exc})", path=str(path)) from exc
    if len(data) > _MAX_KEY_FILE:
        raise UsageError(f"{what} {path}: {len(data)} bytes is too large for a PEM key", path=str(path))
    return data


def new_key_pair(out_dir: Path, name: str = "publisher") -> tuple[Path, Path, str]:
    """Write ``NAME.key`` (PKCS#8, mode 0600) and ``NAME.pub`` into ``out_dir``; never overwrites.

    Returns (private path, public path, key id).
    """
    if not name or "/" in name or "\\" in name or name.startswith("."):
        raise UsageError(f"key name {name!r} must be a plain file name")
    out_dir = Path(out_dir)
    private_path, public_path = out_dir / f"{name}.key", out_dir / f"{name}.pub"
    for path in (private_path, public_path):
        if os.path.lexists(path):
            raise UsageError(f"{path} already exists; pick another --name or folder", path=str(path))
    private = Ed25519PrivateKey.generate()
    public = private.public_key()
    private_pem = private.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )
    public_pem = public.public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
        if not _fs.create_exclusive(private_path, private_pem, mode=0o600):
            raise UsageError(f"{private_path} already exists", path=str(private_path))
        if not _fs.create_exclusive(public_path, public_pem, mode=0o644):
            raise UsageError(f"{public_path} already exists", path=str(public_path))
    except OSError as exc:
        raise UsageError(f"cannot write keys into {out_dir}: {exc.strerror or exc}", path=str(out_dir)) from exc
    return private_path, public_path, key_id_of(public)


def load_signer(path: Path, run: str) -> Signer:
    """The Ed25519 private key in ``path``, bound to ``run``; a one-line UsageError otherwise."""
    data = _read_key_file(Path(path), "signing key")
    try:
        key = serialization.load_pem_private_key(data, password=None)
    except TypeError as exc:  # encrypted, and no password given
        raise UsageError(f"signing key {path}: encrypted keys are not supported", path=str(path)) from exc
    except (ValueError, UnsupportedAlgorithm) as exc:
        raise UsageError(f"signing key {path}: not a PEM private key", path=str(path)) from exc
    if not isinstance(key, Ed25519PrivateKey):
        raise UsageError(f"signing key {path}: not an Ed25519 key", path=str(path))
    return Signer(key, key_id_of(key.public_key()), run)


def signer_from(option: Path | None, run: str, environ: dict[str, str] | None = None) -> Signer | None:
    """The signer named by ``--key`` or else ``PUBLISHER_SIGNING_KEY``; None when neither is set."""
    env = os.environ if environ is None else environ
    named = option if option is not None else (Path(env[KEY_ENV]) if env.get(KEY_ENV) else None)
    return load_signer(named, run) if named is not None else None


def load_public_key(path: Path) -> Ed25519PublicKey:
    """The Ed25519 public key in ``path`` (SubjectPublicKeyInfo PEM); a one-line UsageError otherwise."""
    data = _read_key_file(Path(path), "trusted key")
    try:
        key = serialization.load_pem_public_key(data)
    except (ValueError, UnsupportedAlgorithm) as exc:
        raise UsageError(f"trusted key {path}: not a PEM public key", path=str(path)) from exc
    if not isinstance(key, Ed25519PublicKey):
        raise UsageError(f"trusted key {path}: not an Ed25519 key", path=str(path))
    return key


@dataclass(frozen=True)
class KeyRing:
    """The public keys a wiki trusts, by key id. An empty ring means provenance is unsigned."""

    keys: dict[str, Ed25519PublicKey] = field(default_factory=dict)

    @property
    def ids(self) -> list[str]:
        """The trusted key ids, sorted."""
        return sorted(self.keys)

    def __bool__(self) -> bool:
        return bool(self.keys)


def load_trusted_keys(wiki_root: Path | None) -> KeyRing:
    """The keys ``extra.evidence.trusted_keys`` lists in the wiki's ``mkdocs.yml`` (none: empty).

    A listed file that is missing, unreadable or not an Ed25519 public key is a one-line
    UsageError: a wiki's trust is never silently narrower or wider than it says.
    """
    if wiki_root is None:
        return KeyRing()
    keys: dict[str, Ed25519PublicKey] = {}
    for path in trusted_key_paths(Path(wiki_root)):
        key = load_public_key(path)
        keys[key_id_of(key)] = key
    return KeyRing(keys)


def signature_problem(event: Event, ring: KeyRing, run: str) -> str | None:
    """Why ``event`` is not signed by a trusted key for ``run`` (one line), or None when it is."""
    sig = event.sig
    if sig is None:
        return f"{event.event_id} is unsigned"
    if sig.alg != ALG:
        return f"{event.event_id} is signed with {sig.alg[:20]!r}, not {ALG}"
    if sig.run != run:
        return f"{event.event_id} is signed for run {sig.run[:80]!r}, not {run!r}"
    key = ring.keys.get(sig.key_id)
    if key is None:
        return f"{event.event_id} is signed by key {sig.key_id[:16]}…, which this wiki does not trust"
    try:
        value = base64.b64decode(sig.value, validate=True)
        key.verify(value, signed_payload(event))
    except (binascii.Error, ValueError, InvalidSignature):
        return f"{event.event_id}: the signature does not verify (the event or its signature was altered)"
    return None
