"""What a worker ships of a checked run: its check and its event log packed together, read back
one at a time as the values that went in (the events written once, the statuses as plain values),
and its sources without their spans."""

from __future__ import annotations

import pickle
import zlib
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from _wiki_helpers import make_wiki, sample_run, tamper

from publisher.acquire.signing import KeyRing
from publisher.gate.checks.runcheck import CheckStatus, RunCheck
from publisher.kernel.checkids import CheckId
from publisher.parallel import CheckedSnapshots
from publisher.runs import Run
from publisher.wiki import runchecks
from publisher.wiki.evidence import pack_pair, unpack_part


@pytest.fixture
def wiki(tmp_path: Path) -> Path:
    return make_wiki(tmp_path / "wiki")


def _shown(rc: RunCheck) -> tuple[Any, ...]:
    """What the parent reads of a check, field by field (a check's inputs compare by identity)."""
    return (
        rc.label,
        [(c.check_id, type(c.check_id), c.status, c.detail, c.counts) for c in rc.checks],
        [(f.code, f.check, type(f.check), f.file, f.field, f.artifact_id, f.source_id, f.cause) for f in rc.findings],
        rc.verdict,
        rc.exit_status,
        rc.result,
        rc.stored,
        rc.stored_problem,
        rc.stored_is_assembly,
        rc.assembly.log.events,
        rc.inputs.log.events,
        rc.inputs.config,
        rc.assembly.findings,
        rc.assembly.reader.checks(),
    )


def _packed_check(wiki: Path, path: Path) -> RunCheck:
    """A run checked as a worker checks it (records released, results packed), not yet shipped."""
    checked = runchecks._check_whole(Run(path), wiki, KeyRing(), "runs/alpha", (), provisional=False)
    assert isinstance(checked, tuple)
    rc = checked[2]
    runchecks.release_records(rc)
    return rc


@pytest.mark.parametrize("kind", [None, "result-excerpt", "snapshot-text", "event-line"])
def test_the_packed_check_and_events_read_back_as_they_went_in(wiki: Path, kind: str | None) -> None:
    """Each part reads back on its own, equal to the value packed (a clean run, and runs with
    findings): the check as a pickle of it alone would give it, the events as the log holds
    them, and the check's events are the events part's, written once."""
    rb = sample_run(wiki)
    if kind is not None:
        tamper(kind, rb)
    rc = _packed_check(wiki, rb.run.path)
    events = list(rc.assembly.log.events)
    packed = pack_pair(rc, events)
    alone: RunCheck = pickle.loads(pickle.dumps(rc, protocol=pickle.HIGHEST_PROTOCOL))
    check, shipped_events = unpack_part(packed, 0), unpack_part(packed, 1)
    assert isinstance(check, RunCheck)
    assert _shown(check) == _shown(alone) == _shown(rc)
    assert shipped_events == events and events
    assert all(a is b for a, b in zip(check.assembly.log.events, check.inputs.log.events, strict=True))
    assert unpack_part(packed, 0) is not unpack_part(packed, 0)  # a fresh copy on each reading
    if kind is None:
        assert not rc.findings
    else:
        assert rc.findings


def test_the_events_are_packed_once(wiki: Path) -> None:
    """The check holds the events too: they are written into the stream once, not deflated twice."""
    rc = _packed_check(wiki, sample_run(wiki).run.path)
    events = list(rc.assembly.log.events)
    each = [pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL) for value in (rc, events)]
    assert len(zlib.decompress(pack_pair(rc, events))) < sum(map(len, each))
    assert len(pack_pair(rc, events)) < len(zlib.compress(b"".join(each), 1))


_IDS = [CheckId.SNAPSHOT, CheckId.ASSEMBLER, "C-SNAPSHOT", "C-NOT-A-CHECK"]


@pytest.mark.parametrize("check_id", _IDS, ids=["member", "another", "its-value", "other"])
def test_a_status_pickles_as_plain_values_and_reads_back_the_same(check_id: str) -> None:
    """A status crosses as plain values: a check id member reads back as that member, a string as
    a string (never turned into a member), with its status, detail and counts."""
    status = CheckStatus(check_id, "warn", "two of three", {"walled": 2})
    _, args = status.__reduce__()
    assert not any(isinstance(arg, CheckId) for arg in args)
    again = pickle.loads(pickle.dumps(status, protocol=pickle.HIGHEST_PROTOCOL))
    assert again == status
    assert type(again.check_id) is type(check_id)
    if isinstance(check_id, CheckId):
        assert again.check_id is check_id
    assert again.counts == {"walled": 2} and again.detail == "two of three" and again.status == "warn"


def test_a_source_shipped_without_its_spans_is_the_check_less_its_spans(wiki: Path) -> None:
    """The sources a worker ships are its verified checks with no spans, every other field as it was."""
    rb = sample_run(wiki)
    done = runchecks.check_whole_run(str(rb.run.path), str(wiki), KeyRing(), "runs/alpha")
    assert done.sources
    reader = CheckedSnapshots(rb.run.sources_dir, assets_root=wiki)
    for sid, shipped in done.sources.items():
        assert shipped.spans == ()
        reader.want(sid, [(0, 1)])
    reader.load()
    for sid, shipped in done.sources.items():
        full = reader.get(sid)
        assert full.spans
        assert runchecks._without_spans(full) == replace(full, spans=()) == shipped
        bare = replace(full, spans=())
        assert runchecks._without_spans(bare) is bare


def test_dropping_the_spans_keeps_every_other_field() -> None:
    """Every field but the spans is carried over, each in its place (a check with each field set
    to a value of its own)."""
    from dataclasses import fields

    from publisher.parallel import SnapshotCheck

    values: dict[str, Any] = {item.name: f"value of {item.name}" for item in fields(SnapshotCheck)}
    values["spans"] = ("a span",)
    check = SnapshotCheck(**values)
    bare = runchecks._without_spans(check)
    assert bare == replace(check, spans=())
    assert {item.name: getattr(bare, item.name) for item in fields(SnapshotCheck)} == {**values, "spans": ()}
