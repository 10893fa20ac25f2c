"""Concept files: ``concepts/<slug>.md``, YAML front matter plus Markdown (CONTRACT section 10).

A concept gathers promoted evidence on one topic. Its front matter names the runs it was
promoted from; its body is free prose, except for one generated block between
:data:`GENERATED_BEGIN` and :data:`GENERATED_END` that promotion rewrites. Every footnote whose
body starts with a span reference (``src-<64hex>#<start>-<end> "excerpt"``, the grammar of
:mod:`publisher.refs`) quotes evidence: it records the source id, the offsets and the excerpt as
promoted, in plain text, so a reader and the build preflight can both check it.

The format is documented in ``docs/concepts.md``; :class:`ConceptFrontMatter` is its schema
(``publisher schema concept``).
"""

from __future__ import annotations

import re
import threading
from collections.abc import Iterable
from dataclasses import dataclass
from enum import StrEnum
from typing import Annotated, Any, Literal

import yaml
from markdown_it import MarkdownIt
from markdown_it.common.utils import normalizeReference
from mdit_py_plugins.footnote import footnote_plugin
from mdit_py_plugins.footnote.index import footnote_ref
from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    StrictStr,
    ValidationError,
    field_validator,
)

from ..gate.mdparts import PartCache, ends_apart, parse_part, stands_apart
from ..gate.quotations import keep_closed_block
from ..kernel.canonical import DIGEST_RE
from ..kernel.errors import IntegrityError
from ..kernel.models import Timestamp, list_as_tuple
from ..kernel.reasons import Reason
from ..kernel.refs import SpanRef, parse_refs, starts_with_ref
from ..runs import SLUG_RE

__all__ = [
    "CONCEPTS_DIR",
    "CONCEPT_SCHEMA_VERSION",
    "GENERATED_BEGIN",
    "GENERATED_END",
    "RESERVED_SLUGS",
    "EpistemicStatus",
    "ConceptRun",
    "ConceptClaim",
    "ConceptFrontMatter",
    "EvidenceFootnote",
    "ConceptDoc",
    "parse_concept",
    "evidence_footnotes",
    "dump_concept",
    "split_generated",
    "with_generated",
    "check_slug",
]

CONCEPTS_DIR = "concepts"
"""Where concept files live, relative to the wiki root."""

CONCEPT_SCHEMA_VERSION = 1

GENERATED_BEGIN = "<!-- publisher:generated:begin -->"
GENERATED_END = "<!-- publisher:generated:end -->"
"""Markers of the block promotion owns; prose outside them belongs to the maintainer."""

RESERVED_SLUGS = frozenset({"index"})
"""Slugs that would collide with the generated concept index page."""


def check_slug(slug: str) -> str:
    """``slug`` if it can name a concept file, else ValueError."""
    if not isinstance(slug, str) or not SLUG_RE.fullmatch(slug) or slug.startswith("."):
        raise ValueError(f"concept slug {slug!r} must be letters, digits, '.', '_' or '-' (at most 128)")
    if slug.lower() in RESERVED_SLUGS:
        raise ValueError(f"concept slug {slug!r} is reserved")
    return slug


def _check_run_path(value: str) -> str:
    parts = value.split("/")
    if not value or value.startswith("/") or "\\" in value or any(p in ("", ".", "..") for p in parts):
        raise ValueError("run path must be relative to the wiki root, '/'-separated, without '.' or '..'")
    return value


def _check_digest(value: str) -> str:
    if not DIGEST_RE.fullmatch(value):
        raise ValueError("digest must be 'sha256:' followed by 64 lowercase hex digits")
    return value


_FROZEN = ConfigDict(frozen=True, extra="forbid", defer_build=True)


class EpistemicStatus(StrEnum):
    """The status proposed for a concept claim (CONTRACT section 14).

    A status is a proposal: :mod:`publisher.wiki.claims` checks whether it is structurally
    admissible, never whether it is true.
    """

    SUPPORTED = "supported"
    PARTIALLY_SUPPORTED = "partially_supported"
    NOT_SUPPORTED = "not_supported"
    CONTRADICTED = "contradicted"
    NON_EVALUABLE = "non_evaluable"


class ConceptRun(BaseModel):
    """One run a concept was promoted from, as it was at promotion."""

    model_config = _FROZEN
    run: Annotated[StrictStr, Field(pattern=f"^(?:{SLUG_RE.pattern})$")]
    path: Annotated[StrictStr, AfterValidator(_check_run_path)]
    inputs_hash: Annotated[StrictStr, AfterValidator(_check_digest)] | None = None
    promoted_at: Timestamp


_OrderedStrs = Annotated[tuple[StrictStr, ...], Field(strict=True), BeforeValidator(list_as_tuple)]
"""A YAML sequence of strings, in its order: a set (``!!set``) has none, so it is refused."""


class ConceptClaim(BaseModel):
    """A claim of the concept with the status proposed for it (CONTRACT section 14).

    Exactly these fields: anything else (a model's confidence, a score) is a ``SCHEMA_ERROR``,
    so it can have no effect. Whether the status is admissible (``supported`` needs evidence,
    ``partially_supported`` conditions, ``not_supported`` a document review, ``non_evaluable`` a
    missingness record) and whether the claim equals the assessment that admitted it is the
    ``C-CLAIM`` check of :mod:`publisher.wiki.claims`.
    """

    model_config = _FROZEN
    id: Annotated[StrictStr, Field(min_length=1, max_length=128, pattern=f"^(?:{SLUG_RE.pattern})$")]
    statement: Annotated[StrictStr, Field(min_length=1, max_length=4000)]
    status: EpistemicStatus
    conditions: _OrderedStrs = ()
    evidence: Annotated[_OrderedStrs, Field(description="footnote labels of this concept")] = ()
    review: StrictStr | None = None
    missingness: StrictStr | None = None
    assessment: StrictStr | None = Field(default=None, description="the assessments.jsonl entry that admitted it")


def _first_repeat(keys: Iterable[str]) -> str | None:
    """The first key that occurs a second time, or None when every key is distinct."""
    seen: set[str] = set()
    for key in keys:
        if key in seen:
            return key
        seen.add(key)
    return None


class ConceptFrontMatter(BaseModel):
    """The YAML front matter of ``concepts/<slug>.md``."""

    model_config = _FROZEN
    schema_version: Literal[1]
    title: Annotated[StrictStr, Field(min_length=1)]
    concept: StrictStr
    runs: tuple[ConceptRun, ...] = ()
    summary: StrictStr | None = None
    claims: tuple[ConceptClaim, ...] = ()

    @field_validator("concept")
    @classmethod
    def _slug(cls, value: str) -> str:
        return check_slug(value)

    @field_validator("claims")
    @classmethod
    def _unique_claims(cls, value: tuple[ConceptClaim, ...]) -> tuple[ConceptClaim, ...]:
        repeated = _first_repeat(claim.id for claim in value)
        if repeated is not None:
            raise ValueError(f"claim id {repeated!r} is used twice")
        return value

    @field_validator("runs")
    @classmethod
    def _unique_runs(cls, value: tuple[ConceptRun, ...]) -> tuple[ConceptRun, ...]:
        repeated = _first_repeat(entry.run for entry in value)
        if repeated is not None:
            raise ValueError(f"run {repeated!r} is listed twice")
        return value


@dataclass(frozen=True)
class EvidenceFootnote:
    """A footnote definition whose body starts with span references.

    ``first``/``last`` are the 0-based body lines the definition spans (half-open); ``refs`` are
    the parsed references, ``rest`` what follows them, ``error`` a grammar problem, if any.
    """

    label: str
    first: int
    last: int
    refs: tuple[SpanRef, ...]
    rest: str
    error: str | None


@dataclass(frozen=True)
class ConceptDoc:
    """A parsed concept file: front matter, body and its evidence footnotes."""

    front: ConceptFrontMatter
    body: str
    body_line: int
    footnotes: tuple[EvidenceFootnote, ...]

    def file_line(self, body_line: int) -> int:
        """1-based line in the file of a 0-based body line."""
        return self.body_line + body_line


_SAFE_LOADER: type[yaml.SafeLoader] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
"""libyaml's parser where PyYAML was built with it (the same safe constructors, a C scanner)."""


class _StrictLoader(_SAFE_LOADER):  # type: ignore[misc]
    """Safe YAML without implicit timestamps (they stay strings) and without duplicate keys."""


_StrictLoader.yaml_implicit_resolvers = {
    first: [(tag, rx) for tag, rx in resolvers if tag != "tag:yaml.org,2002:timestamp"]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}


_KEY_TYPES = (str, int, float, bool, type(None))
"""What a mapping key may be (an allow-list): a plain scalar. A sequence or mapping as a key
(``? [a]: 1``) is refused with the file's line, never a bare ``TypeError``."""


def _mapping(loader: _StrictLoader, node: yaml.MappingNode) -> dict[Any, Any]:
    loader.flatten_mapping(node)
    out: dict[Any, Any] = {}
    for key_node, value_node in node.value:
        if not isinstance(key_node, yaml.ScalarNode):
            kind = "sequence" if isinstance(key_node, yaml.SequenceNode) else "mapping"
            raise yaml.constructor.ConstructorError(
                None, None, f"a {kind} cannot be a mapping key (keys are plain scalars)", key_node.start_mark
            )
        key = loader.construct_object(key_node, deep=True)
        if not isinstance(key, _KEY_TYPES):
            raise yaml.constructor.ConstructorError(
                None, None, f"a {type(key).__name__} cannot be a mapping key", key_node.start_mark
            )
        if key in out:
            raise yaml.constructor.ConstructorError(None, None, f"duplicate key {key!r}", key_node.start_mark)
        out[key] = loader.construct_object(value_node, deep=True)
    return out


_StrictLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _mapping)


def _schema_error(where: str, why: str, field: str | None = None) -> IntegrityError:
    return IntegrityError(f"{where}: {why}", reason=Reason.SCHEMA_ERROR, path=where, field=field)


def _split_front(text: str, where: str) -> tuple[str, str, int]:
    lines = text.split("\n")
    if not lines or lines[0].rstrip("\r") != "---":
        raise _schema_error(where, "does not start with a '---' front matter line")
    for index in range(1, len(lines)):
        if lines[index].rstrip("\r") in ("---", "..."):
            return "\n".join(lines[1:index]), "\n".join(lines[index + 1 :]), index + 2
    raise _schema_error(where, "front matter is not closed by a '---' line")


_PARSERS = threading.local()


def _footnote_inlines(state: Any) -> None:
    """The footnote parser's core ``inline`` rule: markdown-it's, less the inline blocks that
    cannot hold a footnote reference.

    What is read of a parse is block-level (which definitions are footnotes, their lines, the
    code blocks); the inline pass counts only for the references it registers, which decide which
    definitions the footnote tail keeps and in what order. A reference (``[^label]``) or an
    inline footnote (``^[...]``) starts with those two characters in the block's raw text, so a
    block without either registers nothing and is not tokenised (its ``children`` stay empty):
    about a third of a concept's parse."""
    md = state.md
    for token in state.tokens:
        if token.type == "inline":
            if token.children is None:
                token.children = []
            content = token.content
            if "[^" in content or "^[" in content:
                md.inline.parse(content, md, state.env, token.children)


_PLAIN_REFERENCE = re.compile(r"\[\^[A-Za-z0-9._:-]+\]")
"""A footnote reference whose label holds nothing an inline rule reads (promotion's labels)."""


def _plain_reference(state: Any, silent: bool) -> bool:
    """A footnote reference read before markdown-it's ``link`` rule, where that rule cannot match.

    At ``[^label]`` the ``link`` rule runs first: it scans the label token by token (the costliest
    part of a concept's inline pass, one scan per promoted claim line) and, unless ``(`` or ``[``
    follows or a link reference definition has that label, fails; ``image`` and the inline
    footnote need other first characters, and ``footnote_ref`` then reads the reference. Here,
    for a label of letters, digits and ``._:-`` only (no character that starts an inline token,
    so the scan ends at the first ``]``), that case goes straight to ``footnote_ref``; any other
    returns False and the rules run as before: the same tokens and references, in the same order."""
    src, pos, end = state.src, state.pos, state.posMax
    if not src.startswith("[^", pos):
        return False
    match = _PLAIN_REFERENCE.match(src, pos, end)
    if match is None:
        return False
    after = match.end()
    if after < end and src[after] in "([":
        return False
    links = state.env.get("references")
    if links and links.get(normalizeReference(src[pos + 1 : after - 1])):
        return False
    return bool(footnote_ref(state, silent))


def _footnote_parser() -> MarkdownIt:
    """This thread's footnote parser (building one costs more than parsing a short concept)."""
    parser = getattr(_PARSERS, "md", None)
    if parser is None:
        parser = _PARSERS.md = MarkdownIt("commonmark").use(footnote_plugin)
        parser.core.ruler.at("inline", _footnote_inlines)
        parser.inline.ruler.before("link", "publisher_plain_reference", _plain_reference)
    return parser


_DEF_RE = re.compile(r"^ {0,3}\[\^([^\]]+)\]:[ \t]?")


def evidence_footnotes(body: str) -> tuple[EvidenceFootnote, ...]:
    """Every footnote definition in ``body`` that starts with a span reference.

    Bodies are read from the raw source lines (the parser only says where each definition
    is), so JSON escapes inside excerpts reach :func:`publisher.refs.parse_refs` intact. A
    generated block standing apart from prose without footnotes is parsed once for every
    concept holding it (:func:`_generated_footnotes`).
    """
    shared = _generated_footnotes(body)
    if shared is not None:
        return shared
    tokens, lines = _footnote_parser().parse(body), body.split("\n")
    found = _definitions(tokens, lines)
    return tuple(found) + _stray_references(tokens, lines, found)


_BLOCK_FOOTNOTES: PartCache[tuple[EvidenceFootnote, ...] | None] = PartCache()
"""The evidence footnotes of a generated block read on its own (None: it cannot be shared)."""

_FOOTNOTE_MARKS = ("[^", "^[", "]:")
"""What any footnote or link label, definition or reference, starts or ends with."""


def _block_footnotes(part: str) -> tuple[EvidenceFootnote, ...] | None:
    """The evidence footnotes of ``part`` (a generated block after its first marker line) read
    on its own, lines counted from its start; None where its last line does not end it apart
    or a footnote citing a span stands outside a definition there (that finding names lines)."""
    tokens, env = parse_part(_footnote_parser(), part)
    keep_closed_block(part, tokens, env)  # the quotations' reading of the same block, from this parse
    lines = part.split("\n")
    if not ends_apart(tokens, len(lines)):
        return None
    found = _definitions(tokens, lines)
    return None if _stray_references(tokens, lines, found) else tuple(found)


def _generated_footnotes(body: str) -> tuple[EvidenceFootnote, ...] | None:
    """:func:`evidence_footnotes` of ``body`` from its generated block's own parse, or None.

    Where each marker is a line of its own and the first stands apart at the top level, the
    block after it is read from the top level; where its end marker then stands apart too
    (:mod:`publisher.gate.mdparts`) and the prose around writes no footnote or link label at all,
    every footnote of the body is the block's and no label of the block is read elsewhere: the
    block's footnotes are the body's, line numbers shifted. That parse is kept by the block's
    text, so the concepts promoting the same runs parse it once."""
    if body.count(GENERATED_BEGIN) != 1 or body.count(GENERATED_END) != 1:
        return None
    lines = body.split("\n")
    try:
        first, last = lines.index(GENERATED_BEGIN), lines.index(GENERATED_END)
    except ValueError:
        return None
    if last <= first or any(mark in line for line in lines[:first] + lines[last + 1 :] for mark in _FOOTNOTE_MARKS):
        return None
    if not stands_apart(_footnote_parser(), lines, first):
        return None
    found = _BLOCK_FOOTNOTES.get("\n".join(lines[first + 1 : last + 1]), _block_footnotes)
    if found is None:
        return None
    shift = first + 1
    return tuple(
        EvidenceFootnote(note.label, note.first + shift, note.last + shift, note.refs, note.rest, note.error)
        for note in found
    )  # made directly: dataclasses.replace looks up the fields again for each of a block's thousands


def _definitions(tokens: list[Any], lines: list[str]) -> list[EvidenceFootnote]:
    """The footnote definitions citing a span in a footnote parser's ``tokens`` of ``lines``."""
    out: list[EvidenceFootnote] = []
    index = 0
    while index < len(tokens):
        token = tokens[index]
        index += 1
        if token.type != "footnote_open":
            continue
        label = str(token.meta.get("label", ""))
        first: int | None = None
        last: int | None = None
        while index < len(tokens) and tokens[index].type != "footnote_close":
            mapped = tokens[index].map
            if mapped is not None:
                first = mapped[0] if first is None else min(first, mapped[0])
                last = mapped[1] if last is None else max(last, mapped[1])
            index += 1
        if first is None or last is None:
            continue
        raw = lines[first:last]
        head = _DEF_RE.match(raw[0]) if raw else None
        if head is None:
            continue
        text = "\n".join([raw[0][head.end() :], *(line.strip() for line in raw[1:])])
        if not starts_with_ref(text):
            continue
        parsed = parse_refs(text)
        out.append(EvidenceFootnote(label, first, last, parsed.refs, parsed.rest, parsed.error))
    return out


_STRAY_DEF_RE = re.compile(r"\[\^([^\]]+)\]:[ \t]*src-")


def _stray_references(
    tokens: list[Any], lines: list[str], found: list[EvidenceFootnote]
) -> tuple[EvidenceFootnote, ...]:
    """Footnote definitions citing a span that are not read as evidence footnotes above.

    A definition inside a block quote or a list item is a footnote to MkDocs too, but its body
    cannot be read from the start of its line; published as written, its quote would never be
    re-sliced. Each becomes a footnote with a grammar error, so the preflight refuses it. Code
    blocks are skipped: their text is never a footnote.
    """
    covered: set[int] = set()
    for note in found:
        covered.update(range(note.first, note.last))
    for token in tokens:
        if token.type in ("fence", "code_block") and token.map is not None:
            covered.update(range(token.map[0], token.map[1]))
    out: list[EvidenceFootnote] = []
    for index, line in enumerate(lines):
        if index in covered:
            continue
        match = _STRAY_DEF_RE.search(line)
        if match is None:
            continue
        error = f"line {index + 1}: a span reference in footnote [^{match.group(1)}] must start a top-level definition"
        out.append(EvidenceFootnote(match.group(1), index, index + 1, (), line[match.end() - 4 :], error))
    return tuple(out)


def parse_concept(text: str, *, where: str = "concept") -> ConceptDoc:
    """Parse a concept file's text; a malformed file raises IntegrityError (SCHEMA_ERROR)."""
    if re.search(r"\r(?!\n)", text):
        raise _schema_error(where, "contains a carriage return that does not end a line (use LF or CRLF)")
    front_text, body, body_line = _split_front(text, where)
    try:
        raw = yaml.load(front_text, Loader=_StrictLoader)
    except yaml.YAMLError as exc:
        raise _schema_error(where, f"front matter is not valid YAML ({' '.join(str(exc).split())[:160]})") from exc
    except RecursionError as exc:  # PyYAML composes nested collections recursively
        raise _schema_error(where, "front matter nests collections too deeply") from exc
    except UnicodeEncodeError as exc:  # libyaml reads UTF-8: a lone surrogate cannot be handed to it
        why = f"front matter is not valid YAML (character {exc.start} is not Unicode text)"
        raise _schema_error(where, why) from exc
    if not isinstance(raw, dict):
        raise _schema_error(where, "front matter is not a mapping")
    try:
        front = ConceptFrontMatter.model_validate(raw)
    except RecursionError as exc:
        raise _schema_error(where, "front matter nests collections too deeply") from exc
    except ValidationError as exc:
        first = exc.errors()[0]
        loc = ".".join(str(p) for p in first["loc"]) or "front matter"
        raise _schema_error(where, f"invalid field {loc}: {first['msg']}", loc if first["loc"] else None) from exc
    split_generated(body, where=where)
    return ConceptDoc(front, body, body_line, evidence_footnotes(body))


def dump_concept(front: ConceptFrontMatter, body: str) -> str:
    """The file text for ``front`` and ``body``; re-parsing it yields the same front matter."""
    data = front.model_dump(mode="json", exclude_none=True)
    data["claims"] = data.get("claims", [])
    yaml_text = yaml.safe_dump(data, sort_keys=False, allow_unicode=True, default_flow_style=False, width=100)
    return f"---\n{yaml_text}---\n{body}"


def split_generated(body: str, *, where: str = "concept") -> tuple[str, str | None, str]:
    """``(before, inside, after)`` around the generated block; ``inside`` is None without one.

    The markers must each appear at most once, on lines of their own, begin before end.
    """
    begins = [m.start() for m in re.finditer(re.escape(GENERATED_BEGIN), body)]
    ends = [m.start() for m in re.finditer(re.escape(GENERATED_END), body)]
    if not begins and not ends:
        return body, None, ""
    if len(begins) != 1 or len(ends) != 1 or ends[0] < begins[0]:
        raise _schema_error(where, "generated block markers are missing, repeated or out of order")
    start, stop = begins[0], ends[0]
    inside_start = start + len(GENERATED_BEGIN)
    return body[:start], body[inside_start:stop], body[stop + len(GENERATED_END) :]


def with_generated(body: str, block: str, *, where: str = "concept") -> str:
    """``body`` with its generated block replaced by ``block`` (appended when there is none)."""
    before, inside, after = split_generated(body, where=where)
    content = block.strip("\n")
    wrapped = f"{GENERATED_BEGIN}\n{content}\n\n{GENERATED_END}"
    if inside is None:
        prefix = before.rstrip("\n")
        return (prefix + "\n\n" if prefix else "") + wrapped + "\n"
    return before + wrapped + after
