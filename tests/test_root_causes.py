"""Root causes (issue: findings that name their root): one root finding per failing span, a
C-FRESH-FETCH that says what is not fresh, real paths, an absent result named by C-ASSEMBLER with
the command that writes it, a fix under every root. Tests assert codes and fields, not wording."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from _policy import policy_of
from _provenance_helpers import forge_fetch
from _wiki_helpers import Claim, make_wiki, sample_run, tamper
from conftest import CliResult

from publisher.kernel.findings import grouped_lines
from publisher.kernel.reasons import Reason
from publisher.wiki.check import check_wiki
from publisher.wiki.promote import promote

Cli = Callable[..., CliResult]

GHOST = "src-" + "ab" * 32


def test_a_span_on_an_unknown_snapshot_is_one_root_not_also_no_paper_id(tmp_path: Path, cli: Cli) -> None:
    wiki = make_wiki(tmp_path / "wiki")
    rb = sample_run(wiki)
    sid = next(iter(rb.texts))
    corpus = {"evidence_id": "pmid:111", "source_ids": [sid]}
    (rb.run.path / "corpus.jsonl").write_text(json.dumps(corpus) + "\n", encoding="utf-8")
    rb.extraction("pmid:111", [Claim("spans[0]", None, GHOST, 0, 5)], name="pmid-111")
    done = cli("verify", "--run-dir", rb.run.path, "--json")
    ghost = [f for f in done.json()["findings"] if f["source_id"] == GHOST]
    assert {f["reason_code"] for f in ghost} == {Reason.UNKNOWN_SOURCE.value}
    assert len([f for f in ghost if f["cause"] is None]) == 1


def test_fresh_fetch_check_names_what_is_not_fresh(tmp_path: Path, cli: Cli) -> None:
    wiki = make_wiki(tmp_path / "wiki")
    rb = sample_run(wiki)
    forged = forge_fetch(rb.run, "https://example.org/late", "Text fetched before the run began.")
    # The forged event is older than the run: not fresh.
    lines = rb.run.events_path.read_text(encoding="utf-8")
    assert forged in lines
    rb.extraction("web:late", [Claim("spans[0]", None, forged, 0, 4)], name="late")
    config = json.loads(rb.run.config_path.read_text(encoding="utf-8"))
    import os

    os.chmod(rb.run.config_path, 0o644)
    config["created_at"] = "2030-01-01T00:00:00Z"
    rb.run.config_path.write_text(json.dumps(config), encoding="utf-8")
    done = cli("verify", "--run-dir", rb.run.path, "--json")
    checks = {c["check_id"]: c for c in done.json()["checks"]}
    assert checks["C-FRESH-FETCH"]["status"] != "pass"
    fresh = [f for f in done.json()["findings"] if f["reason_code"] == Reason.NO_FRESH_FETCH.value]
    assert fresh and {f["check_id"] for f in fresh} == {"C-FRESH-FETCH"}


def test_a_changed_pdf_is_named_where_it_lies(tmp_path: Path) -> None:
    wiki = make_wiki(tmp_path / "wiki")
    rb = sample_run(wiki)
    tamper("pdf-asset", rb)
    outcome = check_wiki(wiki, policy=policy_of(wiki))
    assets = [f for f in outcome.findings if f.reason is Reason.ASSET_HASH_MISMATCH and f.cause is None]
    assert assets and all(f.file.startswith("assets/papers/") for f in assets)
    assert all((wiki / f.file).is_file() for f in assets)


def test_an_absent_result_is_c_assembler_absent_with_its_command(tmp_path: Path) -> None:
    wiki = make_wiki(tmp_path / "wiki")
    rb = sample_run(wiki)
    promote(rb.run.path, wiki, policy=policy_of(wiki))
    rb.run.result_path.unlink()
    outcome = check_wiki(wiki, policy=policy_of(wiki))
    roots = [f for f in outcome.findings if f.cause is None]
    assert [(f.check, f.reason) for f in roots] == [("C-ASSEMBLER", None)]
    assert roots[0].fix is not None and "runs/alpha" in roots[0].fix  # the command names the run
    assert not any(f.reason is Reason.SCHEMA_ERROR for f in outcome.findings)


def test_every_root_names_its_fix_on_one_short_line(tmp_path: Path) -> None:
    for kind in ("snapshot-text", "snapshot-missing", "result-excerpt", "event-line", "pdf-asset"):
        wiki = make_wiki(tmp_path / kind / "wiki")
        rb = sample_run(wiki)
        tamper(kind, rb)
        outcome = check_wiki(wiki, policy=policy_of(wiki))
        roots = [f for f in outcome.findings if f.cause is None]
        assert roots
        for root in roots:
            assert root.fix is not None, root.one_line()
        lines = grouped_lines(outcome.findings)
        assert all(len(line) <= 400 for line in lines), max(lines, key=len)


def test_a_malformed_source_id_is_a_usage_error(tmp_path: Path, cli: Cli) -> None:
    wiki = make_wiki(tmp_path / "wiki")
    rb = sample_run(wiki)
    for command in ("read", "spans"):
        extra = ["--query", "x"] if command == "spans" else []
        done = cli("source", command, "--run-dir", rb.run.path, "--source-id", "src-abc", *extra)
        assert done.status == 2 and len(done.err_lines) == 1


def test_json_reports_errors_as_json(tmp_path: Path, cli: Cli) -> None:
    done = cli("check", "--wiki", tmp_path / "absent", "--json")
    assert done.status == 2
    assert done.json()["ok"] is False and done.json()["error"]["exit_status"] == 2
    wiki = make_wiki(tmp_path / "wiki")
    with (wiki / "mkdocs.yml").open("a", encoding="utf-8") as out:
        out.write("extra:\n  evidence:\n    trusted_keys: [keys/none.pub]\n")
    done = cli("check", "--wiki", wiki, "--json")
    assert done.status == 2 and done.json()["error"]["reason_code"] == Reason.SCHEMA_ERROR.value
    assert done.json()["error"]["file"] == "mkdocs.yml", done.out  # the finding fields it knows


def test_json_reports_usage_errors_as_json(tmp_path: Path, cli: Cli) -> None:
    wiki = make_wiki(tmp_path / "wiki")
    rb = sample_run(wiki)
    done = cli("source", "read", "--run-dir", rb.run.path, "--source-id", "src-abc", "--json")
    assert done.status == 2 and len(done.err_lines) == 1
    assert done.json()["ok"] is False and done.json()["error"]["exit_status"] == 2
    from publisher.cli import ERROR_FACTS

    assert {key: done.json()["error"][key] for key in ERROR_FACTS} == dict.fromkeys(ERROR_FACTS)  # same keys
    plain = cli("source", "read", "--run-dir", rb.run.path, "--source-id", "src-abc")
    assert plain.status == 2 and plain.out == ""
