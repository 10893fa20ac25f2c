"""Works on the published wiki rest on derived identities: an asserted-only paper id is shown
with its mark on the source page and counted as a work of its own."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from _claims_helpers import CONCEPT, ClaimsWiki, claims_wiki
from _policy import policy_of
from _wiki_helpers import Claim, RunBuilder, build_wiki
from conftest import CliResult

from publisher.wiki.promote import promote

Cli = Callable[..., CliResult]
FAKE = "A fabricated report\nIt says the trial showed a large benefit in every child."


@pytest.fixture
def cw(tmp_path: Path, corpus_dir: Path) -> ClaimsWiki:
    return claims_wiki(tmp_path / "wiki", corpus_dir)


def _asserted_copy(cw: ClaimsWiki) -> str:
    """A made-up text served from loopback and fetched with the real article's PMCID asserted."""
    pmcid = cw.rb.records[cw.a_full]["paper"]["pmcid"]
    identity = {
        "pmcid": {"value": pmcid, "basis": "asserted", "via": "command line --pmcid"},
        "title": {"value": "A fabricated report", "basis": "document", "via": "first line"},
    }
    fake = cw.rb.source(
        "http://127.0.0.1:8123/fake.txt",
        FAKE,
        paper={"pmid": None, "doi": None, "pmcid": pmcid},
        access="web",
        origin="web",
        title="A fabricated report",
        identity=identity,
    )
    start = FAKE.index("It says")
    cw.rb.extraction("web:fabricated-report", [Claim("spans[0]", "benefit", fake, start, len(FAKE))], name="fabricated")
    cw.rb.assemble()
    promote(cw.rb.run.path, cw.wiki, concept=CONCEPT, policy=policy_of(cw.wiki))
    return fake


def test_an_asserted_only_pmcid_is_a_work_of_its_own_and_marked(cli: Cli, cw: ClaimsWiki) -> None:
    fake = _asserted_copy(cw)
    labels = [cw.labels_of(cw.a_full)[0], cw.labels_of(fake)[0]]
    args = [x for label in labels for x in ("--evidence", label)]
    out = cli(
        "assess", "--wiki", cw.wiki, "--concept", CONCEPT, "--claim-id", "c1", "--statement", "It helps.",
        "--status", "S", *args,
    )  # fmt: skip
    assert out.status == 0, out.err
    build_wiki(cw.wiki)
    site = cw.wiki / "site"
    (claim,) = json.loads((site / "claims.json").read_text(encoding="utf-8"))["claims"]
    # The real article and the made-up text claiming its PMCID are two works, never one.
    assert claim["counts"]["works"] == 2 and claim["counts"]["snapshots"] == 2
    page = (site / "sources" / fake / "index.html").read_text(encoding="utf-8")
    assert 'class="pub-asserted"' in page and "(document: first line)" in page
    real = (site / "sources" / cw.a_full / "index.html").read_text(encoding="utf-8")
    assert 'class="pub-asserted"' not in real and "(basis not recorded)" in real


def test_membership_follows_the_current_revision(cli: Cli, cw: ClaimsWiki) -> None:
    """A revision that gains the derived id (acquired from the registry's article URL) takes its
    asserted-only predecessor into that work."""
    fake = _asserted_copy(cw)
    labels = [cw.labels_of(cw.a_full)[0], cw.labels_of(fake)[0]]
    args = [x for label in labels for x in ("--evidence", label)]
    out = cli(
        "assess", "--wiki", cw.wiki, "--concept", CONCEPT, "--claim-id", "c1", "--statement", "It helps.",
        "--status", "S", *args,
    )  # fmt: skip
    assert out.status == 0, out.err
    pmcid = cw.rb.records[cw.a_full]["paper"]["pmcid"]
    later = RunBuilder(cw.wiki, "later", question="Revised")
    identity = {
        "pmcid": {"value": pmcid, "basis": "registry_url", "via": "pmc.ncbi.nlm.nih.gov article URL"},
        "title": {"value": "A fabricated report", "basis": "document", "via": "first line"},
    }
    text = FAKE + "\nRevised."
    revised = later.source(
        f"https://pmc.ncbi.nlm.nih.gov/articles/{pmcid}/", text, paper={"pmid": None, "doi": None, "pmcid": pmcid},
        title="A fabricated report", identity=identity, supersedes=fake,
    )  # fmt: skip
    later.extraction("web:revised", [Claim("spans[0]", "revised", revised, 0, 20)])
    later.assemble()
    build_wiki(cw.wiki)
    (claim,) = json.loads((cw.wiki / "site" / "claims.json").read_text(encoding="utf-8"))["claims"]
    assert claim["counts"]["works"] == 1  # the old revision now counts in its current revision's work
    assert any("superseded by revision 2" in r for r in claim["provenance_now"]["reasons"])


def test_an_identity_edited_and_resealed_after_a_signed_acquisition_is_refused(
    tmp_path: Path, corpus_dir: Path
) -> None:
    """Whoever writes the run can edit a snapshot's paper ids and recompute its seal: the seal is
    a digest anyone can make. The signed acquisition event recorded the seal it sealed, so the
    edited snapshot is no longer fresh, its excerpts no longer accepted, and the wiki does not build."""
    import shutil

    from publisher.acquire.signing import new_key_pair
    from publisher.kernel.canonical import canonical_bytes, record_hash_for
    from publisher.kernel.reasons import Reason
    from publisher.wiki.check import check_wiki

    new_key_pair(tmp_path / "keys", "wiki")
    (tmp_path / "wiki" / "keys").mkdir(parents=True)
    shutil.copy(tmp_path / "keys" / "wiki.pub", tmp_path / "wiki" / "keys" / "wiki.pub")
    trust = "extra:\n  evidence:\n    trusted_keys:\n      - keys/wiki.pub\n"
    cw = claims_wiki(tmp_path / "wiki", corpus_dir, key=tmp_path / "keys" / "wiki.key", extra=trust)
    assert check_wiki(cw.wiki, policy=policy_of(cw.wiki)).ok
    path = cw.rb.run.sources_dir / f"{cw.a_full}.json"
    record = json.loads(path.read_bytes())
    record["paper"]["pmcid"] = "PMC9999999"
    record["identity"] = {
        "pmcid": {"value": "PMC9999999", "basis": "document", "via": "JATS article-id"},
        "title": {"value": record["title"], "basis": "document", "via": "JATS article-title"},
    }
    del record["record_hash"]
    record["record_hash"] = record_hash_for(record)
    path.chmod(0o644)
    path.write_bytes(canonical_bytes(record) + b"\n")
    found = check_wiki(cw.wiki, policy=policy_of(cw.wiki)).findings
    assert Reason.NO_FRESH_FETCH in {f.reason for f in found}
    cw.rb.assemble()  # the result made current again: the edited source's excerpts are not accepted
    found = check_wiki(cw.wiki, policy=policy_of(cw.wiki)).findings
    assert found and Reason.SOURCE_OUTSIDE_ACCEPTED in {f.reason for f in found}
