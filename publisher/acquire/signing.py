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
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from cryptography.exceptions import InvalidSignature, UnsupportedAlgorithm
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey
from cryptography.hazmat.primitives.asymmetric.types import PrivateKeyTypes

from ..kernel import _fs, tty
from ..kernel.errors import UsageError
from ..kernel.models import Event, signed_payload
from ..kernel.reasons import Reason
from ..kernel.trust import DEFAULT_ROLES, Role
from ..runs import trusted_key_entries

__all__ = [
    "ALG",
    "KEY_ENV",
    "Signer",
    "KeyRing",
    "key_id_of",
    "new_key_pair",
    "new_wiki_key",
    "user_key_dir",
    "wiki_key_file",
    "key_home_problem",
    "load_signer",
    "signer_from",
    "load_public_key",
    "load_trusted_keys",
    "key_ring",
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


def user_key_dir(environ: Mapping[str, str] | None = None) -> Path:
    """Where a user's private acquisition keys live: ``$XDG_CONFIG_HOME/publisher/keys`` (default
    ``~/.config/publisher/keys``; ``%APPDATA%\\publisher\\keys`` on Windows), outside every wiki."""
    env = os.environ if environ is None else environ
    base = env.get("XDG_CONFIG_HOME") or (env.get("APPDATA") if os.name == "nt" else None)
    root = Path(base) if base and Path(base).is_absolute() else Path.home() / ".config"
    return root / "publisher" / "keys"


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


def wiki_key_file(key_ids: Iterable[str], environ: Mapping[str, str] | None = None) -> Path | None:
    """The private key of one of the wiki's trusted keys, if this user holds one (see
    :func:`new_wiki_key`); None when none is present."""
    folder = user_key_dir(environ)
    for key_id in key_ids:
        candidate = folder / f"{key_id}.key"
        if len(key_id) == 64 and all(c in "0123456789abcdef" for c in key_id) and candidate.is_file():
            return candidate
    return None


def load_signer(path: Path, run: str, *, encrypted_only: bool = False) -> Signer:
    """The Ed25519 private key in ``path``, bound to ``run``; a one-line UsageError otherwise.

    An encrypted key (a warrant key) is opened with a passphrase asked on the controlling
    terminal (:func:`publisher.kernel.tty.ask`), never from an argument, the environment or a
    file: without a terminal it cannot sign. ``encrypted_only`` refuses a key that is not
    encrypted (what ``publisher warrant`` signs with).
    """
    data = _read_key_file(Path(path), "signing key")
    try:
        key = serialization.load_pem_private_key(data, password=None)
    except TypeError:  # encrypted: a person types the passphrase
        key = _load_encrypted(data, Path(path))
    except (ValueError, UnsupportedAlgorithm) as exc:
        raise UsageError(f"signing key {path}: not a PEM private key", path=str(path)) from exc
    else:
        if encrypted_only:
            raise UsageError(
                f"signing key {path}: not passphrase-protected; a warrant key is made with "
                "'publisher keys new --role warrant', which encrypts it",
                path=str(path),
            )
    if not isinstance(key, Ed25519PrivateKey):
        raise UsageError(f"signing key {path}: not an Ed25519 key", path=str(path))
    return Signer(key, key_id_of(key.public_key()), run)


def _load_encrypted(data: bytes, path: Path) -> PrivateKeyTypes:
    passphrase = tty.ask(f"passphrase for {path.name}: ", secret=True).encode("utf-8")
    try:
        return serialization.load_pem_private_key(data, password=passphrase)
    except (ValueError, TypeError, UnsupportedAlgorithm) as exc:
        raise UsageError(f"signing key {path}: wrong passphrase, or not a PEM private key", path=str(path)) from exc


def signer_from(
    option: Path | None, run: str, environ: Mapping[str, str] | None = None, trusted: Iterable[str] = ()
) -> Signer | None:
    """The signer named by ``--key``, else ``PUBLISHER_SIGNING_KEY``, else the private key this
    user holds for one of the wiki's ``trusted`` key ids (:func:`wiki_key_file`); None when there
    is none (unsigned acquisition)."""
    env = os.environ if environ is None else environ
    named = option if option is not None else (Path(env[KEY_ENV]) if env.get(KEY_ENV) else None)
    if named is None:
        named = wiki_key_file(trusted, env)
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
    """The public keys a wiki trusts, by key id, with the roles each holds. An empty ring means
    provenance is unsigned."""

    keys: dict[str, Ed25519PublicKey] = field(default_factory=dict)
    roles: dict[str, frozenset[Role]] = field(default_factory=dict)
    """The roles of each key (a key missing here holds :data:`DEFAULT_ROLES`, a bare path's)."""
    labels: dict[str, str] = field(default_factory=dict)
    """What a reader calls each key: its file's name without ``.pub``."""

    @property
    def ids(self) -> list[str]:
        """The trusted key ids, sorted."""
        return sorted(self.keys)

    def __bool__(self) -> bool:
        return bool(self.keys)

    def has_role(self, key_id: str, role: Role) -> bool:
        """Whether ``key_id`` is trusted here and holds ``role``."""
        return key_id in self.keys and role in self.roles.get(key_id, DEFAULT_ROLES)

    def with_role(self, role: Role) -> list[str]:
        """The ids of the keys holding ``role``, sorted."""
        return [kid for kid in self.ids if self.has_role(kid, role)]

    def label(self, key_id: str) -> str:
        """The key's label, else its short id."""
        return self.labels.get(key_id) or key_id[:16] + "…"

    def __reduce__(self) -> tuple[object, tuple[dict[str, bytes], dict[str, list[str]], dict[str, str]]]:
        """Pickled as raw public keys (the wiki check hands the ring to its worker processes)."""
        raw = serialization.Encoding.Raw, serialization.PublicFormat.Raw
        return _ring_of_raw, (
            {kid: key.public_bytes(*raw) for kid, key in self.keys.items()},
            {kid: sorted(r.value for r in roles) for kid, roles in self.roles.items()},
            dict(self.labels),
        )


def _ring_of_raw(raw: dict[str, bytes], roles: dict[str, list[str]], labels: dict[str, str]) -> KeyRing:
    """The ring :meth:`KeyRing.__reduce__` pickled."""
    return KeyRing(
        {kid: Ed25519PublicKey.from_public_bytes(data) for kid, data in raw.items()},
        {kid: frozenset(Role(r) for r in names) for kid, names in roles.items()},
        labels,
    )


def key_ring(entries: list[Path] | list[tuple[Path, frozenset[Role]]], where: str = "mkdocs.yml") -> KeyRing:
    """The public keys in ``entries`` (``extra.evidence.trusted_keys`` resolved: paths, or paths with
    their roles). A file that is missing, unreadable or not an Ed25519 public key is a one-line
    ``SCHEMA_ERROR`` UsageError with the fix: a wiki's trust is never silently narrower or wider
    than it says. A key listed twice holds the roles of both entries."""
    keys: dict[str, Ed25519PublicKey] = {}
    roles: dict[str, frozenset[Role]] = {}
    labels: dict[str, str] = {}
    for entry in entries:
        path, held = entry if isinstance(entry, tuple) else (entry, DEFAULT_ROLES)
        shown = f"{path.parent.name}/{path.name}" if path.parent.name else path.name
        try:
            key = load_public_key(path)
        except UsageError as exc:
            why = exc.message.rsplit(": ", 1)[-1]
            raise UsageError(
                f"{where}: trusted key {shown}: {why}; fix the path under extra.evidence.trusted_keys "
                "or make a key pair with 'publisher keys new'",
                reason=Reason.SCHEMA_ERROR,
                path=where,
            ) from exc
        kid = key_id_of(key)
        keys[kid] = key
        roles[kid] = roles.get(kid, frozenset()) | held
        labels.setdefault(kid, path.name.removesuffix(".pub"))
    return KeyRing(keys, roles, labels)


def load_trusted_keys(wiki_root: Path | None) -> KeyRing:
    """The keys the wiki's own ``mkdocs.yml`` lists, read fail-closed without MkDocs (none: empty).

    The library's default when a caller passes no keys; commands and the build resolve the
    wiki's policy through MkDocs (:func:`publisher.site.build.policy.resolve_policy`) and pass it down.
    """
    if wiki_root is None:
        return KeyRing()
    return key_ring(trusted_key_entries(Path(wiki_root)))


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
