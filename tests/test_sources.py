"""Acquisition into a run, at the library level: register, local PDF, bounded reads, span search."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import pytest
from _policy import KeyRing
from conftest import minimal_pdf

from publisher.acquire.sources import MAX_READ_WINDOW, Metadata, add_local_pdf, find_spans, read_window, register
from publisher.gate.freshness import freshness
from publisher.kernel.assets import AssetChecker
from publisher.kernel.errors import EventLogError, IntegrityError, PublisherError, UsageError
from publisher.kernel.eventlog import read_log
from publisher.kernel.models import EventType
from publisher.kernel.reasons import Reason
from publisher.runs import Run, find_wiki_root, init_run

URL = "https://example.org/trial"


def _text_file(tmp_path: Path, text: str, name: str = "t.txt") -> Path:
    path = tmp_path / name
    path.write_bytes(text.encode("utf-8"))
    return path


def _nothing_written(run: Run, events_before: bytes = b"") -> None:
    assert run.store.ids() == []
    assert [n for n in os.listdir(run.sources_dir) if not n.startswith(".")] == []
    assert run.events_path.read_bytes() == events_before


# --- runs ------------------------------------------------------------------------------------


def test_init_run_layout_and_config(tmp_path: Path) -> None:
    run = init_run(tmp_path / "runs" / "r1", "r1", gate=True)
    for folder in (run.sources_dir, run.extractions_dir, run.appraisals_dir, run.outputs_dir):
        assert folder.is_dir()
    assert run.events_path.read_bytes() == b""
    config = run.load_config()
    assert config.run_slug == "r1" and config.gates.evidence_kernel is True
    assert config.created_at is not None and config.created_at.endswith("Z") and "." not in config.created_at
    assert Run.open(run.path).slug() == "r1"


@pytest.mark.parametrize("slug", ["", "-lead", "has space", "a/b", "../up", "x" * 129, "é"])
def test_init_run_refuses_bad_slugs(tmp_path: Path, slug: str) -> None:
    with pytest.raises(UsageError):
        init_run(tmp_path / "r", slug)
    assert not (tmp_path / "r").exists()


def test_init_run_refuses_an_existing_run(tmp_path: Path) -> None:
    run = init_run(tmp_path / "r", "r")
    before = run.config_path.read_bytes()
    with pytest.raises(UsageError):
        init_run(tmp_path / "r", "other")
    assert run.config_path.read_bytes() == before


def test_init_run_on_a_file_is_a_usage_error(tmp_path: Path) -> None:
    (tmp_path / "f").write_text("x")
    with pytest.raises(UsageError):
        init_run(tmp_path / "f", "r")


def test_open_and_config_errors(tmp_path: Path) -> None:
    with pytest.raises(UsageError):
        Run.open(tmp_path / "missing")
    (tmp_path / "empty").mkdir()
    with pytest.raises(UsageError):
        Run.open(tmp_path / "empty")
    run = init_run(tmp_path / "r", "r")
    run.config_path.write_text('{"schema_version": 1, "schema_version": 1}')
    with pytest.raises(UsageError) as info:
        run.load_config()
    assert info.value.reason is Reason.SCHEMA_ERROR


def test_upstream_config_without_slug_uses_the_folder_name(tmp_path: Path) -> None:
    folder = tmp_path / "outputs" / "deep-research" / "my-review"
    folder.mkdir(parents=True)
    (folder / "config.json").write_text(json.dumps({"schema_version": 1, "question": "q?"}))
    run = Run.open(folder)
    assert run.slug() == "my-review"
    assert run.load_config().extras() == {"question": "q?"}


def test_find_wiki_root(tmp_path: Path) -> None:
    (tmp_path / "wiki" / "runs" / "r").mkdir(parents=True)
    (tmp_path / "wiki" / "mkdocs.yml").write_text("site_name: x\n")
    assert find_wiki_root(tmp_path / "wiki" / "runs" / "r") == (tmp_path / "wiki").resolve()
    assert find_wiki_root(tmp_path) != (tmp_path / "wiki").resolve()


# --- register --------------------------------------------------------------------------------


def test_register_stores_exact_text_and_logs_a_non_fresh_event(run: Run, tmp_path: Path) -> None:
    text = "Line one\r\nDecomposed cafe\u0301 and astral \U0001f600\n"
    outcome = register(run, URL, _text_file(tmp_path, text), Metadata(pmid="123", title="T"))
    assert outcome.created and outcome.snapshot.text == text
    assert outcome.snapshot.access.value == "web" and outcome.snapshot.origin.value == "web"
    assert outcome.snapshot.paper is not None and outcome.snapshot.paper.pmid == "123"
    assert run.store.read(outcome.snapshot.source_id) == outcome.snapshot
    state = read_log(run.events_path)
    assert state.intact and len(state.events) == 1
    event = state.events[0]
    assert event.type is EventType.REGISTER and event.fresh is False
    assert event.sha256 == hashlib.sha256(text.encode()).hexdigest() and event.url == URL
    config = run.load_config()
    got = freshness(outcome.snapshot, state.events, config.created_at, AssetChecker(None), trusted_keys=KeyRing())
    assert not got.fresh and got.reason is Reason.NO_FRESH_FETCH


def test_register_twice_keeps_the_first_record_and_logs_again(run: Run, tmp_path: Path) -> None:
    path = _text_file(tmp_path, "same text")
    first = register(run, URL, path, Metadata(title="First"))
    second = register(run, URL, path, Metadata(title="Second"))
    assert first.created and not second.created
    assert second.snapshot.title == "First"
    assert len(read_log(run.events_path).events) == 2


@pytest.mark.parametrize(
    "meta",
    [
        Metadata(access="everything"),
        Metadata(origin="somewhere"),
        Metadata(pmid="12a3"),
        Metadata(pmcid="not-a-pmcid"),
    ],
)
def test_register_with_bad_metadata_writes_nothing(run: Run, tmp_path: Path, meta: Metadata) -> None:
    with pytest.raises(UsageError):
        register(run, URL, _text_file(tmp_path, "text"), meta)
    _nothing_written(run)


def test_register_refuses_bad_input_files(run: Run, tmp_path: Path) -> None:
    bad = tmp_path / "bad.txt"
    bad.write_bytes(b"caf\xe9")
    for path in (bad, tmp_path / "missing.txt", tmp_path):
        with pytest.raises(UsageError):
            register(run, URL, path)
    _nothing_written(run)


def test_nothing_is_written_on_a_torn_log(run: Run, tmp_path: Path) -> None:
    torn = b'{"schema_version":1,"event_id":"ev-0001"'
    run.events_path.write_bytes(torn)
    with pytest.raises(EventLogError) as info:
        register(run, URL, _text_file(tmp_path, "text"))
    assert info.value.exit_status == 1
    _nothing_written(run, torn)


def test_pmcid_is_normalised(run: Run, tmp_path: Path) -> None:
    outcome = register(run, URL, _text_file(tmp_path, "t"), Metadata(pmcid="12345"))
    assert outcome.snapshot.paper is not None and outcome.snapshot.paper.pmcid == "PMC12345"


# --- reads and span search -------------------------------------------------------------------


@pytest.fixture
def stored(run: Run, tmp_path: Path) -> tuple[Run, str, str]:
    text = "\U0001f600 Results: the SMD was -0.41 (95% CI -0.7 to -0.1). Results again.\r\nEnd."
    outcome = register(run, URL, _text_file(tmp_path, text))
    return run, outcome.snapshot.source_id, text


def test_read_window_returns_exact_code_points_and_logs_a_read(stored: tuple[Run, str, str]) -> None:
    run, sid, text = stored
    window = read_window(run, sid, 2, 10)
    assert window == {"source_id": sid, "start": 2, "end": 10, "text": text[2:10], "length": len(text)}
    whole = read_window(run, sid)
    assert whole["text"] == text and whole["end"] == len(text)
    events = read_log(run.events_path).events
    assert [e.type for e in events] == [EventType.REGISTER, EventType.READ, EventType.READ]
    assert not any(e.fresh for e in events[1:])


@pytest.mark.parametrize(("start", "end"), [(-1, 3), (5, 4), (-3, None)])
def test_read_window_refuses_bad_windows(stored: tuple[Run, str, str], start: int, end: int | None) -> None:
    run, sid, _ = stored
    before = run.events_path.read_bytes()
    with pytest.raises(UsageError):
        read_window(run, sid, start, end)
    assert run.events_path.read_bytes() == before


@pytest.mark.parametrize(("start", "end"), [(0, 10_000), (5, 10_000), (10_000, None), (10_000, 10_005)])
def test_read_window_past_the_end_is_clamped_with_a_note(
    stored: tuple[Run, str, str], start: int, end: int | None
) -> None:
    run, sid, text = stored
    window = read_window(run, sid, start, end)
    lo = min(start, len(text))
    assert (window["start"], window["end"], window["text"]) == (lo, len(text), text[lo:])
    assert str(len(text)) in window["note"] and "clamped" in window["note"]
    last = read_log(run.events_path).events[-1]
    assert last.type is EventType.READ and f"window {lo}-{len(text)}" in (last.detail or "")


def test_read_window_inside_the_text_has_no_note(stored: tuple[Run, str, str]) -> None:
    run, sid, text = stored
    assert "note" not in read_window(run, sid, 0, len(text))


def test_read_window_is_bounded(run: Run, tmp_path: Path) -> None:
    text = "x" * (MAX_READ_WINDOW + 10)
    sid = register(run, URL, _text_file(tmp_path, text)).snapshot.source_id
    assert read_window(run, sid)["end"] == MAX_READ_WINDOW
    with pytest.raises(UsageError):
        read_window(run, sid, 0, MAX_READ_WINDOW + 1)


def test_find_spans_reports_code_point_offsets(stored: tuple[Run, str, str]) -> None:
    run, sid, text = stored
    found = find_spans(run, sid, "Results", context=5)
    assert found["source_id"] == sid and found["query"] == "Results"
    assert [m["start"] for m in found["matches"]] == [2, text.index("Results again")]
    for match in found["matches"]:
        assert text[match["start"] : match["end"]] == "Results"
        assert text[match["window_start"] : match["window_end"]] == match["window"]
        assert match["window_start"] == max(0, match["start"] - 5)
    assert find_spans(run, sid, "results", ignore_case=True)["matches"][0]["start"] == 2
    assert find_spans(run, sid, "absent")["matches"] == []
    with pytest.raises(UsageError):
        find_spans(run, sid, "")


def test_reads_of_a_tampered_snapshot_fail_closed(stored: tuple[Run, str, str]) -> None:
    run, sid, _ = stored
    path = run.store.path_for(sid)
    path.chmod(0o644)
    path.write_bytes(path.read_bytes().replace(b"-0.41", b"-0.51"))
    before = run.events_path.read_bytes()
    for call in (lambda: read_window(run, sid), lambda: find_spans(run, sid, "SMD")):
        with pytest.raises(IntegrityError) as info:
            call()
        assert info.value.reason is Reason.SNAPSHOT_HASH_MISMATCH
    assert run.events_path.read_bytes() == before


def test_reads_of_unknown_and_malformed_ids(run: Run) -> None:
    with pytest.raises(IntegrityError) as info:
        read_window(run, "src-" + "c" * 64)
    assert info.value.reason is Reason.UNKNOWN_SOURCE
    with pytest.raises(IntegrityError) as info:
        read_window(run, "src-../../config")
    assert info.value.reason is Reason.SNAPSHOT_HASH_MISMATCH


def test_corpus_span_offsets_reslice_exactly(run: Run, corpus_dir: Path) -> None:
    base = corpus_dir / "evidence-inference"
    spans = [json.loads(line) for line in (base / "spans.jsonl").read_text().splitlines()[:40]]
    ids: dict[str, str] = {}
    for span in spans:
        path = base / "texts" / f"PMC{span['pmcid']}.txt"
        if not path.is_file():
            continue
        if span["pmcid"] not in ids:
            outcome = register(run, f"https://www.ncbi.nlm.nih.gov/pmc/articles/PMC{span['pmcid']}/", path)
            assert outcome.snapshot.text == path.read_bytes().decode("utf-8")
            ids[span["pmcid"]] = outcome.snapshot.source_id
        sid = ids[span["pmcid"]]
        window = read_window(run, sid, span["start"], span["end"], log=False)
        assert window["text"] == span["excerpt"]
        found = find_spans(run, sid, span["excerpt"])
        assert any((m["start"], m["end"]) == (span["start"], span["end"]) for m in found["matches"])
    assert ids, "no corpus text matched spans.jsonl"


# --- local PDFs ------------------------------------------------------------------------------


@pytest.fixture
def wiki(tmp_path: Path) -> Path:
    root = tmp_path / "wiki"
    root.mkdir()
    (root / "mkdocs.yml").write_text("site_name: test\n")
    return root


def test_local_pdf_is_copied_once_and_fresh(run: Run, wiki: Path, tmp_path: Path) -> None:
    pdf = tmp_path / "paper.pdf"
    data = minimal_pdf(["First page text", "Second page (text)"])
    pdf.write_bytes(data)
    digest = hashlib.sha256(data).hexdigest()
    outcome = add_local_pdf(run, pdf, wiki, Metadata(doi="10.1/x"))
    snap = outcome.snapshot
    assert snap.asset is not None
    assert snap.asset.path == f"assets/papers/{digest}.pdf" and snap.asset.sha256 == digest
    assert snap.asset.bytes == len(data)
    assert (wiki / snap.asset.path).read_bytes() == data
    assert snap.origin.value == "user-supplied-pdf" and snap.url == f"urn:sha256:{digest}"
    assert "First page text" in snap.text and "Second page (text)" in snap.text
    assert snap.pages is not None and len(snap.pages) == 2
    for page in snap.pages:
        assert 0 <= page.start <= page.end <= len(snap.text)
    event = outcome.event
    assert event.type is EventType.LOCAL_PDF and event.fresh and event.sha256 == digest
    created_at = run.load_config().created_at
    assert freshness(snap, [event], created_at, AssetChecker(wiki), trusted_keys=KeyRing()).fresh
    again = add_local_pdf(run, pdf, wiki)
    assert not again.created
    assert os.listdir(wiki / "assets" / "papers") == [f"{digest}.pdf"]
    (wiki / snap.asset.path).chmod(0o644)
    (wiki / snap.asset.path).write_bytes(data + b"%")
    got = freshness(snap, [event], created_at, AssetChecker(wiki), trusted_keys=KeyRing())
    assert not got.fresh and got.reason is Reason.ASSET_HASH_MISMATCH


def test_local_pdf_refuses_a_library_file_with_other_bytes(run: Run, wiki: Path, tmp_path: Path) -> None:
    data = minimal_pdf(["Text"])
    pdf = tmp_path / "p.pdf"
    pdf.write_bytes(data)
    target = wiki / "assets" / "papers" / f"{hashlib.sha256(data).hexdigest()}.pdf"
    target.parent.mkdir(parents=True)
    target.write_bytes(b"something else")
    with pytest.raises(IntegrityError):
        add_local_pdf(run, pdf, wiki)
    assert target.read_bytes() == b"something else"
    _nothing_written(run)


def test_local_pdf_failures_write_nothing(run: Run, wiki: Path, tmp_path: Path) -> None:
    not_pdf = tmp_path / "x.pdf"
    not_pdf.write_bytes(b"plain text, not a PDF")
    good = tmp_path / "g.pdf"
    good.write_bytes(minimal_pdf(["ok"]))
    for args in ((tmp_path / "missing.pdf", wiki), (good, tmp_path / "no-wiki")):
        with pytest.raises(PublisherError) as info:
            add_local_pdf(run, *args)
        assert info.value.exit_status == 2
    _nothing_written(run)
    # Bytes that are not a PDF were acquired, so the attempt is logged (never fresh), and the
    # bytes are kept in the run's raw/ folder, not in the wiki's library.
    with pytest.raises(PublisherError) as info:
        add_local_pdf(run, not_pdf, wiki)
    assert info.value.exit_status == 2
    assert run.store.ids() == []
    [failed] = read_log(run.events_path).events
    assert failed.type is EventType.FETCH_FAILED and not failed.fresh and failed.source_id is None
    assert failed.receipt is not None and failed.receipt.raw_sha256 is not None
    assert (run.raw_dir / failed.receipt.raw_sha256).read_bytes() == not_pdf.read_bytes()
    assert not (wiki / "assets").exists() or os.listdir(wiki / "assets" / "papers") == []


@pytest.mark.parametrize(
    "last", [b'{"schema_version":1,"event_id":"ev-0002"', b'{"schema_version":1,"event_id":"ev-0002"}\n']
)
def test_a_torn_or_invalid_last_line_refuses_a_register_and_a_read(run: Run, tmp_path: Path, last: bytes) -> None:
    """Before the snapshot is written (register) and before the read is logged: nothing is written."""
    register(run, URL, _text_file(tmp_path, "the text of the source"))
    sid = read_log(run.events_path).events[-1].source_id
    assert sid is not None
    bad = run.events_path.read_bytes() + last
    run.events_path.write_bytes(bad)
    snapshots = sorted(p.name for p in run.sources_dir.iterdir())
    with pytest.raises(EventLogError):
        register(run, URL + "/other", _text_file(tmp_path, "another text", "u.txt"))
    with pytest.raises(EventLogError):
        read_window(run, sid, 0, 5)
    assert run.events_path.read_bytes() == bad
    assert sorted(p.name for p in run.sources_dir.iterdir()) == snapshots


def test_a_read_parses_only_the_logs_last_line(run: Run, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A logged read costs the same on a long log as on a short one: the append reads the last
    line for its place in the chain, and nothing reads the rest (agents read hundreds of times)."""
    from publisher.kernel import eventlog

    register(run, URL, _text_file(tmp_path, "the text of the source"))
    sid = read_log(run.events_path).events[-1].source_id
    assert sid is not None
    for _ in range(30):
        read_window(run, sid, 0, 5)
    placed: list[bytes] = []
    parsed: list[bytes] = []
    real_place, real_parse = eventlog._event_place, eventlog._parse_event

    def counted_place(line: bytes) -> object:
        placed.append(line)
        return real_place(line)

    def counted_parse(line: bytes) -> object:
        parsed.append(line)
        return real_parse(line)

    monkeypatch.setattr(eventlog, "_event_place", counted_place)
    monkeypatch.setattr(eventlog, "_parse_event", counted_parse)
    window = read_window(run, sid, 0, 8)
    assert len(placed) == 1 and not parsed  # the append's own look at the last line, without the model
    events = read_log(run.events_path).events
    assert window["text"] == "the text" and len(events) == 32 and events[-1].type == EventType.READ
    assert len(parsed) == 32  # read_log's, one a line
