"""``publisher proof``: an excerpt's Merkle proof, and ``publisher proof verify``: check one offline.

``publisher proof --run-dir RUN --source-id ID --start N --end M [--json]`` reads the verified
snapshot and prints the proof of code points ``[N, M)`` (CONTRACT section 16).
``publisher proof verify FILE (--root sha256:… --tree-size K | --record FILE | --wiki DIR) [--json]``
checks a proof offline (no network): exit 0 only when it holds against an anchor, a root and tree
size given, a snapshot record that verifies, or the wiki's stored snapshot (with, on a signed wiki,
an acquisition a trusted key signed holding the root); 1 when it is refused, a proof consistent
with its own root alone included (check ``anchor``, ``"anchored": false``); each finding names the
check that failed and its reason code; 2 on a usage error (``--root`` without ``--tree-size`` is
one: a root alone does not fix where an excerpt lies).
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from ..kernel.errors import IntegrityError, UsageError
from ..kernel.findings import Finding
from ..kernel.reasons import Reason
from ._common import add_config, add_json, emit, error_line, missing_folder, open_run, wiki_policy

__all__ = ["register"]

MAX_PROOF_BYTES = 64 * 1024 * 1024
"""The largest proof file ``verify`` reads (a proof of a whole 50 MB text fits)."""


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Add ``proof`` and ``proof verify``."""
    p = sub.add_parser(
        "proof",
        help="print the Merkle proof of an excerpt, or check one offline ('proof verify FILE')",
        description="Print the Merkle proof that code points [start, end) of a snapshot's text lie "
        "under its root (CONTRACT section 16). 'publisher proof verify FILE' checks one offline.",
    )
    p.add_argument("--run-dir", type=Path, help="the run holding the snapshot")
    p.add_argument("--source-id", help="the snapshot (src-<64 hex>)")
    p.add_argument("--start", type=int, help="first code point of the excerpt")
    p.add_argument("--end", type=int, help="code point after the excerpt")
    add_json(p)
    p.set_defaults(func=_prove)
    ps = p.add_subparsers(dest="proof_command", metavar="SUBCOMMAND")
    v = ps.add_parser("verify", help="check a proof file with nothing but the file")
    v.add_argument("file", type=Path, help="a proof as 'publisher proof --json' prints it")
    v.add_argument("--root", help="the root to trust (sha256:<64 hex>), e.g. a snapshot's merkle_root")
    v.add_argument("--tree-size", type=int, help="the number of chunks to trust (the snapshot's merkle_size)")
    anchor = v.add_mutually_exclusive_group()
    anchor.add_argument(
        "--record",
        type=Path,
        help="anchor to a snapshot record (sources/src-….json) that verifies: its text gives the root",
    )
    anchor.add_argument(
        "--wiki",
        type=Path,
        help="anchor to the wiki's stored snapshot of the proof's source (and, on a signed wiki, to an "
        "acquisition signed by a trusted key that holds the root)",
    )
    add_config(v)
    add_json(v)
    v.set_defaults(func=_verify)


def _prove(args: argparse.Namespace) -> int:
    missing = [name for name in ("run_dir", "source_id", "start", "end") if getattr(args, name) is None]
    if missing:
        flags = ", ".join("--" + name.replace("_", "-") for name in missing)
        raise UsageError(f"publisher proof needs {flags} (or 'publisher proof verify FILE')")
    from ..kernel.merkle import MerkleTree, build_proof

    snap = open_run(args.run_dir).store.read(args.source_id)
    n = len(snap.text)
    if not 0 <= args.start < args.end <= n:
        raise IntegrityError(
            f"[{args.start}, {args.end}) is not a non-empty range of {snap.source_id} ({n} code points)",
            reason=Reason.SPAN_OUT_OF_RANGE,
            source_id=snap.source_id,
            start=args.start,
            end=args.end,
        )
    proof = build_proof(snap.source_id, snap.text, args.start, args.end, MerkleTree.of_text(snap.text))
    data = proof.wire()
    lines = [
        f"{proof.source_id} [{proof.start}, {proof.end}): {len(proof.chunks)} chunk(s) from chunk "
        f"{proof.first_chunk} of {proof.tree_size}",
        f"merkle_root {proof.merkle_root}"
        + ("" if snap.merkle_root else " (derived from the verified text: the snapshot predates stored roots)"),
        "excerpt: " + snap.text[args.start : args.end],
        "(print the proof itself with --json)",
    ]
    emit(args, data, "\n".join(lines))
    return 0


def _verify(args: argparse.Namespace) -> int:
    from ..kernel import _fs
    from ..kernel.canonical import DIGEST_RE, loads_strict
    from ..kernel.merkle import parse_proof, verify_proof

    if args.root is not None and not DIGEST_RE.fullmatch(args.root):
        raise UsageError(f"--root must be sha256: and 64 lowercase hex digits, not {args.root[:80]!r}", field="root")
    if args.tree_size is not None and args.tree_size < 0:
        raise UsageError("--tree-size must be 0 or more", field="tree_size")
    if args.root is not None and args.tree_size is None:
        # A root alone does not fix the tree's size: chunk 2 of a tree of 3 is also leaf 1 of a
        # tree of 2 under the same root, so the excerpt's offsets would not be proven.
        raise UsageError(
            "--root needs --tree-size (a root alone does not fix where the excerpt lies)", field="tree_size"
        )
    if args.root is not None and (args.record is not None or args.wiki is not None):
        # One anchor: a root given beside --record or --wiki would be the one trusted, and the
        # record or wiki the reader named would be silently left unread.
        other = "--record" if args.record is not None else "--wiki"
        raise UsageError(f"--root and {other} are two anchors; name one", field="root")
    label = str(args.file)
    try:
        raw = _fs.read_regular(args.file, limit=MAX_PROOF_BYTES)  # refused from its size, never read whole
    except _fs.FileTooLargeError as exc:
        raise UsageError(f"{label} is larger than {MAX_PROOF_BYTES} bytes: not a proof this command reads") from exc
    except OSError as exc:
        raise UsageError(f"cannot read {label}: {exc.strerror or exc}") from exc
    findings: list[Finding]
    excerpt = None
    proof = None
    try:
        data = loads_strict(raw)
    except ValueError as exc:
        findings = [Finding(Reason.SCHEMA_ERROR, label, f"not valid JSON: {exc}", field="schema")]
    else:
        proof, findings = parse_proof(data, label)
        if proof is not None:
            excerpt, findings = verify_proof(proof, root=args.root, tree_size=args.tree_size, file=label)
    anchor: dict[str, Any] | None = None
    if args.root is not None:
        anchor = {"kind": "root", "detail": "the root and tree size given", "merkle_root": args.root}
    elif proof is not None and not findings and (args.record is not None or args.wiki is not None):
        anchor, found = _anchor(args, proof.source_id, label)
        findings += found
        if anchor is not None:
            _, findings = verify_proof(proof, root=anchor["merkle_root"], tree_size=anchor["tree_size"], file=label)
    if not findings and anchor is None:
        findings = [
            Finding(
                Reason.SNAPSHOT_HASH_MISMATCH,
                label,
                "not anchored: the proof is consistent with its own root only; pass --root with --tree-size, "
                "--record or --wiki",
                field="anchor",
                fix="pass --root with --tree-size, --record or --wiki",
            )
        ]
    if findings:
        for f in findings:
            error_line(f.one_line())
        emit(args, {"ok": False, "anchored": anchor is not None, "findings": [f.to_dict() for f in findings]})
        return 1
    shown_anchor = anchor if anchor is not None else {}
    outcome = {
        "ok": True,
        "anchored": True,
        "anchor": shown_anchor,
        "excerpt": excerpt,
        "merkle_root": data["merkle_root"],
    }
    human = f"ok: [{data['start']}, {data['end']}) of {data['source_id']} under {data['merkle_root']}"
    human += f" ({data['tree_size']} chunks)\nanchor: {shown_anchor.get('detail')}\nexcerpt: {excerpt}"
    emit(args, outcome, human)
    return 0


def _anchor(args: argparse.Namespace, source_id: str, label: str) -> tuple[dict[str, Any] | None, list[Finding]]:
    """The root and tree size to trust, from ``--record`` or ``--wiki``, or the findings why none."""

    from ..kernel import _fs
    from ..kernel.canonical import loads_record
    from ..kernel.eventlog import read_log
    from ..kernel.merkle import MerkleTree
    from ..kernel.store import MAX_SNAPSHOT_BYTES, verify_record

    def refused(detail: str, reason: Reason = Reason.UNKNOWN_SOURCE) -> tuple[None, list[Finding]]:
        return None, [Finding(reason, label, f"not anchored: {detail}", field="anchor")]

    if args.record is not None:
        try:
            raw = _fs.read_regular(args.record, limit=MAX_SNAPSHOT_BYTES)
        except OSError as exc:
            raise UsageError(f"cannot read {args.record}: {exc.strerror or exc}") from exc
        try:
            snap = verify_record(loads_record(raw)[0], None)
        except (ValueError, IntegrityError) as exc:
            why = exc.message if isinstance(exc, IntegrityError) else str(exc)
            return refused(f"{args.record} is not a snapshot record that verifies ({why[:160]})", Reason.SCHEMA_ERROR)
        if snap.source_id != source_id:
            return refused(f"{args.record} is the record of {snap.source_id}, not of {source_id}")
        tree = MerkleTree.of_text(snap.text)
        return {
            "kind": "record",
            "detail": f"the verified text of the record {args.record.name}",
            "merkle_root": tree.root,
            "tree_size": tree.size,
        }, []
    from ..acquire.signing import signature_problem
    from ..kernel.models import ACQUISITIONS
    from ..wiki.discover import discover_runs

    wiki = Path(args.wiki)
    if not wiki.is_dir():
        raise UsageError(missing_folder(wiki, "wiki"))
    ring = wiki_policy(wiki, args.config).trusted_keys
    for path in discover_runs(wiki):
        run = open_run(path)
        try:
            snap = run.store.read(source_id)  # verified on read: the source id is re-derived from the text
        except IntegrityError as exc:
            if exc.reason is Reason.UNKNOWN_SOURCE:
                continue
            return refused(
                f"the wiki's snapshot {source_id[:20]}… does not verify ({exc.reason})", Reason.SNAPSHOT_HASH_MISMATCH
            )
        tree = MerkleTree.of_text(snap.text)
        anchor = {"kind": "wiki", "merkle_root": tree.root, "tree_size": tree.size, "run": run.slug()}
        if not ring:
            return {**anchor, "detail": f"the verified text of {source_id[:20]}… in run {run.slug()}"}, []
        name = run.name()
        signed = next(
            (
                e
                for e in read_log(run.events_path).events
                if e.source_id == source_id
                and e.type in ACQUISITIONS
                and (e.merkle_root, e.merkle_size) == (tree.root, tree.size)
                and signature_problem(e, ring, name) is None
            ),
            None,
        )
        if signed is None:
            return refused(
                f"no acquisition of {source_id[:20]}… in run {run.slug()} signed by a trusted key holds its root",
                Reason.SNAPSHOT_HASH_MISMATCH,
            )
        signed_key = signed.sig.key_id if signed.sig is not None else ""
        return {
            **anchor,
            "detail": f"{signed.event_id} of run {run.slug()}, signed by key {signed_key[:16]}…",
            "event_id": signed.event_id,
            "signed_by": signed_key,
        }, []
    return refused(f"no run of {wiki} holds {source_id[:20]}…")
