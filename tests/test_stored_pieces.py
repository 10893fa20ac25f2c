"""A run's check holds its stored result, its records and its model as little as it can.

The stored ``result.json`` is compared with the assembly piece by piece as the file is read
(:func:`~publisher.gate.checks.assembler.written_pieces`, :func:`stored_written_as`), a settled
check hashes its result piece by piece (``_sorted_pieces``), a large run's hint parses one accepted
entry at a time (``_accepted_apart``), and the wiki check drops the agent records once the
assembly is final. Each piecewise path must say exactly what the whole one says; these tests hold
them to it, and to what is let go when.
"""

from __future__ import annotations

import hashlib
import json
import os
import pickle
from pathlib import Path
from typing import Any

import orjson
import pytest
from _gate_helpers import RunFixture, make_run, read_json
from _policy import options_of, policy_of, run_keys
from hypothesis import given, settings
from hypothesis import strategies as st
from test_pipeline_stored import STORED, _seen

from publisher.gate import pipeline
from publisher.gate.assemble import assemble_run, dump_result
from publisher.gate.checks import assembler, runcheck
from publisher.gate.checks.assembler import (
    parse_stored,
    same_as_written,
    stored_requests,
    stored_written_as,
    written_pieces,
)
from publisher.gate.inputs import load_inputs
from publisher.gate.pipeline import Loaded, check_run, prepare, prepare_stored
from publisher.parallel import CheckedSnapshots

_KEYS = st.text(min_size=0, max_size=6)
_SCALARS = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**63), max_value=2**64 - 1)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=12)
)
_JSON = st.recursive(
    _SCALARS,
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.lists(st.integers(0, 3) | st.text(max_size=3), min_size=60, max_size=80)  # opened when long
        | st.dictionaries(_KEYS, inner, max_size=4)
    ),
    max_leaves=60,
)


@settings(max_examples=300, deadline=None)
@given(_JSON)
def test_the_written_pieces_join_to_the_whole_file(value: Any) -> None:
    whole = orjson.dumps(value, option=orjson.OPT_INDENT_2)
    assert b"".join(written_pieces(value)) == whole
    assert same_as_written(whole, value) and same_as_written(whole + b"\n", value)


@settings(max_examples=300, deadline=None)
@given(st.dictionaries(_KEYS, _JSON, max_size=6))
def test_a_settled_checks_digest_is_the_digest_of_the_whole(value: dict[str, Any]) -> None:
    body = {k: v for k, v in value.items() if k != "generated_at"}
    whole = hashlib.sha256(orjson.dumps(body, option=orjson.OPT_SORT_KEYS)).hexdigest()
    assert runcheck._digest(value) == whole


@pytest.mark.parametrize(
    "value", [{"a": {1: 2}}, {"a": [0] * 70 + [{1: 2}]}, {"a": 2**70}, {"a": [2**70] * 70}, {"a": "\ud800"}]
)
def test_what_orjson_cannot_write_is_refused_piecewise_too(value: dict[str, Any]) -> None:
    """orjson's TypeError, whether the value sits in an opened container or a whole one: the
    comparison is then False and the digest raises, as writing the value whole did."""
    with pytest.raises(TypeError):
        orjson.dumps(value, option=orjson.OPT_INDENT_2)
    with pytest.raises(TypeError):
        b"".join(written_pieces(value))
    assert not same_as_written(b"{}", value)
    with pytest.raises(TypeError):
        runcheck._digest(value)


@pytest.fixture(params=["whole", "pieces"])
def comparison(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """A small file compared with the result written whole (as it is), or piece by piece (as a
    file over :data:`~publisher.gate.checks.assembler._WHOLE_BYTES` is)."""
    if request.param == "pieces":
        monkeypatch.setattr(assembler, "_WHOLE_BYTES", -1)
    return str(request.param)


def test_only_the_exact_bytes_match(comparison: str) -> None:
    value = {"schema_version": 1, "accepted": [{"text": "é", "n": index} for index in range(100)], "end": None}
    whole = orjson.dumps(value, option=orjson.OPT_INDENT_2)
    assert same_as_written(whole, value)
    for other in (
        whole[:-1],
        whole + b"\n\n",
        whole + b" ",
        b" " + whole,
        whole.replace(b'"n": 50', b'"n": 51'),
        whole.replace(b"\n", b"\r\n"),
        json.dumps(value, indent=2).encode(),  # ASCII escapes: the same value, other bytes
        b"",
    ):
        assert not same_as_written(other, value)


@pytest.fixture
def assembled(tmp_path: Path) -> RunFixture:
    fx = make_run(tmp_path, articles=2)
    assemble_run(fx.run, options_of(fx.run))
    return fx


def test_the_stored_file_is_matched_as_it_is_read(assembled: RunFixture, comparison: str) -> None:
    """The file is compared with the assembly as it is read, never read whole; any other bytes,
    a link or a folder in its place, or no file, are left to the usual reading."""
    path = assembled.run.result_path
    stored = read_json(path)
    result = {**stored, "generated_at": "2000-01-01T00:00:00Z"}
    assert stored_written_as(assembled.run, result) == stored
    data = path.read_bytes()
    path.write_bytes(data.rstrip(b"\n"))
    assert stored_written_as(assembled.run, result) == stored
    for other in (data + b"\n", data[:-2] + b"\n", data.replace(b'"generated_at": "', b'"generated_at": "\\u0032', 1)):
        path.write_bytes(other)
        assert stored_written_as(assembled.run, result) is None
    path.write_bytes(data)
    assert stored_written_as(assembled.run, {**result, "run_slug": "other"}) is None
    elsewhere = assembled.run.path / "elsewhere.json"
    path.rename(elsewhere)
    assert stored_written_as(assembled.run, result) is None  # absent
    path.symlink_to(elsewhere)
    assert stored_written_as(assembled.run, result) is None  # a link is never followed
    path.unlink()
    path.mkdir()
    assert stored_written_as(assembled.run, result) is None


def test_a_result_equal_to_its_assembly_is_never_read_whole(
    assembled: RunFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    def refuse(run: object) -> object:
        raise AssertionError("the stored result was read whole")

    monkeypatch.setattr(pipeline, "read_stored_bytes", refuse)
    rc = check_run(assembled.run, options_of(assembled.run))
    assert rc.status("C-ASSEMBLER") == "pass" and rc.stored == read_json(assembled.run.result_path)


def test_a_matched_result_that_is_not_valid_says_what_reading_it_says(assembled: RunFixture) -> None:
    """A file matched but whose model does not validate has the problem reading it gives, for the
    value matched: a file written since the match is not read (the assembly stays final)."""
    original = assembled.run.result_path.read_bytes()
    bad = {**read_json(assembled.run.result_path), "run_slug": "Not A Slug!"}
    assembled.run.result_path.write_bytes(dump_result(bad))
    expected = parse_stored(assembled.run.result_path.read_bytes())
    assert expected[2] is not None  # not a valid result
    prepared = prepare_stored(assembled.run, CheckedSnapshots(assembled.run.sources_dir))
    candidate = prepared.matches(bad)
    assert candidate == bad
    assembled.run.result_path.write_bytes(original)  # a valid result, written after the match
    assert prepared.adopt(candidate) is None and prepared.settled
    assert (prepared.stored, prepared.model, prepared.problem) == expected
    with pytest.raises(ValueError):
        prepared.adopt(candidate)  # once


class _Refused(list[Any]):
    """Records that no code may read any more (every reading fails the test); ``real`` holds them
    for the next assembly."""

    def __init__(self, real: list[Any]) -> None:
        super().__init__()
        self.real = real

    def _refuse(self, *args: object) -> Any:
        raise AssertionError("the agent records were read after the final assembly")

    __iter__ = __len__ = __getitem__ = __bool__ = __contains__ = _refuse  # type: ignore[assignment]


@pytest.mark.parametrize("name", sorted(STORED))
@pytest.mark.parametrize("gate", [None, True])
def test_nothing_reads_the_records_after_the_final_assembly(
    assembled: RunFixture, name: str, gate: bool | None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What the wiki check drops (``drop_records``) is read by nothing after the assembly it
    keeps: each assembly gets the records back, and they refuse to be read once it returns. The
    check then finds what it finds with the records held throughout."""
    STORED[name](assembled)
    kept = _seen(check_run(assembled.run, options_of(assembled.run), gate=gate))
    assemble = pipeline.assemble

    def guarded(inputs: Any, *args: Any, **kwargs: Any) -> Any:
        records = inputs.records.real if isinstance(inputs.records, _Refused) else inputs.records
        inputs.records = records
        try:
            return assemble(inputs, *args, **kwargs)
        finally:
            inputs.records = _Refused(records)

    monkeypatch.setattr(pipeline, "assemble", guarded)
    assert _seen(check_run(assembled.run, options_of(assembled.run), gate=gate)) == kept
    monkeypatch.undo()

    inputs = load_inputs(assembled.run, trusted_keys=run_keys(assembled.run))
    reader = CheckedSnapshots(assembled.run.sources_dir, assets_root=inputs.wiki_root)
    prepared = prepare(inputs, reader, prepare_stored(assembled.run, reader))
    rc = check_run(assembled.run, gate=gate, loaded=Loaded(inputs, reader, prepared, drop_records=True))
    assert _seen(rc) == kept and rc.inputs.records == []


def test_the_records_and_the_bytes_are_let_go_before_the_model_is_made(
    assembled: RunFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A worker never holds the agent records and the model together, nor the file's bytes at
    all; a check that does not drop the records keeps them."""
    seen: list[int] = []
    inputs = load_inputs(assembled.run, trusted_keys=run_keys(assembled.run))
    records = len(inputs.records)
    validate = pipeline.valid_result

    def watched(value: Any, *args: Any, **kwargs: Any) -> Any:
        seen.append(len(inputs.records))
        return validate(value, *args, **kwargs)

    monkeypatch.setattr(pipeline, "valid_result", watched)
    for drop in (True, False):
        inputs = load_inputs(assembled.run, trusted_keys=run_keys(assembled.run))
        reader = CheckedSnapshots(assembled.run.sources_dir, assets_root=inputs.wiki_root)
        prepared = prepare(inputs, reader, prepare_stored(assembled.run, reader))
        rc = check_run(assembled.run, loaded=Loaded(inputs, reader, prepared, drop_records=drop))
        assert rc.status("C-ASSEMBLER") == "pass"
    assert records and seen == [0, records]


def test_packing_settled_at_once_is_packing_then_settling(assembled: RunFixture) -> None:
    """A settled check packed in one step is the check packed, then settled (byte for byte),
    without writing out the result the stored file holds."""
    one, two = check_run(assembled.run, options_of(assembled.run)), check_run(assembled.run, options_of(assembled.run))
    two.assembly.result["generated_at"] = one.assembly.result["generated_at"]  # the assembly's own time
    assert one.stored_is_assembly
    one.pack(settle=True)
    two.pack()
    two.settle()
    assert pickle.dumps(one._packed) == pickle.dumps(two._packed)
    assert one.result == two.result and one.stored == two.stored


def _whole_hint(monkeypatch: pytest.MonkeyPatch, run: Any) -> list[tuple[str, list[tuple[int, int]]]]:
    with monkeypatch.context() as patched:
        patched.setattr(assembler, "_named_apart", lambda source, named: None)
        return stored_requests(run)


def _split_entry(data: bytes) -> bytes:
    """An accepted entry's inner object closed at the entries' indent: the cut lands inside it."""
    return data.replace(b'\n          "section"', b'\n    },\n    {\n          "section"', 1)


@pytest.mark.parametrize(
    "edit",
    [
        lambda b: b,
        lambda b: b.rstrip(b"\n"),
        lambda b: json.dumps(json.loads(b), indent=2, sort_keys=True).encode(),
        lambda b: json.dumps(json.loads(b), indent=4).encode(),
        lambda b: json.dumps(json.loads(b), separators=(",", ":")).encode(),
        _split_entry,
        lambda b: b.replace(b"\n  ]", b"\n  ],\n  ]", 1),
        lambda b: b.replace(b'\n  "accepted": [', b'\n  "accepted": [\n    7,', 1),
        lambda b: b[: len(b) // 2],
        lambda b: b.replace(b'"accepted": [', b'"accepted": [\n  ]\n  ,"x": [', 1),
        lambda b: b.replace(b'\n  "diagnostics"', b'\n  "accepted": [],\n  "diagnostics"', 1),
        lambda b: b.replace(b'"run_slug": "', b'"run_slug": "\\u0000', 1),
        lambda b: b.replace(b'\n  "diagnostics"', b'\n  "accepted": ["\\u0000"],\n  "diagnostics"', 1),
    ],
    ids=[
        "as written",
        "no newline",
        "keys sorted",
        "indent 4",
        "compact",
        "a cut inside an entry",
        "a bracket too many",
        "a number before the entries",
        "truncated",
        "the list closed early",
        "a later duplicate",
        "a NUL spelled in the file",
        "a later duplicate that looks like the cut",
    ],
)
def test_the_hint_read_entry_by_entry_is_the_whole_reading(
    assembled: RunFixture, edit: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """For any file, what the hint names read entry by entry is what reading the file whole names
    (a file in another layout, or one whose marks mislead, is read whole; of duplicate keys the
    parse keeps the one it keeps whole)."""
    path = assembled.run.result_path
    path.write_bytes(edit(path.read_bytes()))
    assert stored_requests(assembled.run) == _whole_hint(monkeypatch, assembled.run)


def test_a_file_read_forward_finds_the_first_mark_to_come(tmp_path: Path) -> None:
    """The first mark to come, though a later one is found first in the blocks read so far (a
    longer mark that starts earlier may end past them), and everything after it, block by block."""
    path = tmp_path / "marks"
    path.write_bytes(b"..qrst--rest of the file")
    with pytest.MonkeyPatch.context() as patched:
        patched.setattr(assembler._Forward, "_BLOCK", 5)  # the first block ends inside the longer mark
        fd = os.open(path, os.O_RDONLY)
        try:
            source = assembler._Forward(fd)
            assert source.upto(b"rs", b"qrst") == (b"..", b"qrst")
            assert source.takes(b"qrst") and source.upto(b"zz") is None
            assert source.remaining() == b"--rest of the file"
        finally:
            os.close(fd)
        path.write_bytes(b"01AXYZ")  # a mark looked for, then read on: its first half was seen
        patched.setattr(assembler._Forward, "_BLOCK", 4)
        fd = os.open(path, os.O_RDONLY)
        try:
            source = assembler._Forward(fd)
            assert source.takes(b"01") and source.upto(b"XY") == (b"A", b"XY")
        finally:
            os.close(fd)


def test_the_hint_of_a_written_result_is_read_in_pieces(assembled: RunFixture, tmp_path: Path) -> None:
    """A written result is taken apart, entry by entry, exactly as the whole parse has it, read
    forward in blocks smaller than it; a cut in the wrong place or another layout is not."""
    data = assembled.run.result_path.read_bytes()
    entries: list[Any] = []

    def apart(body: bytes, block: int) -> Any:
        entries.clear()
        with pytest.MonkeyPatch.context() as patched:
            patched.setattr(assembler._Forward, "_BLOCK", block)
            (tmp_path / "result.json").write_bytes(body)
            fd = os.open(tmp_path / "result.json", os.O_RDONLY)
            try:
                return assembler._named_apart(assembler._Forward(fd), entries.append)
            finally:
                os.close(fd)

    for block in (7, 100, 1 << 18):
        rest = apart(data, block)
        assert rest is not None and {**rest, "accepted": entries} == orjson.loads(data)
    assert apart(_split_entry(data), 64) is None
    assert apart(json.dumps(json.loads(data), separators=(",", ":")).encode(), 64) is None


def test_a_large_runs_check_is_made_again_only_for_a_result_that_is_not_valid(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A large run's handed-over outcomes are taken before its stored result is read: a result
    equal to its assembly is never parsed and the check is made once; a result that is not valid
    has the run checked again without them; an absent one never takes them."""
    from dataclasses import replace

    from _wiki_helpers import make_wiki, sample_run

    from publisher.kernel.snapshots import check_snapshot
    from publisher.parallel import Workers
    from publisher.wiki import runchecks
    from publisher.wiki.check import check_wiki

    wiki = make_wiki(tmp_path / "wiki")
    run = sample_run(wiki).run
    handed = [
        replace(check_snapshot((str(run.sources_dir), sid, tuple(spans))), detail="handed over")
        for sid, spans in stored_requests(run)
    ]
    keys = check_wiki(wiki, workers=Workers(count=1), policy=policy_of(wiki)).policy.trusted_keys
    calls: list[str] = []
    check, parse = runchecks.check_run, pipeline.parse_stored

    def checked(*args: Any, **kwargs: Any) -> Any:
        calls.append("check")
        return check(*args, **kwargs)

    def parsed(data: bytes) -> Any:
        calls.append("parse")
        return parse(data)

    monkeypatch.setattr(runchecks, "check_run", checked)
    monkeypatch.setattr(pipeline, "parse_stored", parsed)

    def adopted() -> int:
        calls.clear()
        done = runchecks.check_whole_run(str(run.path), str(wiki), keys, "runs/alpha", handed)
        assert done.check() is not None and done.sources is not None
        return sum(c.detail == "handed over" for c in done.sources.values())

    assert adopted() > 0 and calls == ["check"]
    run.result_path.write_text('{"accepted": []}', encoding="utf-8")
    assert adopted() == 0 and calls == ["check", "parse", "parse", "check"]  # read first the second time
    run.result_path.unlink()
    assert adopted() == 0 and calls == ["check"]
