"""The plain-YAML reading of a configuration file is never more lenient than PyYAML and never reads
a value differently: whatever :func:`read_plain` accepts, ``yaml.load`` with the policy's loader
(MkDocs' loader, Python tags inert) accepts and constructs into an equal value of the same types.

Documents are generated in block style (nested mappings and sequences, indentless and compact
sequences, comments, scalars YAML reads as booleans, nulls, integers, octals, dates, floats or
strings), then mutated character by character with YAML's indicators and odd white space; each is
compared with PyYAML. So are any Unicode character at the places where one character decides what a
line is, and every short layout of a few line shapes at columns 0 to 3; named cases pin what must be
left to PyYAML (continuation lines, scalars YAML 1.1 resolves otherwise, look-alike and space-like
characters, a key given twice). Separate tests hold that the reading is actually taken for common
configurations (the repository's own ``mkdocs.yml``) and that a command reading such a wiki's
policy does not import PyYAML."""

from __future__ import annotations

import itertools
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from publisher.kernel.errors import UsageError
from publisher.kernel.reasons import Reason
from publisher.site.lifecycle.plainyaml import read_plain
from publisher.site.lifecycle.policy import _loader_for, _Loading, resolve_policy

REPO = Path(__file__).resolve().parents[1]


def _pyyaml(data: bytes) -> Any:
    return yaml.load(data, Loader=_loader_for(_Loading(Path("mkdocs.yml"))))


def _same(a: Any, b: Any) -> bool:
    """Equal values of the same types, mappings in the same order (``True == 1`` in Python)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return list(a) == list(b) and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    return bool(a == b)


def _disagreement(data: bytes) -> str | None:
    """How the plain reading of ``data`` differs from PyYAML's (an empty document read as ``{}``);
    None where they agree or the plain reading does not answer."""
    plain = read_plain(data)
    if plain is None:
        return None
    try:
        expected = _pyyaml(data)
    except Exception as exc:  # PyYAML refused (or failed on) what the plain reading accepted
        return f"plain reading accepted what PyYAML refuses ({exc!r}): {data!r}"
    if expected is None:
        expected = {}
    return None if _same(plain, expected) else f"{data!r}: plain {plain!r} != PyYAML {expected!r}"


def _agrees(data: bytes) -> bool:
    """Whether the plain reading answers for ``data``; where it does, it must be PyYAML's."""
    found = _disagreement(data)
    assert found is None, found
    return read_plain(data) is not None


WORDS = [
    '"nw"',
    "'it'",
    '"a: b #c"',
    '"x\\"y"',
    '"x\\ty"',
    "'it''s'",
    '""',
    "''",
    '"a" #c',
    '"a"#c',
    '"a"b',
    '"unclosed',
    '"yes"',
    "'12'",
    "material",
    "docs",
    "site",
    "Evidence wiki — example",
    "keys/a.pub",
    "index.md",
    "a b  c",
    "x#y",
    "a #c",
    "http://example.org:8080/x?y=1",
    "true",
    "True",
    "yes",
    "On",
    "off",
    "NO",
    "y",
    "n",
    "null",
    "Null",
    "nULL",
    "~",
    "0",
    "7",
    "12",
    "007",
    "0x1f",
    "1_000",
    "1:20",
    "1.5",
    ".inf",
    "-1",
    "+1",
    "2024-01-01",
    "3rd",
    "(x)",
    "/abs/path",
    "_under",
    "ü",
    "\xa0x",
    "x\xa0",
    "a: b",
    "a:",
    "a:b",
    "-a",
    "- a",
    "[a]",
    "{a: 1}",
    "'q'",
    '"q"',
    "&a",
    "*a",
    "!ENV X",
    "!!python/name:x.y",
    "|",
    ">",
    "@x",
    "`x`",
    "%x",
    ",x",
    "?x",
    "x,y",
    "b]",
    "it's",
    "<<",
    "=",
    "é",
    "\U0001f600",
    "a\tb",
    "",
    "=x",
    "--- x",
    "...",
    "#c",
]
PLAIN_WORDS = [
    "material",
    "docs",
    "Evidence wiki — example",
    "keys/a.pub",
    "x#y",
    "a #c",
    "true",
    "Off",
    "null",
    "7",
    "ü",
    "(x)",
    "a:b",
]
PLAIN_KEYS = ["site_name", "extra", "evidence", "nav", "Home", "Reading a source", "a.b", "_k", "ü"]
KEYS = [
    "site_name",
    "docs_dir",
    "extra",
    "evidence",
    "trusted_keys",
    "nav",
    "Home",
    "Reading a source",
    "Review claims (warrant)",
    "theme",
    "features",
    "a.b",
    "a-b",
    "_k",
    "ü",
    "INHERIT",
    "yes",
    "on",
    "null",
    "y",
    "1",
    "k ",
    "a b",
    "<<",
    "? k",
    "k: v",
    "x" * 130,
]


@st.composite
def documents(draw: st.DrawFn, depth: int = 0) -> str:
    """A block-style document (or a near miss of one) of mappings, sequences and scalars."""
    lines: list[str] = []

    def scalar() -> str:
        return draw(st.sampled_from(PLAIN_WORDS if draw(st.integers(0, 3)) else WORDS))

    def comment() -> str:
        return draw(st.sampled_from(["", "", "", "  # note", " #", "#x"]))

    def mapping(indent: int, level: int, first_prefix: str | None = None) -> None:
        keys = draw(st.lists(st.sampled_from(PLAIN_KEYS if draw(st.integers(0, 3)) else KEYS), min_size=1, max_size=4))
        for n, key in enumerate(keys):
            lead = first_prefix if (n == 0 and first_prefix is not None) else " " * indent
            kind = draw(st.sampled_from(["scalar", "scalar", "map", "seq", "indentless", "empty"]))
            if level >= 3:
                kind = "scalar"
            if kind == "scalar":
                lines.append(f"{lead}{key}: {scalar()}{comment()}")
            elif kind == "empty":
                lines.append(f"{lead}{key}:{comment()}")
            elif kind == "map":
                lines.append(f"{lead}{key}:{comment()}")
                mapping(indent + draw(st.sampled_from([1, 2, 4])), level + 1)
            else:
                lines.append(f"{lead}{key}:")
                sequence(indent if kind == "indentless" else indent + draw(st.sampled_from([1, 2])), level + 1)
            if draw(st.integers(0, 6)) == 0:
                lines.append(draw(st.sampled_from(["", "   ", "# comment", "    # deeper comment"])))

    def sequence(indent: int, level: int) -> None:
        for _ in range(draw(st.integers(1, 3))):
            kind = draw(st.sampled_from(["scalar", "scalar", "compact"]))
            if level >= 3:
                kind = "scalar"
            gap = " " * draw(st.sampled_from([1, 1, 2]))
            if kind == "scalar":
                lines.append(f"{' ' * indent}-{gap}{scalar()}{comment()}")
            else:
                mapping(indent + 1 + len(gap), level + 1, first_prefix=f"{' ' * indent}-{gap}")

    mapping(0, 0)
    return "\n".join(lines) + draw(st.sampled_from(["\n", "", "\n\n"]))


MUTATIONS = list(":-#'\"[]{},&*!|>%@` \t\r\n\x85\u2028\ufeff\xa0?~.0aZ")


@st.composite
def mutated(draw: st.DrawFn) -> str:
    text = draw(documents())
    for _ in range(draw(st.integers(1, 3))):
        at = draw(st.integers(0, len(text)))
        action = draw(st.sampled_from(["insert", "delete", "replace"]))
        char = draw(st.sampled_from(MUTATIONS))
        if action == "insert":
            text = text[:at] + char + text[at:]
        elif action == "delete":
            text = text[:at] + text[at + 1 :]
        else:
            text = text[:at] + char + text[at + 1 :]
    return text


@settings(max_examples=600, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(documents())
def test_a_generated_document_is_read_as_pyyaml_reads_it(text: str) -> None:
    assert _disagreement(text.encode("utf-8")) is None


@settings(max_examples=600, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(mutated())
def test_a_mutated_document_is_never_read_otherwise_than_by_pyyaml(text: str) -> None:
    assert _disagreement(text.encode("utf-8")) is None


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=64))
def test_any_bytes_are_never_read_otherwise_than_by_pyyaml(data: bytes) -> None:
    assert _disagreement(data) is None


# Places where one character decides between a key, a value, an item, a comment, a continuation
# or a refusal; "{}" is replaced by any character of Unicode (any but a surrogate, which strict
# UTF-8 cannot carry) or a short run of them.
PLACES = [
    "k: {}\n",
    "{}: v\n",
    "k{}: v\n",
    "k:{}\n",
    "k: a{}b\n",
    "k: a {}b\n",
    "k: 1{}\n",
    "k:\n- {}\n",
    "k:\n -{}\n",
    "k:\n{}- a\n",
    "k:\n  a: 1\n{}\n",
    "k:\n  - a\n{}  - b\n",
    "k: v\n{}j: w\n",
    "{}k: v\n",
]


@settings(max_examples=1500, deadline=None)
@given(st.sampled_from(PLACES), st.text(st.characters(exclude_categories=("Cs",)), min_size=1, max_size=3))
def test_any_character_anywhere_is_never_read_otherwise_than_by_pyyaml(place: str, chars: str) -> None:
    assert _disagreement(place.replace("{}", chars).encode("utf-8")) is None


# Lines of each shape at columns 0 to 3: every document of up to three of them (the first a key
# at the first column) is compared, which covers sequences at their parent key's column, compact
# mappings at odd columns and keys after a nested block at a column no block holds.
SHAPES = ["a:", "b: 1", "- x", "- a:", "-  b: y", "# c", "c: d #e", "x"]
LINES = [" " * column + shape for shape in SHAPES for column in range(4)]


def test_every_short_layout_is_never_read_otherwise_than_by_pyyaml() -> None:
    read = 0
    for first in ("a:", "b: 1", "c: d #e"):
        for count in (0, 1, 2):
            for rest in itertools.product(LINES, repeat=count):
                read += _agrees(("\n".join((first, *rest)) + "\n").encode("utf-8"))
    assert read > 400, read  # a guard that the layouts reach the plain reading


def test_the_generated_documents_reach_the_plain_reading() -> None:
    """A guard on the two tests above: most generated documents are read without PyYAML, so the
    comparison is not vacuous."""
    read = 0
    total = 0

    @settings(max_examples=400, deadline=None, database=None)
    @given(documents())
    def count(text: str) -> None:
        nonlocal read, total
        total += 1
        read += _agrees(text.encode("utf-8"))

    count()
    assert read > total // 10, (read, total)


PLAIN = {
    "quoted": "site_name: 'x'\nnumber: \"12\"\nflag: 'yes'\nhash: \"a #b: c\"  # note\n",
    "scalars": "site_name: Evidence wiki — example\nstrict: false\nn: 12\nz: 0\nnothing:\nword: null\n",
    "nested": "theme:\n  name: material\n  palette:\n    - scheme: default\n      primary: indigo # a comment\n",
    "indentless": "nav:\n- Home: index.md\n- Reading a source: reading.md\nplugins:\n- search\n",
    "compact nested": "markdown_extensions:\n  - toc:\n      permalink: true\n  - footnotes\n",
    "comments and blanks": "# head\n\nextra:\n  # inside\n  evidence:\n      # deeper\n    offline: true\n\n",
    "empty": "# only a comment\n\n",
    "inherit": "INHERIT: base.yml\nsite_name: child\n",
    # Words YAML 1.1 does not resolve, and characters that only look like indicators: all strings.
    "y and n": "y: n\nY: N\n",
    "mixed-case words": "k: yES\nNuLL: x\nnULL: TRue\n",
    "ideographic space": "k: a\u3000b\n\u3000j: \u3000\n",
    "fullwidth colon": "k: \uff1a\nk\uff1a v: 1\n",
    "small colon": "k\ufe55 v: 1\nj: a\ufe55 b\n",
    "fullwidth hyphen and number sign": "k: \uff0d x\nj: a \uff03 b\n",
    "no-break space in an item": "k:\n- k:\xa0v\n",
    "colon before a number sign": "k: a:#b\n",
    "comment holding a colon": "k: a #b: c\n",
    "flow indicators inside": "k: x,y]\nj: a{b}\n",
    "composed and decomposed keys": "\xe9: 1\ne\u0301: 2\n",
    "combining mark first": "\u0301k: v\n",
    "astral": "\U0001f600: \U0001f600\n",
    "eighteen digits": "k: 123456789012345678\nz: 0\n",
    "longest key": "k" * 128 + ": v\n",
    # Layout: lines a reader by lines could misplace.
    "no final line break": "k: v",
    "only a key": "k:",
    "trailing spaces": "k: v  \n   ",
    "blank lines and comments only": "\n\n   \n# c\n  # d",
    "compact key's indentless sequence": "k:\n- a:\n  - x\n  b: 1\n- c\n",
    "wide dash gap": "k:\n  -    a: 1\n       b: 2\n  - c\n",
    "comments at odd columns": "k:\n      # x\n  a: 1\n # y\n  b: 2\n",
}

NOT_PLAIN = {
    "escape": 'site_name: "a\\tb"\n',
    "doubled quote": "site_name: 'it''s'\n",
    "empty quotes": 'site_name: ""\n',
    "text after quotes": 'site_name: "a"b\n',
    "unclosed quote": 'site_name: "a\n',
    "flow": "extra: {a: 1}\n",
    "tag": "extra:\n  k: !ENV X\n",
    "python tag": "x: !!python/name:a.b\n",
    "anchor": "a: &x y\nb: *x\n",
    "block scalar": "a: |\n  text\n",
    "multi-line plain": "a: one\n  two\n",
    "duplicate key": "a: 1\nb: 2\na: 3\n",
    "boolean key": "on: x\n",
    "octal": "a: 010\n",
    "date": "a: 2024-01-01\n",
    "float": "a: 1.5\n",
    "tab": "a:\tb\n",
    "crlf": "a: b\r\n",
    "bom": "\ufeffa: b\n",
    "document marker": "---\na: b\n",
    "top-level sequence": "- a\n",
    "indented top level": "  a: b\n",
    "line separator": "a: b\u2028c\n",
    # A line PyYAML reads as the continuation of the plain scalar above it (more indented than
    # the block that holds the scalar), never as an item or a key of its own.
    "item continued by a deeper dash": "k:\n  - a\n   - b\n",
    "indentless item continued by a dash": "k:\n- a\n - b\n",
    "indentless item continued by a key": "k:\n- a\n  b: c\n",
    "value continued after a comment": "k: a\n# c\n  d\n",
    "item at a compact key's column": "k:\n  - a: 1\n    - b\n",
    "nested sequence": "k:\n- - a\n",
    "empty item": "k:\n-\n",
    "item of a comment": "k:\n- # c\n",
    "explicit key": "? k\n: v\n",
    "space before the colon": "k : v\n",
    "document start mid-document": "k: v\n---\nj: w\n",
    "document end": "k: v\n...\n",
    "directive mid-document": "k: v\n%YAML 1.1\n",
    # Scalars YAML 1.1 resolves to something other than a string, a boolean, null or a decimal.
    "dash first": "k: -x\n",
    "tilde": "k: ~\n",
    "value indicator": "k: =\n",
    "merge key": "<<: v\n",
    "merge value": "k: <<\n",
    "infinity": "k: .inf\n",
    "binary": "k: 0b1\n",
    "hexadecimal": "k: 0x1\n",
    "octal with o": "k: 0o7\n",
    "signed": "k: +1\n",
    "sexagesimal": "k: 1:30\n",
    "sexagesimal float": "k: 190:20:30.15\n",
    "underscored": "k: 1_0\n",
    "exponent": "k: 1e3\n",
    "trailing dot": "k: 1.\n",
    "nineteen digits": "k: 1234567890123456789\n",
    # Characters YAML reads as white space or a line break, or does not print.
    "no-break space after the colon": "k:\xa0v\n",
    "next line": "k: a\x85b\n",
    "paragraph separator": "k: a\u2029b\n",
    "inner byte-order mark": "k: a\ufeffb\n",
    "lone carriage return": "k: a\rb\n",
    "delete": "k: a\x7fb\n",
    "long key": "k" * 129 + ": v\n",
    # A key given twice anywhere: the duplicate-key refusal must run.
    "duplicate nested": "k:\n  a: 1\n  a: 2\n",
    "duplicate in an item": "k:\n- a: 1\n  a: 2\n",
    "duplicate after a block": "a:\n  b: 1\na: 2\n",
}


@pytest.mark.parametrize("name", sorted(PLAIN))
def test_a_plain_configuration_is_read_without_pyyaml(name: str) -> None:
    assert _agrees(PLAIN[name].encode("utf-8"))


@pytest.mark.parametrize("name", sorted(NOT_PLAIN))
def test_anything_else_is_left_to_pyyaml(name: str) -> None:
    assert read_plain(NOT_PLAIN[name].encode("utf-8")) is None


def test_a_new_wikis_configuration_is_plain(tmp_path: Path) -> None:
    from publisher.site.scaffold import new_wiki

    new_wiki(tmp_path / "wiki", title='A "quoted" name: with # marks', signed=False)
    assert _disagreement((tmp_path / "wiki" / "mkdocs.yml").read_bytes()) is None  # escaped: PyYAML reads it
    new_wiki(tmp_path / "plain", title="Trials", signed=False)
    assert _agrees((tmp_path / "plain" / "mkdocs.yml").read_bytes())


def test_the_repository_configuration_is_plain() -> None:
    assert _agrees((REPO / "mkdocs.yml").read_bytes())


def test_a_plain_configuration_gives_the_policy_without_importing_pyyaml(tmp_path: Path) -> None:
    wiki = tmp_path / "wiki"
    (wiki / "keys").mkdir(parents=True)
    (wiki / "mkdocs.yml").write_bytes((REPO / "mkdocs.yml").read_bytes())
    (wiki / "keys" / "example.pub").write_bytes((REPO / "keys" / "example.pub").read_bytes())
    code = (
        "import sys; from pathlib import Path; from publisher.site.lifecycle.policy import resolve_policy;"
        f"p = resolve_policy(Path({str(wiki)!r})); print(p.key_files, p.offline, 'yaml' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["('keys/example.pub',)", "True", "False"]


def test_a_key_given_twice_is_still_refused(tmp_path: Path) -> None:
    (tmp_path / "mkdocs.yml").write_text("site_name: a\nextra:\n  x: 1\nsite_name: b\n", encoding="utf-8")
    with pytest.raises(UsageError) as caught:
        resolve_policy(tmp_path)
    assert caught.value.reason is Reason.SCHEMA_ERROR
    assert "site_name" in str(caught.value)


def test_a_plain_inherit_chain_is_merged(tmp_path: Path) -> None:
    (tmp_path / "base.yml").write_text("extra:\n  evidence:\n    offline: true\n", encoding="utf-8")
    (tmp_path / "mkdocs.yml").write_text("INHERIT: base.yml\nsite_name: child\n", encoding="utf-8")
    assert resolve_policy(tmp_path).offline is True


@pytest.mark.parametrize("value", ["5", "yes", ""])
def test_an_inherit_that_names_no_file_is_a_one_line_refusal(tmp_path: Path, value: str) -> None:
    (tmp_path / "mkdocs.yml").write_text(f"INHERIT: {value}\nsite_name: child\n", encoding="utf-8")
    with pytest.raises(UsageError) as caught:
        resolve_policy(tmp_path)
    assert caught.value.reason is Reason.SCHEMA_ERROR
    assert "INHERIT" in str(caught.value)
