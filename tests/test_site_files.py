"""A fully sealed site: every published file is in the manifest, and check-site reads bytes.

Post-build edits to anything (the verifier, the stylesheets, a ``<base href>``, a source page's
metadata table, an injected script or style rule, an added, removed or linked file) fail
check-site; the manifest's digest names the site and ``--expect`` pins it. A site whose excerpts
hold carriage returns passes untouched, on every page type.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from collections.abc import Callable
from pathlib import Path

import pytest
from _policy import policy_of
from _wiki_helpers import RunBuilder, build_wiki, make_wiki, sample_run

from publisher.site.checks.checksite import check_site
from publisher.site.checks.manifest import MANIFEST_NAME, file_entry, manifest_bytes, manifest_digest, site_files
from publisher.wiki.promote import promote


@pytest.fixture
def wiki(tmp_path: Path) -> Path:
    root = make_wiki(tmp_path / "wiki")
    rb = sample_run(root)
    promote(rb.run.path, root, policy=policy_of(root))
    build_wiki(root)
    return root


def _codes(wiki: Path, **kwargs: str) -> set[str]:
    return {f.code for f in check_site(wiki / "site", wiki, policy=policy_of(wiki), **kwargs).findings}


def _edit(path: Path, change: Callable[[str], str]) -> None:
    text = path.read_text(encoding="utf-8")
    changed = change(text)
    assert changed != text
    path.write_text(changed, encoding="utf-8")


def _source_page(site: Path) -> Path:
    return next(site.glob("sources/src-*/index.html"))


def _concept_page(site: Path) -> Path:
    return site / "concepts" / "alpha" / "index.html"


EDITS: dict[str, Callable[[Path], None]] = {
    "verify.js": lambda s: _edit(s / "assets/publisher/verify.js", lambda t: t.replace('"✓ verified"', '"✓ ok"')),
    "evidence.css": lambda s: _edit(s / "assets/publisher/evidence.css", lambda t: t + ".evidence-link{display:none}"),
    "reader.css": lambda s: _edit(
        s / "assets/publisher/reader.css", lambda t: t + '.evidence-excerpt::after{content:" (forged)"}'
    ),
    "theme.css": lambda s: _edit(next(s.glob("assets/stylesheets/main.*.css")), lambda t: t + "body{color:red}"),
    "base-href": lambda s: _edit(
        _concept_page(s), lambda t: t.replace("<head>", '<head><base href="https://evil.example/">', 1)
    ),
    "metadata-table": lambda s: _edit(
        _source_page(s), lambda t: re.sub(r'(<th scope="row">Title</th><td>)[^<]*', r"\1A forged title", t, count=1)
    ),
    "inline-script": lambda s: _edit(
        _concept_page(s), lambda t: t.replace("</body>", "<script>alert(document.domain)</script></body>")
    ),
    "style-rule": lambda s: _edit(
        _concept_page(s),
        lambda t: t.replace(
            "</head>", '<style>.evidence-excerpt{font-size:0}.evidence-excerpt::before{content:"x"}</style></head>'
        ),
    ),
    "added-file": lambda s: (s / "extra.html").write_text("<p>added</p>", encoding="utf-8"),
    "removed-file": lambda s: (s / "assets/publisher/reader.css").unlink(),
    "linked-file": lambda s: (
        (
            (s / "assets/publisher/verify.js").unlink(),
            os.symlink("/etc/hostname", s / "assets/publisher/verify.js"),
        )
        and None
    ),
    "record": lambda s: _edit(next(s.glob("sources/src-*/record.json")), lambda t: t.replace('"title"', '"title" ')),
}


def test_untouched_site_verifies_every_file(wiki: Path) -> None:
    outcome = check_site(wiki / "site", wiki, policy=policy_of(wiki))
    assert outcome.ok, [f.one_line() for f in outcome.findings]
    manifest = json.loads((wiki / "site" / MANIFEST_NAME).read_bytes())
    names, odd = site_files(wiki / "site")
    assert odd == [] and [e["path"] for e in manifest["files"]] == names
    assert outcome.files == len(names) and "index.html" in names and "sitemap.xml.gz" in names
    assert (
        outcome.manifest_digest == "sha256:" + hashlib.sha256((wiki / "site" / MANIFEST_NAME).read_bytes()).hexdigest()
    )


@pytest.mark.parametrize("edit", sorted(EDITS))
def test_every_post_build_edit_fails_check_site(wiki: Path, edit: str) -> None:
    EDITS[edit](wiki / "site")
    codes = _codes(wiki)
    assert "C-SITE-FILE" in codes, codes
    if edit in {"inline-script", "style-rule"}:
        assert "C-CSP" in codes  # the page's policy does not allow what was injected


@pytest.mark.parametrize("edit", ["inline-script", "style-rule", "base-href"])
def test_a_consistently_rewritten_manifest_still_fails_on_the_page_or_the_pin(wiki: Path, edit: str) -> None:
    site = wiki / "site"
    pinned = check_site(site, wiki, policy=policy_of(wiki)).manifest_digest
    assert pinned is not None
    EDITS[edit](site)
    manifest = json.loads((site / MANIFEST_NAME).read_bytes())
    names, _ = site_files(site)
    data = manifest_bytes(
        manifest["excerpts"],
        manifest["snapshots"],
        manifest["generator"],
        windows=manifest["windows"],
        records=manifest["records"],
        files=[file_entry(site, n) for n in names],
    )
    (site / MANIFEST_NAME).write_bytes(data)
    assert manifest_digest(data) != pinned
    assert _codes(wiki, expect=pinned) >= {"C-SITE-PIN"}
    if edit != "base-href":  # a <base> is refused by the policy (base-uri 'none') in the browser
        assert "C-CSP" in _codes(wiki)


def test_cli_prints_the_digest_and_pins_it(cli, wiki: Path) -> None:  # type: ignore[no-untyped-def]
    site = str(wiki / "site")
    digest = "sha256:" + hashlib.sha256((wiki / "site" / MANIFEST_NAME).read_bytes()).hexdigest()
    result = cli("check-site", site, "--wiki", str(wiki))
    assert result.status == 0 and digest in result.out
    assert cli("check-site", site, "--wiki", str(wiki), "--expect", digest).status == 0
    other = "sha256:" + "0" * 64
    result = cli("check-site", site, "--wiki", str(wiki), "--expect", other, "--json")
    assert result.status == 1
    assert {f["code"] for f in result.json()["findings"]} == {"C-SITE-PIN"}
    assert result.json()["manifest_sha256"] == digest
    assert cli("check-site", site, "--wiki", str(wiki), "--expect", "md5:abc").status == 2


CR_TEXT = (
    "Title line\r\n"
    "Methods: participants were seen\rtwice and the log was kept in CRLF\r\nfiles.\r\n"
    "Results: the effect was small\r\r\nand lone CRs\rstayed.\n"
)


def make_cr_wiki(root: Path, mode: str = "full") -> tuple[Path, str, list[tuple[int, int]]]:
    """A wiki whose one source holds CR, CRLF and CR CR LF inside its two cited spans."""
    extra = f"extra:\n  evidence:\n    source_text: {mode}\n    context: 12\n"
    wiki = make_wiki(root, extra=extra)
    rb = RunBuilder(wiki, "cr", question="Carriage returns?")
    sid = rb.source("https://example.org/cr", CR_TEXT, paper={"pmid": "77", "doi": None, "pmcid": None})
    starts = [CR_TEXT.index("participants"), CR_TEXT.index("Results")]
    ends = [CR_TEXT.index("files.") + 6, CR_TEXT.index("stayed.") + 7]
    ranges = list(zip(starts, ends, strict=True))
    spans = [{"claim": f"Claim {i}.", "source_id": sid, "start": s, "end": e} for i, (s, e) in enumerate(ranges)]
    rb.record(
        "extraction",
        "pmid-77",
        {"schema_version": 1, "evidence_id": "pmid:77", "pmid": "77", "design": "trial", "spans": spans},
    )
    rb.assemble()
    promote(rb.run.path, wiki, policy=policy_of(wiki))
    return wiki, sid, ranges


def test_excerpts_with_carriage_returns_pass_check_site_on_every_page_type(tmp_path: Path) -> None:
    for mode in ("full", "windows"):
        wiki, _, _ = make_cr_wiki(tmp_path / mode, mode)
        build_wiki(wiki)
        outcome = check_site(wiki / "site", wiki, policy=policy_of(wiki))
        assert outcome.ok, [f.one_line() for f in outcome.findings]
        report = (wiki / "site" / "runs" / "cr" / "report" / "index.html").read_bytes()
        concept = next((wiki / "site" / "concepts").glob("*/index.html")).read_bytes()
        for page in (report, concept):
            assert b"&#13;" in page and b"\r" not in page
