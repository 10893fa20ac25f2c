"""Merkle roots and excerpt proofs (CONTRACT section 16), checked against an independent verifier
written here from the contract's definition alone: the recursive RFC 9162 MTH and PATH, and a
proof check that recomputes the root from each chunk's leaf and path by recursion on the tree
shape (not by the RFC's bit-twiddling loop the product uses)."""

from __future__ import annotations

import hashlib
import json

import pytest
from _scaling import grows_linearly
from hypothesis import example, given, settings
from hypothesis import strategies as st

from publisher.kernel.canonical import content_hash_for, source_id_for
from publisher.kernel.merkle import (
    EMPTY_ROOT,
    ExcerptProof,
    MerkleTree,
    build_proof,
    merkle_root,
    parse_proof,
    root_from_path,
    verify_proof,
)
from publisher.kernel.merkletree import CHUNK_SIZE, chunks_of, leaf_hash, root_of_leaves, text_digests
from publisher.kernel.reasons import Reason

SID = "src-" + "ab" * 32


# ------------------------------------------------------------------------------------------------
# The independent verifier: straight from the definition.


def _h(data: bytes) -> bytes:
    return hashlib.sha256(data).digest()


def _split(n: int) -> int:
    """RFC 9162: the largest power of two smaller than n."""
    k = 1
    while k * 2 < n:
        k *= 2
    return k


def _mth(leaves: list[bytes]) -> bytes:
    if not leaves:
        return _h(b"")
    if len(leaves) == 1:
        return _h(b"\x00" + leaves[0])
    k = _split(len(leaves))
    return _h(b"\x01" + _mth(leaves[:k]) + _mth(leaves[k:]))


def _path(m: int, leaves: list[bytes]) -> list[bytes]:
    n = len(leaves)
    if n == 1:
        return []
    k = _split(n)
    if m < k:
        return [*_path(m, leaves[:k]), _mth(leaves[k:])]
    return [*_path(m - k, leaves[k:]), _mth(leaves[:k])]


def _root_by_recursion(m: int, n: int, leaf_digest: bytes, path: list[bytes]) -> bytes | None:
    """The root a leaf and its path give, walking the tree shape top-down (path read from the end)."""
    if n == 1:
        return leaf_digest if not path else None
    if not path:
        return None
    k = _split(n)
    if m < k:
        sub = _root_by_recursion(m, k, leaf_digest, path[:-1])
        return None if sub is None else _h(b"\x01" + sub + path[-1])
    sub = _root_by_recursion(m - k, n - k, leaf_digest, path[:-1])
    return None if sub is None else _h(b"\x01" + path[-1] + sub)


def _chunks(text: str) -> list[bytes]:
    return [text[i : i + 1024].encode("utf-8") for i in range(0, len(text), 1024)]


def _independent_check(proof: dict, text: str) -> None:
    """Everything the contract says a proof is, checked without the product's code."""
    chunks = _chunks(text)
    root = "sha256:" + _mth(chunks).hex()
    assert proof["merkle_root"] == root
    assert proof["chunk_size"] == 1024
    assert proof["tree_size"] == len(chunks)
    first = proof["start"] // 1024
    last = (proof["end"] - 1) // 1024
    assert proof["first_chunk"] == first
    assert len(proof["chunks"]) == len(proof["paths"]) == last - first + 1
    for k, (chunk, path) in enumerate(zip(proof["chunks"], proof["paths"], strict=True)):
        index = first + k
        assert chunk.encode("utf-8") == chunks[index]
        digests = [bytes.fromhex(h) for h in path]
        assert digests == _path(index, chunks)
        assert _root_by_recursion(index, len(chunks), _h(b"\x00" + chunk.encode("utf-8")), digests).hex() == root[7:]
    joined = "".join(proof["chunks"])
    assert joined[proof["start"] - first * 1024 : proof["end"] - first * 1024] == text[proof["start"] : proof["end"]]


def _text(n: int) -> str:
    """``n`` code points, varied so that every chunk differs (with some non-ASCII)."""
    base = "".join(chr(0x61 + (i * 7) % 26) if i % 97 else "é" for i in range(997))
    return (base * (n // len(base) + 1))[:n]


# ------------------------------------------------------------------------------------------------


def test_empty_text_root_is_sha256_of_nothing() -> None:
    assert merkle_root("") == EMPTY_ROOT == "sha256:" + hashlib.sha256(b"").hexdigest()
    assert MerkleTree.of_text("").root == EMPTY_ROOT


@pytest.mark.parametrize("ascii_only", [False, True], ids=["unicode", "ascii"])
@pytest.mark.parametrize("leaves", [1, 2, 3, 4, 5, 6, 7, 8, 9, 13, 16, 17, 33, 100])
def test_root_and_every_path_match_the_definition(leaves: int, ascii_only: bool) -> None:
    text = _text(leaves * 1024 - 300 if leaves > 1 else 10)
    if ascii_only:  # an ASCII text takes the byte-slicing path of the leaf hashes
        text = text.replace("é", "e")
        assert text.isascii()
    chunks = _chunks(text)
    assert len(chunks) == leaves
    want = "sha256:" + _mth(chunks).hex()
    tree = MerkleTree.of_text(text)
    assert merkle_root(text) == tree.root == want
    for m in range(leaves):
        assert tree.path(m) == _path(m, chunks)
        leaf = _h(b"\x00" + chunks[m])
        assert root_from_path(m, leaves, leaf, tree.path(m)) == _mth(chunks)


@pytest.mark.parametrize(
    "leaves,span",
    [
        (1, (0, 10)),  # one leaf: the whole text
        (2, (1000, 1030)),  # across the only boundary
        (3, (2049, 2100)),  # inside the last, short chunk
        (5, (1024, 2048)),  # exactly one whole chunk
        (5, (100, 4400)),  # five chunks
        (100, (50_000, 50_001)),  # one code point deep in a large tree
        (100, (3 * 1024 - 5, 3 * 1024 + 5)),  # across a boundary in a large tree
    ],
)
def test_proofs_pass_the_independent_verifier(leaves: int, span: tuple[int, int]) -> None:
    text = _text(leaves * 1024 - 700 if leaves > 1 else 10)
    proof = build_proof(SID, text, *span).wire()
    _independent_check(proof, text)
    got, findings = verify_proof(ExcerptProof.model_validate(proof), root=merkle_root(text))
    assert findings == []
    assert got == text[span[0] : span[1]]


def test_span_at_the_very_end() -> None:
    text = _text(5 * 1024 + 17)
    n = len(text)
    for span in ((n - 1, n), (n - 17, n), (n - 1030, n), (0, n)):
        proof = build_proof(SID, text, *span).wire()
        _independent_check(proof, text)
        assert verify_proof(ExcerptProof.model_validate(proof))[1] == []


def test_non_bmp_text_counts_code_points_not_utf16_units() -> None:
    # Each emoji is one code point (four UTF-8 bytes, two UTF-16 units): chunk boundaries and
    # offsets are code points.
    text = ("a😀b𝔘" * 1000)[: 3 * 1024 + 5]
    chunks = _chunks(text)
    assert len(chunks) == 4
    for span in ((1020, 1030), (0, 1), (len(text) - 3, len(text))):
        proof = build_proof(SID, text, *span).wire()
        _independent_check(proof, text)
        got, findings = verify_proof(ExcerptProof.model_validate(proof))
        assert findings == [] and got == text[span[0] : span[1]]


def test_bad_spans_are_refused_when_building() -> None:
    for span in ((0, 0), (5, 3), (-1, 2), (0, 11)):
        with pytest.raises(ValueError):
            build_proof(SID, "0123456789", *span)


# ------------------------------------------------------------------------------------------------
# Refusals.


def _proof(text: str, start: int, end: int) -> dict:
    return build_proof(SID, text, start, end).wire()


def _checks(data: dict, **kw: str) -> list[tuple[Reason | None, str | None]]:
    got, findings = verify_proof(ExcerptProof.model_validate(data), **kw)
    assert (got is None) == bool(findings)
    return [(f.reason, f.field) for f in findings]


def test_one_changed_character_is_refused() -> None:
    text = _text(5000)
    data = _proof(text, 1500, 1510)
    chunk = data["chunks"][0]
    data["chunks"][0] = chunk[:480] + ("x" if chunk[480] != "x" else "y") + chunk[481:]
    assert _checks(data) == [(Reason.SNAPSHOT_HASH_MISMATCH, "path")]


def test_a_changed_character_in_the_excerpt_shown_is_refused() -> None:
    text = _text(5000)
    data = _proof(text, 1500, 1510)
    assert _checks(data, excerpt=text[1500:1509] + "#") == [(Reason.EXCERPT_MISMATCH, "excerpt")]
    assert _checks(data, excerpt=text[1500:1510]) == []


def test_swapped_path_elements_are_refused() -> None:
    data = _proof(_text(9 * 1024), 2000, 2010)
    path = data["paths"][0]
    assert len(path) >= 2
    path[0], path[1] = path[1], path[0]
    assert _checks(data) == [(Reason.SNAPSHOT_HASH_MISMATCH, "path")]


def test_wrong_tree_size_is_refused() -> None:
    data = _proof(_text(9 * 1024), 2000, 2010)
    for size in (8, 3, 5):
        data["tree_size"] = size
        assert _checks(data) == [(Reason.SNAPSHOT_HASH_MISMATCH, "path")], size
    data["tree_size"] = 1
    assert _checks(data) == [(Reason.SPAN_OUT_OF_RANGE, "range")]
    # A size whose shape agrees with this leaf's path is caught by the trusted size.
    for size in (10, 16):
        data["tree_size"] = size
        assert _checks(data) == []
        assert _checks(data, tree_size=9) == [(Reason.SNAPSHOT_HASH_MISMATCH, "tree_size")]


def test_a_smaller_claimed_size_cannot_move_an_excerpt_unnoticed() -> None:
    # Leaf 2 of a tree of 3 has the path [node(leaf 0, leaf 1)]; read as leaf 1 of a tree of 2 it
    # gives the same root, which would place its text 1,024 code points too early.
    text = _text(2 * 1024 + 100)
    honest = _proof(text, 2048, 2060)
    forged = dict(honest, start=1024, end=1036, first_chunk=1, tree_size=2)
    assert _checks(forged) == []
    assert _checks(forged, tree_size=3) == [(Reason.SNAPSHOT_HASH_MISMATCH, "tree_size")]
    assert _checks(honest, tree_size=3, root=merkle_root(text)) == []


def test_wrong_root_is_refused() -> None:
    text = _text(5000)
    data = _proof(text, 10, 20)
    other = merkle_root(text[:-1] + "!")
    assert _checks(data, root=other) == [(Reason.SNAPSHOT_HASH_MISMATCH, "root")]
    data["merkle_root"] = other
    assert _checks(data) == [(Reason.SNAPSHOT_HASH_MISMATCH, "path")]


def test_shape_lies_are_refused() -> None:
    text = _text(5000)
    base = _proof(text, 1000, 1100)
    cases = {
        "first_chunk": (lambda d: d.update(first_chunk=1), "chunks"),
        "extra chunk": (lambda d: (d["chunks"].append(text[2048:3072]), d["paths"].append([])), "chunks"),
        "short middle chunk": (lambda d: d["chunks"].__setitem__(0, d["chunks"][0][:-1]), "chunks"),
        "chunk_size": (lambda d: d.update(chunk_size=512), "chunk_size"),
        "empty span": (lambda d: d.update(end=1000), "range"),
    }
    for name, (mutate, check) in cases.items():
        data = json.loads(json.dumps(base))
        mutate(data)
        got = _checks(data)
        assert got and got[0][1] == check, name


def test_a_proof_past_the_last_code_point_is_refused() -> None:
    text = _text(2100)
    data = _proof(text, 2050, 2100)
    data["end"] = 2101
    assert _checks(data) == [(Reason.SPAN_OUT_OF_RANGE, "range")]


def _tree_and_proof(text: str) -> None:
    root = merkle_root(text)
    tree = MerkleTree.of_text(text)
    proof = build_proof(SID, text, len(text) - 3, len(text), tree)
    assert tree.root == root == proof.merkle_root
    assert verify_proof(proof, root=root) == ("end", [])


def test_megabytes_in_linear_time() -> None:
    small = "x" * (4 * 1024 * 1024 - 3) + "end"
    double = "x" * (8 * 1024 * 1024 - 3) + "end"
    grows_linearly(lambda: _tree_and_proof(small), lambda: _tree_and_proof(double))


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("merkle_root", "sha256:" + "AB" * 32),
        ("merkle_root", "sha256:" + "ab" * 32 + "\n"),
        ("merkle_root", "ab" * 32),
        ("source_id", "src-" + "ab" * 31),
        ("start", -1),
        ("tree_size", True),
        ("paths", [["sha256:" + "ab" * 32]]),
    ],
)
def test_a_proof_with_a_malformed_digest_id_or_offset_is_a_schema_finding(field: str, value: object) -> None:
    """Digests, the source id and offsets of a proof are checked by the records' own field types."""
    wire = build_proof(SID, "x" * 3000, 5, 2100).wire()
    assert parse_proof(wire) == (ExcerptProof.model_validate(wire), [])
    proof, findings = parse_proof({**wire, field: value}, file="p.json")
    assert proof is None
    assert [(f.reason, f.file, f.field) for f in findings] == [(Reason.SCHEMA_ERROR, "p.json", "schema")]


@settings(max_examples=200)
@given(
    url=st.text(max_size=20),
    text=st.one_of(
        st.text(max_size=3000),
        st.text(st.characters(max_codepoint=127), max_size=3000),
        st.integers(0, 4).map(lambda k: "é" * (CHUNK_SIZE * k) + "a" * k),
    ),
)
@example(url="u", text="")
@example(url="u", text="𝔄" * (CHUNK_SIZE + 1))
def test_one_pass_digests_are_the_separate_digests(url: str, text: str) -> None:
    """The store's one-pass digests (one encoding feeding id, body and leaves) equal each digest
    computed on its own, ASCII or not, at and across chunk boundaries."""
    source_id, content_hash, leaves = text_digests(url, text, leaves=True)
    assert source_id == source_id_for(url, text)
    assert content_hash == content_hash_for(text)
    assert leaves == [leaf_hash(chunk) for chunk in chunks_of(text)]
    assert root_of_leaves(leaves) == merkle_root(text) == MerkleTree.of_text(text).root
    assert text_digests(url, text, leaves=False) == (source_id, content_hash, None)


def test_a_text_that_is_not_unicode_is_refused_by_the_one_pass_digests() -> None:
    with pytest.raises(UnicodeEncodeError):
        text_digests("u", "é" * 2000 + "\ud800", leaves=True)
