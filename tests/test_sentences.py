"""Sentence boundaries: scientific prose, wrapped PDF text, properties, and the real corpus."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from publisher.acquire import extract
from publisher.acquire.sentences import Sentences

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared"
EI = SHARED / "corpus" / "evidence-inference"


def _split(text: str, *, wrapped: bool = False) -> list[str]:
    return [text[s:e] for s, e in Sentences(text, wrapped=wrapped)]


@pytest.mark.parametrize(
    "sentences",
    [
        ["Smith et al. reported a drop (Fig. 2).", "The effect was large, e.g. 0.41 SD (p < .001)."],
        ["Scores fell (P < 0.05).", "The mean was 8.9 ± 0.6 ml/kg."],
        ["We found it [12].", "Then we left.[13]", "After that, nothing changed.", "Done."],
        ["As shown by Jones et al. [4], rates fell.", "As shown by Jones et al. We then tested it."],
        ["Approval came from the U.S. Food and Drug Administration.", "We thank Dr. Skillman and Prof. Jones."],
        ["Levels of vitamin C.", "At week 6, levels rose.", "They were followed for 4 y.", "There was no effect."],
        ["Doses were given vs. placebo, i.e. saline, at approx. 5 mg/kg.", "See Eq. 3 and Table 2."],
        ["Is it?", "Yes!", '"Quoted."', "Next (see Table 1.)", "Fine."],
        ["Outcomes differed in group A (n = 12).", "The control arm rose.", "Plasma levels of vitamin D fell."],
        ["Among 50 students (13.6, p = 0.04).", "Later ones were fine."],
        ["The effect was small (p = 0.003).", "Smith et al. We disagree with 3.5 vs. 4.2 mg."],
        ["Funded by Acme Pte. Ltd. of Singapore.", "Done in the U.S. EPA laboratory."],
        ["The visit was at 9 p.m.", "The next day was calm."],
        ["Two strains of Bacillus spp. were grown, resp. tested.", "An unknown abbrev. never splits before it."],
    ],
)
def test_scientific_prose(sentences: list[str]) -> None:
    assert _split(" ".join(sentences)) == sentences


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("treatment. NSAID use rose.", ["treatment.", "NSAID use rose."]),
        ("(P = 0.035). Fig. 3 shows it.", ["(P = 0.035).", "Fig. 3 shows it."]),
        ("See www.Example.org/A.Test for more.", ["See www.Example.org/A.Test for more."]),
        ("1. Introduction\nR1. For workers. 2.1. Methods", ["1. Introduction", "R1. For workers.", "2.1. Methods"]),
        ("Figure 1. Trial profile.\nIt was large.", ["Figure 1. Trial profile.", "It was large."]),
        ("They saw a nurse. 3. Exercise was offered.", ["They saw a nurse.", "3. Exercise was offered."]),
        ("Results\n\nA | 10\nB | 12\nThe end", ["Results", "A | 10", "B | 12", "The end"]),
    ],
)
def test_glued_periods_labels_and_lines(text: str, expected: list[str]) -> None:
    assert _split(text) == expected


def test_wrapped_text_joins_lines_and_keeps_headings_apart() -> None:
    filler = "\n".join(["a line of ordinary wrapped prose that is long enough to set the median line length"] * 3)
    text = (
        f"Scope\nThis statement covers adults who work {filler}\nand report difficulty falling asleep. "
        f"It does not cover people {filler}\nwith bipolar disorder.\nSummary of recommendations\n"
        f"R1. For shift workers we suggest a routine {filler}\n(conditional recommendation).\n\f\nRationale\n"
        f"Two trials informed the panel, {filler}."
    )
    got = _split(text, wrapped=True)
    assert got[0] == "Scope" and got[3] == "Summary of recommendations" and got[5] == "Rationale"
    assert got[1].endswith("falling asleep.") and "\n" in got[1]
    assert got[4].startswith("R1. For shift workers") and got[4].endswith("(conditional recommendation).")
    assert _split(text) != got  # as a block text, every line break ends a sentence


# --- properties ----------------------------------------------------------------------------

_WORDS = st.sampled_from(
    ["The", "trial", "e.g.", "et", "al.", "Fig.", "2.", "0.05", "p", "<", ".001", "[12].", "A.", "U.S.", "(n", "=",
     "4).", "Results", "vs.", "etc.", "ok?", "Yes!", "…", "“quoted.”", "1.", "www.x.org/A.B", "end.Next", "x"]
)  # fmt: skip
_GLUE = st.sampled_from([" ", " ", " ", "  ", "\n", "\n\n", "\u00a0", "\t", "\f", " \n "])


@st.composite
def _texts(draw: st.DrawFn) -> str:
    words = draw(st.lists(_WORDS, max_size=40))
    glue = draw(st.lists(_GLUE, min_size=len(words), max_size=len(words)))
    return draw(st.sampled_from(["", " ", "\n"])) + "".join(w + g for w, g in zip(words, glue, strict=True))


def _check_partition(text: str, wrapped: bool) -> list[tuple[int, int]]:
    found = list(Sentences(text, wrapped=wrapped))
    covered = 0
    last_end = 0
    hard = re.compile(r"\n[ \t\r]*\n|\f" if wrapped else r"\n|\f")
    for s, e in found:
        assert last_end <= s < e <= len(text)
        assert not text[s].isspace() and not text[e - 1].isspace()
        assert not hard.search(text, s, e)  # no sentence crosses a hard break
        assert text[last_end:s].strip() == ""  # nothing but white space between sentences
        covered += e - s
        last_end = e
    assert text[last_end:].strip() == ""
    return found


@settings(max_examples=300, deadline=None)
@given(_texts(), st.booleans(), st.data())
def test_sentences_partition_the_text_and_covering_agrees(text: str, wrapped: bool, data: st.DataObject) -> None:
    found = _check_partition(text, wrapped)
    if not text:
        return
    start = data.draw(st.integers(0, len(text) - 1))
    end = data.draw(st.integers(start + 1, len(text)))
    got = Sentences(text, wrapped=wrapped).covering(start, end)
    touching = [(s, e) for s, e in found if s < end and start < e]
    if not touching:
        assert got is None and text[start:end].strip() == ""
    else:
        # Segmenting only the stretch around the range gives the same sentences as the whole text.
        assert got == (touching[0][0], touching[-1][1])
        assert got[0] <= max(start, got[0]) and (got[1] >= end or text[got[1] : end].strip() == "")


_NUMBER = re.compile(r"\d+(?:[.,]\d+)+|\.\d+")


@settings(max_examples=200, deadline=None)
@given(_texts(), st.booleans())
def test_no_sentence_ends_inside_a_number_or_after_a_listed_abbreviation(text: str, wrapped: bool) -> None:
    found = list(Sentences(text, wrapped=wrapped))
    ends = {e for _, e in found}
    for number in _NUMBER.finditer(text):
        assert not any(number.start() < e < number.end() for e in ends), (text, number.group())
    hard = re.compile(r"\s*(?:\n[ \t\r]*\n|\f)" if wrapped else r"[ \t\r\u00a0]*[\n\f]")
    for _, e in found[:-1]:
        word = text[:e].split()[-1].lstrip("\"'“(")
        if word.lower() in {"e.g.", "al.", "fig.", "vs.", "i.e.", "etc."} and not hard.match(text, e):
            raise AssertionError(f"a sentence ends after {word!r} in {text!r}")


def test_punkt_runs_without_downloaded_data(monkeypatch: pytest.MonkeyPatch) -> None:
    """The tokenizer is built from the project's abbreviations: no NLTK data is ever loaded."""
    import nltk.data

    from publisher.acquire import sentences

    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("NLTK data was loaded")

    monkeypatch.setattr(nltk.data, "load", refuse)
    monkeypatch.setattr(nltk.data, "find", refuse)
    sentences._punkt.cache_clear()
    text = "The effect was small (p = 0.003). Smith et al. reported it. Next."
    assert _split(text) == ["The effect was small (p = 0.003).", "Smith et al. reported it.", "Next."]


@pytest.mark.parametrize("bad", [(-1, 3), (3, 3), (5, 2), (0, 10_000)])
def test_covering_refuses_ranges_outside_the_text(bad: tuple[int, int]) -> None:
    assert Sentences("One. Two.").covering(*bad) is None


# --- the real corpus -----------------------------------------------------------------------


def _corpus_texts() -> list[Path]:
    return sorted((EI / "texts").glob("*.txt")) if (EI / "texts").is_dir() else []


@pytest.fixture(scope="module")
def expert_spans() -> list[dict[str, object]]:
    if not (EI / "spans.jsonl").is_file():
        pytest.skip(f"corpus not found under {EI}")
    return [json.loads(line) for line in (EI / "spans.jsonl").read_text(encoding="utf-8").splitlines()]


def test_expert_evidence_spans_lie_in_whole_sentences(expert_spans: list[dict[str, object]]) -> None:
    """Every annotated evidence span is covered; most are exactly the sentences selected (74 % when written)."""
    texts: dict[str, Sentences] = {}
    exact = 0
    for span in expert_spans:
        pmcid = str(span["pmcid"])
        if pmcid not in texts:
            texts[pmcid] = Sentences((EI / "texts" / f"PMC{pmcid}.txt").read_text(encoding="utf-8"))
        seg = texts[pmcid]
        start, end = int(str(span["start"])), int(str(span["end"]))
        while seg.text[start].isspace():
            start += 1
        while seg.text[end - 1].isspace():
            end -= 1
        got = seg.covering(start, end)
        assert got is not None and got[0] <= start and end <= got[1]
        assert got[1] - got[0] <= 2000
        exact += got == (start, end)
    assert exact / len(expert_spans) >= 0.70, f"{exact} of {len(expert_spans)} exact"


@pytest.mark.parametrize("path", _corpus_texts()[:60] or [None], ids=lambda p: p.name if p else "no-corpus")
def test_corpus_texts_partition_cleanly(path: Path | None) -> None:
    if path is None:
        pytest.skip(f"corpus not found under {EI}")
    text = path.read_text(encoding="utf-8")
    found = _check_partition(text, wrapped=False)
    # A split inside a line never starts a sentence with a lower-case letter.
    for s, _ in found:
        line_start = text.rfind("\n", 0, s) + 1
        if text[line_start:s].strip():
            assert not text[s].islower(), text[max(0, s - 40) : s + 40]


def test_jats_articles_keep_abbreviations_and_numbers_whole() -> None:
    path = SHARED / "corpus" / "jats" / "ehp-116-1694.nxml"
    if not path.is_file():
        pytest.skip(f"{path} not found")
    doc = extract(path.read_bytes(), "application/xml")
    found = _check_partition(doc.text, wrapped=False)
    ends = {doc.text[s:e].split()[-1] for s, e in found}
    assert not ends & {"vs.", "e.g.", "Fig.", "al.", "i.e."}
    start = doc.text.index("high dose vs. control")
    got = Sentences(doc.text).covering(start, start + 5)
    assert got is not None
    sentence = doc.text[got[0] : got[1]]
    assert sentence.startswith("Male minnows exposed to PBDE-47") and "p < 0.001" in sentence
