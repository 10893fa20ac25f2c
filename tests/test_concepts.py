"""Concept files: front matter schema, footnote parsing from raw lines, the generated block."""

from __future__ import annotations

import html
import json
import re

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from publisher.kernel.errors import IntegrityError
from publisher.kernel.lookalike import BIDI_CONTROLS
from publisher.kernel.reasons import Reason
from publisher.kernel.refs import format_ref
from publisher.wiki.concepts import (
    GENERATED_BEGIN,
    GENERATED_END,
    ConceptClaim,
    ConceptFrontMatter,
    EpistemicStatus,
    dump_concept,
    evidence_footnotes,
    parse_concept,
    split_generated,
    with_generated,
)
from publisher.wiki.markdown import markdown_text

SID = "src-" + "a" * 64
FRONT = """---
schema_version: 1
title: Sleep and light
concept: sleep-light
runs:
- run: alpha
  path: runs/alpha
  inputs_hash: sha256:{h}
  promoted_at: 2030-01-02T03:04:05Z
claims: []
---
""".replace("{h}", "b" * 64)


def _doc(body: str) -> str:
    return FRONT + body


def test_front_matter_parses_and_timestamps_stay_strings() -> None:
    doc = parse_concept(_doc("Prose.\n"))
    assert doc.front.concept == "sleep-light"
    assert doc.front.runs[0].promoted_at == "2030-01-02T03:04:05Z"
    assert doc.front.claims == ()
    assert doc.body_line == 12


@pytest.mark.parametrize(
    "edit",
    [
        lambda t: t.replace("title: Sleep and light\n", "title: Sleep and light\ntitle: again\n"),
        lambda t: t.replace("schema_version: 1", "schema_version: 2"),
        lambda t: t.replace("concept: sleep-light", "concept: index"),
        lambda t: t.replace("concept: sleep-light", "concept: ../x"),
        lambda t: t.replace("path: runs/alpha", "path: ../outside"),
        lambda t: t.replace("claims: []", "claims: []\nextra: 1"),
        lambda t: t.replace("inputs_hash: sha256:", "inputs_hash: md5:"),
        lambda t: t.replace("promoted_at: 2030-01-02T03:04:05Z", "promoted_at: yesterday"),
        lambda t: t.replace("---\n", "", 1),
        lambda t: t[: t.rindex("---")],
        lambda t: t.replace("runs:\n", "runs: [\n"),
        lambda t: t.replace("title: Sleep and light", "title: Sleep \ud800 light"),  # not Unicode text
        lambda t: t.replace("title: Sleep and light", "title: Sleep \x01 light"),  # a control character
        lambda t: t.replace("runs:\n", "runs: " + "[" * 50_000 + "\n"),  # nested past any sane depth
    ],
)
def test_bad_front_matter_is_a_schema_error(edit) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(IntegrityError) as info:
        parse_concept(edit(_doc("Body.\n")))
    assert info.value.reason is Reason.SCHEMA_ERROR


def test_duplicate_run_entries_are_refused() -> None:
    text = _doc("x\n").replace(
        "claims: []", "- run: alpha\n  path: runs/alpha\n  promoted_at: 2030-01-02T03:04:05Z\nclaims: []"
    )
    with pytest.raises(IntegrityError):
        parse_concept(text)


def test_footnotes_are_read_from_raw_lines_with_json_escapes() -> None:
    excerpt = 'He said "no" \\ then\nleft; [x](y) *z*'
    body = (
        "Claim one.[^a] Claim two.[^b] Plain.[^c]\n\n"
        f"[^a]: {format_ref(SID, 3, 9, excerpt)}\n"
        f"[^b]: {format_ref(SID, 1, 2)}; {format_ref(SID, 4, 5, 'q')} trailing words\n"
        "[^c]: Just a note, no reference.\n"
    )
    notes = {n.label: n for n in evidence_footnotes(body)}
    assert set(notes) == {"a", "b"}
    assert notes["a"].refs[0].quoted == excerpt
    assert (notes["a"].refs[0].start, notes["a"].refs[0].end) == (3, 9)
    assert [(r.start, r.quoted) for r in notes["b"].refs] == [(1, None), (4, "q")]
    assert notes["b"].rest == "trailing words"
    assert notes["a"].first == 2 and notes["a"].last == 3


def test_malformed_reference_is_reported_not_skipped() -> None:
    body = 'Claim.[^a]\n\n[^a]: src-abc#1-2 "x"\n'
    (note,) = evidence_footnotes(body)
    assert note.error is not None and note.refs == ()


def test_footnote_in_code_block_is_not_evidence() -> None:
    body = "```\n[^a]: " + format_ref(SID, 1, 2, "x") + "\n```\n"
    assert evidence_footnotes(body) == ()


def test_generated_block_replaced_and_prose_kept() -> None:
    body = "Intro prose.\n\n" + GENERATED_BEGIN + "\nold\n" + GENERATED_END
    body += "\n\nOutro prose.\n"
    new = with_generated(body, "new block\n")
    before, inside, after = split_generated(new)
    assert before == "Intro prose.\n\n"
    assert inside is not None and "new block" in inside and "old" not in inside
    assert after == "\n\nOutro prose.\n"


def test_block_appended_when_absent() -> None:
    new = with_generated("Only prose.\n", "gen")
    assert new.startswith("Only prose.\n\n" + GENERATED_BEGIN)
    assert new.rstrip().endswith(GENERATED_END)


@pytest.mark.parametrize(
    "body",
    [
        GENERATED_BEGIN + "\n",
        GENERATED_END + "\n" + GENERATED_BEGIN + "\n",
        GENERATED_BEGIN + GENERATED_BEGIN + GENERATED_END,
    ],
)
def test_broken_markers_are_a_schema_error(body: str) -> None:
    with pytest.raises(IntegrityError) as info:
        parse_concept(_doc(body))
    assert info.value.reason is Reason.SCHEMA_ERROR


def test_dump_round_trips() -> None:
    doc = parse_concept(_doc("Body [^a].\n\n[^a]: " + format_ref(SID, 0, 1, "x") + "\n"))
    again = parse_concept(dump_concept(doc.front, doc.body))
    assert again.front == doc.front
    assert again.body == doc.body


def test_claims_are_reserved_with_epistemic_statuses() -> None:
    claim = ConceptClaim(id="c1", statement="Light helps.", status="partially_supported", conditions=("adults",))
    assert claim.status is EpistemicStatus.PARTIALLY_SUPPORTED
    front = ConceptFrontMatter(schema_version=1, title="t", concept="c", claims=(claim,))
    assert parse_concept(dump_concept(front, "x\n")).front.claims[0] == claim
    with pytest.raises(ValueError):
        ConceptClaim(id="c1", statement="x", status="proven")
    assert {s.value for s in EpistemicStatus} == {
        "supported",
        "partially_supported",
        "not_supported",
        "contradicted",
        "non_evaluable",
    }


def test_schema_command_publishes_concept_schema(cli) -> None:  # type: ignore[no-untyped-def]
    result = cli("schema", "concept")
    assert result.status == 0
    schema = json.loads(result.out)
    assert set(schema["required"]) >= {"schema_version", "title", "concept"}
    assert "runs" in schema["properties"] and "claims" in schema["properties"]


_CONTROLS = {cp: None for cp in [*range(0x20), *range(0x7F, 0xA0)] if not chr(cp).isspace()}


@given(st.text() | st.text(alphabet=st.sampled_from("a =*\u202a\u200f\u2066\n\x00")))
def test_markdown_text_is_one_line_without_raw_markup(text: str) -> None:
    out = markdown_text(text)
    assert "\n" not in out and "<" not in out
    plain = re.sub(r"&(?:#\d+|amp|lt|gt|quot);", "", out)
    assert not set(plain) & set("*_[]`#\\&$|=^~")
    # control characters and bidi controls (which would reorder what is shown) are dropped
    assert html.unescape(out) == " ".join(BIDI_CONTROLS.sub("", text).translate(_CONTROLS).split())


_PIECES = [
    "Claim one.[^a]",
    "Claim two [^b] and [^c].",
    "`[^a]` in code",
    "``a `[^b]` b``",
    "\\[^a] escaped",
    "an inline note^[with [^c] inside]",
    "[^a]: src-" + "a" * 64 + "#1-5 the excerpt",
    "[^b]: src-" + "b" * 64 + "#0-9",
    "[^c]: a plain note [^a]",
    "    [^a]: indented code, not a definition",
    "```\n[^b]: src-" + "c" * 64 + "#1-2\n```",
    "> quoted [^a]\n> [^d]: src-" + "d" * 64 + "#2-3",
    "- item [^b]\n  - nested [^c]",
    "1. [^e]: src-" + "e" * 64 + "#4-5",
    "<span>[^a]</span>",
    "[link [^a]](https://example.org)",
    "[^a](https://example.org) an inline link, not a reference",
    "[^a][c] and [^b][] and [^e]( unclosed",
    "[c]: https://example.org/reference",
    "[^x y]: https://example.org/a-link-reference-with-a-caret",
    "[^x y] [^X Y]",
    "run [^r.1:a_b-c] and [^r.1:a_b-c]\\",
    "[^r.1:a_b-c]: src-" + "f" * 64 + "#6-7",
    "[^d]",
    "plain prose without any reference",
    "*emphasis* and **strong** text",
    "---",
    "# A heading [^b]",
    "  continuation line",
    "",
]


def _full_parse(body: str) -> tuple[object, ...]:
    """:func:`evidence_footnotes` through markdown-it's own parser (every block, every rule)."""
    from markdown_it import MarkdownIt
    from mdit_py_plugins.footnote import footnote_plugin

    from publisher.wiki import concepts as concepts_module

    full = MarkdownIt("commonmark").use(footnote_plugin)
    real, shared = concepts_module._footnote_parser, concepts_module._generated_footnotes
    try:
        concepts_module._footnote_parser = lambda: full  # type: ignore[assignment]
        concepts_module._generated_footnotes = lambda body: None  # type: ignore[assignment]
        return evidence_footnotes(body)
    finally:
        concepts_module._footnote_parser = real  # type: ignore[assignment]
        concepts_module._generated_footnotes = shared  # type: ignore[assignment]


_DEF_A = "[^a]: src-" + "a" * 64 + "#1-5"


@pytest.mark.parametrize(
    "body",
    [
        f"See [^a](https://example.org).\n\n{_DEF_A}\n",  # an inline link, no reference
        f"See [^a][c].\n\n[c]: https://example.org\n\n{_DEF_A}\n",  # a full reference link
        f"See [^a].\n\n[^a\n]: https://example.org\n\n{_DEF_A}\n",  # a link reference labelled ^a
    ],
)
def test_a_reference_the_link_rule_takes_is_no_footnote_reference(body: str) -> None:
    """Where ``[^a]`` is a link (followed by ``(`` or ``[``, or a link reference definition has
    its label), the definition it would cite is unreferenced: not an evidence footnote but a
    stray definition refused with a grammar error, as markdown-it's full parse reads it."""
    notes = evidence_footnotes(body)
    assert notes == _full_parse(body)
    assert [(n.label, n.refs, n.error is not None) for n in notes] == [("a", (), True)]


@given(st.lists(st.sampled_from(_PIECES), max_size=14), st.sampled_from(["\n", "\n\n"]))
def test_the_footnote_parse_reads_every_body_as_the_full_parser_does(pieces: list[str], sep: str) -> None:
    """The footnote parser tokenises only the inline blocks that can hold a reference ("[^" or
    "^["), and reads a plain ``[^label]`` before the link rule where that rule cannot match:
    which definitions are footnotes, in what order, with which lines and code blocks, is
    exactly what markdown-it's full parse gives."""
    body = sep.join(pieces)
    assert evidence_footnotes(body) == _full_parse(body)


_AROUND = [
    "```",
    "~~~",
    "<pre>",
    "<!-- a comment left open",
    "<div>",
    "- an item",
    "  an item's continuation",
    "> a quote",
    "| a | b |\n|---|---|",
    "    indented code",
    "A setext title",
    "===",
    "Prose [^a] citing the block.",
    "[c]: https://example.org/reference",
    "*emphasis* only",
    "",
]
"""Prose around a generated block: what could stay open into it, or read its labels."""


def _with_block(before: list[str], block: list[str], after: list[str], sep: str) -> str:
    inside = sep.join(block)
    return sep.join([*before, GENERATED_BEGIN, inside, "", GENERATED_END, *after])


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.sampled_from(_AROUND + _PIECES), max_size=5),
    st.lists(st.sampled_from(_PIECES + _AROUND), max_size=8),
    st.lists(st.sampled_from(_AROUND + _PIECES), max_size=5),
    st.sampled_from(["\n", "\n\n"]),
)
def test_a_generated_block_read_on_its_own_gives_the_footnotes_of_the_whole_parse(
    before: list[str], block: list[str], after: list[str], sep: str
) -> None:
    """Where the generated block is parsed on its own and shared (it stands apart, the prose
    around writes no label), the footnotes are exactly the whole body's parse; elsewhere the
    whole body is parsed: prose left open into the block, a block left open past its end
    marker, labels read across the markers."""
    body = _with_block(before, block, after, sep)
    assert evidence_footnotes(body) == _full_parse(body)


def test_concepts_holding_the_same_block_parse_it_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """Two concepts promoting the same runs hold the same generated block: it is parsed once, and
    each concept's footnotes are its own lines' (the prose before the block differs in length)."""
    from publisher.wiki import concepts as concepts_module

    concepts_module._BLOCK_FOOTNOTES.clear()
    parsed: list[str] = []
    real = concepts_module._block_footnotes

    def counted(part: str) -> object:
        parsed.append(part)
        return real(part)

    monkeypatch.setattr(concepts_module, "_block_footnotes", counted)
    block = ["## Evidence", "", "- a claim[^a]", "- another[^b]", "", _PIECES[6], _PIECES[7]]
    first = _with_block(["# One", "", "Prose."], block, ["After."], "\n")
    second = _with_block(["# Two", "", "Longer prose,", "on two lines."], block, [], "\n")
    notes = [evidence_footnotes(first), evidence_footnotes(second)]
    assert len(parsed) == 1
    assert notes == [_full_parse(first), _full_parse(second)]
    assert [[(n.label, n.first) for n in found] for found in notes] == [[("a", 9), ("b", 10)], [("a", 10), ("b", 11)]]


def test_prose_that_keeps_a_block_open_is_parsed_whole(monkeypatch: pytest.MonkeyPatch) -> None:
    """A fence left open before the begin marker holds the whole block as code: no footnote is
    evidence, as the whole parse reads it, and the block's own parse is never asked for."""
    from publisher.wiki import concepts as concepts_module

    monkeypatch.setattr(concepts_module, "_block_footnotes", lambda part: pytest.fail("the block was shared"))
    body = _with_block(["```"], ["- a claim[^a]", "", _PIECES[6]], [], "\n")
    assert evidence_footnotes(body) == _full_parse(body) == ()


# --- front matter of any YAML structure: a parsed concept or one SCHEMA_ERROR, never a crash ------

_SCALAR_TEXT = st.text(alphabet="abc xyz019:-_", max_size=6)


def _scalar_nodes() -> st.SearchStrategy[yaml.Node]:
    tagged = st.sampled_from(["tag:yaml.org,2002:str", "tag:yaml.org,2002:int", "tag:yaml.org,2002:null"])
    return st.builds(lambda tag, text: yaml.ScalarNode(tag, text), tagged, _SCALAR_TEXT).filter(
        lambda n: n.tag != "tag:yaml.org,2002:int" or n.value.isdigit()
    )


def _nodes() -> st.SearchStrategy[yaml.Node]:
    def extend(children: st.SearchStrategy[yaml.Node]) -> st.SearchStrategy[yaml.Node]:
        sequences = st.lists(children, max_size=3).map(lambda v: yaml.SequenceNode("tag:yaml.org,2002:seq", v))
        pairs = st.lists(st.tuples(children, children), max_size=3)  # keys of any kind: [a], {b: c} ...
        mappings = pairs.map(lambda v: yaml.MappingNode("tag:yaml.org,2002:map", v))
        return sequences | mappings

    return st.recursive(_scalar_nodes(), extend, max_leaves=12)


@settings(max_examples=200, deadline=None)
@given(pairs=st.lists(st.tuples(_nodes(), _nodes()), max_size=4))
def test_front_matter_of_any_structure_parses_or_is_one_schema_error(pairs: list[tuple[yaml.Node, yaml.Node]]) -> None:
    text = yaml.serialize(yaml.MappingNode("tag:yaml.org,2002:map", pairs))
    try:
        parse_concept(f"---\n{text}---\nBody.\n")
    except IntegrityError as exc:
        assert exc.reason is Reason.SCHEMA_ERROR


def test_a_sequence_as_a_key_is_one_schema_error_with_its_line() -> None:
    with pytest.raises(IntegrityError) as refused:
        parse_concept("---\ntitle: T\n? [a]\n: 1\n---\nBody.\n")
    assert refused.value.reason is Reason.SCHEMA_ERROR
