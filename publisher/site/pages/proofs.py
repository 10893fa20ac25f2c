"""Excerpt proofs on the site (CONTRACT section 16): a quotation verified without the whole source.

For every cited span of every source the build writes ``sources/<source_id>/proofs/<start>-<end>.js``,
one small script that hands the in-browser verifier (``EvidenceVerify.proof``) one JSON text:

* ``proof``: the excerpt proof of the span (:class:`publisher.kernel.merkle.ExcerptProof`);
* ``record``: what ties the root to the snapshot record and what a reader is shown: its
  ``source_id``, ``url``, ``title``, ``content_hash``, ``record_hash``, ``merkle_root`` and
  ``merkle_size`` (the latter two derived from the text for a record written before roots);
* ``anchors``: the acquisition events of this snapshot that carry its ``merkle_root`` and
  ``merkle_size`` under a signature by a key the wiki trusts, each with that public key (raw,
  base64). The browser checks the signature itself (WebCrypto Ed25519).

A script, not a JSON file, so that the same file serves a page opened from disk (which cannot
fetch) and a served one; its size does not grow with the source (a span's covering chunks and
its paths), so verifying one excerpt transfers a few kilobytes whatever the source's size.

In ``proofs`` mode (``extra: evidence: source_text: proofs``, or ``source_text_for``) the site also
publishes ``sources/<source_id>/record.json`` without ``text``: the text never leaves the build
but for the cited windows and the chunks the proofs hold. Every file is listed and sealed in the
manifest (``proofs`` entries; a light record's entry says ``"form": "without_text"``), and
``publisher check-site`` rebuilds each from the stored snapshots (:func:`check_proofs`).
"""

from __future__ import annotations

import base64
import json
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

from ...kernel import _fs
from ...kernel.canonical import canonical_bytes, loads_record, sha256_hex
from ...kernel.errors import IntegrityError
from ...kernel.eventviews import EventView
from ...kernel.findings import Finding
from ...kernel.merkle import MerkleTree, build_proof
from ...kernel.reasons import Reason
from ...kernel.store import verify_record
from ...kernel.trust import KeyRing, Role, event_signature_problem
from ...kernel.vocab import ACQUISITIONS
from .offline import _js_string
from .staged import write_staged

__all__ = [
    "LIGHT",
    "PROOF_FILE_LIMIT",
    "ProofSource",
    "WrittenProofs",
    "anchors_for",
    "check_proofs",
    "light_record",
    "proof_script",
    "proof_uri",
    "write_proofs",
]

PROOF_FILE_LIMIT = 16 << 20
"""The largest proof file ``check-site`` reads (one the build writes stays under 64 kB); a larger
one is refused from its size, never read whole."""

LIGHT = "without_text"
"""The ``form`` of a manifest record entry published without its text."""

_CALL = "EvidenceVerify.proof("
_URI = re.compile(r"sources/(src-[0-9a-f]{64})/proofs/(\d+)-(\d+)\.js")


def proof_uri(source_id: str, start: int, end: int) -> str:
    """Where the site publishes the proof of one cited span."""
    return f"sources/{source_id}/proofs/{start}-{end}.js"


def light_record(stored: bytes) -> bytes:
    """The published form of a record without ``text``: canonical JSON of every other field."""
    raw, _ = loads_record(stored)
    return canonical_bytes({k: v for k, v in raw.items() if k != "text"}) + b"\n"


def anchors_for(events: Iterable[EventView], ring: KeyRing, root: str, size: int) -> list[dict[str, Any]]:
    """The signed acquisition events that vouch for ``root`` and ``size``, each with its key (raw,
    base64), in log order; an event whose signature does not verify by a trusted key is left out."""
    out: list[dict[str, Any]] = []
    for event in events:
        if event.type not in ACQUISITIONS or event.sig is None or event.sig.key_id not in ring.keys:
            continue
        if event.merkle_root != root or event.merkle_size != size:
            continue
        if event_signature_problem(event, ring, event.sig.run, Role.ACQUIRE) is not None:
            continue
        raw = ring.keys[event.sig.key_id].public_bytes(Encoding.Raw, PublicFormat.Raw)
        out.append({"event": event.wire(), "key": base64.b64encode(raw).decode("ascii")})
    return out


def proof_script(bundle: dict[str, Any]) -> bytes:
    """The script form of one proof bundle: its canonical JSON as one string literal."""
    return f"{_CALL}{_js_string(canonical_bytes(bundle).decode('utf-8'))});\n".encode()


def _bundle_of(script: bytes) -> Any:
    """The JSON value a proof script hands over (ValueError when it is not one of ours)."""
    text = script.decode("utf-8")
    if not text.startswith(_CALL) or not text.endswith(");\n"):
        raise ValueError("not a proof script")
    literal = json.loads(text[len(_CALL) : -3])
    if not isinstance(literal, str):
        raise ValueError("not a proof script")
    return json.loads(literal)


_SUMMARY = ("source_id", "url", "title", "content_hash", "record_hash", "merkle_root", "merkle_size")
"""The record's fields a proof carries: what ties the root to the record (``record_hash``, which a
signed event names) and what a reader is shown. The whole record without text is ``record.json``;
its sections and pages tables stay out of the proofs, so a proof stays small however long they are."""

MAX_ANCHORS = 4
"""Signed events a proof carries at most (one suffices; a source fetched in many runs has many)."""


@dataclass
class ProofSource:
    """What the build needs to publish the proofs of one source."""

    source_id: str
    spans: list[tuple[int, int]]
    light: bool
    events: list[EventView] = field(default_factory=list)
    stored: Path | None = None
    """The wiki's snapshot file to derive the proofs from while the site is being built (its
    copy is not in the site yet); None: the site's ``record.json``."""


def _bundles(stored: bytes, source: ProofSource, ring: KeyRing) -> tuple[dict[str, dict[str, Any]], bytes]:
    """Every proof bundle of ``source`` by site path, and the record without text, from the
    verified stored record."""
    raw, canonical = loads_record(stored)
    trees: list[MerkleTree] = []

    def tree_of(text: str) -> tuple[str, int]:  # the tree verify_record recomputes the root from
        trees.append(MerkleTree.of_text(text))
        return trees[-1].root, trees[-1].size

    snap = verify_record(raw, source.source_id, canonical_body=stored if canonical else None, merkle_of=tree_of)
    # verify_record checked a stored merkle_root against this tree; an older record's is derived here.
    tree = trees[-1] if trees else MerkleTree.of_text(snap.text)
    record = {k: v for k, v in raw.items() if k != "text"}
    summary = {k: record[k] for k in _SUMMARY if k in record}
    summary.setdefault("merkle_root", tree.root)
    summary.setdefault("merkle_size", tree.size)
    anchors = anchors_for(source.events, ring, tree.root, tree.size)[:MAX_ANCHORS]
    out: dict[str, dict[str, Any]] = {}
    for start, end in sorted(set(source.spans)):
        proof = build_proof(snap.source_id, snap.text, start, end, tree)
        out[proof_uri(snap.source_id, start, end)] = {"anchors": anchors, "proof": proof.wire(), "record": summary}
    return out, canonical_bytes(record) + b"\n"


@dataclass(frozen=True)
class WrittenProofs:
    """What :func:`write_proofs` wrote for one source, and what its caller still has to do."""

    entries: list[dict[str, Any]]
    """The manifest's ``proofs`` entries (each file's path and sha256)."""
    record: str
    """The sha256 of the record bytes the proofs were derived from: the published
    ``record.json`` must be exactly these bytes (:func:`publisher.site.lifecycle.finish.publish_proofs`)."""
    light: bytes | None
    """In proofs mode, the record without text that replaces the published ``record.json``."""
    signed: bool
    """Whether a signed event by a trusted key anchors the source's root."""


def write_proofs(staging: Path, source: ProofSource, ring: KeyRing) -> WrittenProofs:
    """Write the proofs of one source into a site being built; the caller publishes the record
    without text (:attr:`WrittenProofs.light`) in proofs mode.

    The proofs are derived from the record file :attr:`ProofSource.stored` (the wiki's snapshot,
    read and verified here), by default the site's published ``record.json``. Derived from the
    wiki's snapshot while the pages are built, they hold for the published record only where its
    bytes are the same (:attr:`WrittenProofs.record`), which the caller checks.
    """
    path = source.stored or staging / "sources" / source.source_id / "record.json"
    data = _fs.read_regular(path, follow_symlinks=False)
    bundles, light = _bundles(data, source, ring)
    entries = []
    for uri, bundle in bundles.items():
        script = proof_script(bundle)
        write_staged(staging / uri, script)
        proof = bundle["proof"]
        entries.append(
            {
                "source_id": source.source_id,
                "start": proof["start"],
                "end": proof["end"],
                "path": uri,
                "sha256": sha256_hex(script),
            }
        )
    signed = any(bundle["anchors"] for bundle in bundles.values())
    return WrittenProofs(entries, sha256_hex(data), light if source.light else None, signed)


def check_proofs(
    site: Path, manifest: dict[str, Any], stored: dict[str, bytes], ring: KeyRing, events: dict[str, list[EventView]]
) -> list[Finding]:
    """``check-site`` over the proof files: each one the manifest lists, and each found in the site,
    must be exactly what the build derives from the stored snapshot (``stored``: the verified
    record file by source id) and its signed events; a listed one missing, or one the manifest
    does not list, is a finding too (SNAPSHOT_HASH_MISMATCH)."""
    findings: list[Finding] = []
    entries = manifest.get("proofs", [])
    listed = {str(e.get("path")): e for e in (entries if isinstance(entries, list) else []) if isinstance(e, dict)}
    folder = site / "sources"
    present = {p.relative_to(site).as_posix() for p in folder.glob("*/proofs/*")} if folder.is_dir() else set()
    by_source: dict[str, list[tuple[int, int, str]]] = {}
    for rel in sorted(set(listed) | present):
        match = _URI.fullmatch(rel)
        if match is None:
            findings.append(Finding(Reason.SNAPSHOT_HASH_MISMATCH, rel, "not a proof file the build writes"))
            continue
        by_source.setdefault(match[1], []).append((int(match[2]), int(match[3]), str(rel)))
    for sid, items in sorted(by_source.items()):

        def fail(rel: str, detail: str, sid: str = sid) -> None:
            findings.append(Finding(Reason.SNAPSHOT_HASH_MISMATCH, rel, detail, source_id=sid))

        if sid not in stored:
            for _, _, rel in items:
                fail(rel, "a proof of a snapshot the wiki does not hold")
            continue
        source = ProofSource(sid, [(s, e) for s, e, _ in items], False, events.get(sid, []))
        try:
            bundles, _ = _bundles(stored[sid], source, ring)
        except (IntegrityError, ValueError) as exc:
            for _, _, rel in items:
                fail(rel, f"cannot be derived from the snapshot: {exc}")
            continue
        for _, _, rel in items:
            if rel not in present:
                fail(rel, "listed in the manifest, missing from the site")
                continue
            if rel not in listed:
                fail(rel, "a proof file the manifest does not list")
            try:
                data = _fs.read_regular(site / rel, follow_symlinks=False, limit=PROOF_FILE_LIMIT)
            except OSError as exc:
                fail(rel, f"cannot read the proof ({exc.strerror or exc})")
                continue
            if data != proof_script(bundles[rel]):
                fail(rel, "differs from the proof derived from the snapshot")
    return findings
