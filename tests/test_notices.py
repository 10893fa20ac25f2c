"""Notices of retraction and correction: asked of a registry (a loopback server answering with
recorded Crossref responses), logged signed with the raw answer, read by the build only."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import unquote

import pytest
from _claims_helpers import CONCEPT, ClaimsWiki, claims_wiki
from _policy import policy_of
from _wiki_helpers import Claim, build_wiki, leftovers, refused_build, tree_digest
from conftest import CliResult

from publisher.acquire.notices import NOTICES_FILE, NOTICES_RAW, parse_crossref, read_notices
from publisher.acquire.signing import new_key_pair
from publisher.kernel.canonical import canonical_bytes
from publisher.wiki.check import check_wiki
from publisher.wiki.promote import promote

Cli = Callable[..., CliResult]

RETRACTED = "10.5555/retracted.1"
CORRECTED = "10.5555/corrected.2"
QUIET = "10.5555/quiet.3"
MALFORMED = "10.5555/malformed.4"
MISSING = "10.5555/missing.5"
SLOW = "10.5555/slow.6"


def _work(doi: str, **extra: object) -> bytes:
    """A response in Crossref's REST format (``works/{doi}``), as recorded from the API."""
    message = {"DOI": doi, "type": "journal-article", "title": ["A trial"], "prefix": "10.5555", **extra}
    return json.dumps({"status": "ok", "message-type": "work", "message-version": "1.0.0", "message": message}).encode()


def _update(kind: str, notice: str, source: str, date: list[int]) -> dict[str, object]:
    return {
        "updated": {"date-parts": [date], "date-time": "2021-03-04T00:00:00Z", "timestamp": 1614816000000},
        "DOI": notice,
        "type": kind,
        "source": source,
        "label": kind.title(),
    }


_RETRACTION = _update("retraction", "10.5555/notice.r", "retraction-watch", [2021, 3, 4])
_CORRECTION = _update("correction", "10.5555/notice.c", "publisher", [2020, 1, 2])
RESPONSES = {
    RETRACTED: _work(RETRACTED, **{"updated-by": [_RETRACTION]}),
    CORRECTED: _work(CORRECTED, **{"updated-by": [_CORRECTION]}),
    QUIET: _work(QUIET),
    MALFORMED: b'{"status": "ok", "message-type": "work", "message": ',
}


class _Registry(BaseHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:
        return

    def do_GET(self) -> None:
        doi = unquote(self.path.removeprefix("/works/"))
        if doi == SLOW:
            time.sleep(1.5)
        body = RESPONSES.get(doi)
        try:
            if body is None:
                self.send_error(404)
                return
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
        except (BrokenPipeError, ConnectionResetError):
            return  # the client gave up waiting (the timeout case)


@pytest.fixture
def registry(no_proxy: None) -> Iterator[str]:
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Registry)
    httpd.daemon_threads = True
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}"
    finally:
        httpd.shutdown()
        httpd.server_close()


@pytest.fixture
def cw(tmp_path: Path, corpus_dir: Path) -> ClaimsWiki:
    return claims_wiki(tmp_path / "wiki", corpus_dir)


def _doi_sources(cw: ClaimsWiki) -> dict[str, str]:
    """One snapshot per DOI (the document states it), each quoted by an accepted extraction."""
    out = {}
    for n, doi in enumerate((RETRACTED, CORRECTED, QUIET, MALFORMED, MISSING, SLOW)):
        text = f"Trial {n} report\nThe intervention reduced pain in trial {n}."
        identity = {
            "doi": {"value": doi, "basis": "document", "via": "HTML meta citation_doi"},
            "title": {"value": f"Trial {n}", "basis": "document", "via": "HTML <title>"},
        }
        sid = cw.rb.source(
            f"https://journal.example/{n}", text, paper={"pmid": None, "doi": doi, "pmcid": None},
            title=f"Trial {n}", identity=identity, access="full_text", origin="web",
        )  # fmt: skip
        start = text.index("The")
        cw.rb.extraction(f"doi:{doi}", [Claim("spans[0]", "pain", sid, start, len(text))], name=f"doi-{n}")
        out[doi] = sid
    cw.rb.assemble()
    promote(cw.rb.run.path, cw.wiki, concept=CONCEPT, policy=policy_of(cw.wiki))
    return out


def test_parse_crossref_reads_updates_and_refuses_other_bodies() -> None:
    (update,) = parse_crossref(RESPONSES[RETRACTED])
    assert (update.kind.value, update.relation, update.doi, update.date, update.source) == (
        "retraction", "updated-by", "10.5555/notice.r", "2021-03-04", "retraction-watch",
    )  # fmt: skip
    assert parse_crossref(RESPONSES[QUIET]) == []
    notice = _work("10.5555/notice.r", **{"update-to": [_update("retraction", RETRACTED, "publisher", [2021, 3, 4])]})
    (to,) = parse_crossref(notice)
    assert to.relation == "update-to" and not to.about_this_work
    other = _work("10.5555/x", **{"updated-by": [_update("new_version", "10.5555/y", "publisher", [2020, 1, 1])]})
    assert parse_crossref(other) == []  # an allow-list of kinds
    for bad in (RESPONSES[MALFORMED], b"[]", json.dumps({"status": "failed"}).encode(), b"\xff"):
        with pytest.raises(ValueError):
            parse_crossref(bad)


def test_notices_are_logged_and_failures_write_nothing(cli: Cli, cw: ClaimsWiki, registry: str) -> None:
    sources = _doi_sources(cw)
    out = cli("source", "notices", "--wiki", cw.wiki, "--registry", registry, "--timeout", "0.5", "--json")
    assert out.status == 1, out.err  # three DOIs could not be asked
    rows = {row["doi"]: row for row in out.json()["dois"]}
    assert set(rows) >= set(sources)
    assert not rows[MALFORMED]["ok"] and not rows[MISSING]["ok"] and not rows[SLOW]["ok"]
    assert [u["kind"] for u in rows[RETRACTED]["updates"]] == ["retraction"]
    assert [u["kind"] for u in rows[CORRECTED]["updates"]] == ["correction"]
    assert rows[QUIET]["updates"] == []
    state = read_notices(cw.wiki)
    assert state.intact and sorted(n.doi for n in state.events) == sorted([RETRACTED, CORRECTED, QUIET])
    raw = sorted(p.name for p in (cw.wiki / NOTICES_RAW).iterdir())
    assert raw == sorted(n.receipt.raw_sha256 for n in state.events)  # only what was logged is kept


def test_a_retracted_work_gives_no_credit_and_pages_say_so(cli: Cli, cw: ClaimsWiki, registry: str) -> None:
    sources = _doi_sources(cw)
    labels = [cw.labels_of(sources[RETRACTED])[0], cw.labels_of(sources[QUIET])[0]]
    args = [x for label in labels for x in ("--evidence", label)]
    out = cli(
        "assess", "--wiki", cw.wiki, "--concept", CONCEPT, "--claim-id", "c1", "--statement", "Pain falls.",
        "--status", "S", *args,
    )  # fmt: skip
    assert out.status == 0, out.err
    cli("source", "notices", "--wiki", cw.wiki, "--registry", registry, "--timeout", "0.5")
    build_wiki(cw.wiki)  # retracted: warn (the default) publishes
    site = cw.wiki / "site"
    (claim,) = json.loads((site / "claims.json").read_text(encoding="utf-8"))["claims"]
    assert claim["counts"]["works"] == 1 and claim["counts"]["retracted_works"] == 1
    retracted_page = (site / "sources" / sources[RETRACTED] / "index.html").read_text(encoding="utf-8")
    assert "RETRACTED" in retracted_page and "10.5555/notice.r" in retracted_page
    quiet_page = (site / "sources" / sources[QUIET] / "index.html").read_text(encoding="utf-8")
    assert f"no notice found in {registry} on " in quiet_page and "not retracted" not in quiet_page
    concept = (site / "concepts" / CONCEPT / "index.html").read_text(encoding="utf-8")
    assert 'class="pub-retracted"' in concept
    matrix = (site / "claims" / "index.html").read_text(encoding="utf-8")
    assert "retracted, no credit:" in matrix  # shown apart in the matrix too

    # retracted: fail refuses the build; the published site stays byte for byte.
    before = tree_digest(site)
    config = cw.wiki / "mkdocs.yml"
    config.write_text(config.read_text(encoding="utf-8") + "extra:\n  evidence:\n    retracted: fail\n", "utf-8")
    findings = refused_build(cw.wiki)
    notice = [f for f in findings if f.check == "C-NOTICE"]
    assert notice and notice[0].source_id == sources[RETRACTED] and notice[0].field == "retracted"
    assert tree_digest(site) == before and leftovers(cw.wiki) == []


def test_on_a_signed_wiki_notices_are_signed_or_refused(
    cli: Cli, tmp_path: Path, corpus_dir: Path, registry: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    private, public, _ = new_key_pair(tmp_path / "keys")
    (tmp_path / "wiki" / "keys").mkdir(parents=True)
    (tmp_path / "wiki" / "keys" / "wiki.pub").write_bytes(public.read_bytes())
    trusted = "extra:\n  evidence:\n    trusted_keys: [keys/wiki.pub]\n"
    cw = claims_wiki(tmp_path / "wiki", corpus_dir, key=private, extra=trusted)
    _doi_sources(cw)
    monkeypatch.delenv("PUBLISHER_SIGNING_KEY", raising=False)
    out = cli("source", "notices", "--wiki", cw.wiki, "--registry", registry, "--timeout", "0.5", "--json")
    assert out.status == 2 and not (cw.wiki / NOTICES_FILE).exists() and not (cw.wiki / NOTICES_RAW).exists()
    args = ("--registry", registry, "--timeout", "0.5", "--key", private)
    assert cli("source", "notices", "--wiki", cw.wiki, *args).status == 1  # three could not be asked
    state = read_notices(cw.wiki)
    assert len(state.events) == 3 and all(n.sig is not None for n in state.events)
    assert not [f for f in check_wiki(cw.wiki, policy=policy_of(cw.wiki)).findings if f.check == "C-NOTICE"]
    # An unsigned entry added by hand is a finding on a signed wiki.
    entry = json.loads((cw.wiki / NOTICES_FILE).read_bytes().splitlines()[-1])
    del entry["sig"]
    entry["notice_id"], entry["prev"] = "nt-0004", state.head
    with (cw.wiki / NOTICES_FILE).open("ab") as log:
        log.write(canonical_bytes(entry) + b"\n")
    assert [f.field for f in check_wiki(cw.wiki, policy=policy_of(cw.wiki)).findings if f.check == "C-NOTICE"] == [
        "sig"
    ]


def test_an_edited_notice_log_is_a_finding(cli: Cli, cw: ClaimsWiki, registry: str) -> None:
    _doi_sources(cw)
    cli("source", "notices", "--wiki", cw.wiki, "--registry", registry, "--timeout", "0.5")
    path = cw.wiki / NOTICES_FILE
    lines = path.read_bytes().splitlines(keepends=True)
    path.write_bytes(b"".join(reversed(lines)))  # reordered: the chain breaks
    assert any(f.check == "C-NOTICE" for f in check_wiki(cw.wiki, policy=policy_of(cw.wiki)).findings)


def test_a_retracted_work_cited_through_a_copy_without_its_doi_gives_no_credit(
    cli: Cli, cw: ClaimsWiki, registry: str
) -> None:
    """A work is one paper identity (CONTRACT 14): the retracted article and a copy that states
    only its PMCID (an archive's text without the DOI, a DOI written as a resolver link) are one
    work. Citing the copy must not escape the retraction the DOI's registry logged."""
    pmcid = "PMC7777777"
    texts = {
        "article": "Trial report\nThe intervention reduced pain in every arm.",
        "copy": "Trial report (archived copy)\nThe intervention reduced pain in every arm, as reported.",
        "link": "Trial report (mirror)\nThe intervention reduced pain, the mirror says.",
    }
    ids = {
        "article": {"doi": RETRACTED, "pmcid": pmcid},
        "copy": {"pmcid": pmcid},
        "link": {"doi": f"https://doi.org/{RETRACTED}"},  # as an upstream record may write it
    }
    sources = {}
    for name, text in texts.items():
        identity = {k: {"value": v, "basis": "document", "via": "HTML meta"} for k, v in ids[name].items()}
        identity["title"] = {"value": name, "basis": "document", "via": "HTML <title>"}
        paper = {"pmid": None, "doi": ids[name].get("doi"), "pmcid": ids[name].get("pmcid")}
        sid = cw.rb.source(f"https://mirror.example/{name}", text, paper=paper, title=name, identity=identity,
                           access="full_text", origin="web")  # fmt: skip
        start = text.index("The")
        cw.rb.extraction(f"web:{name}", [Claim("spans[0]", "pain", sid, start, len(text))], name=name)
        sources[name] = sid
    cw.rb.assemble()
    promote(cw.rb.run.path, cw.wiki, concept=CONCEPT, policy=policy_of(cw.wiki))
    for n, name in enumerate(("copy", "link")):
        out = cli("assess", "--wiki", cw.wiki, "--concept", CONCEPT, "--claim-id", f"c{n}", "--statement",
                  f"Pain falls ({name}).", "--status", "S", "--evidence", cw.labels_of(sources[name])[0])  # fmt: skip
        assert out.status == 0, out.err
    assert cli("source", "notices", "--wiki", cw.wiki, "--registry", registry, "--timeout", "0.5").status == 0
    build_wiki(cw.wiki)  # retracted: warn publishes, each claim's copy counted apart and marked
    site = cw.wiki / "site"
    claims = json.loads((site / "claims.json").read_text(encoding="utf-8"))["claims"]
    assert [(c["counts"]["works"], c["counts"]["retracted_works"]) for c in claims] == [(0, 1), (0, 1)]
    copy_page = (site / "sources" / sources["copy"] / "index.html").read_text(encoding="utf-8")
    assert "RETRACTED" in copy_page and RETRACTED in copy_page
    config = cw.wiki / "mkdocs.yml"
    config.write_text(config.read_text(encoding="utf-8") + "extra:\n  evidence:\n    retracted: fail\n", "utf-8")
    found = [f for f in check_wiki(cw.wiki, policy=policy_of(cw.wiki)).findings if f.check == "C-NOTICE"]
    assert sorted((f.source_id, f.field) for f in found) == sorted(
        [(sources["copy"], "retracted"), (sources["link"], "retracted")]
    )
