"""Revisions: a changed source re-acquired later is a new snapshot that supersedes the old one;
claims on the old one keep their admissibility when assessed and say "superseded" now."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from _claims_helpers import CONCEPT, ClaimsWiki, claims_wiki
from _policy import policy_of
from _wiki_helpers import Claim, RunBuilder, build_wiki, make_wiki
from conftest import CliResult, make_record

from publisher.acquire.revisions import refuse_other_work
from publisher.kernel.canonical import canonical_bytes
from publisher.kernel.errors import UsageError
from publisher.kernel.models import Snapshot
from publisher.runs import Run, init_run
from publisher.wiki.check import check_wiki
from publisher.wiki.revisions import window_change

Cli = Callable[..., CliResult]


class _Page(BaseHTTPRequestHandler):
    body: list[bytes]

    def log_message(self, format: str, *args: object) -> None:
        return

    def do_GET(self) -> None:
        if self.path != "/page.txt":
            self.send_error(404)
            return
        self.send_response(200)
        self.send_header("Content-Type", "text/plain; charset=utf-8")
        self.send_header("Content-Length", str(len(self.body[0])))
        self.end_headers()
        self.wfile.write(self.body[0])


@pytest.fixture
def page(no_proxy: None) -> Iterator[tuple[str, list[bytes]]]:
    body = [b"Guideline\nDose: 10 mg daily."]
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), type("H", (_Page,), {"body": body}))
    httpd.daemon_threads = True
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}/page.txt", body
    finally:
        httpd.shutdown()
        httpd.server_close()


def _run(wiki: Path, slug: str, created_at: str) -> Run:
    """A run of the wiki created at ``created_at`` (runs made in one second are told apart)."""
    run = init_run(wiki / "runs" / slug, slug)
    config = json.loads(run.config_path.read_text(encoding="utf-8"))
    config["created_at"] = created_at
    run.config_path.chmod(0o644)
    run.config_path.write_bytes(canonical_bytes(config) + b"\n")
    return run


def _snapshot(run: Run, source_id: str) -> Snapshot:
    return run.store.read(source_id)


def test_a_later_fetch_and_revise_make_a_chain_of_three(
    cli: Cli, tmp_path: Path, page: tuple[str, list[bytes]]
) -> None:
    url, body = page
    wiki = make_wiki(tmp_path / "wiki")
    first = _run(wiki, "one", "2026-01-01T00:00:00Z")
    second = _run(wiki, "two", "2026-01-02T00:00:00Z")
    third = _run(wiki, "three", "2026-01-03T00:00:00Z")
    out = cli("source", "fetch", "--run-dir", first.path, "--url", url, "--json")
    assert out.status == 0, out.err
    one = out.json()["source_id"]
    assert out.json()["supersedes"] is None
    body[0] = b"Guideline\nDose: 20 mg daily."
    out = cli("source", "fetch", "--run-dir", second.path, "--url", url, "--json")
    assert out.status == 0, out.err
    two = out.json()["source_id"]
    assert out.json()["supersedes"] == one  # the same URL in a later run: a revision
    events = [json.loads(line) for line in second.events_path.read_text(encoding="utf-8").splitlines()]
    assert events[-1]["supersedes"] == one  # in the event too (signed with it when signed)
    # Unchanged: nothing to revise, nothing stored.
    before = sorted(p.name for p in third.sources_dir.iterdir())
    out = cli("source", "revise", "--run-dir", third.path, "--source-id", two, "--json")
    assert out.status != 0 and out.json()["error"]["source_id"] == two
    assert sorted(p.name for p in third.sources_dir.iterdir()) == before
    body[0] = b"Guideline\nDose: 25 mg daily, with food."
    out = cli("source", "revise", "--run-dir", third.path, "--source-id", two, "--json")
    assert out.status == 0, out.err
    three = out.json()["source_id"]
    assert _snapshot(third, three).supersedes == two
    out = cli("source", "revisions", one, "--wiki", wiki, "--json")
    assert out.status == 0, out.err
    rows = out.json()["revisions"]
    assert [(r["revision"], r["source_id"], r["current"]) for r in rows] == [
        (1, one, False),
        (2, two, False),
        (3, three, True),
    ]
    assert cli("source", "revisions", three, "--wiki", wiki, "--json").json()["revisions"] == rows


def test_supersedes_is_sealed(cli: Cli, tmp_path: Path, page: tuple[str, list[bytes]]) -> None:
    url, body = page
    wiki = make_wiki(tmp_path / "wiki")
    first = _run(wiki, "one", "2026-01-01T00:00:00Z")
    second = _run(wiki, "two", "2026-01-02T00:00:00Z")
    assert cli("source", "fetch", "--run-dir", first.path, "--url", url).status == 0
    body[0] = b"Changed text."
    out = cli("source", "fetch", "--run-dir", second.path, "--url", url, "--json")
    sid = out.json()["source_id"]
    path = second.sources_dir / f"{sid}.json"
    data = json.loads(path.read_text(encoding="utf-8"))
    del data["supersedes"]  # hide that it is a revision
    path.chmod(0o644)
    path.write_text(json.dumps(data), encoding="utf-8")
    out = cli("source", "read", "--run-dir", second.path, "--source-id", sid, "--json")
    assert out.status != 0 and out.json()["error"]["reason_code"] == "SNAPSHOT_HASH_MISMATCH"


def _plant(wiki: Path, slug: str, created_at: str, url: str, text: str) -> str:
    """What anyone who writes the wiki's files can add: a run of their own holding a snapshot that
    verifies (it is content-addressed and self-sealed) but that no trusted key acquired."""
    from publisher.kernel.store import build_record

    run = _run(wiki, slug, created_at)
    record = build_record(
        url=url, text=text, title="Guideline", retrieved_at="2099-01-01T00:00:00Z", access="web", origin="web",
        paper=None,
    )  # fmt: skip
    run.sources_dir.mkdir(exist_ok=True)
    (run.sources_dir / f"{record['source_id']}.json").write_bytes(canonical_bytes(record) + b"\n")
    return str(record["source_id"])


def test_on_a_signed_wiki_a_planted_snapshot_is_no_revision(
    cli: Cli, tmp_path: Path, page: tuple[str, list[bytes]]
) -> None:
    """A planted copy of the URL, 'retrieved' later than the real one, would be the newest revision
    a new fetch supersedes: the cited first revision would never read as superseded (a fork of its
    chain), and 'source revisions' would name the planted text as current. Only snapshots that a
    trusted key acquired are revisions."""
    url, body = page
    wiki = tmp_path / "wiki"
    assert cli("new", wiki).status == 0
    first = _run(wiki, "one", "2026-01-01T00:00:00Z")
    out = cli("source", "fetch", "--run-dir", first.path, "--url", url, "--json")
    assert out.status == 0 and out.json()["signed_by"], out.err
    one = out.json()["source_id"]
    planted = _plant(wiki, "planted", "2026-01-02T00:00:00Z", url, "Guideline\nDose: none needed.")
    third = _run(wiki, "three", "2026-01-03T00:00:00Z")
    body[0] = b"Guideline\nDose: 20 mg daily."
    out = cli("source", "fetch", "--run-dir", third.path, "--url", url, "--json")
    assert out.status == 0, out.err
    new = out.json()["source_id"]
    assert out.json()["supersedes"] == one
    out = cli("source", "revisions", one, "--wiki", wiki, "--json")
    assert out.status == 0, out.err
    rows = out.json()["revisions"]
    assert [(r["source_id"], r["current"]) for r in rows] == [(one, False), (new, True)]
    out = cli("source", "revisions", planted, "--wiki", wiki, "--json")
    assert out.status == 2 and out.json()["error"]["source_id"] == planted
    assert len(out.err_lines) == 1
    # Named explicitly, it is refused as a revision's predecessor too, nothing written.
    before = sorted(p.name for p in third.sources_dir.iterdir())
    body[0] = b"Guideline\nDose: 30 mg daily."
    out = cli("source", "revise", "--run-dir", third.path, "--source-id", planted, "--json")
    assert out.status == 2 and out.json()["error"]["source_id"] == planted, out.err
    assert sorted(p.name for p in third.sources_dir.iterdir()) == before


def _record(text: str, doi: str, basis: str) -> dict[str, object]:
    identity = {"doi": {"value": doi, "basis": basis, "via": "HTML meta citation_doi"}}
    identity["title"] = {"value": "A trial", "basis": "document", "via": "HTML <title>"}
    return make_record(text=text, paper={"pmid": None, "doi": doi, "pmcid": None}, identity=identity)


def test_a_revision_of_another_work_is_refused() -> None:
    old = Snapshot.model_validate(_record("Version one.", "10.1000/first", "document"))
    with pytest.raises(UsageError) as info:
        refuse_other_work(old, _record("Version two.", "10.1000/second", "document"))
    assert info.value.context["field"] == "doi"
    refuse_other_work(old, _record("Version two.", "10.1000/FIRST", "document"))  # the same DOI: fine
    refuse_other_work(old, _record("Version two.", "10.1000/second", "asserted"))  # an assertion joins nothing
    with pytest.raises(UsageError):
        refuse_other_work(old, _record("Version one.", "10.1000/first", "document"))  # unchanged


def test_window_change_reports_each_state() -> None:
    old = "Intro text. Dose: 10 mg daily. Closing remark."
    s, e = old.index("Dose"), old.index(" Closing")
    assert window_change(old, s, e, old.replace("Intro", "Preface"))["state"] == "unchanged"
    changed = window_change(old, s, e, old.replace("10 mg", "20 mg"))
    assert changed["state"] == "changed" and ["-", "10"] in changed["diff"] and ["+", "20"] in changed["diff"]
    assert window_change(old, s, e, "Entirely different.")["state"] == "gone"


# --- a claim on the first of three revisions --------------------------------------------------


@pytest.fixture
def cw(tmp_path: Path, corpus_dir: Path) -> ClaimsWiki:
    return claims_wiki(tmp_path / "wiki", corpus_dir)


def _revise(cw: ClaimsWiki, slug: str, supersedes: str, text: str) -> str:
    rb = RunBuilder(cw.wiki, slug, question="Revised")
    record = cw.rb.records[cw.a_full]
    sid = rb.source(record["url"], text, paper=record["paper"], supersedes=supersedes)
    rb.extraction(f"pmcid:{record['paper']['pmcid']}", [Claim("spans[0]", "opening", sid, 0, 40)])
    rb.assemble()
    return sid


def test_a_claim_on_the_first_of_three_revisions(cli: Cli, cw: ClaimsWiki) -> None:
    label = cw.labels_of(cw.a_full)[0]
    out = cli(
        "assess", "--wiki", cw.wiki, "--concept", CONCEPT, "--claim-id", "c1", "--statement", "It helps.",
        "--status", "S", "--evidence", label, "--json",
    )  # fmt: skip
    assert out.status == 0, out.err  # admissible then
    state = check_wiki(cw.wiki, policy=policy_of(cw.wiki)).claims[0]
    assert state.provenance_valid
    record = cw.rb.records[cw.a_full]
    text = cw.a_text
    start, end = next((r["start"], r["end"]) for r in _refs(cw, label))
    quoted = text[start:end]
    words = quoted.split(" ")
    changed = " ".join([*words[:-1], "REVISED"]) if len(words) > 1 else "REVISED"
    two = _revise(cw, "trials-2", cw.a_full, text[:start] + changed + text[end:])
    three = _revise(cw, "trials-3", two, text[:start] + changed + text[end:] + "\nErratum published.")
    assert record["url"]
    build_wiki(cw.wiki)
    site = cw.wiki / "site"
    (claim,) = json.loads((site / "claims.json").read_text(encoding="utf-8"))["claims"]
    assert claim["admissible_when_assessed"] is True  # history holds
    assert claim["provenance_now"]["valid"] is False
    assert any("superseded by revision 3" in r and three[:16] in r for r in claim["provenance_now"]["reasons"])
    old_page = (site / "sources" / cw.a_full / "index.html").read_text(encoding="utf-8")
    assert "Superseded by revision 3" in old_page and three in old_page
    assert "<del>" in old_page and "<ins>REVISED</ins>" in old_page  # the diff of the cited window


def _refs(cw: ClaimsWiki, label: str) -> list[dict[str, int]]:
    from publisher.wiki.concepts import parse_concept

    doc = parse_concept(cw.concept.read_text(encoding="utf-8"))
    note = next(n for n in doc.footnotes if n.label == label)
    return [{"start": r.start, "end": r.end} for r in note.refs]
