"""The wiki's one key ring: every signature the publisher checks is verified here (CONTRACT 12).

A trusted key has roles (:class:`Role`): ``acquire`` (acquisition events), ``assess``
(assessments, reviews, adjudications, missingness) and ``warrant`` (warrant reviews). A
signature counts only for the roles of the key that made it, so a key kept on a fetching
machine cannot vouch for an assessment unless the wiki says so.

Keys are Ed25519: PKCS#8 PEM private keys (mode 0600, outside every wiki), SubjectPublicKeyInfo
PEM public keys; a key's id is the lowercase hex SHA-256 of its raw 32 bytes. One signer
discovery (:func:`find_signer`, :func:`require_signer`) serves every command that writes a
trusted fact: ``--key``, else ``PUBLISHER_SIGNING_KEY``, else this user's private key for one of
the ring's keys that has the needed role.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import os
from collections.abc import Iterable, Mapping
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar, cast

from . import _fs, tty
from .errors import UsageError
from .eventviews import EventView, SignatureView, signed_payload
from .frozen import FrozenValue
from .reasons import Reason

if TYPE_CHECKING:  # the library is loaded where a key is read or a signature checked: an
    # unsigned wiki's check, assembly and reads never pay for it
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey
    from cryptography.hazmat.primitives.asymmetric.types import PrivateKeyTypes

    from .models import Event, SignedLine

__all__ = [
    "ALG",
    "KEY_ENV",
    "Role",
    "DEFAULT_ROLES",
    "KeyRing",
    "Signer",
    "TrustedKey",
    "key_id_of",
    "load_public_key",
    "load_signer",
    "user_key_dir",
    "wiki_key_file",
    "trusted_key_entries",
    "key_ring",
    "SignatureFault",
    "line_signature_fault",
    "line_signature_problem",
    "sign_line",
    "event_signature_problem",
    "find_signer",
    "require_signer",
]

ALG = "ed25519"
KEY_ENV = "PUBLISHER_SIGNING_KEY"
"""Environment variable naming the signing key file when ``--key`` is not given."""

_MAX_KEY_FILE = 64 * 1024


class Role(StrEnum):
    """What a trusted key's signature may vouch for."""

    ACQUIRE = "acquire"
    ASSESS = "assess"
    WARRANT = "warrant"


DEFAULT_ROLES = frozenset({Role.ACQUIRE, Role.ASSESS})
"""The roles of a trusted key listed as a bare path."""


class SignatureFault(StrEnum):
    """Why a signed line's signature does not count: the kind, beside its one-line message.

    A caller that must tell an altered line (a build failure) from one that merely does not
    count (a notice) asks :attr:`altered`.
    """

    UNSIGNED = "unsigned"
    OTHER_TARGET = "other_target"
    """Signed for another run or log (a line copied from elsewhere)."""
    ALGORITHM = "algorithm"
    UNTRUSTED = "untrusted"
    ROLE = "role"
    ALTERED = "altered"
    """Made by a trusted key, but it does not verify over the line as it stands."""

    @property
    def altered(self) -> bool:
        """Whether the line or its signature was changed after signing, rather than signed by a
        key that does not count here."""
        return self in (SignatureFault.OTHER_TARGET, SignatureFault.ALGORITHM, SignatureFault.ALTERED)


def key_id_of(public: Ed25519PublicKey) -> str:
    """Lowercase hex SHA-256 of the raw 32-byte public key."""
    from cryptography.hazmat.primitives import serialization

    raw = public.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    return hashlib.sha256(raw).hexdigest()


class Signer(FrozenValue):
    """A private key bound to what its signatures name (a run, or a wiki log such as
    ``assessments``). Frozen, equal and hashed by its fields; the key is never shown
    (:class:`~.frozen.FrozenValue`)."""

    __slots__ = ("key_id", "private", "run")
    _fields = ("private", "key_id", "run")
    _shown = ("key_id", "run")
    private: Ed25519PrivateKey
    key_id: str
    run: str

    def __init__(self, private: Ed25519PrivateKey, key_id: str, run: str) -> None:
        self._init(private, key_id, run)

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


def load_signer(path: Path, run: str, *, encrypted_only: bool = False) -> Signer:
    """The Ed25519 private key in ``path``, bound to ``run``; a one-line UsageError otherwise.

    An encrypted key (a warrant key) is opened with a passphrase asked on the controlling
    terminal (:func:`publisher.kernel.tty.ask`), never from an argument, the environment or a
    file: without a terminal it cannot sign. ``encrypted_only`` refuses a key that is not
    encrypted (what ``publisher warrant`` signs with).
    """
    from cryptography.exceptions import UnsupportedAlgorithm
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

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
    from cryptography.exceptions import UnsupportedAlgorithm
    from cryptography.hazmat.primitives import serialization

    passphrase = tty.ask(f"passphrase for {path.name}: ", secret=True).encode("utf-8")
    try:
        return serialization.load_pem_private_key(data, password=passphrase)
    except (ValueError, TypeError, UnsupportedAlgorithm) as exc:
        raise UsageError(f"signing key {path}: wrong passphrase, or not a PEM private key", path=str(path)) from exc


def load_public_key(path: Path) -> Ed25519PublicKey:
    """The Ed25519 public key in ``path`` (SubjectPublicKeyInfo PEM); a one-line UsageError otherwise."""
    from cryptography.exceptions import UnsupportedAlgorithm
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

    data = _read_key_file(Path(path), "trusted key")
    try:
        key = serialization.load_pem_public_key(data)
    except (ValueError, UnsupportedAlgorithm) as exc:
        raise UsageError(f"trusted key {path}: not a PEM public key", path=str(path)) from exc
    if not isinstance(key, Ed25519PublicKey):
        raise UsageError(f"trusted key {path}: not an Ed25519 key", path=str(path))
    return key


def user_key_dir(environ: Mapping[str, str] | None = None) -> Path:
    """Where a user's private keys live: ``$XDG_CONFIG_HOME/publisher/keys`` (default
    ``~/.config/publisher/keys``), outside every wiki."""
    env = os.environ if environ is None else environ
    base = env.get("XDG_CONFIG_HOME")
    root = Path(base) if base and Path(base).is_absolute() else Path.home() / ".config"
    return root / "publisher" / "keys"


def wiki_key_file(key_ids: Iterable[str], environ: Mapping[str, str] | None = None) -> Path | None:
    """The private key (``<key id>.key`` in :func:`user_key_dir`) of the first of ``key_ids``
    this user holds; None when none is present."""
    folder = user_key_dir(environ)
    for key_id in key_ids:
        candidate = folder / f"{key_id}.key"
        if len(key_id) == 64 and all(c in "0123456789abcdef" for c in key_id) and candidate.is_file():
            return candidate
    return None


class KeyRing(FrozenValue):
    """The public keys a wiki trusts, by key id, each with its roles. An empty ring: unsigned wiki.

    ``roles``: each key's roles (a key missing here has :data:`DEFAULT_ROLES`); ``names``: each
    key's file as listed (for messages that name the key to use), not compared. Frozen, equal by
    its keys and roles (:class:`~.frozen.FrozenValue`)."""

    __slots__ = ("keys", "names", "roles")
    _fields = ("keys", "roles", "names")
    _compared = ("keys", "roles")
    keys: dict[str, Ed25519PublicKey]
    roles: dict[str, frozenset[Role]]
    names: dict[str, str]

    def __init__(
        self,
        keys: dict[str, Ed25519PublicKey] | None = None,
        roles: dict[str, frozenset[Role]] | None = None,
        names: dict[str, str] | None = None,
    ) -> None:
        self._init({} if keys is None else keys, {} if roles is None else roles, {} if names is None else names)

    @property
    def ids(self) -> list[str]:
        """The trusted key ids, sorted."""
        return sorted(self.keys)

    def __bool__(self) -> bool:
        return bool(self.keys)

    def roles_of(self, key_id: str) -> frozenset[Role]:
        """The roles of a trusted key (none for a key this ring does not hold)."""
        if key_id not in self.keys:
            return frozenset()
        return self.roles.get(key_id, DEFAULT_ROLES)

    def has_role(self, key_id: str, role: Role) -> bool:
        """Whether ``key_id`` is trusted here for ``role``."""
        return role in self.roles_of(key_id)

    def ids_for(self, role: Role) -> list[str]:
        """The sorted ids of the keys trusted for ``role``."""
        return [kid for kid in self.ids if self.has_role(kid, role)]

    def shown(self, key_id: str) -> str:
        """A key as a message names it: its file as listed, else a short id."""
        return self.names.get(key_id) or f"key {key_id[:16]}…"

    def key_fact(self, key_ids: list[str]) -> dict[str, Any]:
        """The facts of a refusal that asks for one of ``key_ids``' private keys, as an error's
        context: ``file``, the first one's public key file as listed (None when it has no file),
        and ``key_ids``."""
        listed = next((self.names[kid] for kid in key_ids if kid in self.names), None)
        return {"file": listed, "key_ids": list(key_ids)}

    def signature_fault(
        self, *, key_id: str, alg: str, value_b64: str, payload: bytes, role: Role
    ) -> tuple[SignatureFault, str] | None:
        """Why the signature ``value_b64`` over ``payload`` does not count for ``role`` here (its
        kind and one line), or None when it does: a trusted key that has the role made it.

        A trusted key's signature is verified before its role is asked, so an altered line reads
        as altered whichever key it names."""
        if alg != ALG:
            return SignatureFault.ALGORITHM, f"signed with {alg[:20]!r}, not {ALG}"
        key = self.keys.get(key_id)
        if key is None:
            return SignatureFault.UNTRUSTED, f"signed by key {key_id[:16]}…, which this wiki does not trust"
        from cryptography.exceptions import InvalidSignature

        try:
            key.verify(base64.b64decode(value_b64, validate=True), payload)
        except (binascii.Error, ValueError, InvalidSignature):
            return SignatureFault.ALTERED, "the signature does not verify (the record or its signature was altered)"
        if not self.has_role(key_id, role):
            roles = ", ".join(sorted(self.roles_of(key_id))) or "none"
            return SignatureFault.ROLE, f"signed by {self.shown(key_id)}, trusted for {roles} but not {role.value}"
        return None

    def signature_problem(self, *, key_id: str, alg: str, value_b64: str, payload: bytes, role: Role) -> str | None:
        """:meth:`signature_fault`'s one line, or None when the signature counts."""
        fault = self.signature_fault(key_id=key_id, alg=alg, value_b64=value_b64, payload=payload, role=role)
        return None if fault is None else fault[1]

    def __reduce__(self) -> tuple[Any, tuple[Any, ...]]:
        """Pickled as raw public keys (the wiki check hands the ring to its worker processes)."""
        from cryptography.hazmat.primitives import serialization

        raw = serialization.Encoding.Raw, serialization.PublicFormat.Raw
        return _ring_of_raw, (
            {kid: key.public_bytes(*raw) for kid, key in self.keys.items()},
            {kid: sorted(r.value for r in roles) for kid, roles in self.roles.items()},
            dict(self.names),
        )


def _ring_of_raw(raw: dict[str, bytes], roles: dict[str, list[str]], names: dict[str, str]) -> KeyRing:
    """The ring :meth:`KeyRing.__reduce__` pickled."""
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

    return KeyRing(
        {kid: Ed25519PublicKey.from_public_bytes(data) for kid, data in raw.items()},
        {kid: frozenset(Role(r) for r in rs) for kid, rs in roles.items()},
        names,
    )


class TrustedKey(FrozenValue):
    """One ``trusted_keys`` entry: a key file (relative to the wiki root) and its roles. Frozen,
    equal and hashed by its fields (:class:`~.frozen.FrozenValue`)."""

    __slots__ = ("path", "roles")
    _fields = ("path", "roles")
    path: str
    roles: frozenset[Role]

    def __init__(self, path: str, roles: frozenset[Role] = DEFAULT_ROLES) -> None:
        self._init(path, roles)


def _bad(where: str, message: str) -> UsageError:
    return UsageError(f"{where}: extra.evidence.trusted_keys{message}", reason=Reason.SCHEMA_ERROR, path=where)


def trusted_key_entries(listed: Any, where: str = "mkdocs.yml") -> tuple[TrustedKey, ...]:
    """The entries of an ``extra.evidence.trusted_keys`` value: a bare path (roles ``acquire`` and
    ``assess``) or ``{path: ..., roles: [...]}``. Paths stay inside the wiki; anything else is a
    one-line ``SCHEMA_ERROR`` naming the entry. None is ``()``."""
    if listed is None:
        return ()
    if not isinstance(listed, list):
        raise _bad(where, " must be a list of key files (a path, or {path: ..., roles: [...]})")
    out: list[TrustedKey] = []
    for n, entry in enumerate(listed):
        if isinstance(entry, Mapping):
            unknown = sorted(str(k)[:40] for k in entry if k not in ("path", "roles"))
            if unknown:
                raise _bad(where, f"[{n}].{unknown[0]} is not an option (known: path, roles)")
            path, roles_listed = entry.get("path"), entry.get("roles")
            valid = [r.value for r in Role]
            if (
                not isinstance(roles_listed, list)
                or not roles_listed
                or not all(isinstance(r, str) and r in valid for r in roles_listed)
            ):
                raise _bad(where, f"[{n}].roles must be a non-empty list of {', '.join(valid)}")
            roles = frozenset(Role(r) for r in roles_listed)
        else:
            path, roles = entry, DEFAULT_ROLES
        if not isinstance(path, str) or not path.strip():
            raise _bad(where, f"[{n}] must be a key file path, or {{path: ..., roles: [...]}}")
        rel = Path(path)
        if rel.is_absolute() or ".." in rel.parts:
            raise _bad(where, f": {path[:80]!r} must be a path inside the wiki, relative to its root")
        out.append(TrustedKey(path, roles))
    return tuple(out)


def key_ring(entries: Iterable[TrustedKey], root: Path, where: str = "mkdocs.yml") -> KeyRing:
    """The ring of ``entries`` under the wiki ``root``. A file that is missing, unreadable or not
    an Ed25519 public key is a one-line ``SCHEMA_ERROR`` with the fix: a wiki's trust is never
    silently narrower or wider than it says. A key listed twice holds the union of its roles."""
    keys: dict[str, Ed25519PublicKey] = {}
    roles: dict[str, frozenset[Role]] = {}
    names: dict[str, str] = {}
    for entry in entries:
        path = Path(root) / entry.path
        try:
            key = load_public_key(path)
        except UsageError as exc:
            why = exc.message.rsplit(": ", 1)[-1]
            raise UsageError(
                f"{where}: trusted key {entry.path[:80]}: {why}; fix the path under extra.evidence.trusted_keys "
                "or make a key pair with 'publisher keys new'",
                reason=Reason.SCHEMA_ERROR,
                path=where,
            ) from exc
        kid = key_id_of(key)
        keys[kid] = key
        roles[kid] = roles.get(kid, frozenset()) | entry.roles
        names.setdefault(kid, entry.path)
    return KeyRing(keys, roles, names)


def line_signature_fault(
    line: Event | EventView | SignedLine,
    line_id: str,
    ring: KeyRing,
    *,
    signed_for: str,
    role: Role,
    log: str | None = None,
) -> tuple[SignatureFault, str] | None:
    """Why the chained-log line ``line`` is not signed for ``signed_for`` by a key of ``ring``
    trusted for ``role``: the kind and one line naming ``line_id``; None when it is.

    The one check behind every signed line (events, assessments, adjudications, warrants,
    notices, agent runs). ``signed_for`` is what the signature's ``run`` must name: the run the
    line lies in, or the log's own name, which ``log`` then words for a person (``the notice
    log``).
    """
    sig = getattr(line, "sig", None)
    if not isinstance(sig, SignatureView):
        from .models import Signature  # a model's line carries the model's signature

        if not isinstance(sig, Signature):
            return SignatureFault.UNSIGNED, f"{line_id} is unsigned"
    if sig.run != signed_for:
        where = f"is not a signature for {log}" if log else f"is signed for run {sig.run[:80]!r}, not {signed_for!r}"
        return SignatureFault.OTHER_TARGET, f"{line_id} {where}"
    fault = ring.signature_fault(
        key_id=sig.key_id, alg=sig.alg, value_b64=sig.value, payload=signed_payload(line), role=role
    )
    return None if fault is None else (fault[0], f"{line_id}: {fault[1]}")


def line_signature_problem(
    line: Event | EventView | SignedLine,
    line_id: str,
    ring: KeyRing,
    *,
    signed_for: str,
    role: Role,
    log: str | None = None,
) -> str | None:
    """:func:`line_signature_fault`'s one line, or None when the line's signature counts."""
    fault = line_signature_fault(line, line_id, ring, signed_for=signed_for, role=role, log=log)
    return None if fault is None else fault[1]


_Line = TypeVar("_Line", bound="Event | SignedLine")


def sign_line(line: _Line, signer: Signer, *, signed_for: str) -> _Line:
    """``line`` signed by ``signer`` for ``signed_for`` (the run it lies in, or its log's name),
    as :func:`line_signature_fault` checks it: the signature covers the whole line, its ``sig``
    without the value included (:func:`~publisher.kernel.eventviews.signed_payload`)."""
    from .models import Signature

    unsigned = Signature(alg=ALG, key_id=signer.key_id, run=signed_for, value="")
    value = signer.sign(signed_payload(line.model_copy(update={"sig": unsigned})))
    signed = line.model_copy(update={"sig": unsigned.model_copy(update={"value": value})})
    return cast(_Line, signed)  # model_copy keeps the line's own class


def event_signature_problem(event: Event | EventView, ring: KeyRing, run: str, role: Role = Role.ACQUIRE) -> str | None:
    """Why ``event`` is not signed for ``run`` by a key of ``ring`` trusted for ``role`` (one
    line), or None when it is."""
    return line_signature_problem(event, event.event_id, ring, signed_for=run, role=role)


def find_signer(
    option: Path | None, *, ring: KeyRing, role: Role, run: str, environ: Mapping[str, str] | None = None
) -> Signer | None:
    """The signer named by ``--key`` (``option``), else ``PUBLISHER_SIGNING_KEY``, else this
    user's private key for one of the ring's keys trusted for ``role``; None when there is none."""
    env = os.environ if environ is None else environ
    named = option if option is not None else (Path(env[KEY_ENV]) if env.get(KEY_ENV) else None)
    if named is None:
        named = wiki_key_file(ring.ids_for(role), env)
    return load_signer(named, run) if named is not None else None


def require_signer(
    option: Path | None, *, ring: KeyRing, role: Role, run: str, environ: Mapping[str, str] | None = None
) -> Signer | None:
    """:func:`find_signer`, refusing (one-line ``UsageError``, before anything is written) on a
    wiki that trusts keys when there is no signer or its key is not trusted for ``role``.

    On an unsigned wiki (empty ring) the signer may be None: the write is unsigned, as configured.
    """
    signer = find_signer(option, ring=ring, role=role, run=run, environ=environ)
    if not ring:
        return signer
    wanted = ring.ids_for(role)
    keys = ", ".join(ring.shown(kid) for kid in wanted) or "none"
    if not wanted:
        raise UsageError(
            f"this wiki trusts no key for {role.value}: list one under extra.evidence.trusted_keys "
            f"with roles: [{role.value}]",
            reason=Reason.SCHEMA_ERROR,
        )
    to_use = ring.key_fact(wanted)
    if signer is None:
        raise UsageError(
            f"this wiki trusts signed {role.value} facts only, and no private key was found for {keys}: "
            f"pass --key FILE or set {KEY_ENV} (expected at {user_key_dir(environ)}/<key id>.key); nothing written",
            **to_use,
        )
    if not ring.has_role(signer.key_id, role):
        raise UsageError(
            f"signing key {signer.key_id[:16]}… is not trusted by this wiki for {role.value} "
            f"(use the private key of {keys}); nothing written",
            **to_use,
        )
    return signer
