"""Excerpt proofs over a snapshot's Merkle tree (CONTRACT section 16).

The tree's hashing (chunks, leaf and node hashes, the root) is :mod:`.merkletree`, re-exported
here; a :class:`MerkleTree` keeps every level of it, which a proof's paths are read from. An
:class:`ExcerptProof` carries the chunks that cover a span and one RFC 9162 inclusion path per
chunk, so anyone holding only the root can check that code points ``[start, end)`` of the text
are the excerpt (:func:`verify_proof`), without the rest of the text.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ConfigDict, StrictInt, StrictStr, ValidationError

from .findings import Finding
from .merkletree import (
    CHUNK_SIZE,
    EMPTY_ROOT,
    chunks_of,
    leaf_hash,
    leaf_hashes,
    merkle_root,
    node_hash,
    root_from_path,
)
from .models import HexDigest, Offset, PrefixedDigest, SourceId, first_error
from .reasons import Reason

__all__ = [
    "CHUNK_SIZE",
    "EMPTY_ROOT",
    "ExcerptProof",
    "MerkleTree",
    "build_proof",
    "chunks_of",
    "leaf_hash",
    "leaf_hashes",
    "merkle_root",
    "node_hash",
    "parse_proof",
    "root_from_path",
    "verify_proof",
]


@dataclass(frozen=True)
class MerkleTree:
    """Every level of the tree over a text: ``levels[0]`` the leaf hashes, the last the root."""

    levels: tuple[tuple[bytes, ...], ...]

    @classmethod
    def of_text(cls, text: str) -> MerkleTree:
        """The tree over ``text`` (a chunk at a time; nothing is copied but the chunk hashed)."""
        return cls.of_leaves(leaf_hashes(text))

    @classmethod
    def of_leaves(cls, leaves: Sequence[bytes]) -> MerkleTree:
        """The tree over precomputed leaf hashes."""
        level = tuple(leaves)
        levels = [level]
        while len(level) > 1:
            pairs = [node_hash(level[i], level[i + 1]) for i in range(0, len(level) - 1, 2)]
            if len(level) % 2:
                pairs.append(level[-1])
            level = tuple(pairs)
            levels.append(level)
        return cls(tuple(levels))

    @property
    def size(self) -> int:
        """The number of leaves."""
        return len(self.levels[0])

    @property
    def root(self) -> str:
        """``"sha256:" + hex`` of the root (:data:`EMPTY_ROOT` for no leaves)."""
        if not self.levels[0]:
            return EMPTY_ROOT
        return "sha256:" + self.levels[-1][0].hex()

    def path(self, index: int) -> list[bytes]:
        """The RFC 9162 inclusion path of leaf ``index``, from the leaf's sibling upward."""
        if not 0 <= index < self.size:
            raise IndexError(f"leaf {index} outside a tree of {self.size}")
        out: list[bytes] = []
        for level in self.levels[:-1]:
            sibling = index ^ 1
            if sibling < len(level):
                out.append(level[sibling])
            index >>= 1
        return out


class ExcerptProof(BaseModel):
    """The proof of one span (CONTRACT section 16), as ``publisher proof`` prints it."""

    model_config = ConfigDict(frozen=True, extra="forbid", defer_build=True)
    source_id: SourceId
    start: Offset
    end: Offset
    chunk_size: StrictInt
    tree_size: Offset
    first_chunk: Offset
    chunks: tuple[StrictStr, ...]
    paths: tuple[tuple[HexDigest, ...], ...]
    merkle_root: PrefixedDigest

    def wire(self) -> dict[str, Any]:
        """Plain JSON values, in the contract's field order."""
        return self.model_dump(mode="json")


def build_proof(source_id: str, text: str, start: int, end: int, tree: MerkleTree | None = None) -> ExcerptProof:
    """The proof that code points ``[start, end)`` of ``text`` lie under its root.

    ``tree`` (the tree of ``text``) may be passed to prove many spans of one text. The span must
    be a non-empty range inside the text (:class:`ValueError` otherwise).
    """
    if not 0 <= start < end <= len(text):
        raise ValueError(f"span [{start}, {end}) is not a non-empty range of a text of {len(text)} code points")
    tree = tree or MerkleTree.of_text(text)
    first, last = start // CHUNK_SIZE, (end - 1) // CHUNK_SIZE
    indexes = range(first, last + 1)
    return ExcerptProof(
        source_id=source_id,
        start=start,
        end=end,
        chunk_size=CHUNK_SIZE,
        tree_size=tree.size,
        first_chunk=first,
        chunks=tuple(text[i * CHUNK_SIZE : (i + 1) * CHUNK_SIZE] for i in indexes),
        paths=tuple(tuple(h.hex() for h in tree.path(i)) for i in indexes),
        merkle_root=tree.root,
    )


def parse_proof(data: Any, file: str = "proof") -> tuple[ExcerptProof | None, list[Finding]]:
    """A proof from parsed JSON, or the ``SCHEMA_ERROR`` finding that says why not."""
    try:
        return ExcerptProof.model_validate(data), []
    except ValidationError as exc:
        return None, [Finding(Reason.SCHEMA_ERROR, file, f"not an excerpt proof: {first_error(exc)}", field="schema")]


def verify_proof(
    proof: ExcerptProof,
    *,
    root: str | None = None,
    tree_size: int | None = None,
    excerpt: str | None = None,
    file: str = "proof",
) -> tuple[str | None, list[Finding]]:
    """Check ``proof`` with nothing but itself (and, when given, the root and tree size to trust
    and the excerpt shown); returns the proven excerpt and every finding (empty when it holds).

    A root alone does not fix the tree's size (as in RFC 9162, where a signed tree head names
    both): a leaf's path can verify under a smaller claimed size at a smaller index, which would
    move an excerpt to another offset. The position of an excerpt is therefore only proven
    against a trusted ``tree_size`` as well (the snapshot's ``merkle_size``).

    Checks, each named in the finding's ``check``:

    * ``chunk_size``, ``chunks``, ``range`` — the proof's shape: 1,024-code-point chunks, one
      path per chunk, the covering chunks of ``[start, end)`` exactly, within ``tree_size``
      (``SCHEMA_ERROR`` / ``SPAN_OUT_OF_RANGE``);
    * ``path`` — each chunk's leaf hash and path recompute to ``merkle_root`` by RFC 9162
      section 2.1.3.2 (``SNAPSHOT_HASH_MISMATCH``);
    * ``root``, ``tree_size`` — ``merkle_root`` and ``tree_size`` equal the ones given to trust
      (``SNAPSHOT_HASH_MISMATCH``);
    * ``excerpt`` — the proven code points equal the excerpt given (``EXCERPT_MISMATCH``).
    """
    found: list[Finding] = []

    def fail(reason: Reason, part: str, detail: str) -> None:
        found.append(
            Finding(reason, file, detail, source_id=proof.source_id, start=proof.start, end=proof.end, field=part)
        )

    if proof.chunk_size != CHUNK_SIZE:
        fail(Reason.SCHEMA_ERROR, "chunk_size", f"chunk_size is {proof.chunk_size}, not {CHUNK_SIZE}")
        return None, found
    n = len(proof.chunks)
    first, last = proof.start // CHUNK_SIZE, (proof.end - 1) // CHUNK_SIZE
    if not proof.start < proof.end:
        fail(Reason.SPAN_OUT_OF_RANGE, "range", f"[{proof.start}, {proof.end}) is empty")
    elif proof.first_chunk != first or n != last - first + 1:
        fail(
            Reason.SCHEMA_ERROR,
            "chunks",
            f"[{proof.start}, {proof.end}) is covered by chunks {first}..{last}, "
            f"the proof holds {n} from {proof.first_chunk}",
        )
    elif len(proof.paths) != n:
        fail(Reason.SCHEMA_ERROR, "chunks", f"{n} chunks but {len(proof.paths)} paths")
    elif last >= proof.tree_size:
        fail(Reason.SPAN_OUT_OF_RANGE, "range", f"chunk {last} lies outside a tree of {proof.tree_size}")
    if found:
        return None, found
    for k, chunk in enumerate(proof.chunks):
        index = first + k
        final = index == proof.tree_size - 1
        if len(chunk) != CHUNK_SIZE and not (final and 0 < len(chunk) < CHUNK_SIZE):
            fail(Reason.SCHEMA_ERROR, "chunks", f"chunk {index} holds {len(chunk)} code points")
    joined = "".join(proof.chunks)
    offset = first * CHUNK_SIZE
    if not found and proof.end - offset > len(joined):
        fail(Reason.SPAN_OUT_OF_RANGE, "range", f"end {proof.end} lies past the text's last code point")
    if found:
        return None, found
    want = bytes.fromhex(proof.merkle_root[len("sha256:") :])
    for k, (chunk, path) in enumerate(zip(proof.chunks, proof.paths, strict=True)):
        index = first + k
        try:
            got = root_from_path(index, proof.tree_size, leaf_hash(chunk), [bytes.fromhex(h) for h in path])
        except UnicodeEncodeError:
            got = None
        if got != want:
            shown = "no root" if got is None else "sha256:" + got.hex()
            detail = f"chunk {index} and its path give {shown}, not {proof.merkle_root}"
            fail(Reason.SNAPSHOT_HASH_MISMATCH, "path", detail)
    if root is not None and root != proof.merkle_root:
        fail(Reason.SNAPSHOT_HASH_MISMATCH, "root", f"the proof's root {proof.merkle_root} is not the trusted {root}")
    if tree_size is not None and tree_size != proof.tree_size:
        detail = f"the proof's tree has {proof.tree_size} leaves, not {tree_size}"
        fail(Reason.SNAPSHOT_HASH_MISMATCH, "tree_size", detail)
    proven = joined[proof.start - offset : proof.end - offset]
    if excerpt is not None and excerpt != proven:
        fail(Reason.EXCERPT_MISMATCH, "excerpt", "the excerpt shown is not the proven code points")
    return (proven if not found else None), found
