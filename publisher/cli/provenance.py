"""``publisher keys new`` and ``publisher audit refetch``: signed acquisition and its audit.

``keys new`` exits 0 when the pair is written, 2 when it cannot be. ``audit refetch`` exits 0
when every cited public URL still yields the stored text, 1 when any drifted or is unreachable
(or a run could not be read), 2 for usage errors.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from ._common import add_json, emit, seconds_arg


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Add ``keys`` and ``audit`` with their sub-commands."""
    keys = sub.add_parser("keys", help="make keys for signed acquisition")
    ks = keys.add_subparsers(dest="keys_command", metavar="SUBCOMMAND")
    ks.required = True
    p = ks.add_parser(
        "new",
        help="write an Ed25519 key pair: NAME.key (private, mode 0600) and NAME.pub",
        description="Keep NAME.key where the agent's tools cannot read it; list NAME.pub in "
        "mkdocs.yml under extra: evidence: trusted_keys.",
    )
    p.add_argument("--out", required=True, type=Path, metavar="DIR", help="folder to write the pair into")
    p.add_argument("--name", default="publisher", help="file name stem (default: publisher)")
    p.add_argument("--force", action="store_true", help="write the private key even inside a git work tree or a wiki")
    p.add_argument(
        "--role",
        action="append",
        choices=("acquire", "assess", "warrant"),
        metavar="ROLE",
        help="what the key will sign: acquire, assess (the default pair) or warrant (repeatable); a warrant key "
        "is encrypted with a passphrase asked twice on the terminal",
    )
    add_json(p)
    p.set_defaults(func=_keys_new)

    audit = sub.add_parser("audit", help="independent checks that change nothing")
    au = audit.add_subparsers(dest="audit_command", metavar="SUBCOMMAND")
    au.required = True
    p = au.add_parser(
        "refetch",
        help="re-download every cited public URL of the wiki's runs and report drift",
        description="Per source: identical, drifted (text differs) or unreachable. Writes nothing.",
    )
    p.add_argument("--wiki", required=True, type=Path, metavar="WIKI", help="the wiki root (holds mkdocs.yml)")
    p.add_argument("--timeout", type=seconds_arg, default=30.0, help="seconds per network operation (default 30)")
    add_json(p)
    p.set_defaults(func=_audit_refetch)


def _keys_new(args: argparse.Namespace) -> int:
    from ..acquire.signing import KEY_ENV, new_key_pair

    roles = sorted(set(args.role or ("acquire", "assess")))
    passphrase = _new_passphrase() if "warrant" in roles else None
    private, public, key_id = new_key_pair(args.out, args.name, force=args.force, passphrase=passphrase)
    if passphrase is not None:
        human = (
            f"Wrote {private} (private, encrypted with your passphrase, mode 0600) and {public}\n"
            f"  key id {key_id}\n"
            f"  review: publisher warrant --wiki WIKI --key {private} (the passphrase is asked on the terminal)\n"
            f"  trust: list {{path: {public.name}, roles: [{', '.join(roles)}]}} (path relative to the wiki root) "
            "under extra: evidence: trusted_keys in mkdocs.yml"
        )
    else:
        human = (
            f"Wrote {private} (private, mode 0600) and {public}\n"
            f"  key id {key_id}\n"
            f"  sign: keep {private.name} outside the agent's reach and point {KEY_ENV} (or --key) at it\n"
            f"  trust: list {public.name} (relative to the wiki root) under extra: evidence: trusted_keys in mkdocs.yml"
        )
    data = {"private_key": str(private), "public_key": str(public), "key_id": key_id, "roles": roles}
    emit(args, {**data, "encrypted": passphrase is not None}, human)
    return 0


def _new_passphrase() -> bytes:
    """A new key's passphrase, typed twice on the terminal (never an argument, variable or file)."""
    from ..kernel.errors import UsageError
    from ..kernel.tty import ask

    first = ask("passphrase for the new warrant key: ", secret=True)
    if not first:
        raise UsageError("an empty passphrase protects nothing; nothing was written")
    if ask("the same passphrase again: ", secret=True) != first:
        raise UsageError("the two passphrases differ; nothing was written")
    return first.encode("utf-8")


def _audit_refetch(args: argparse.Namespace) -> int:
    from ..kernel.text import one_line, terminal_safe
    from ..wiki.audit import refetch_audit

    audit = refetch_audit(args.wiki, timeout=args.timeout)
    counts = audit.counts
    lines = [
        f"Re-retrieval audit of {args.wiki}: {counts['identical']} identical, {counts['drifted']} drifted, "
        f"{counts['unreachable']} unreachable; {len(audit.skipped)} skipped (not public URLs)"
    ]

    def show(text: str) -> str:
        return terminal_safe(one_line(text), keep_newlines=False)

    for entry in audit.entries:
        lines.append(f"  {entry.status:<11} {show(entry.run)} {entry.source_id}  {show(entry.url)}")
        if entry.status != "identical":
            lines.append(f"              {show(entry.detail)}")
        if entry.revise:
            lines.append(f"              record it as a revision: {entry.revise}")
    lines += [f"  problem: {show(p.one_line())}" for p in audit.problems]
    report = audit.to_json() | {"problems": [p.one_line() for p in audit.problems]}
    emit(args, report, "\n".join(lines))
    return 0 if audit.clean else 1
