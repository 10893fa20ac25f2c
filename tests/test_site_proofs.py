"""Excerpt proofs on the built site (CONTRACT sections 13 and 16): a proof file for every cited span
in every mode, records without text in ``proofs`` mode (for all sources or some), and
``check-site`` covering the proof files like any other."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from _policy import policy_of
from _wiki_helpers import RecordingHelpers, build_wiki, make_wiki, refused_build, sample_run
from mkdocs.exceptions import Abort
from mkdocs.plugins import CombinedEvent

from publisher.kernel.merkle import ExcerptProof, verify_proof
from publisher.kernel.reasons import Reason
from publisher.site.checks.checksite import check_site
from publisher.site.pages.proofs import _bundle_of


def _wiki(tmp_path: Path, evidence: str = "") -> tuple[Path, Any]:
    wiki = make_wiki(tmp_path / "wiki", extra=f"extra:\n  evidence:\n{evidence}" if evidence else "")
    rb = sample_run(wiki)
    return wiki, rb


def _proof_files(site: Path) -> list[Path]:
    return sorted(site.glob("sources/*/proofs/*.js"))


def _writable(path: Path) -> Path:
    os.chmod(path, 0o644)
    return path


def test_every_cited_span_has_a_proof_that_verifies_in_the_default_mode(tmp_path: Path) -> None:
    wiki, rb = _wiki(tmp_path)
    build_wiki(wiki)
    site = wiki / "site"
    manifest = json.loads((site / "evidence-manifest.json").read_text(encoding="utf-8"))
    files = _proof_files(site)
    assert files and len(manifest["proofs"]) == len(files)
    assert {e["path"] for e in manifest["proofs"]} <= {e["path"] for e in manifest["files"]}
    for path in files:
        bundle = _bundle_of(path.read_bytes())
        proof = ExcerptProof.model_validate(bundle["proof"])
        text = rb.texts[proof.source_id]
        record = rb.records[proof.source_id]
        excerpt, findings = verify_proof(proof, root=record["merkle_root"], tree_size=record["merkle_size"])
        assert findings == [] and excerpt == text[proof.start : proof.end]
        assert "text" not in bundle["record"] and bundle["record"]["record_hash"] == record["record_hash"]
        assert bundle["anchors"] == []  # unsigned provenance: nothing signs the root
    # The default mode still publishes every record whole.
    assert all("text" in json.loads(p.read_bytes()) for p in site.glob("sources/*/record.json"))
    assert check_site(site, wiki, policy=policy_of(wiki)).ok


def test_proofs_mode_publishes_records_without_text(tmp_path: Path) -> None:
    wiki, rb = _wiki(tmp_path, "    source_text: proofs\n")
    build_wiki(wiki)
    site = wiki / "site"
    for sid in rb.texts:
        record = json.loads((site / "sources" / sid / "record.json").read_bytes())
        assert "text" not in record and record["merkle_root"] == rb.records[sid]["merkle_root"]
        pages = "".join(p.read_text(encoding="utf-8") for p in site.rglob("*.html"))
        assert "evidence-snapshot" not in pages
        assert "published without its text" in (site / "sources" / sid / "index.html").read_text(encoding="utf-8")
    manifest = json.loads((site / "evidence-manifest.json").read_text(encoding="utf-8"))
    assert {e["form"] for e in manifest["records"]} == {"without_text"}
    assert check_site(site, wiki, policy=policy_of(wiki)).ok


def test_a_per_source_choice_publishes_some_sources_whole(tmp_path: Path) -> None:
    wiki, rb = _wiki(tmp_path, "    source_text_for:\n      origin:user-supplied-pdf: proofs\n")
    build_wiki(wiki)
    site = wiki / "site"
    light = {sid for sid in rb.texts if "text" not in json.loads((site / "sources" / sid / "record.json").read_bytes())}
    assert light == {sid for sid, r in rb.records.items() if r["origin"] == "user-supplied-pdf"}
    assert len(light) == 1 and len(rb.texts) == 3
    assert check_site(site, wiki, policy=policy_of(wiki)).ok
    # A source id names one source; it wins over its origin.
    [pdf] = light
    config = wiki / "mkdocs.yml"
    config.write_text(config.read_text(encoding="utf-8") + f"      {pdf}: full\n", encoding="utf-8")
    build_wiki(wiki)
    assert "text" in json.loads((site / "sources" / pdf / "record.json").read_bytes())


@pytest.mark.parametrize(
    "bad",
    [
        "    source_text: secret\n",
        "    source_text_for: [proofs]\n",
        "    source_text_for:\n      licence:cc-by: proofs\n",
        "    source_text_for:\n      access:abstract: hidden\n",
    ],
)
def test_bad_options_fail_the_build(tmp_path: Path, bad: str) -> None:
    wiki, _ = _wiki(tmp_path, bad)
    findings = refused_build(wiki)
    assert [(f.reason, f.check, f.file) for f in findings] == [(Reason.SCHEMA_ERROR, "C-CONFIG", "mkdocs.yml")]
    assert not (wiki / "site").exists()


def _codes(site: Path, wiki: Path) -> set[tuple[str, str]]:
    return {(f.code, f.file) for f in check_site(site, wiki, policy=policy_of(wiki)).findings}


def test_check_site_covers_proof_files(tmp_path: Path) -> None:
    wiki, _ = _wiki(tmp_path, "    source_text: proofs\n")
    build_wiki(wiki)
    site = wiki / "site"
    first, second, *_ = _proof_files(site)
    rel = first.relative_to(site).as_posix()
    original = first.read_bytes()

    # One changed character of a chunk: the file differs from the seal and from the snapshot.
    bundle = _bundle_of(original)
    chunk = bundle["proof"]["chunks"][0]
    bundle["proof"]["chunks"][0] = ("Z" if chunk[0] != "Z" else "Y") + chunk[1:]
    from publisher.site.pages.proofs import proof_script

    _writable(first).write_bytes(proof_script(bundle))
    assert {("C-SITE-FILE", rel), (Reason.SNAPSHOT_HASH_MISMATCH.value, rel)} <= _codes(site, wiki)

    # A proof rewritten and the manifest's digest of it with it: the snapshot still tells.
    manifest_path = site / "evidence-manifest.json"
    manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
    data = first.read_bytes()
    import hashlib

    for entry in manifest["files"]:
        if entry["path"] == rel:
            entry.update(sha256=hashlib.sha256(data).hexdigest(), size=len(data))
    _writable(manifest_path).write_text(json.dumps(manifest), encoding="utf-8")
    assert _codes(site, wiki) == {(Reason.SNAPSHOT_HASH_MISMATCH.value, rel)}

    # Missing, and an extra one nobody listed.
    first.write_bytes(original)
    manifest_path.write_text(json.dumps(json.loads(manifest_path.read_text())), encoding="utf-8")
    second_rel = second.relative_to(site).as_posix()
    second.unlink()
    assert (Reason.SNAPSHOT_HASH_MISMATCH.value, second_rel) in _codes(site, wiki)
    extra = first.with_name("1-2.js")
    extra.write_bytes(original)
    assert (Reason.SNAPSHOT_HASH_MISMATCH.value, extra.relative_to(site).as_posix()) in _codes(site, wiki)


def test_check_site_covers_records_without_text(tmp_path: Path) -> None:
    wiki, rb = _wiki(tmp_path, "    source_text: proofs\n")
    build_wiki(wiki)
    site = wiki / "site"
    sid = next(iter(rb.texts))
    path = site / "sources" / sid / "record.json"
    record = json.loads(path.read_bytes())
    record["title"] = "Another title"
    _writable(path).write_text(json.dumps(record), encoding="utf-8")
    rel = path.relative_to(site).as_posix()
    assert (Reason.SNAPSHOT_HASH_MISMATCH.value, rel) in _codes(site, wiki)


def test_a_signed_site_ships_each_text_once(tmp_path: Path) -> None:
    """Offline and signed: the proofs carry signed roots, so record.js (the text a second time)
    is left out; the record is published whole once, as record.json."""
    from publisher.acquire.signing import new_key_pair

    wiki = make_wiki(tmp_path / "wiki")
    private, public, _ = new_key_pair(tmp_path / "keys", "ci")
    (wiki / "keys").mkdir()
    (wiki / "keys" / public.name).write_bytes(public.read_bytes())
    config = wiki / "mkdocs.yml"
    config.write_text(
        config.read_text() + f"extra:\n  evidence:\n    offline: true\n    trusted_keys: [keys/{public.name}]\n"
    )
    rb = sample_run(wiki, key=private)
    build_wiki(wiki)
    site = wiki / "site"
    for sid in rb.texts:
        assert "text" in json.loads((site / "sources" / sid / "record.json").read_bytes())
        assert not (site / "sources" / sid / "record.js").exists()
    bundles = [_bundle_of(p.read_bytes()) for p in _proof_files(site)]
    assert bundles and all(len(b["anchors"]) == 1 for b in bundles)
    assert check_site(site, wiki, policy=policy_of(wiki)).ok


def test_an_unsigned_source_without_its_text_is_a_warning(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    """Nothing anchors the root of an unsigned source published without its text: the build says so."""
    wiki, rb = _wiki(tmp_path, "    source_text: proofs\n")
    with caplog.at_level("WARNING", logger="mkdocs.plugins.publisher"):
        build_wiki(wiki)
    warned = [r.getMessage() for r in caplog.records if "no acquisition event" in r.getMessage()]
    assert sorted(m.split()[1] for m in warned) == sorted(rb.texts)


def test_under_strict_that_warning_publishes_nothing(tmp_path: Path) -> None:
    wiki, _ = _wiki(tmp_path, "    source_text: proofs\n")
    with pytest.raises(Abort):
        build_wiki(wiki, strict=True)
    assert not (wiki / "site").exists()


def test_a_proof_stays_under_64_kb_in_the_worst_case() -> None:
    """The longest span (2,000 code points) across three chunks of four-byte characters that JSON
    escapes, on a record with a page table of 5,000 entries: the proof script stays far below the
    64 KB one excerpt may cost, and its size does not grow with the text."""
    from conftest import make_record

    from publisher.acquire.signing import KeyRing
    from publisher.kernel.canonical import canonical_bytes
    from publisher.site.pages.proofs import ProofSource, _bundles, proof_script

    sizes = []
    for n in (10_000, 400_000):
        text = ('😀"\\\u0001' * (n // 4))[:n]
        pages = [{"page": i + 1, "start": i * (n // 5000), "end": (i + 1) * (n // 5000)} for i in range(5000)]
        record = make_record(text=text, pages=pages)
        stored = canonical_bytes(record) + b"\n"
        start = 1024 - 20
        bundles, _ = _bundles(stored, ProofSource(record["source_id"], [(start, start + 2000)], False), KeyRing())
        [bundle] = bundles.values()
        assert len(bundle["proof"]["chunks"]) == 3
        sizes.append(len(proof_script(bundle)))
    assert max(sizes) < 64_000, sizes
    assert sizes[1] - sizes[0] < 2_000  # five more tree levels: a few hashes per chunk, nothing more


def test_a_snapshot_stored_before_roots_gets_its_root_from_the_verified_text(tmp_path: Path) -> None:
    from _wiki_helpers import RunBuilder

    from publisher.kernel.canonical import record_hash_for, sha256_hex
    from publisher.kernel.eventlog import append_event
    from publisher.kernel.merkle import merkle_root
    from publisher.kernel.store import build_record

    wiki = make_wiki(tmp_path / "wiki")
    rb = RunBuilder(wiki, "old")
    text = "An old snapshot. " * 400 + "The effect was large."
    record = build_record(
        url="https://example.org/old",
        text=text,
        title="Old",
        retrieved_at="2030-01-02T03:04:05Z",
        access="full_text",
        origin="pmc",
        paper={"pmid": "777", "doi": None, "pmcid": None},
    )
    record = {k: v for k, v in record.items() if not k.startswith("merkle_") and k != "record_hash"}
    record["record_hash"] = record_hash_for(record)
    snap, _ = rb.run.store.put(record)
    assert snap.merkle_root is None
    append_event(
        rb.run.events_path,
        type="fetch",
        source_id=snap.source_id,
        url=snap.url,
        fresh=True,
        sha256=sha256_hex(text.encode("utf-8")),
        detail="old",
        record_hash=snap.record_hash,
    )
    start = text.index("The effect")
    rb.record(
        "extraction",
        "pmid-777",
        {
            "schema_version": 1,
            "evidence_id": "pmid:777",
            "pmid": "777",
            "design": "trial",
            "spans": [{"claim": "Large.", "source_id": snap.source_id, "start": start, "end": len(text)}],
        },
    )
    rb.assemble()
    build_wiki(wiki)
    site = wiki / "site"
    [path] = _proof_files(site)
    bundle = _bundle_of(path.read_bytes())
    assert bundle["record"]["merkle_root"] == bundle["proof"]["merkle_root"] == merkle_root(text)
    proof = ExcerptProof.model_validate(bundle["proof"])
    assert verify_proof(proof, root=merkle_root(text))[0] == "The effect was large."
    assert "merkle_root" not in json.loads((site / "sources" / snap.source_id / "record.json").read_bytes())
    assert check_site(site, wiki, policy=policy_of(wiki)).ok


# --- proofs written while the pages are rendered ---------------------------------------------


def _with_helpers(monkeypatch: pytest.MonkeyPatch) -> list[RecordingHelpers]:
    from publisher.site.lifecycle import workers

    pools: list[RecordingHelpers] = []
    monkeypatch.setattr(workers, "default_workers", lambda: 2)
    monkeypatch.setattr(workers, "helper_pool", lambda workers=1: pools.append(RecordingHelpers()) or pools[-1])
    return pools


def _reseal_title(stored: Path) -> None:
    """Give a stored snapshot another title, sealed again: a valid record of the same source id
    (which covers the URL and the text, not the metadata), with other bytes."""
    from publisher.kernel.canonical import canonical_bytes, record_hash_for

    record = json.loads(stored.read_bytes())
    record["title"] = f"{record.get('title') or ''} (retitled)"
    record["record_hash"] = record_hash_for({k: v for k, v in record.items() if k != "record_hash"})
    _writable(stored).write_bytes(canonical_bytes(record) + b"\n")


def test_the_helpers_write_the_proofs_while_the_pages_are_rendered(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Handed over once every page's slots are filled, before the last page is rendered; the
    site is the one the build writes without helpers."""
    from publisher.site.lifecycle import workers
    from publisher.site.lifecycle.events import EvidenceBuild

    wiki, _ = _wiki(tmp_path)
    monkeypatch.setattr(workers, "helper_pool", lambda workers=1: None)
    build_wiki(wiki)
    alone = {p.relative_to(wiki / "site").as_posix(): p.read_bytes() for p in _proof_files(wiki / "site")}
    pools = _with_helpers(monkeypatch)
    at_post_build: list[list[str]] = []
    seal_pages = EvidenceBuild._seal_pages

    def spy(self: EvidenceBuild, *, config: Any) -> None:
        at_post_build.append(list(pools[-1].jobs))
        seal_pages(self, config=config)

    monkeypatch.setattr(EvidenceBuild, "_seal_pages", spy)
    monkeypatch.setattr(EvidenceBuild, "on_post_build", CombinedEvent(spy, EvidenceBuild._finish_build))
    build_wiki(wiki)
    assert "proof_chunk" in at_post_build[-1], "the proofs were not handed over before the pages were done"
    helped = {p.relative_to(wiki / "site").as_posix(): p.read_bytes() for p in _proof_files(wiki / "site")}
    assert helped == alone and alone
    assert check_site(wiki / "site", wiki, policy=policy_of(wiki)).ok


@pytest.mark.parametrize("helpers", [True, False])
def test_proofs_of_other_bytes_than_the_published_record_refuse_the_build(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, helpers: bool
) -> None:
    """A snapshot re-sealed with other metadata during the build (still a valid record of the
    same source id) after its proofs were derived (with helpers), or after its copy in the
    site was verified (without): the proofs would vouch for another record than the published
    one, so the build is refused (SNAPSHOT_HASH_MISMATCH) and the published site untouched."""
    from _wiki_helpers import leftovers, tree_digest

    from publisher.site.lifecycle import events, workers

    wiki, _ = _wiki(tmp_path)
    build_wiki(wiki)
    before = tree_digest(wiki / "site")
    changed: list[Path] = []
    if helpers:
        _with_helpers(monkeypatch)
        start = workers.BuildHelper.start_proofs

        def then_change(self: workers.BuildHelper, staging: Path, sources: list[Any], ring: Any) -> None:
            start(self, staging, sources, ring)
            self.pump(lanes=len(sources))
            for _, future in self._proofs:
                future.result()  # every proof derived from the snapshot as it was
            changed.append(sources[0].stored)
            _reseal_title(sources[0].stored)  # before MkDocs copies it into the site

        monkeypatch.setattr(workers.BuildHelper, "start_proofs", then_change)
    else:
        monkeypatch.setattr(workers, "helper_pool", lambda workers=1: None)
        records = events.publish_records

        def then_change_stored(staging: Path, sids: list[str], helper: Any, *, offline: bool) -> Any:
            out = records(staging, sids, helper, offline=offline)
            stored = next(iter(sorted(wiki.glob(f"runs/*/sources/{sids[0]}.json"))))
            changed.append(stored)
            _reseal_title(stored)  # after the site's copy was verified
            return out

        monkeypatch.setattr(events, "publish_records", then_change_stored)
    findings = refused_build(wiki)
    assert changed
    assert [(f.reason, f.check) for f in findings] == [(Reason.SNAPSHOT_HASH_MISMATCH, "C-PUBLISH")]
    assert tree_digest(wiki / "site") == before
    assert leftovers(wiki) == []


def test_a_failed_build_waits_for_the_proofs_it_handed_out(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The seal refuses a page while a helper is still writing proofs: the staging folder is
    removed only once that helper has stopped, so nothing of the build is left behind."""
    import time

    from _wiki_helpers import leftovers, tree_digest

    from publisher.kernel.findings import Finding
    from publisher.site.lifecycle import pageseal, workers

    wiki, _ = _wiki(tmp_path)
    build_wiki(wiki)
    before = tree_digest(wiki / "site")
    pools = _with_helpers(monkeypatch)
    chunk = workers.proof_chunk

    def slow(*args: Any) -> Any:
        time.sleep(0.5)  # still writing when the build fails
        return chunk(*args)

    monkeypatch.setattr(workers, "proof_chunk", slow)
    seal = pageseal.seal_page

    def refused(*args: Any) -> Any:
        sealed = seal(*args)
        sealed.findings.append(Finding(Reason.EXCERPT_MISMATCH, "index.html", "refused by the test"))
        return sealed

    monkeypatch.setattr(pageseal, "seal_page", refused)
    findings = refused_build(wiki)
    assert {f.reason for f in findings} == {Reason.EXCERPT_MISMATCH}
    assert "slow" in pools[-1].jobs  # proofs were handed out before the seal refused
    time.sleep(0.7)  # had a helper outlived the build, its writes would land by now
    assert leftovers(wiki) == []
    assert tree_digest(wiki / "site") == before


def test_check_site_reads_no_proof_or_light_record_past_the_site_limit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A proof file and a record without text replaced by huge (sparse, 8 GiB) files are findings
    read from their stated size: check-site never reads one whole into memory."""
    from publisher.kernel import _fs

    wiki, rb = _wiki(tmp_path, "    source_text: proofs\n")
    build_wiki(wiki)
    site = wiki / "site"
    proof = _proof_files(site)[0]
    record = site / "sources" / next(iter(rb.texts)) / "record.json"
    for path in (proof, record):
        with _writable(path).open("wb") as f:
            f.truncate(8 << 30)
    read = os.read
    taken = [0]

    def counted(fd: int, n: int) -> bytes:
        data = read(fd, n)
        taken[0] += len(data)
        return data

    monkeypatch.setattr(_fs.os, "read", counted)
    found = _codes(site, wiki)
    for path in (proof, record):
        assert ("C-SITE-FILE", path.relative_to(site).as_posix()) in found
    assert taken[0] < 64 << 20
