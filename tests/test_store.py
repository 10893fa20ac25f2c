"""Attacks on the write-once, verify-on-read snapshot store (CONTRACT section 2)."""

from __future__ import annotations

import json
import os
import stat
import threading
import unicodedata
from pathlib import Path
from typing import Any

import pytest
from conftest import make_record

from publisher.kernel.canonical import canonical_bytes, record_hash_for, source_id_for
from publisher.kernel.errors import ConflictError, IntegrityError, ResourceError
from publisher.kernel.reasons import Reason
from publisher.kernel.store import SnapshotStore, build_record, verify_record

MISMATCH = Reason.SNAPSHOT_HASH_MISMATCH


@pytest.fixture
def store(tmp_path: Path) -> SnapshotStore:
    return SnapshotStore(tmp_path / "sources")


def _stored(store: SnapshotStore, **kw: Any) -> tuple[str, Path]:
    snap, created = store.put(make_record(**kw))
    assert created
    return snap.source_id, store.path_for(snap.source_id)


def _rewrite(path: Path, data: bytes) -> None:
    """Replace a read-only snapshot's bytes, as an attacker with write access to the folder would."""
    path.chmod(0o644)
    path.write_bytes(data)


def _rewrite_json(path: Path, raw: dict[str, Any]) -> None:
    _rewrite(path, canonical_bytes(raw) + b"\n")


def _reason_of_read(store: SnapshotStore, source_id: str) -> Reason | None:
    with pytest.raises(IntegrityError) as info:
        store.read(source_id)
    assert "\n" not in info.value.one_line()
    return info.value.reason


# --- a clean round trip ----------------------------------------------------------------------


def test_put_then_read_round_trips_every_field(store: SnapshotStore) -> None:
    record = make_record(
        sections=[{"title": "Background", "start": 0, "end": 11}],
        pages=[{"page": 1, "start": 0, "end": 20}],
    )
    snap, created = store.put(record)
    assert created
    again = store.read(snap.source_id)
    assert again == snap
    assert again.sealed
    assert again.model_dump(mode="json") == {k: record.get(k) for k in again.model_dump(mode="json")}
    assert store.ids() == [snap.source_id]


def test_source_id_follows_the_contract_formula(store: SnapshotStore) -> None:
    import hashlib

    url, text = "https://example.org/a?b=1", "body text"
    snap, _ = store.put(make_record(url=url, text=text))
    expected = "src-" + hashlib.sha256(url.encode() + b"\x00" + text.encode()).hexdigest()
    assert snap.source_id == expected
    assert snap.content_hash == "sha256:" + hashlib.sha256(text.encode()).hexdigest()
    assert store.path_for(expected).name == expected + ".json"


def test_file_is_canonical_json_with_one_newline(store: SnapshotStore) -> None:
    record = make_record()
    _, path = _stored(store)
    assert path.read_bytes() == canonical_bytes(record) + b"\n"


# --- tampering with the digests' inputs ------------------------------------------------------


def test_byte_flip_in_text(store: SnapshotStore) -> None:
    sid, path = _stored(store)
    data = bytearray(path.read_bytes())
    at = data.index(b"randomised")
    data[at] ^= 0x01
    _rewrite(path, bytes(data))
    assert _reason_of_read(store, sid) is MISMATCH


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("title", "A better trial"),
        ("title", None),
        ("paper", {"pmid": "87654321", "doi": "10.1000/example", "pmcid": "PMC123"}),
        ("paper", None),
        ("sections", [{"title": "Results", "start": 0, "end": 5}]),
        ("retrieved_at", "2030-01-01T00:00:00Z"),
        ("access", "abstract"),
        ("origin", "web"),
    ],
)
def test_metadata_edit_is_caught_by_record_hash(store: SnapshotStore, field: str, value: Any) -> None:
    sid, path = _stored(store, sections=[{"title": "Background", "start": 0, "end": 11}])
    raw = json.loads(path.read_bytes())
    raw[field] = value
    _rewrite_json(path, raw)
    assert _reason_of_read(store, sid) is MISMATCH


def test_edit_with_recomputed_content_hash_is_still_caught(store: SnapshotStore) -> None:
    sid, path = _stored(store)
    raw = json.loads(path.read_bytes())
    raw["text"] = raw["text"].replace("120", "210")
    raw["content_hash"] = "sha256:" + __import__("hashlib").sha256(raw["text"].encode()).hexdigest()
    raw["record_hash"] = record_hash_for(raw)
    _rewrite_json(path, raw)
    assert _reason_of_read(store, sid) is MISMATCH  # source_id no longer recomputes


def test_removing_sections_is_caught(store: SnapshotStore) -> None:
    sid, path = _stored(store, sections=[{"title": "Background", "start": 0, "end": 11}])
    raw = json.loads(path.read_bytes())
    del raw["sections"]
    _rewrite_json(path, raw)
    assert _reason_of_read(store, sid) is MISMATCH


def test_truncated_file(store: SnapshotStore) -> None:
    sid, path = _stored(store)
    data = path.read_bytes()
    for cut in (0, 1, len(data) // 2, len(data) - 2):
        _rewrite(path, data[:cut])
        assert _reason_of_read(store, sid) is MISMATCH


def test_valid_record_under_the_wrong_name(store: SnapshotStore) -> None:
    sid_a, path_a = _stored(store, text="first text")
    sid_b, path_b = _stored(store, text="second text")
    _rewrite(path_b, path_a.read_bytes())
    assert _reason_of_read(store, sid_b) is MISMATCH
    assert store.read(sid_a).source_id == sid_a


def test_renamed_file_is_caught(store: SnapshotStore) -> None:
    sid, path = _stored(store)
    other = "src-" + "0" * 64
    path.rename(store.path_for(other))
    assert _reason_of_read(store, other) is MISMATCH
    assert _reason_of_read(store, sid) is Reason.UNKNOWN_SOURCE


def test_missing_snapshot_is_unknown_source(store: SnapshotStore) -> None:
    assert _reason_of_read(store, "src-" + "a" * 64) is Reason.UNKNOWN_SOURCE


def test_section_outside_the_text_is_corrupt() -> None:
    record = make_record(text="short", sections=[{"title": "x", "start": 0, "end": 99}])
    with pytest.raises(IntegrityError) as info:
        verify_record(record, record["source_id"])
    assert info.value.reason is MISMATCH


# --- special files in place of a snapshot ---------------------------------------------------


def test_symlink_in_place_of_a_snapshot(store: SnapshotStore, tmp_path: Path) -> None:
    sid, path = _stored(store)
    real = tmp_path / "elsewhere.json"
    real.write_bytes(path.read_bytes())  # even a link to a perfectly valid record
    path.chmod(0o644)
    path.unlink()
    path.symlink_to(real)
    assert _reason_of_read(store, sid) is MISMATCH


def test_fifo_in_place_of_a_snapshot_does_not_block(store: SnapshotStore) -> None:
    sid = source_id_for("https://example.org/fifo", "x")
    store.folder.mkdir(parents=True, exist_ok=True)
    os.mkfifo(store.path_for(sid))
    outcome: list[object] = []

    def attempt() -> None:
        try:
            store.read(sid)
            outcome.append("read")
        except IntegrityError as exc:
            outcome.append(exc.reason)

    worker = threading.Thread(target=attempt, daemon=True)
    worker.start()
    worker.join(timeout=5)
    if worker.is_alive():  # unblock the reader before failing
        fd = os.open(store.path_for(sid), os.O_WRONLY | os.O_NONBLOCK)
        os.close(fd)
        pytest.fail("reading a FIFO in place of a snapshot blocked")
    assert outcome == [MISMATCH]


def test_directory_in_place_of_a_snapshot(store: SnapshotStore) -> None:
    sid = source_id_for("https://example.org/dir", "x")
    store.path_for(sid).mkdir(parents=True)
    assert _reason_of_read(store, sid) is MISMATCH


def test_oversized_file(tmp_path: Path) -> None:
    folder = tmp_path / "sources"
    record = make_record(text="x" * 1000)
    snap, created = SnapshotStore(folder).put(record)
    assert created
    size = len(canonical_bytes(record)) + 1
    assert SnapshotStore(folder, max_bytes=size).read(snap.source_id) == snap  # the limit is inclusive
    assert _reason_of_read(SnapshotStore(folder, max_bytes=size - 1), snap.source_id) is MISMATCH
    assert _reason_of_read(SnapshotStore(folder, max_bytes=100), snap.source_id) is MISMATCH


def test_unreadable_file_is_a_resource_error_not_tampering(
    store: SnapshotStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    sid, path = _stored(store)
    real_open = os.open

    def denied(target: Any, *args: Any, **kwargs: Any) -> int:
        if str(target) == str(path):
            raise PermissionError(13, "Permission denied", str(target))
        return real_open(target, *args, **kwargs)

    monkeypatch.setattr(os, "open", denied)  # chmod 0 means nothing to root, so simulate EACCES
    with pytest.raises(ResourceError) as info:
        store.read(sid)
    assert info.value.reason is None and info.value.exit_status == 2


# --- strict JSON -----------------------------------------------------------------------------


def test_duplicate_json_key(store: SnapshotStore) -> None:
    sid, path = _stored(store)
    data = path.read_bytes()
    # Repeat the title with the same value: the parsed dict would be identical without the check.
    title = b'"title":"A trial",'
    assert title in data
    _rewrite(path, data.replace(title, title + title))
    assert _reason_of_read(store, sid) is MISMATCH


def test_duplicate_key_in_a_non_canonical_layout(store: SnapshotStore) -> None:
    sid, path = _stored(store)
    raw = json.loads(path.read_bytes())
    text = json.dumps(raw, indent=2)
    text = text.replace('"title": "A trial",', '"title": "Other",\n  "title": "A trial",')
    _rewrite(path, text.encode())
    assert _reason_of_read(store, sid) is MISMATCH


@pytest.mark.parametrize("constant", ["NaN", "Infinity", "-Infinity"])
def test_nan_and_infinity(store: SnapshotStore, constant: str) -> None:
    sid, path = _stored(store)
    data = path.read_bytes()
    _rewrite(path, data.replace(b'"schema_version":1', b'"schema_version":' + constant.encode()))
    assert _reason_of_read(store, sid) is MISMATCH
    _rewrite(path, data.replace(b"{", b'{"extra":' + constant.encode() + b",", 1))
    assert _reason_of_read(store, sid) is MISMATCH


@pytest.mark.parametrize(("field", "value"), [("access", "full-text"), ("access", "FULL_TEXT"), ("origin", "arxiv")])
def test_unknown_enum_value(store: SnapshotStore, field: str, value: str) -> None:
    sid, path = _stored(store)
    raw = json.loads(path.read_bytes())
    raw[field] = value
    raw["record_hash"] = record_hash_for(raw)  # a consistent seal does not make it valid
    _rewrite_json(path, raw)
    assert _reason_of_read(store, sid) is MISMATCH


@pytest.mark.parametrize(
    "raw_bytes",
    [b"", b"null", b"[]", b'"text"', b"{", b"\xff\xfe{}", b"[" * 100_000 + b"]" * 100_000, b"\xef\xbb\xbf{}"],
)
def test_garbage_bodies_are_corrupt(store: SnapshotStore, raw_bytes: bytes) -> None:
    sid, path = _stored(store)
    _rewrite(path, raw_bytes)
    assert _reason_of_read(store, sid) is MISMATCH


@pytest.mark.parametrize("encoding", ["utf-16", "utf-32", "utf-8-sig"])
def test_other_encodings_of_a_valid_record_are_corrupt(store: SnapshotStore, encoding: str) -> None:
    sid, path = _stored(store)
    _rewrite(path, path.read_bytes().decode("utf-8").encode(encoding))
    assert _reason_of_read(store, sid) is MISMATCH


@pytest.mark.parametrize(
    ("field", "value"),
    [("schema_version", 2), ("schema_version", True), ("text", 5), ("unexpected", "x"), ("title", ["a"])],
)
def test_schema_violations_are_corrupt(store: SnapshotStore, field: str, value: Any) -> None:
    sid, path = _stored(store)
    raw = json.loads(path.read_bytes())
    raw[field] = value
    raw["record_hash"] = record_hash_for(raw)
    _rewrite_json(path, raw)
    assert _reason_of_read(store, sid) is MISMATCH


# --- names are checked before the file system is touched -------------------------------------


BAD_IDS = [
    "src-../../etc/passwd",
    "src-" + "A" * 64,
    "src-" + "a" * 63,
    "src-" + "a" * 65,
    "SRC-" + "a" * 64,
    "src-" + "a" * 63 + "g",
    "src-" + "a" * 64 + "\n",
    "src-" + "a" * 64 + ".json",
    "/etc/passwd",
    "",
    "src-" + "a" * 32 + "/" + "a" * 31,
]


@pytest.mark.parametrize("bad", BAD_IDS)
def test_malformed_ids_are_refused_before_any_file_access(
    store: SnapshotStore, monkeypatch: pytest.MonkeyPatch, bad: str
) -> None:
    store.folder.mkdir(parents=True)
    touched: list[str] = []
    real_open, real_stat, real_lstat = os.open, os.stat, os.lstat

    def spy(real: Any) -> Any:
        def wrapper(path: Any, *args: Any, **kwargs: Any) -> Any:
            touched.append(str(path))
            return real(path, *args, **kwargs)

        return wrapper

    monkeypatch.setattr(os, "open", spy(real_open))
    monkeypatch.setattr(os, "stat", spy(real_stat))
    monkeypatch.setattr(os, "lstat", spy(real_lstat))
    with pytest.raises(IntegrityError) as info:
        store.read(bad)
    assert info.value.reason is MISMATCH
    with pytest.raises(IntegrityError):
        store.path_for(bad)
    with pytest.raises(IntegrityError):
        store.exists(bad)
    assert touched == []


def test_reader_refuses_non_string_ids(store: SnapshotStore) -> None:
    with pytest.raises(IntegrityError) as info:
        store.read(None)  # type: ignore[arg-type]
    assert info.value.reason is MISMATCH


# --- write-once -----------------------------------------------------------------------------


def test_second_put_is_a_no_op(store: SnapshotStore) -> None:
    first = make_record(retrieved_at="2026-01-01T00:00:00Z", title="First title")
    snap, created = store.put(first)
    path = store.path_for(snap.source_id)
    before = path.read_bytes()
    info = os.stat(path)
    second = make_record(retrieved_at="2027-01-01T00:00:00Z", title="Later title")
    assert second["source_id"] == first["source_id"]
    again, created_again = store.put(second)
    assert created and not created_again
    assert again.retrieved_at == "2026-01-01T00:00:00Z" and again.title == "First title"
    after = os.stat(path)
    assert path.read_bytes() == before
    assert (after.st_ino, after.st_mtime_ns, after.st_size) == (info.st_ino, info.st_mtime_ns, info.st_size)
    assert sorted(os.listdir(store.folder)) == [path.name]


def test_existing_corrupt_name_is_a_conflict_left_untouched(store: SnapshotStore) -> None:
    record = make_record()
    path = store.path_for(record["source_id"])
    store.folder.mkdir(parents=True)
    path.write_bytes(b"garbage, not a record")
    info = os.stat(path)
    with pytest.raises(ConflictError) as exc_info:
        store.put(record)
    assert exc_info.value.reason is MISMATCH
    assert exc_info.value.exit_status == 1
    assert path.read_bytes() == b"garbage, not a record"
    assert os.stat(path).st_ino == info.st_ino
    assert sorted(os.listdir(store.folder)) == [path.name]


def test_existing_symlink_name_is_a_conflict_and_the_target_is_not_written(
    store: SnapshotStore, tmp_path: Path
) -> None:
    record = make_record()
    target = tmp_path / "target"
    store.folder.mkdir(parents=True)
    store.path_for(record["source_id"]).symlink_to(target)  # dangling
    with pytest.raises(ConflictError):
        store.put(record)
    assert not target.exists()
    assert store.path_for(record["source_id"]).is_symlink()


def test_put_refuses_an_inconsistent_record(store: SnapshotStore) -> None:
    record = make_record()
    record["title"] = "edited after sealing"
    with pytest.raises(IntegrityError) as info:
        store.put(record)
    assert info.value.reason is MISMATCH
    assert not store.folder.exists() or os.listdir(store.folder) == []


def test_files_are_created_read_only_and_no_temp_files_remain(store: SnapshotStore) -> None:
    for i in range(5):
        store.put(make_record(text=f"text {i}"))
    store.put(make_record(text="text 0"))
    names = os.listdir(store.folder)
    assert len(names) == 5
    for name in names:
        assert not name.startswith(".")
        assert stat.S_IMODE(os.lstat(store.folder / name).st_mode) == 0o444


def test_ids_lists_only_well_named_entries(store: SnapshotStore) -> None:
    sid, _ = _stored(store)
    junk_names = (
        "notes.txt",
        "src-abc.json",
        ".src-" + "a" * 64 + ".json.0123456789ab.tmp",
        "SRC-" + "b" * 64 + ".json",
    )
    for junk in junk_names:
        (store.folder / junk).write_text("x")
    assert store.ids() == [sid]
    assert SnapshotStore(store.folder / "missing").ids() == []


# --- upstream records ------------------------------------------------------------------------


def test_upstream_v1_record_without_record_hash_is_readable_and_unsealed(store: SnapshotStore) -> None:
    record = make_record()
    del record["record_hash"]
    store.folder.mkdir(parents=True)
    path = store.path_for(record["source_id"])
    path.write_text(json.dumps(record, indent=2, ensure_ascii=True))  # upstream layout, ASCII escapes
    snap = store.read(record["source_id"])
    assert not snap.sealed
    assert snap.text == record["text"]
    # Unsealed metadata is readable as is; the identity digests still guard the text.
    record["text"] += "!"
    path.write_text(json.dumps(record, indent=2))
    assert _reason_of_read(store, record["source_id"]) is MISMATCH


def test_upstream_record_without_optional_ext_fields(store: SnapshotStore) -> None:
    record = make_record()
    for key in ("record_hash", "sections", "pages"):
        record.pop(key, None)
    assert verify_record(record, record["source_id"]).sections is None


# --- text is never normalized; offsets are code points ---------------------------------------


WEIRD_TEXTS = [
    "caf\u00e9",  # NFC
    "cafe\u0301",  # NFD
    "line one\r\nline two\rthree\n",
    "astral \U0001f600 \U00020000 and marks a\u0301\u0302\u0303",
    "controls \x01\x02\x07\x1b\x7f\u0085\u2028\u2029\ufeff end",
    "  leading and trailing spaces \t\t ",
    "\u00a0nbsp\u200bzwsp",
]


@pytest.mark.parametrize("text", WEIRD_TEXTS)
def test_text_is_stored_and_read_byte_exact(store: SnapshotStore, text: str) -> None:
    snap, _ = store.put(make_record(text=text))
    got = store.read(snap.source_id)
    assert got.text == text
    assert len(got.text) == len(text)


def test_nfc_and_nfd_texts_are_distinct_snapshots(store: SnapshotStore) -> None:
    nfc = unicodedata.normalize("NFC", "Caf\u00e9 au lait")
    nfd = unicodedata.normalize("NFD", nfc)
    assert nfc != nfd
    a, _ = store.put(make_record(text=nfc))
    b, _ = store.put(make_record(text=nfd))
    assert a.source_id != b.source_id
    assert store.read(a.source_id).text == nfc
    assert store.read(b.source_id).text == nfd


def test_crlf_is_kept_on_disk(store: SnapshotStore) -> None:
    snap, _ = store.put(make_record(text="a\r\nb"))
    assert b"a\\r\\nb" in store.path_for(snap.source_id).read_bytes()
    assert store.read(snap.source_id).text == "a\r\nb"


def test_offsets_are_code_points(store: SnapshotStore) -> None:
    text = "\U0001f600e\u0301 target \u4e2d\u6587"
    start = text.index("target")
    snap, _ = store.put(make_record(text=text, sections=[{"title": "t", "start": start, "end": start + 6}]))
    got = store.read(snap.source_id)
    section = got.sections[0] if got.sections else None
    assert section is not None
    assert got.text[section.start : section.end] == "target"
    assert start == 4  # one astral code point, e, combining mark, space
    assert len(text.encode("utf-8")) > len(text)
    assert len(text.encode("utf-16-le")) // 2 > len(text)


def test_lone_surrogate_text_is_refused() -> None:
    with pytest.raises((IntegrityError, UnicodeEncodeError, ValueError)):
        build_record(
            url="https://x",
            text="bad \ud800",
            title=None,
            retrieved_at="2026-01-01T00:00:00Z",
            access="web",
            origin="web",
            paper=None,
        )


def test_escaped_lone_surrogate_on_disk_is_corrupt(store: SnapshotStore) -> None:
    sid, path = _stored(store)
    raw = path.read_bytes().replace(b"randomised", b"randomised\\ud800")
    _rewrite(path, raw)
    assert _reason_of_read(store, sid) is MISMATCH


# --- the per-command reader ------------------------------------------------------------------


# --- every single-byte corruption is caught --------------------------------------------------


def test_every_single_byte_flip_is_refused(store: SnapshotStore) -> None:
    sid, path = _stored(
        store,
        text='Résumé \U0001f600 e\u0301\r\n\t"quoted" \\ back',
        sections=[{"title": "Intro", "start": 0, "end": 6}],
        pages=[{"page": 1, "start": 0, "end": 10}],
    )
    original = path.read_bytes()
    path.chmod(0o644)
    accepted = []
    for at in range(len(original)):
        data = bytearray(original)
        data[at] ^= 0x01
        path.write_bytes(bytes(data))
        try:
            store.read(sid)
        except IntegrityError as exc:
            assert exc.reason is MISMATCH
        else:
            accepted.append(at)
    assert accepted == [], f"flips at {accepted[:5]} were accepted"
    path.write_bytes(original)
    assert store.read(sid).source_id == sid


def test_a_record_over_the_read_limit_is_refused_before_anything_is_written(tmp_path: Path) -> None:
    # Written, it would read back as corrupt (SNAPSHOT_HASH_MISMATCH) on every read.
    from publisher.kernel.errors import UsageError

    store = SnapshotStore(tmp_path / "sources", max_bytes=1_500)
    with pytest.raises(UsageError) as info:
        store.put(make_record(text="\x01" * 200))  # 200 code points, 1,200 bytes of JSON escapes
    assert info.value.context["max_bytes"] == 1_500 and info.value.context["size"] > 1_500
    assert not store.folder.exists() or os.listdir(store.folder) == []
    snap, created = store.put(make_record(text="\x01" * 100))
    assert created and store.read(snap.source_id) == snap  # under the limit it round-trips
