"""Paper identity derived from the document or a registry's URL, each id with its basis; an
assertion is kept and marked, never merged into a derived work, and refused when it contradicts."""

from __future__ import annotations

import json
import threading
import zlib
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from conftest import CliResult, minimal_pdf

from publisher.acquire import extract
from publisher.acquire.identity import derive_identity, printed_dois, registry_ids, xmp_stated
from publisher.acquire.sources import Metadata, add_local_pdf, fetch
from publisher.kernel.errors import UsageError
from publisher.kernel.eventlog import read_log
from publisher.kernel.models import Basis
from publisher.kernel.snapshots import check_snapshot
from publisher.runs import Run
from publisher.wiki.claims.model import work_keys

Cli = Callable[..., CliResult]
ARTICLE = "PMC1065070"


def _derive(body: bytes, media_type: str, urls: tuple[str, ...] = (), **given: str) -> dict[str, dict[str, str]]:
    doc = extract(body, media_type)
    ids = {k: given.get(k) for k in ("pmid", "doi", "pmcid")}
    return derive_identity(doc, urls=urls, given=ids, given_title=given.get("title")).identity


def _xmp(doi: str, title: str, identifier: str | None = None) -> bytes:
    ident = f"<dc:identifier><rdf:Bag><rdf:li>{identifier}</rdf:li></rdf:Bag></dc:identifier>" if identifier else ""
    return (
        '<?xpacket begin="\ufeff" id="W5M0MpCehiHzreSzNTczkc9d"?>'
        '<x:xmpmeta xmlns:x="adobe:ns:meta/"><rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#">'
        '<rdf:Description rdf:about="" xmlns:dc="http://purl.org/dc/elements/1.1/" '
        'xmlns:prism="http://prismstandard.org/namespaces/basic/2.0/">'
        f"<prism:doi>{doi}</prism:doi>"
        f'<dc:title><rdf:Alt><rdf:li xml:lang="x-default">{title}</rdf:li></rdf:Alt></dc:title>{ident}'
        '</rdf:Description></rdf:RDF></x:xmpmeta><?xpacket end="r"?>'
    ).encode()


def pdf_with_xmp(lines: list[str], packet: bytes, *, compress: bool) -> bytes:
    """A one-page PDF whose catalog names an XMP metadata stream (FlateDecode when ``compress``)."""
    data = zlib.compress(packet) if compress else packet
    filt = b" /Filter /FlateDecode" if compress else b""
    content = " ".join(f"({line}) Tj T*" for line in lines).encode("latin-1")
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R /Metadata 6 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R "
        b"/Resources << /Font << /F1 5 0 R >> >> >>",
        b"<< /Length %d >>\nstream\n" % (len(content) + 30)
        + b"BT /F1 12 Tf 14 TL 72 720 Td "
        + content
        + b" ET\nendstream",
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
        b"<< /Type /Metadata /Subtype /XML%s /Length %d >>\nstream\n" % (filt, len(data)) + data + b"\nendstream",
    ]
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % number + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    for offset in offsets:
        out += b"%010d 00000 n \n" % offset
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objects) + 1, xref)
    return bytes(out)


# --- derivation from the document ---------------------------------------------------------------


def test_jats_article_ids_and_title_are_document_derived(corpus_dir: Path) -> None:
    path = corpus_dir / "evidence-inference" / "xml" / f"{ARTICLE}.nxml"
    if not path.is_file():
        pytest.skip("../shared/corpus not present")
    identity = _derive(path.read_bytes(), "application/xml")
    assert identity["pmcid"]["value"] == ARTICLE and identity["pmcid"]["basis"] == Basis.DOCUMENT.value
    assert identity["title"]["basis"] == "document" and identity["title"]["via"] == "JATS article-title"


def test_html_citation_and_dublin_core_meta_are_document_derived() -> None:
    html = (
        b"<html><head><title>Site | A trial</title>"
        b'<meta name="citation_title" content="A randomised trial">'
        b'<meta name="citation_pmid" content="12345">'
        b'<meta name="DC.Identifier" content="doi:10.1234/Trial.5">'
        b'<meta name="dc.identifier" content="ISSN 1234-5678">'
        b"</head><body><h1>Heading</h1><p>Text.</p></body></html>"
    )
    identity = _derive(html, "text/html")
    assert identity["pmid"] == {"value": "12345", "basis": "document", "via": "HTML meta citation_pmid"}
    assert identity["doi"] == {"value": "10.1234/Trial.5", "basis": "document", "via": "HTML meta dc.identifier"}
    assert identity["title"]["value"] == "A randomised trial" and identity["title"]["basis"] == "document"
    assert "pmcid" not in identity


def test_pdf_xmp_clear_and_compressed() -> None:
    packet = _xmp("10.5555/xmp.1", "An XMP title", identifier="pmid:777")
    for compress in (False, True):
        body = pdf_with_xmp(["Body text of the paper."], packet, compress=compress)
        assert ("doi", "10.5555/xmp.1", "XMP prism:doi") in xmp_stated(body)
        identity = _derive(body, "application/pdf")
        assert identity["doi"] == {"value": "10.5555/xmp.1", "basis": "document", "via": "XMP prism:doi"}
        assert identity["pmid"]["value"] == "777" and identity["pmid"]["via"] == "XMP dc:identifier"
        assert identity["title"] == {"value": "An XMP title", "basis": "document", "via": "XMP dc:title"}


def test_a_malformed_xmp_packet_states_nothing() -> None:
    body = pdf_with_xmp(["Text."], b"<x:xmpmeta xmlns:x='adobe:ns:meta/'><broken></x:xmpmeta>", compress=False)
    assert xmp_stated(body) == []


def test_a_doi_printed_on_page_one_is_derived_and_a_bare_one_is_not() -> None:
    body = minimal_pdf(["Journal of Tests. doi: 10.4321/jt.2020.7.", "Second page cites doi:10.9999/other"])
    identity = _derive(body, "application/pdf")
    assert identity["doi"] == {"value": "10.4321/jt.2020.7", "basis": "document", "via": "DOI printed on page 1"}
    assert identity["title"] == {"value": "Journal of Tests. doi: 10.4321/jt.2020.7.", "basis": "document",
                                 "via": "first line"}  # fmt: skip
    assert printed_dois("see 10.1234/bare and https://doi.org/10.1000/x") == ["10.1000/x"]


def test_two_printed_dois_on_page_one_derive_none(run: Run, tmp_path: Path) -> None:
    body = minimal_pdf(["doi:10.1111/a.1 and doi:10.2222/b.2"])
    doc = extract(body, "application/pdf")
    derived = derive_identity(doc, urls=(), given={}, given_title=None)
    assert "doi" not in derived.identity and any("several dois" in n for n in derived.notes)


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("https://pmc.ncbi.nlm.nih.gov/articles/PMC1065070/", ("pmcid", "PMC1065070")),
        ("https://www.ncbi.nlm.nih.gov/pmc/articles/PMC42", ("pmcid", "PMC42")),
        ("https://pubmed.ncbi.nlm.nih.gov/31452104/", ("pmid", "31452104")),
        ("https://www.ncbi.nlm.nih.gov/pubmed/31452104", ("pmid", "31452104")),
        ("https://doi.org/10.1056/NEJMoa2034577", ("doi", "10.1056/NEJMoa2034577")),
        ("http://dx.doi.org/10.1000%2Fabc", ("doi", "10.1000/abc")),
        ("https://europepmc.org/article/MED/123", ("pmid", "123")),
        ("https://europepmc.org/article/PMC/PMC77", ("pmcid", "PMC77")),
        ("https://www.ebi.ac.uk/europepmc/webservices/rest/PMC9/fullTextXML", ("pmcid", "PMC9")),
    ],
)
def test_registry_canonical_urls_name_their_ids(url: str, expected: tuple[str, str]) -> None:
    assert [(k, v) for k, v, _ in registry_ids(url)] == [expected]


@pytest.mark.parametrize(
    "url",
    [
        "http://127.0.0.1:8000/pmc/articles/PMC1065070/",
        "https://pmc.ncbi.nlm.nih.gov.evil.example/articles/PMC1/",
        "https://doi.org.example/10.1/x",
        "https://pubmed.ncbi.nlm.nih.gov/?term=PMC1",
        "https://user@doi.org/10.1/x",
        "https://doi.org:8443/10.1/x",
        "ftp://doi.org/10.1/x",
    ],
)
def test_other_addresses_name_nothing(url: str) -> None:
    assert registry_ids(url) == []


# --- assertion: kept and marked, refused when contradicting ---------------------------------------


def test_an_assertion_nothing_derives_is_kept_as_asserted() -> None:
    identity = _derive(b"Plain title line\nBody.", "text/plain", pmcid="PMC1488900")
    assert identity["pmcid"] == {"value": "PMC1488900", "basis": "asserted", "via": "command line --pmcid"}
    assert identity["title"] == {"value": "Plain title line", "basis": "document", "via": "first line"}


@pytest.mark.parametrize(
    ("body", "media_type", "urls", "given", "field"),
    [
        (b'<html><head><meta name="citation_pmid" content="1"></head><body>x</body></html>', "text/html", (),
         {"pmid": "2"}, "pmid"),
        (b"text", "text/plain", ("https://doi.org/10.1/a",), {"doi": "10.1/b"}, "doi"),
        (b'<html><head><meta name="citation_doi" content="10.1/a"></head><body>x</body></html>', "text/html",
         ("https://doi.org/10.1/b",), {}, "doi"),
        (b"<html><head><title>Stated</title></head><body>x</body></html>", "text/html", (), {"title": "Other"},
         "title"),
    ],
)  # fmt: skip
def test_a_contradiction_is_refused(
    body: bytes, media_type: str, urls: tuple[str, ...], given: dict[str, str], field: str
) -> None:
    with pytest.raises(UsageError) as info:
        _derive(body, media_type, urls, **given)
    assert info.value.context["field"] == field


def test_a_registry_url_gives_a_registry_basis_and_agrees_with_an_assertion() -> None:
    identity = _derive(b"Text.", "text/plain", ("https://pubmed.ncbi.nlm.nih.gov/555/",), pmid="PMID: 555")
    assert identity["pmid"] == {"value": "555", "basis": "registry_url", "via": "pubmed.ncbi.nlm.nih.gov article URL"}


def test_the_title_is_the_first_heading_never_the_url() -> None:
    identity = _derive(b"<html><body><h2>First heading</h2><p>Text</p></body></html>", "text/html")
    assert identity["title"] == {"value": "First heading", "basis": "document", "via": "first heading"}


# --- end to end: fetch, local PDF, and works ------------------------------------------------------


class _Serve(BaseHTTPRequestHandler):
    bodies: dict[str, tuple[str, bytes]]

    def log_message(self, format: str, *args: object) -> None:
        return

    def do_GET(self) -> None:
        found = self.bodies.get(self.path)
        if found is None:
            self.send_error(404)
            return
        self.send_response(200)
        self.send_header("Content-Type", found[0])
        self.send_header("Content-Length", str(len(found[1])))
        self.end_headers()
        self.wfile.write(found[1])


@pytest.fixture
def served(corpus_dir: Path, no_proxy: None) -> Iterator[tuple[str, dict[str, tuple[str, bytes]]]]:
    bodies: dict[str, tuple[str, bytes]] = {}
    xml = corpus_dir / "evidence-inference" / "xml" / f"{ARTICLE}.nxml"
    if not xml.is_file():
        pytest.skip("../shared/corpus not present")
    bodies["/article.nxml"] = ("application/xml", xml.read_bytes())
    bodies["/fake.txt"] = ("text/plain; charset=utf-8", b"A fabricated report\nIt claims to be the article.")
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), type("H", (_Serve,), {"bodies": bodies}))
    httpd.daemon_threads = True
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}", bodies
    finally:
        httpd.shutdown()
        httpd.server_close()


def test_an_asserted_only_pmcid_is_never_the_real_articles_work(
    run: Run, served: tuple[str, dict[str, tuple[str, bytes]]]
) -> None:
    base, _ = served
    real = fetch(run, f"{base}/article.nxml").snapshot
    fake = fetch(run, f"{base}/fake.txt", Metadata(pmcid=ARTICLE)).snapshot
    assert real.identity is not None and real.identity.pmcid is not None
    assert real.identity.pmcid.basis is Basis.DOCUMENT and real.paper is not None and real.paper.pmcid == ARTICLE
    assert fake.identity is not None and fake.identity.pmcid is not None
    assert fake.identity.pmcid.basis is Basis.ASSERTED and fake.paper is not None and fake.paper.pmcid == ARTICLE
    assert fake.title == "A fabricated report"  # its first line, not the URL
    checks = [check_snapshot((str(run.sources_dir), s.source_id, ())) for s in (real, fake)]
    keys = [set(work_keys(c.derived_ids(), c.url, c.content_hash)) for c in checks]
    assert not keys[0] & keys[1]  # two works
    assert f"pmcid:{ARTICLE}" in keys[0] and not any(k.startswith("pmcid:") for k in keys[1])


def test_a_contradicting_fetch_is_refused_and_stores_nothing(
    run: Run, served: tuple[str, dict[str, tuple[str, bytes]]]
) -> None:
    base, _ = served
    with pytest.raises(UsageError) as info:
        fetch(run, f"{base}/article.nxml", Metadata(pmcid="PMC1488900"))
    assert info.value.context["field"] == "pmcid"
    assert list(run.sources_dir.iterdir()) == []
    events = [json.loads(line) for line in run.events_path.read_text(encoding="utf-8").splitlines()]
    assert [e["type"] for e in events] == ["fetch_failed"]


def test_identity_is_sealed_in_the_record(run: Run, served: tuple[str, dict[str, tuple[str, bytes]]]) -> None:
    base, _ = served
    snap = fetch(run, f"{base}/fake.txt", Metadata(pmcid=ARTICLE)).snapshot
    path = run.sources_dir / f"{snap.source_id}.json"
    data = json.loads(path.read_text(encoding="utf-8"))
    data["identity"]["pmcid"]["basis"] = "document"  # promote the assertion by hand
    path.chmod(0o644)
    path.write_text(json.dumps(data), encoding="utf-8")
    check = check_snapshot((str(run.sources_dir), snap.source_id, ()))
    assert not check.ok and check.reason is not None and check.reason.value == "SNAPSHOT_HASH_MISMATCH"


def test_a_local_pdf_with_xmp_is_derived(run: Run, tmp_path: Path) -> None:
    wiki = tmp_path / "wiki"
    wiki.mkdir()
    pdf = tmp_path / "paper.pdf"
    pdf.write_bytes(pdf_with_xmp(["Results were good."], _xmp("10.5555/local.9", "Local title"), compress=True))
    snap = add_local_pdf(run, pdf, wiki).snapshot
    assert snap.paper is not None and snap.paper.doi == "10.5555/local.9" and snap.title == "Local title"
    assert snap.identity is not None and snap.identity.doi is not None and snap.identity.doi.derived


def test_the_cli_says_what_was_stored_and_how_to_add_an_id(
    cli: Cli, run: Run, served: tuple[str, dict[str, tuple[str, bytes]]]
) -> None:
    base, _ = served
    out = cli("source", "fetch", "--run-dir", run.path, "--url", f"{base}/fake.txt")
    assert out.status == 0, out.err
    (sid,) = [e.source_id for e in read_log(run.events_path).events if e.source_id is not None]
    assert run.store.read(sid).paper is None  # no id derived ...
    assert f"--source-id {sid} --url URL" in out.out  # ... and the command that adds one, for this source
    out = cli("source", "fetch", "--run-dir", run.path, "--url", f"{base}/article.nxml", "--json")
    assert out.status == 0 and out.json()["identity"]["pmcid"]["basis"] == "document"


# --- look-alike, malformed and ambiguous identifiers ---------------------------------------------


def _meta_html(name: str, content: str) -> bytes:
    return f'<html><head><meta name="{name}" content="{content}"></head><body>x</body></html>'.encode()


@pytest.mark.parametrize(
    ("name", "stated"),
    [
        ("citation_doi", "not a doi"),
        ("citation_pmid", "12345abc"),
        ("citation_pmcid", "PMC12x"),
        # Reads as 10.1000/abc (a zero-width space, a bidi override, a Cyrillic a): another DOI,
        # which the registry's notices of the real one would never reach.
        ("citation_doi", "10.1000/abc\u200b"),
        ("citation_doi", "10.1000/abc\u202e"),
        ("citation_doi", "10.1000/\u0430bc"),
        ("citation_pmid", "\u0661\u0662\u0663\u0664\u0665"),
        ("citation_pmcid", "PMC\uff11\uff12\uff13"),
    ],
)
def test_an_id_the_document_states_out_of_its_form_is_no_derivation(name: str, stated: str) -> None:
    doc = extract(_meta_html(name, stated), "text/html")
    derived = derive_identity(doc, urls=(), given={}, given_title=None)
    kind = name.removeprefix("citation_")
    assert kind not in derived.identity and (derived.paper is None or derived.paper[kind] is None)
    assert any(kind in note for note in derived.notes)


@pytest.mark.parametrize(
    "url",
    [
        # The client removes dot segments before sending: doi.org is asked for 10.9999/mine.
        "https://doi.org/10.1000/famous.123/../../10.9999/mine",
        "https://doi.org/10.1000/abc/./",
        "https://doi.org/10.1000/a/%2e%2e/b",
        "https://doi.org/10.1000/a%E2%80%8Bbc",
        "https://doi.org/10.1000/%D0%B0bc",
    ],
)
def test_a_resolver_path_the_client_rewrites_or_a_lookalike_doi_names_nothing(url: str) -> None:
    assert registry_ids(url) == []


@pytest.mark.parametrize("given", ["\u0661\u0662\u0663", "PMID: \uff11\uff12\uff13"])
def test_an_assertion_of_other_digits_is_refused(given: str) -> None:
    with pytest.raises(UsageError) as info:
        _derive(b"Text.", "text/plain", pmid=given)
    assert info.value.context["field"] == "pmid"


def test_a_printed_doi_stops_at_the_first_character_a_doi_cannot_hold() -> None:
    assert printed_dois("doi: 10.1000/abc\u2014next page") == ["10.1000/abc"]
    assert printed_dois("doi:10.1000/\u0430bc") == []
