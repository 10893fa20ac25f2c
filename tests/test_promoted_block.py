"""The promoted block is bound (check ``C-PROMOTED``) and its labels are derived from what they cite.

Every line promotion writes between the markers must be what promotion writes from the accepted
result now: a hand edit is refused by ``publisher check``, the build (the site left byte for
byte) and ``promote --check``, with the file, the line, the promoted text and the found text.
Prose outside the block stays the author's.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from _policy import policy_of
from _wiki_helpers import Claim, RunBuilder, build_wiki, leftovers, make_wiki, refused_build, tree_digest
from conftest import CliResult
from hypothesis import given, settings
from hypothesis import strategies as st

from publisher.kernel.findings import Finding
from publisher.wiki.check import check_wiki
from publisher.wiki.concepts import GENERATED_BEGIN, GENERATED_END, parse_concept
from publisher.wiki.evidence import VerifiedClaim
from publisher.wiki.promote import PromotionRefused, promote
from publisher.wiki.promoted import CHECK, evidence_label, is_stable_label

Cli = Callable[..., CliResult]

TEXT = (
    "Methods. DAWN was an open-label trial. The trial randomised 120 participants, 60 per arm. "
    "Results: sleep onset fell by 6.2 min."
)
BULLET = "120 randomised, 60 per arm"


@pytest.fixture
def trial(tmp_path: Path) -> tuple[Path, RunBuilder]:
    """A wiki with one run promoted into ``concepts/dawn.md``: two claims of one extraction."""
    wiki = make_wiki(tmp_path / "wiki")
    rb = RunBuilder(wiki, "dawn", question="Does morning light help?")
    sid = rb.source("https://example.org/dawn", TEXT, paper={"pmid": "48213507", "doi": None, "pmcid": None})
    start = TEXT.index("The trial randomised")
    rb.extraction(
        "pmid:48213507",
        [
            Claim("spans[0]", "design: open-label trial", sid, TEXT.index("DAWN"), TEXT.index(" The trial")),
            Claim("spans[1]", BULLET, sid, start, TEXT.index(" Results")),
        ],
    )
    rb.assemble()
    promote(rb.run.path, wiki, concept="dawn", policy=policy_of(wiki))
    return wiki, rb


def _concept(wiki: Path) -> Path:
    return wiki / "concepts" / "dawn.md"


def _bullet_line(text: str) -> tuple[int, str]:
    """The 1-based line number and text of the bullet of :data:`BULLET`."""
    lines = text.split("\n")
    index = next(i for i, line in enumerate(lines) if line.startswith(f"- {BULLET}[^"))
    return index + 1, lines[index]


def _promoted(findings: tuple[Finding, ...] | list[Finding]) -> list[Finding]:
    return [f for f in findings if f.check == CHECK]


def test_an_edited_claim_line_is_refused_everywhere_with_the_site_untouched(
    trial: tuple[Path, RunBuilder], cli: Cli
) -> None:
    wiki, rb = trial
    build_wiki(wiki)
    site = wiki / "site"
    before = tree_digest(site)
    path = _concept(wiki)
    clean = path.read_text(encoding="utf-8")
    line, promoted = _bullet_line(clean)
    label = promoted[promoted.index("[^") + 2 : -1]
    edited_line = f"- 12,000 randomised, all cured[^{label}]"
    edited = clean.replace(promoted, edited_line)
    path.write_text(edited, encoding="utf-8")

    (finding,) = check_wiki(wiki, policy=policy_of(wiki)).findings
    assert (finding.check, finding.code, finding.file, finding.line) == (
        CHECK,
        "EXCERPT_MISMATCH",
        "concepts/dawn.md",
        line,
    )
    assert (finding.expected, finding.found, finding.label) == (promoted, edited_line, label)

    out = cli("check", "--wiki", wiki, "--json")
    assert out.status == 1
    (reported,) = json.loads(out.out)["findings"]
    assert (reported["check"], reported["line"], reported["expected"], reported["found"]) == (
        CHECK,
        line,
        promoted,
        edited_line,
    )

    built = _promoted(refused_build(wiki))
    assert [(f.line, f.expected, f.found) for f in built] == [(line, promoted, edited_line)]
    assert tree_digest(site) == before and leftovers(wiki) == []

    with pytest.raises(PromotionRefused) as caught:
        promote(rb.run.path, wiki, concept="dawn", check=True, policy=policy_of(wiki))
    assert [(f.check, f.line, f.found) for f in caught.value.findings] == [(CHECK, line, edited_line)]
    assert path.read_text(encoding="utf-8") == edited

    path.write_text(clean, encoding="utf-8")
    assert check_wiki(wiki, policy=policy_of(wiki)).ok


def _edit_excerpt(text: str) -> str:
    return text.replace('60 per arm."', '6000 per arm."', 1)


def _rename_label(text: str) -> str:
    _, bullet = _bullet_line(text)
    label = bullet[bullet.index("[^") + 2 : -1]
    return text.replace(label, "mine")


def _move_bullet_out(text: str) -> str:
    _, bullet = _bullet_line(text)
    return text.replace(bullet + "\n", "").replace(
        GENERATED_END, GENERATED_END + "\n\n" + bullet.replace(BULLET, "all cured")
    )


def _add_line(text: str) -> str:
    _, bullet = _bullet_line(text)
    return text.replace(bullet, bullet + "\n- All 120 were cured.")


def _end_marker_up(text: str) -> str:
    _, bullet = _bullet_line(text)
    without = text.replace("\n" + GENERATED_END, "")
    return without.replace(bullet, bullet + "\n\n" + GENERATED_END)


def _markers_removed(text: str) -> str:
    return text.replace(GENERATED_BEGIN + "\n", "").replace(GENERATED_END + "\n", "")


def _marker_in_a_line(text: str) -> str:
    return text.replace(GENERATED_BEGIN, "Read on: " + GENERATED_BEGIN)


def _redefined_outside(text: str) -> str:
    _, bullet = _bullet_line(text)
    label = bullet[bullet.index("[^") + 2 : -1]
    return text + f"\n[^{label}]: All 12,000 were cured.\n"


@pytest.mark.parametrize(
    "edit",
    [
        _edit_excerpt,
        _rename_label,
        _move_bullet_out,
        _add_line,
        _end_marker_up,
        _markers_removed,
        _marker_in_a_line,
        _redefined_outside,
    ],
)
def test_every_edit_of_the_block_is_refused(trial: tuple[Path, RunBuilder], edit: Callable[[str], str]) -> None:
    wiki, rb = trial
    path = _concept(wiki)
    edited = edit(path.read_text(encoding="utf-8"))
    path.write_text(edited, encoding="utf-8")
    found = _promoted(check_wiki(wiki, policy=policy_of(wiki)).findings)
    assert found, edit.__name__
    assert all(f.file == "concepts/dawn.md" and f.line is not None for f in found)
    with pytest.raises(PromotionRefused):
        promote(rb.run.path, wiki, concept="dawn", check=True, policy=policy_of(wiki))
    assert path.read_text(encoding="utf-8") == edited


def test_prose_outside_the_block_is_the_authors(trial: tuple[Path, RunBuilder]) -> None:
    wiki, rb = trial
    path = _concept(wiki)
    text = path.read_text(encoding="utf-8")
    text = text.replace(GENERATED_BEGIN, "Our reading: the trial was small.\n\n" + GENERATED_BEGIN)
    path.write_text(text + "\n## Notes\n\nWritten by hand, with a note of our own.[^ours]\n\n[^ours]: Ours.\n")
    assert check_wiki(wiki, policy=policy_of(wiki)).ok
    promote(rb.run.path, wiki, concept="dawn", check=True, policy=policy_of(wiki))


def _claim(**change: object) -> VerifiedClaim:
    base = VerifiedClaim(
        "extraction:pmid:1", 0, "120 randomised", "spans[0]", "src-" + "a" * 64, 10, 20, "x", "full_text", None, None
    )
    return VerifiedClaim(**{**base.__dict__, **change})  # type: ignore[arg-type]


def test_a_label_is_derived_from_what_it_cites_never_from_its_position() -> None:
    label = evidence_label("dawn", _claim())
    assert is_stable_label(label) and label.startswith("dawn-extraction-pmid-1-q")
    assert evidence_label("dawn", _claim(index=7)) == label  # the position says nothing
    assert evidence_label("dawn", _claim(excerpt="y")) == label  # the excerpt is the span's, re-sliced
    for change in ({"source_id": "src-" + "b" * 64}, {"start": 11}, {"end": 21}, {"claim": "12,000 randomised"}):
        assert evidence_label("dawn", _claim(**change)) != label, change
    assert evidence_label("dusk", _claim()) != label
    assert not is_stable_label("dawn-extraction-pmid-1-1") and not is_stable_label("dawn-extraction-pmid-1-2-0123abcd")


def test_a_concept_and_its_page_keep_their_labels_when_a_span_is_added_before_them(
    trial: tuple[Path, RunBuilder],
) -> None:
    wiki, rb = trial
    path = _concept(wiki)
    before = {n.label: n.refs for n in parse_concept(path.read_text(encoding="utf-8")).footnotes}
    record_path = rb.run.extractions_dir / "pmid-48213507.json"
    record = json.loads(record_path.read_text(encoding="utf-8"))
    sid = record["spans"][0]["source_id"]
    record["spans"].insert(0, {"claim": "results", "source_id": sid, "start": TEXT.index("Results"), "end": len(TEXT)})
    record_path.write_text(json.dumps(record), encoding="utf-8")
    rb.assemble()
    promote(rb.run.path, wiki, concept="dawn", policy=policy_of(wiki))
    after = {n.label: n.refs for n in parse_concept(path.read_text(encoding="utf-8")).footnotes}
    assert len(after) == len(before) + 1
    assert {label: after[label] for label in before} == before
    assert check_wiki(wiki, policy=policy_of(wiki)).ok


def test_concepts_naming_the_same_runs_share_one_rendering_and_each_is_still_compared(
    trial: tuple[Path, RunBuilder], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The check renders a block once for every concept naming the same runs; a concept naming
    other runs gets its own, and an edited copy is refused exactly as without the sharing."""
    import publisher.wiki.promoted as promoted

    wiki, rb = trial
    promote(rb.run.path, wiki, concept="dusk", policy=policy_of(wiki))
    other = RunBuilder(wiki, "dusk", question="Does evening light harm?")
    sid = other.source("https://example.org/dusk", TEXT, paper={"pmid": "48213508", "doi": None, "pmcid": None})
    other.extraction("pmid:48213508", [Claim("spans[0]", BULLET, sid, TEXT.index("The trial"), TEXT.index(" Results"))])
    other.assemble()
    promote(other.run.path, wiki, concept="evening", policy=policy_of(wiki))
    dusk = wiki / "concepts" / "dusk.md"
    dusk.write_text(_edit_excerpt(dusk.read_text(encoding="utf-8")), encoding="utf-8")
    rendered: list[tuple[str, ...]] = []
    real = promoted.render_block

    def counting(runs: Any, check: Any, *, legacy: bool = False) -> promoted.RenderedBlock:
        if not legacy:
            rendered.append(tuple(ev.slug for ev in runs))
        return real(runs, check, legacy=legacy)

    monkeypatch.setattr(promoted, "render_block", counting)
    shared = check_wiki(wiki, policy=policy_of(wiki)).findings
    assert sorted(rendered) == [("dawn",), ("dusk",)]  # dawn.md and dusk.md share one rendering
    found = _promoted(shared)
    assert found and {f.file for f in found} == {"concepts/dusk.md"}
    assert all(f.expected is not None and "60 per arm" in f.expected for f in found if f.expected)
    monkeypatch.setattr(promoted.BlockCache, "get", lambda self, runs: None)  # each concept renders its own
    assert [repr(f) for f in check_wiki(wiki, policy=policy_of(wiki)).findings] == [repr(f) for f in shared]


def test_a_footnote_form_made_once_a_pass_is_still_compared_for_each_concept(
    trial: tuple[Path, RunBuilder], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Concepts holding the same footnotes share the line promotion writes for each (made once a
    pass), and each concept's own line is still compared with it: words added after one
    concept's excerpt are refused there (C-PROSE, EXCERPT_MISMATCH) and nowhere else, the same
    findings as with every line made again."""
    import publisher.wiki.conceptcheck as conceptcheck
    from publisher.kernel.checkids import CheckId
    from publisher.kernel.reasons import Reason

    wiki, rb = trial
    promote(rb.run.path, wiki, concept="dusk", policy=policy_of(wiki))
    dusk = wiki / "concepts" / "dusk.md"
    lines = dusk.read_text(encoding="utf-8").split("\n")
    at = next(n for n, line in enumerate(lines) if line.startswith("[^") and '"' in line)
    label = lines[at][2 : lines[at].index("]")]
    lines[at] += " as the authors say"
    dusk.write_text("\n".join(lines), encoding="utf-8")
    made: list[tuple[Any, ...]] = []
    real = conceptcheck.format_ref

    def counting(*args: Any) -> str:
        made.append(args)
        return real(*args)

    monkeypatch.setattr(conceptcheck, "format_ref", counting)
    shared = check_wiki(wiki, policy=policy_of(wiki)).findings
    assert len(made) == len(set(made)) == 2  # the two footnotes, for dawn.md and dusk.md alike
    prose = [(f.file, f.reason, f.label) for f in shared if f.check == CheckId.PAGE_PROSE]
    assert prose == [("concepts/dusk.md", Reason.EXCERPT_MISMATCH, label)]
    real_check = conceptcheck._check_promoted_form
    monkeypatch.setattr(
        conceptcheck,
        "_check_promoted_form",
        lambda wiki, ce, note, raw, line, blocks=None: real_check(wiki, ce, note, raw, line),
    )
    assert [repr(f) for f in check_wiki(wiki, policy=policy_of(wiki)).findings] == [repr(f) for f in shared]


def _block_lines_line_by_line(body: str) -> object:
    """The markers' places read a line at a time: what :func:`block_lines` must answer."""
    from publisher.wiki.promoted import BlockLines

    lines = body.split("\n")
    begins = [i for i, line in enumerate(lines) if line.removesuffix("\r") == GENERATED_BEGIN]
    ends = [i for i, line in enumerate(lines) if line.removesuffix("\r") == GENERATED_END]
    marked = [i for i, line in enumerate(lines) if GENERATED_BEGIN in line or GENERATED_END in line]
    if not marked:
        return None
    if len(begins) == 1 and len(ends) == 1 and begins[0] < ends[0] and marked == [begins[0], ends[0]]:
        return BlockLines(begins[0], ends[0])
    stray = next((i for i in marked if i not in (begins[:1] + ends[:1])), marked[0])
    return "each promoted-block marker must be a line of its own, once, begin before end", stray


_MARKER_PIECES = [
    GENERATED_BEGIN,
    GENERATED_END,
    GENERATED_BEGIN + "\r",
    f" {GENERATED_BEGIN}",
    f"{GENERATED_END} and text",
    f"{GENERATED_BEGIN}{GENERATED_END}",
    "prose",
    "",
    "- a claim[^a]",
    "\r",
]


@settings(max_examples=500, deadline=None)
@given(st.lists(st.sampled_from(_MARKER_PIECES), max_size=10))
def test_block_lines_finds_the_markers_as_reading_every_line_does(pieces: list[str]) -> None:
    """The markers are searched for in the body, not read a line at a time: the same places, the
    same refusal and the same stray line, for markers alone, repeated, beside text, with a
    carriage return, both on one line."""
    from publisher.wiki.promoted import block_lines

    body = "\n".join(pieces)
    assert block_lines(body) == _block_lines_line_by_line(body)
