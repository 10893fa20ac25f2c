"""Content-addressed, write-once snapshot store that verifies every record on every read.

A snapshot lives at ``<run>/sources/src-<64hex>.json``. Its name is its identity:
``source_id = "src-" + sha256(url NUL text)``. Reads re-derive the identity, the body hash and
(when present) the record seal from the bytes and refuse the record on any difference
(``SNAPSHOT_HASH_MISMATCH``); writes publish under an exclusive name and never replace one.
The commands that search or slice a text read a large file with :func:`read_searchable`, which checks the
same digests a piece at a time and never holds the text as one string.
"""

from __future__ import annotations

import errno
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from . import _fs, segmented
from .canonical import (
    SOURCE_ID_RE,
    StrictJSONError,
    canonical_bytes,
    content_hash_for,
    loads_canonical_floats_unchecked,
    loads_record,
    record_hash_for,
    seal_of_canonical,
    source_id_for,
)
from .errors import ConflictError, IntegrityError, ResourceError, UsageError
from .merkletree import CHUNK_SIZE, TextDigester, merkle_root, root_of_leaves, text_digests
from .reasons import Reason
from .segmented import SegmentedText, decode_piece, piece_ends
from .shapes import SnapshotView, snapshot_shape
from .vocab import surface_manifest_hash

if TYPE_CHECKING:
    from .models import Snapshot

__all__ = [
    "MAX_SNAPSHOT_BYTES",
    "SnapshotStore",
    "build_record",
    "verify_record",
    "snapshot_path",
    "read_snapshot",
    "read_view",
    "read_searchable",
    "SEGMENT_ABOVE",
]

MAX_SNAPSHOT_BYTES = 256 * 1024 * 1024
"""A snapshot file larger than this is treated as corrupt rather than read into memory."""


def _checked_id(source_id: str) -> str:
    if not isinstance(source_id, str) or not SOURCE_ID_RE.fullmatch(source_id):
        raise IntegrityError(
            f"refused snapshot name {str(source_id)[:80]!r}: not 'src-' + 64 lowercase hex",
            reason=Reason.SNAPSHOT_HASH_MISMATCH,
            source_id=str(source_id)[:80],
        )
    return source_id


def snapshot_path(sources_dir: Path, source_id: str) -> Path:
    """The file for ``source_id``; the id's syntax is checked before any file system access."""
    return Path(sources_dir) / f"{_checked_id(source_id)}.json"


def read_snapshot(sources_dir: Path | str, source_id: str, max_bytes: int = MAX_SNAPSHOT_BYTES) -> Snapshot:
    """Read and verify one snapshot of ``sources_dir``; raises IntegrityError with the reason code.

    The id's syntax is checked before any file access; the file is opened without following
    links, must be a regular file of at most ``max_bytes``, and every digest is recomputed.
    """
    from pydantic import ValidationError

    from .models import Snapshot

    data = _read_bytes(_file_of(sources_dir, source_id), source_id, max_bytes)
    raw = loads_canonical_floats_unchecked(data)
    if isinstance(raw, dict):
        # The usual file, written by this product: its model proves it holds no float, so it was
        # canonical without a walk over the value. Anything else is judged below, from the start.
        try:
            snap = Snapshot.model_validate(raw)
        except ValidationError:
            pass
        else:
            return verify_record(raw, source_id, canonical_body=data, validated=snap)
    raw, canonical = _strict(data, source_id)
    return verify_record(raw, source_id, canonical_body=data if canonical else None)


def read_view(sources_dir: Path | str, source_id: str, max_bytes: int = MAX_SNAPSHOT_BYTES) -> SnapshotView:
    """:func:`read_snapshot` for a caller that needs the text, its identity and its maps, not the
    model: the same file checks, digests and refusals, and the usual record starts no validation
    library.

    A record :func:`~publisher.kernel.shapes.snapshot_shape` accepts is one the model accepts; any
    other goes through the model, which accepts it or words the refusal exactly as
    :func:`read_snapshot` does.
    """
    return _view_of(_read_bytes(_file_of(sources_dir, source_id), source_id, max_bytes), source_id)


def _view_of(data: bytes, source_id: str) -> SnapshotView:
    """:func:`read_view` of a snapshot file's bytes, read already."""
    raw = loads_canonical_floats_unchecked(data)
    canonical = True
    if not snapshot_shape(raw):
        raw, canonical = _strict(data, source_id)
        if not snapshot_shape(raw):
            verify_record(raw, source_id, canonical_body=data if canonical else None)
            return SnapshotView(raw)
    _check_digests(raw, source_id, source_id, data if canonical else None, None)
    return SnapshotView(raw)


SEGMENT_ABOVE = 8 * 1024 * 1024
"""Snapshot files larger than this are read by :func:`read_searchable` without their text as one string."""


def read_searchable(
    sources_dir: Path | str, source_id: str, max_bytes: int = MAX_SNAPSHOT_BYTES
) -> tuple[SnapshotView, str | SegmentedText]:
    """:func:`read_view` for the commands that search or slice a text: the view and the text.

    A file over :data:`SEGMENT_ABOVE` bytes keeps its bytes and gives its text as a
    :class:`~publisher.kernel.segmented.SegmentedText`, checked a piece at a time with every digest
    :func:`read_view` checks (its view's ``text`` is then empty: use the second value); anything
    that check is not sure of is read whole, so a record is accepted or refused as
    :func:`read_view` does, with the same reason codes.
    """
    data = _read_bytes(_file_of(sources_dir, source_id), source_id, max_bytes)
    if len(data) > SEGMENT_ABOVE:
        found = _segmented_view(data, source_id)
        if found is not None:
            return found
    view = _view_of(data, source_id)
    return view, view.text


_TEXT_KEY = b',"text":"'
_TITLE_KEY = b'","title":'


def _segmented_view(data: bytes, source_id: str) -> tuple[SnapshotView, SegmentedText] | None:
    """The view and the segmented text of a canonical record file, every digest checked; None when
    the file is not plainly one this reading is sure of (the whole read decides then).

    With sorted keys the text is the third member from the end (``text``, ``title``, ``url``), and
    a quotation mark inside a JSON string is always escaped: the value runs from after the last
    ``,"text":"`` to the first ``","title":`` after it. The rest of the record, its text cut out, must
    be canonical on its own, end with those three members, and have the snapshot's shape; each
    piece of the text must be the canonical spelling of its code points (:func:`decode_piece`).
    Together that is the canonical file of the record holding the decoded text.
    """
    body_end = len(data) - 1 if data.endswith(b"\n") else len(data)
    key = data.rfind(_TEXT_KEY, 0, body_end)
    if key == -1:
        return None
    lo = key + len(_TEXT_KEY)
    hi = data.find(_TITLE_KEY, lo, body_end)
    if hi == -1:
        return None
    rest_bytes = data[:lo] + data[hi:]
    rest = loads_canonical_floats_unchecked(rest_bytes)
    if not snapshot_shape(rest) or rest["text"] != "":
        return None
    tail = b'""' + _TITLE_KEY[1:] + canonical_bytes(rest["title"]) + b',"url":' + canonical_bytes(rest["url"]) + b"}"
    if rest_bytes[lo - 1 : lo - 1 + len(tail)] != tail or lo - 1 + len(tail) != body_end - (hi - lo):
        return None
    # flat: the shape admits no record_hash member in a nested object.
    seal = seal_of_canonical(data, rest, flat=True) if rest.get("record_hash") is not None else ""
    if seal is None:
        return None
    try:
        digester = TextDigester(rest["url"])
    except UnicodeEncodeError:
        return None
    offsets, starts = [lo], [0]
    for end in piece_ends(data, lo, hi, segmented.PIECE_BYTES):
        try:
            piece = decode_piece(data[offsets[-1] : end])
            digester.update(piece)
        except ValueError:  # UnicodeEncodeError too: the whole read words it
            return None
        offsets.append(end)
        starts.append(starts[-1] + len(piece))
    known = (*digester.digests(), starts[-1], seal)
    _check_digests(rest, source_id, source_id, None, None, known=known)
    return SnapshotView(rest), SegmentedText(data, offsets, starts)


def _file_of(sources_dir: Path | str, source_id: str) -> str:
    return os.path.join(sources_dir, _checked_id(source_id) + ".json")


def _strict(data: bytes, source_id: str) -> tuple[Any, bool]:
    """The record strictly parsed, and whether ``data`` are its canonical bytes."""
    try:
        return loads_record(data)
    except (StrictJSONError, ValueError) as exc:
        raise _corrupt(source_id, f"is not strict JSON ({exc})") from exc


def _corrupt(source_id: str, why: str, **facts: Any) -> IntegrityError:
    return IntegrityError(
        f"snapshot {source_id}: {why}",
        reason=Reason.SNAPSHOT_HASH_MISMATCH,
        source_id=source_id,
        **facts,
    )


def _read_bytes(path: str, source_id: str, max_bytes: int) -> bytes:
    """Read a snapshot file through the careful reader (no links, no special files, at most
    ``max_bytes``) and name each refusal with the snapshot's reason code."""
    try:
        return _fs.read_regular(path, follow_symlinks=False, limit=max_bytes)
    except FileNotFoundError as exc:
        raise IntegrityError(
            f"no snapshot {source_id} in the run's {os.path.basename(os.path.dirname(path)) or 'sources'}/",
            reason=Reason.UNKNOWN_SOURCE,
            source_id=source_id,
        ) from exc
    except _fs.NotRegularFileError as exc:
        raise _corrupt(source_id, f"is {exc.what}, not a regular file") from exc
    except _fs.FileTooLargeError as exc:
        if exc.size is None:
            raise _corrupt(source_id, f"grew past the {max_bytes} byte limit while read") from exc
        raise _corrupt(source_id, f"is {exc.size} bytes, over the {max_bytes} limit") from exc
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise _corrupt(source_id, "is a symbolic link, not a regular file") from exc
        if exc.errno == errno.ENOTDIR:
            raise IntegrityError(
                f"no snapshot {source_id}: the run's {os.path.basename(os.path.dirname(path)) or 'sources'}/ "
                "is not a folder",
                reason=Reason.UNKNOWN_SOURCE,
                source_id=source_id,
            ) from exc
        raise ResourceError(f"snapshot {source_id} cannot be read: {exc.strerror or exc}", source_id=source_id) from exc


def verify_record(
    raw: Any,
    expected_id: str | None,
    *,
    canonical_body: bytes | None = None,
    merkle_of: Callable[[str], tuple[str, int]] | None = None,
    validated: Snapshot | None = None,
) -> Snapshot:
    """Check a parsed snapshot record: schema, identity, body hash, seal and maps.

    Every digest is recomputed from the record's own fields; ``expected_id`` is the name the
    record was stored under. ``canonical_body``, when given, must be the record's canonical bytes,
    optionally with the file's trailing newline (as :func:`~publisher.canonical.loads_record`
    confirmed them); the seal is then hashed from
    those bytes instead of re-encoding the record. ``merkle_of``, when given, computes the text's
    Merkle root and size (a caller that builds the whole tree anyway keeps it, and the root is not
    computed twice). ``validated``, when given, is ``Snapshot.model_validate(raw)`` made by the
    caller (the schema is not checked twice). Raises :class:`IntegrityError` (``SNAPSHOT_HASH_MISMATCH``).
    """
    label = expected_id or "record"
    if not isinstance(raw, dict):
        raise _corrupt(label, "is not a JSON object")
    snap = validated
    if snap is None:
        from pydantic import ValidationError

        from .models import Snapshot, first_error

        try:
            snap = Snapshot.model_validate(raw)
        except ValidationError as exc:
            raise _corrupt(label, first_error(exc)) from exc
    _check_digests(raw, expected_id, label, canonical_body, merkle_of)
    return snap


def _check_digests(
    raw: dict[str, Any],
    expected_id: str | None,
    label: str,
    canonical_body: bytes | None,
    merkle_of: Callable[[str], tuple[str, int]] | None,
    *,
    known: tuple[str, str, str, int, int, str] | None = None,
) -> None:
    """Every digest of a record whose shape the model (or :func:`snapshot_shape`) accepted,
    recomputed from its own fields: identity, body hash, seal, Merkle root, surface manifest, and
    the sections and pages inside the text (see :func:`verify_record`). ``known``: the text's
    digests, Merkle root and size, length and seal, computed already from a text read a piece at a time (the
    record's own ``text`` is then not looked at)."""
    source_id, url, text, content_hash = raw["source_id"], raw["url"], raw["text"], raw["content_hash"]
    if expected_id is not None and source_id != expected_id:
        raise _corrupt(label, f"names itself {source_id}", stored=source_id)
    root, size = raw.get("merkle_root"), raw.get("merkle_size")
    tree = (root is not None or size is not None) and merkle_of is None
    leaves: list[bytes] | None = None
    if known is not None:
        got_id, got_body, known_root, known_size, n, known_seal = known
    else:
        try:
            got_id, got_body, leaves = text_digests(url, text, leaves=tree)
        except UnicodeEncodeError as exc:
            raise _corrupt(label, "text or url is not encodable as UTF-8") from exc
        n, known_seal = len(text), None
    if got_id != source_id:
        raise _corrupt(label, f"source_id recomputes to {got_id}", expected=source_id, got=got_id)
    if got_body != content_hash:
        raise _corrupt(label, f"content_hash recomputes to {got_body}", expected=content_hash, got=got_body)
    record_hash = raw.get("record_hash")
    if record_hash is not None:
        got_seal = known_seal
        if got_seal is None and canonical_body is not None:
            got_seal = seal_of_canonical(canonical_body, raw, flat=True)  # the shape admits no nested record_hash
        if got_seal is None:
            got_seal = record_hash_for(raw)
        if got_seal != record_hash:
            raise _corrupt(label, f"record_hash recomputes to {got_seal}", expected=record_hash, got=got_seal)
    if root is not None or size is not None:
        if known is not None:
            got_root, got_size = known_root, known_size
        elif merkle_of is not None:
            got_root, got_size = merkle_of(text)
        else:
            got_root, got_size = root_of_leaves(leaves or []), len(leaves or ())
        if (root, size) != (got_root, got_size):
            raise _corrupt(
                label,
                f"merkle_root/merkle_size recompute to {got_root}/{got_size}",
                expected=f"{root}/{size}",
                got=f"{got_root}/{got_size}",
            )
    surface = raw.get("surface")
    if surface is not None:
        got_manifest = surface_manifest_hash(surface, content_hash)
        if got_manifest != surface["manifest_hash"]:
            raise _corrupt(label, f"surface manifest_hash recomputes to {got_manifest}", got=got_manifest)
    for kind, entries in (("section", raw.get("sections") or ()), ("page", raw.get("pages") or ())):
        for entry in entries:
            if not 0 <= entry["start"] <= entry["end"] <= n:
                raise _corrupt(label, f"{kind} range [{entry['start']}, {entry['end']}) outside the text of {n}")


def build_record(
    *,
    url: str,
    text: str,
    title: str | None,
    retrieved_at: str,
    access: str,
    origin: str,
    paper: dict[str, str | None] | None,
    asset: dict[str, Any] | None = None,
    sections: list[dict[str, Any]] | None = None,
    pages: list[dict[str, Any]] | None = None,
    surface: dict[str, Any] | None = None,
    identity: dict[str, Any] | None = None,
    supersedes: str | None = None,
) -> dict[str, Any]:
    """A complete, sealed snapshot record for the given text and metadata.

    ``surface`` is the declared surface without its ``manifest_hash``, which is computed here
    (it binds the surface to this text). ``identity`` (each id and the title with its basis) and
    ``supersedes`` (the snapshot this one revises) are sealed with the rest when given.
    """
    record: dict[str, Any] = {
        "schema_version": 1,
        "source_id": source_id_for(url, text),
        "content_hash": content_hash_for(text),
        "url": url,
        "title": title,
        "retrieved_at": retrieved_at,
        "access": access,
        "origin": origin,
        "paper": paper,
        "asset": asset,
        "text": text,
    }
    if sections is not None:
        record["sections"] = sections
    if pages is not None:
        record["pages"] = pages
    record["merkle_root"] = merkle_root(text)
    record["merkle_size"] = -(-len(text) // CHUNK_SIZE)
    if surface is not None:
        fields = {k: v for k, v in surface.items() if k != "manifest_hash"}
        record["surface"] = {**fields, "manifest_hash": surface_manifest_hash(fields, record["content_hash"])}
    if identity is not None:
        record["identity"] = identity
    if supersedes is not None:
        record["supersedes"] = supersedes
    record["record_hash"] = record_hash_for(record)
    return record


@dataclass
class SnapshotStore:
    """The ``sources/`` folder of one run."""

    folder: Path
    max_bytes: int = MAX_SNAPSHOT_BYTES

    def path_for(self, source_id: str) -> Path:
        """File name for ``source_id`` (syntax checked first)."""
        return snapshot_path(self.folder, source_id)

    def exists(self, source_id: str) -> bool:
        """Whether a name exists for ``source_id`` (no verification)."""
        return os.path.lexists(self.path_for(source_id))

    def read(self, source_id: str) -> Snapshot:
        """Read and verify one snapshot; raises IntegrityError with the reason code."""
        return read_snapshot(self.folder, source_id, self.max_bytes)

    def read_view(self, source_id: str) -> SnapshotView:
        """:meth:`read` as plain values, without the validation library (:func:`read_view`)."""
        return read_view(self.folder, source_id, self.max_bytes)

    def read_searchable(self, source_id: str) -> tuple[SnapshotView, str | SegmentedText]:
        """:meth:`read_view` for searching and slicing: a long text is not one string (:func:`read_searchable`)."""
        return read_searchable(self.folder, source_id, self.max_bytes)

    def encode(self, record: dict[str, Any]) -> bytes:
        """The file bytes of ``record``; a :class:`UsageError` when they are over ``max_bytes``,
        since every reader would then refuse the file as corrupt (nothing is written)."""
        data = canonical_bytes(record) + b"\n"
        if len(data) > self.max_bytes:
            raise UsageError(
                f"the snapshot would be {len(data)} bytes, over the {self.max_bytes} byte limit every "
                "reader holds a snapshot to; nothing stored",
                size=len(data),
                max_bytes=self.max_bytes,
            )
        return data

    def put(self, record: dict[str, Any]) -> tuple[Snapshot, bool]:
        """Publish a record built by :func:`build_record`; returns (snapshot, created).

        An existing, verifying record for the same id stands untouched (created=False). An
        existing name whose bytes fail verification raises :class:`ConflictError` and is left
        as it is. A record over ``max_bytes`` is refused before anything is written.
        """
        snap = verify_record(record, record.get("source_id"))
        data = self.encode(record)
        path = self.path_for(snap.source_id)
        _fs.own_folder(self.folder)
        if not _fs.create_exclusive(path, data):
            try:
                return self.read(snap.source_id), False
            except IntegrityError as exc:
                raise ConflictError(
                    f"snapshot {snap.source_id} already exists and does not verify; "
                    "left untouched (inspect or remove it by hand)",
                    reason=Reason.SNAPSHOT_HASH_MISMATCH,
                    source_id=snap.source_id,
                ) from exc
        return snap, True

    def ids(self) -> list[str]:
        """Source ids of the well-named entries in the folder, sorted."""
        if not self.folder.is_dir():
            return []
        out = []
        for name in os.listdir(self.folder):
            if name.endswith(".json") and SOURCE_ID_RE.fullmatch(name[:-5]):
                out.append(name[:-5])
        return sorted(out)
