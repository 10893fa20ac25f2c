"""The Merkle tree over a snapshot's text (CONTRACT section 16), without the validation library.

A text is cut into consecutive chunks of :data:`CHUNK_SIZE` code points (the last may be
shorter). Leaf hash ``SHA-256(0x00 || UTF-8(chunk))``, node hash ``SHA-256(0x01 || left ||
right)``, tree shape of RFC 9162 section 2.1.1 (the left subtree holds the largest power of two
leaves smaller than the total); the root of an empty text is ``SHA-256("")``. Roots are written
``"sha256:" + hex``.

The tree is built bottom-up, a level at a time, promoting the last node of an odd level
unchanged; this gives exactly the RFC 9162 shape in linear time and memory (32 bytes per leaf
and level), so a 50 MB text costs one pass of hashing. The store recomputes a snapshot's root
on every read with this module alone; the tree kept whole (:class:`~publisher.kernel.merkle.MerkleTree`)
and the excerpt proofs over it live in :mod:`.merkle`.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator, Sequence

__all__ = [
    "CHUNK_SIZE",
    "EMPTY_ROOT",
    "chunks_of",
    "leaf_hash",
    "leaf_hashes",
    "merkle_root",
    "node_hash",
    "root_from_path",
    "root_of_leaves",
    "text_digests",
    "TextDigester",
]

CHUNK_SIZE = 1024
"""Code points per leaf."""

EMPTY_ROOT = "sha256:" + hashlib.sha256(b"").hexdigest()
"""The root of the empty text."""


_LEAF_PREFIX = hashlib.sha256(b"\x00")
"""A hash that has consumed the leaf prefix: each leaf copies it (no concatenated copy of the chunk)."""


def leaf_hash(chunk: str) -> bytes:
    """``SHA-256(0x00 || UTF-8(chunk))``."""
    h = _LEAF_PREFIX.copy()
    h.update(chunk.encode("utf-8"))
    return h.digest()


def leaf_hashes(text: str) -> list[bytes]:
    """Every leaf hash of ``text``, in order (:func:`leaf_hash` of each chunk, in one tight loop:
    the Merkle root is recomputed for every snapshot the wiki check reads)."""
    out: list[bytes] = []
    append, fresh = out.append, _LEAF_PREFIX.copy
    if text.isascii():  # one encoding, and every chunk a byte slice of it
        data = memoryview(text.encode("ascii"))
        for i in range(0, len(data), CHUNK_SIZE):
            h = fresh()
            h.update(data[i : i + CHUNK_SIZE])
            append(h.digest())
        return out
    for i in range(0, len(text), CHUNK_SIZE):
        h = fresh()
        h.update(text[i : i + CHUNK_SIZE].encode("utf-8"))
        append(h.digest())
    return out


def node_hash(left: bytes, right: bytes) -> bytes:
    """``SHA-256(0x01 || left || right)``."""
    return hashlib.sha256(b"\x01" + left + right).digest()


def chunks_of(text: str) -> Iterator[str]:
    """The leaves' texts, in order: consecutive slices of :data:`CHUNK_SIZE` code points."""
    for i in range(0, len(text), CHUNK_SIZE):
        yield text[i : i + CHUNK_SIZE]


def merkle_root(text: str) -> str:
    """The Merkle root of ``text``, ``"sha256:" + hex`` (linear time; 32 bytes per leaf)."""
    return root_of_leaves(leaf_hashes(text))


def root_of_leaves(leaves: list[bytes]) -> str:
    """The root over precomputed leaf hashes, ``"sha256:" + hex`` (:data:`EMPTY_ROOT` for none)."""
    level = leaves
    if not level:
        return EMPTY_ROOT
    sha256 = hashlib.sha256
    while len(level) > 1:
        pairs = [sha256(b"\x01" + level[i] + level[i + 1]).digest() for i in range(0, len(level) - 1, 2)]
        if len(level) % 2:
            pairs.append(level[-1])
        level = pairs
    return "sha256:" + level[0].hex()


def text_digests(url: str, text: str, *, leaves: bool) -> tuple[str, str, list[bytes] | None]:
    """A snapshot's ``source_id`` (``"src-" + SHA-256(url NUL text)``), its ``content_hash``
    (``"sha256:" + SHA-256(text)``) and, with ``leaves``, its Merkle leaf hashes, from one
    encoding of the text: a text that is not ASCII is encoded a chunk at a time, and each chunk
    feeds all three (encoding costs more than hashing, so the store's every read encodes once, not
    twice). Raises ``UnicodeEncodeError`` for a text or URL that is not valid Unicode."""
    id_hash = hashlib.sha256(url.encode("utf-8"))
    id_hash.update(b"\x00")
    body_hash = hashlib.sha256()
    out: list[bytes] | None = None
    if text.isascii() or not leaves:
        data = text.encode("utf-8")
        id_hash.update(data)
        body_hash.update(data)
        if leaves:
            out = []
            append, fresh, view = out.append, _LEAF_PREFIX.copy, memoryview(data)
            for i in range(0, len(view), CHUNK_SIZE):
                h = fresh()
                h.update(view[i : i + CHUNK_SIZE])
                append(h.digest())
        del data
    else:
        out = []
        append, fresh = out.append, _LEAF_PREFIX.copy
        id_update, body_update = id_hash.update, body_hash.update
        for i in range(0, len(text), CHUNK_SIZE):
            chunk = text[i : i + CHUNK_SIZE].encode("utf-8")
            id_update(chunk)
            body_update(chunk)
            h = fresh()
            h.update(chunk)
            append(h.digest())
    return "src-" + id_hash.hexdigest(), "sha256:" + body_hash.hexdigest(), out


class TextDigester:
    """:func:`text_digests` of a text fed a piece at a time, with the Merkle root and size in place
    of the leaves: the text is never held whole, and the tree is kept as its perfect subtrees (a
    hash per level), so a snapshot of hundreds of megabytes is checked as it is decoded."""

    __slots__ = ("_body", "_id", "_rest", "_size", "_stack")

    def __init__(self, url: str) -> None:
        """Start with the URL (``UnicodeEncodeError`` for one that is not valid Unicode)."""
        self._id = hashlib.sha256(url.encode("utf-8"))
        self._id.update(b"\x00")
        self._body = hashlib.sha256()
        self._stack: list[tuple[int, bytes]] = []
        """The roots of the perfect subtrees over the leaves so far, each with its height, largest first."""
        self._size = 0
        self._rest = ""
        """The code points after the last whole leaf."""

    def update(self, piece: str) -> None:
        """Feed the next piece of the text (``UnicodeEncodeError`` for a lone surrogate)."""
        data = piece.encode("utf-8")
        self._id.update(data)
        self._body.update(data)
        if self._rest:
            piece = self._rest + piece
        whole = len(piece) - len(piece) % CHUNK_SIZE
        if whole:
            leaves = leaf_hashes(piece[:whole] if whole < len(piece) else piece)
            stack, sha256 = self._stack, hashlib.sha256
            for node in leaves:  # each leaf joins the subtrees of its height, as far as they go
                height = 0
                while stack and stack[-1][0] == height:
                    node = sha256(b"\x01" + stack.pop()[1] + node).digest()
                    height += 1
                stack.append((height, node))
            self._size += len(leaves)
        self._rest = piece[whole:]

    def digests(self) -> tuple[str, str, str, int]:
        """``(source_id, content_hash, merkle_root, merkle_size)`` of everything fed (the root and
        size as :func:`merkle_root` and the leaf count give them)."""
        stack, size = list(self._stack), self._size
        if self._rest:
            node, height = leaf_hash(self._rest), 0
            while stack and stack[-1][0] == height:
                node, height = node_hash(stack.pop()[1], node), height + 1
            stack.append((height, node))
            size += 1
        if not stack:
            return "src-" + self._id.hexdigest(), "sha256:" + self._body.hexdigest(), EMPTY_ROOT, 0
        root = stack[-1][1]
        for _, left in reversed(stack[:-1]):
            root = node_hash(left, root)
        return "src-" + self._id.hexdigest(), "sha256:" + self._body.hexdigest(), "sha256:" + root.hex(), size


def root_from_path(index: int, size: int, leaf: bytes, path: Sequence[bytes]) -> bytes | None:
    """The root that ``path`` proves leaf ``index`` of a tree of ``size`` leaves under, or None.

    RFC 9162 section 2.1.3.2, step by step; None when the path cannot belong to such a tree
    (index out of range, too many or too few elements).
    """
    if not 0 <= index < size:
        return None
    fn, sn, r = index, size - 1, leaf
    for p in path:
        if sn == 0:
            return None
        if fn & 1 or fn == sn:
            r = node_hash(p, r)
            if not fn & 1:
                while not fn & 1 and fn != 0:
                    fn >>= 1
                    sn >>= 1
        else:
            r = node_hash(r, p)
        fn >>= 1
        sn >>= 1
    return r if sn == 0 else None
