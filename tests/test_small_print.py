"""The small print says what is true: ``check-site`` says what it trusts, ``missing`` calls access
restricted only what is, a key given twice in ``mkdocs.yml`` is an error, and exported annotations
target the snapshot their offsets index."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from _claims_helpers import ClaimsWiki, claims_wiki, whole_text
from _policy import policy_of
from _wiki_helpers import build_wiki, make_wiki, refused_build, sample_run
from conftest import CliResult
from test_claims_assess import refused

from publisher.kernel.errors import UsageError
from publisher.kernel.reasons import Reason
from publisher.site.lifecycle.policy import duplicate_keys, resolve_policy
from publisher.wiki.claims.missingness import restricted
from publisher.wiki.promote import promote

Cli = Callable[..., CliResult]


# -- check-site ---------------------------------------------------------------------------------


def test_check_site_says_whether_it_trusts_the_manifest_it_found(tmp_path: Path, cli: Cli) -> None:
    wiki = make_wiki(tmp_path / "wiki")
    promote(sample_run(wiki).run.path, wiki, policy=policy_of(wiki))
    build_wiki(wiki)
    found = cli("check-site", wiki / "site", "--wiki", wiki, "--json")
    assert found.status == 0, found.err
    assert found.json()["manifest_pinned"] is False and found.json()["trust"]
    digest = found.json()["manifest_sha256"]
    pinned = cli("check-site", wiki / "site", "--wiki", wiki, "--expect", digest, "--json")
    assert pinned.status == 0 and pinned.json()["manifest_pinned"] is True
    assert pinned.json()["trust"] != found.json()["trust"]
    human = cli("check-site", wiki / "site", "--wiki", wiki)
    assert human.status == 0 and found.json()["trust"] in " ".join(human.out.split())


# -- publisher missing --------------------------------------------------------------------------


@pytest.fixture
def cw(tmp_path: Path, corpus_dir: Path) -> ClaimsWiki:
    return claims_wiki(tmp_path / "wiki", corpus_dir)


def test_a_web_page_fetched_whole_and_declared_complete_is_not_access_restricted(cli: Cli, cw: ClaimsWiki) -> None:
    text = "Guidance. Adults should walk thirty minutes a day. Children an hour."
    paper = {"pmid": None, "doi": None, "pmcid": None}
    whole = cw.rb.source("https://guidance.example/walking", text, paper=paper, access="web", surface=whole_text(True))
    out = cli("missing", "--run-dir", cw.rb.run.path, "--claim", "Walking helps.", "--source-id", whole, "--json")
    refused(out, "NOTHING_MISSING")
    assert not (cw.rb.run.path / "missingness").exists() or not any((cw.rb.run.path / "missingness").iterdir())
    # the same page without a declaration of completeness is not known whole
    part = cw.rb.source("https://guidance.example/other", text + " More.", paper=paper, access="web")
    out = cli("missing", "--run-dir", cw.rb.run.path, "--claim", "Walking helps.", "--source-id", part, "--json")
    assert out.status == 0 and out.json()["record"]["kind"] == "ACCESS_RESTRICTED", out.err


def test_restricted_access_is_an_abstract_or_text_not_known_whole() -> None:
    from publisher.kernel.models import Surface

    complete = Surface.model_validate({**whole_text(True), "manifest_hash": "sha256:" + "0" * 64})
    partial = Surface.model_validate({**whole_text(False), "manifest_hash": "sha256:" + "0" * 64})
    assert restricted("abstract", complete) and restricted("abstract", None)
    assert not restricted("full_text", None) and not restricted("full_text", partial)
    assert not restricted("web", complete) and not restricted("guideline", complete)
    assert restricted("web", partial) and restricted("web", None) and restricted("nonsense", complete)


# -- a key given twice --------------------------------------------------------------------------


def test_duplicate_keys_are_found_in_any_mapping() -> None:
    assert duplicate_keys("a: 1\nb: 2\na: 3\n") == ("a", 1, 3)
    assert duplicate_keys("extra:\n  evidence: {}\n  evidence: {}\n") == ("extra.evidence", 2, 3)
    assert duplicate_keys("a: 1\nb: !ENV [X, y]\nc: !!python/name:os.system\n") is None
    assert duplicate_keys("base: &b {x: 1}\nmore:\n  <<: *b\n  y: 2\n") is None


def test_a_second_extra_key_is_an_error_not_silently_dropped_keys(tmp_path: Path, cli: Cli) -> None:
    wiki = make_wiki(tmp_path / "wiki")
    config = wiki / "mkdocs.yml"
    config.write_text(
        config.read_text(encoding="utf-8")
        + "extra:\n  evidence:\n    trusted_keys:\n      - keys/wiki.pub\nextra:\n  analytics: {}\n",
        encoding="utf-8",
    )
    with pytest.raises(UsageError) as caught:
        resolve_policy(wiki)
    assert caught.value.reason is Reason.SCHEMA_ERROR and caught.value.context["path"] == "mkdocs.yml"
    done = cli("check", "--wiki", wiki, "--json")
    assert done.status == 2 and done.err.count("\n") == 1
    assert done.json()["error"]["reason_code"] == "SCHEMA_ERROR"
    (finding,) = refused_build(wiki)
    assert (finding.reason, finding.check, finding.file) == (Reason.SCHEMA_ERROR, "C-CONFIG", "mkdocs.yml")
    assert not (wiki / "site").exists()


def test_a_key_given_twice_in_an_inherited_file_is_an_error(tmp_path: Path) -> None:
    wiki = make_wiki(tmp_path / "wiki")
    config = wiki / "mkdocs.yml"
    (wiki / "base.yml").write_text("extra:\n  a: 1\nextra:\n  b: 2\n", encoding="utf-8")
    config.write_text("INHERIT: base.yml\n" + config.read_text(encoding="utf-8"), encoding="utf-8")
    with pytest.raises(UsageError) as caught:
        resolve_policy(wiki)
    assert caught.value.reason is Reason.SCHEMA_ERROR and caught.value.context["path"] == "base.yml"


def test_the_inherited_file_checked_is_the_one_mkdocs_loads_beside_a_linked_config(tmp_path: Path) -> None:
    """MkDocs names an ``INHERIT`` parent beside the configuration's path as given, not beside the
    target of a symbolic link: the key given twice is sought in that same parent, not in a file of
    the same name beside the link's target (which the build never reads)."""
    wiki = make_wiki(tmp_path / "wiki")
    config = wiki / "mkdocs.yml"
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "mkdocs.yml").write_text("INHERIT: base.yml\n" + config.read_text(encoding="utf-8"), encoding="utf-8")
    (elsewhere / "base.yml").write_text("extra:\n  a: 1\n", encoding="utf-8")
    (wiki / "base.yml").write_text("extra:\n  evidence:\n    offline: true\n    offline: false\n", encoding="utf-8")
    config.unlink()
    config.symlink_to(elsewhere / "mkdocs.yml")
    with pytest.raises(UsageError) as caught:
        resolve_policy(wiki)
    assert caught.value.reason is Reason.SCHEMA_ERROR and caught.value.context["path"] == "base.yml"
    assert caught.value.context["line"] == 4


# -- exported annotations -----------------------------------------------------------------------


def test_exported_annotations_target_the_snapshot_and_name_the_page_as_via(tmp_path: Path, cli: Cli) -> None:
    wiki = make_wiki(tmp_path / "wiki")
    rb = sample_run(wiki)
    promote(rb.run.path, wiki, policy=policy_of(wiki))
    out = cli("export", "annotations", "--wiki", wiki, "--site", "https://evidence.example/wiki/")
    assert out.status == 0, out.err
    items = json.loads(out.out)["first"]["items"]
    assert items
    for item in items:
        target = item["target"]
        sid = target["source"].removeprefix("https://evidence.example/wiki/sources/").rstrip("/")
        assert sid.startswith("src-") and len(sid) == 68
        assert target["via"].startswith(("http", "file:")) and target["via"] != target["source"]
    plain = cli("export", "annotations", "--wiki", wiki)
    assert all(i["target"]["source"].startswith("ni:///sha-256;") for i in json.loads(plain.out)["first"]["items"])
    assert cli("export", "annotations", "--wiki", wiki, "--site", "not a uri").status == 2
