"""The plain-YAML reading of a configuration file is never more lenient than PyYAML and never reads
a value differently: whatever :func:`read_plain` accepts, ``yaml.load`` with the policy's loader
(MkDocs' loader, Python tags inert) accepts and constructs into an equal value of the same types.

Documents are generated in block style (nested mappings and sequences, indentless and compact
sequences, comments, scalars YAML reads as booleans, nulls, integers, octals, dates, floats or
strings), then mutated character by character with YAML's indicators and odd white space; each is
compared with PyYAML. Separate tests hold that the reading is actually taken for common
configurations (the repository's own ``mkdocs.yml``) and that a command reading such a wiki's
policy does not import PyYAML."""

from __future__ import annotations

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


def _agrees(data: bytes) -> bool:
    """The plain reading, where it answers, is PyYAML's (an empty document read as ``{}``)."""
    plain = read_plain(data)
    if plain is None:
        return False
    try:
        expected = _pyyaml(data)
    except Exception as exc:  # PyYAML refused (or failed on) what the plain reading accepted
        raise AssertionError(f"plain reading accepted what PyYAML refuses ({exc!r}): {data!r}") from exc
    if expected is None:
        expected = {}
    assert _same(plain, expected), f"{data!r}: plain {plain!r} != PyYAML {expected!r}"
    return True


WORDS = [
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
    _agrees(text.encode("utf-8"))


@settings(max_examples=600, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(mutated())
def test_a_mutated_document_is_never_read_otherwise_than_by_pyyaml(text: str) -> None:
    _agrees(text.encode("utf-8"))


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=64))
def test_any_bytes_are_never_read_otherwise_than_by_pyyaml(data: bytes) -> None:
    _agrees(data)


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
    "scalars": "site_name: Evidence wiki — example\nstrict: false\nn: 12\nz: 0\nnothing:\nword: null\n",
    "nested": "theme:\n  name: material\n  palette:\n    - scheme: default\n      primary: indigo # a comment\n",
    "indentless": "nav:\n- Home: index.md\n- Reading a source: reading.md\nplugins:\n- search\n",
    "compact nested": "markdown_extensions:\n  - toc:\n      permalink: true\n  - footnotes\n",
    "comments and blanks": "# head\n\nextra:\n  # inside\n  evidence:\n      # deeper\n    offline: true\n\n",
    "empty": "# only a comment\n\n",
    "inherit": "INHERIT: base.yml\nsite_name: child\n",
}

NOT_PLAIN = {
    "flow": "extra: {a: 1}\n",
    "quoted": "site_name: 'x'\n",
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
}


@pytest.mark.parametrize("name", sorted(PLAIN))
def test_a_plain_configuration_is_read_without_pyyaml(name: str) -> None:
    assert _agrees(PLAIN[name].encode("utf-8"))


@pytest.mark.parametrize("name", sorted(NOT_PLAIN))
def test_anything_else_is_left_to_pyyaml(name: str) -> None:
    assert read_plain(NOT_PLAIN[name].encode("utf-8")) is None


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
