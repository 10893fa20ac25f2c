"""Each warrant state as a reader sees it on a concept page, in a real Chromium (CONTRACT 17).

One concept holds five claims: one nobody reviewed (the author's proposal), one confirmed, one
qualified, one rejected and one whose review went stale when the claim was assessed again on
other evidence. The page must show each state beside the claim's admissibility, with the
independently confirmed count, and the evidence matrix must carry the state too.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from _browser_helpers import guarded_page, launched_browser, mkdocs_build, serve
from _claims_helpers import CONCEPT, claims_wiki
from _policy import policy_of

from publisher.acquire.signing import load_signer, new_key_pair
from publisher.cli import main
from publisher.wiki.claims.warrant import SIGNED_FOR, Correction, Decision
from publisher.wiki.warrant import record_warrant

pytestmark = pytest.mark.browser

STATES = {
    "prop": ("author_proposal", 0),
    "conf": ("confirmed", 1),
    "qual": ("qualified", 1),
    "rej": ("rejected", 0),
    "stale": ("stale", 0),
}
"""Claim id -> (warrant state, independently confirmed count)."""


def _wiki(root: Path, corpus_dir: Path) -> Path:
    keys = root / "keys"
    new_key_pair(keys, "wiki")
    new_key_pair(keys, "reviewer")
    (root / "wiki" / "keys").mkdir(parents=True)
    for name in ("wiki", "reviewer"):
        shutil.copy(keys / f"{name}.pub", root / "wiki" / "keys" / f"{name}.pub")
    trust = (
        "extra:\n  evidence:\n    trusted_keys:\n      - keys/wiki.pub\n"
        "      - {path: keys/reviewer.pub, roles: [warrant]}\n"
    )
    cw = claims_wiki(root / "wiki", corpus_dir, key=keys / "wiki.key", extra=trust)

    def assess(claim_id: str, label: str) -> None:
        status = main(["assess", "--wiki", str(cw.wiki), "--concept", CONCEPT, "--claim-id", claim_id,
                       "--statement", f"Claim {claim_id} holds.", "--status", "S", "--evidence", label,
                       "--key", str(keys / "wiki.key")])  # fmt: skip
        assert status == 0

    for claim_id in STATES:
        assess(claim_id, cw.labels[0])
    reviewer = load_signer(keys / "reviewer.key", SIGNED_FOR)
    policy = policy_of(cw.wiki)

    def decide(claim_id: str, decision: Decision, correction: Correction | None = None) -> None:
        record_warrant(cw.wiki, CONCEPT, claim_id, decision, "Read against the excerpt.", correction,
                       signer=reviewer, policy=policy)  # fmt: skip

    decide("conf", Decision.CONFIRMED)
    decide("qual", Decision.QUALIFIED, Correction(kind="population", text="only in adults over 65"))
    decide("rej", Decision.REJECTED)
    decide("stale", Decision.CONFIRMED)
    assess("stale", cw.labels[-1])  # assessed again on other evidence: the review no longer applies
    return cw.wiki


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory, corpus_dir: Path) -> Iterator[tuple[str, Path]]:
    root = tmp_path_factory.mktemp("warrant-pages")
    wiki = _wiki(root, corpus_dir)
    mkdocs_build(wiki, root / "site")
    with serve(root / "site") as base:
        yield base, root / "site"


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    with launched_browser() as b:
        yield b


def test_each_warrant_state_shows_on_the_concept_page(site: tuple[str, Path], browser: Any) -> None:
    base, folder = site
    with guarded_page(browser) as guard:
        page = guard.page
        page.goto(f"{base}concepts/{CONCEPT}/")
        for claim_id, (state, confirmed) in STATES.items():
            box = page.locator(f"#claim-{claim_id}")
            warrant = box.locator(".pub-warrant")
            assert warrant.is_visible()
            assert warrant.get_attribute("class") == f"pub-warrant pub-warrant-{state}"
            # Beside the admissibility, before the provenance and the counts.
            paragraphs = box.locator("p").all_inner_texts()
            assert paragraphs.index(warrant.inner_text()) == 2, paragraphs
            cells = box.locator("table td").all_inner_texts()
            headers = box.locator("table th").all_inner_texts()
            assert cells[headers.index("Independently confirmed")] == str(confirmed)
            has_review = state != "author_proposal"
            assert (warrant.locator("code").count() == 2) is has_review
        guard.check_clean()
        page.goto(f"{base}claims/")
        rows = page.locator("table tbody tr").all()
        states = {r.locator("td").nth(0).inner_text(): r.locator("td").nth(2).inner_text() for r in rows}
        assert {text: states[text] for text in states} == {
            f"Claim {cid} holds.": state.replace("_", " ") for cid, (state, _) in STATES.items()
        }
        guard.check_clean()
    doc = json.loads((folder / "claims.json").read_text(encoding="utf-8"))
    got = {c["id"]: (c["warrant"]["state"], c["counts"]["independently_confirmed"]) for c in doc["claims"]}
    assert got == STATES
    (qual,) = [c for c in doc["claims"] if c["id"] == "qual"]
    assert qual["warrant"]["correction"] == {"kind": "population", "text": "only in adults over 65"}
