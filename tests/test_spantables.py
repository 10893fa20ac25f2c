"""The compact span tables a wiki check holds: they read exactly like the dicts they replace."""

from __future__ import annotations

import pickle
import random

import pytest

from publisher.wiki.spantables import AcceptedSpans, ExcerptTable, SpanSet, span_code


def test_the_excerpt_table_reads_like_a_dict_of_spans() -> None:
    rng = random.Random(7)
    table, plain = ExcerptTable(), {}
    for _ in range(500):
        sid = f"src-{rng.randrange(5)}"
        start = rng.randrange(0, 3_000)
        end = start + rng.randrange(0, 300)
        text = "".join(rng.choice("ab β😀\ud800") for _ in range(rng.randrange(0, 12)))
        table[(sid, start, end)] = text
        plain[(sid, start, end)] = text
    assert len(table) == len(plain) and dict(table) == plain and table == plain
    assert sorted(table) == sorted(plain)
    for key in list(plain)[:50]:
        del table[key], plain[key]
    assert dict(table) == plain and len(table) == len(plain)
    for sid in {k[0] for k in plain}:
        assert set(table.spans_of(sid)) == {(s, e) for (i, s, e) in plain if i == sid}


@pytest.mark.parametrize(
    "key",
    [("s", -1, 4), ("s", 5, 4), ("s", 0, 2**32), ("s", 1.0, 2), ("s", True, 2), (b"s", 1, 2), ("s", 1), "s", None],
)
def test_a_key_no_span_can_have_is_absent_and_cannot_be_stored(key: object) -> None:
    table, accepted = ExcerptTable(), AcceptedSpans()
    table[("s", 1, 2)] = "x"
    accepted.add(("s", 1, 2), "a", 0)
    assert key not in table and table.get(key) is None  # type: ignore[call-overload]
    assert key not in accepted and accepted.get(key) is None  # type: ignore[call-overload]
    with pytest.raises(KeyError):
        table[key]  # type: ignore[index]
    with pytest.raises(ValueError):
        table[key] = "y"  # type: ignore[index]
    with pytest.raises(ValueError):
        accepted.add(key, "a", 1)  # type: ignore[arg-type]


def test_a_span_set_is_a_live_view_of_its_source() -> None:
    table = ExcerptTable()
    spans = table.spans_of("s")
    assert isinstance(spans, SpanSet) and len(spans) == 0
    table[("s", 3, 9)] = "abc"
    table[("t", 3, 9)] = "abc"
    table[("s", 0, 2)] = "ab"
    assert sorted(spans) == [(0, 2), (3, 9)] and (3, 9) in spans and (3, 8) not in spans
    assert frozenset(spans) == {(0, 2), (3, 9)} and [1, 2] not in spans
    del table[("s", 0, 2)]
    assert set(spans) == {(3, 9)}


def test_accepted_spans_keep_every_citing_claim_in_order() -> None:
    accepted, plain = AcceptedSpans(), {}
    uses = [("s", 1, 5, "art-1", 0), ("s", 1, 5, "art-1", 1), ("t", 0, 9, "art-1", 2), ("s", 1, 5, "art-2", 0)]
    uses += [("s", 7, 8, "art-3", n) for n in range(3)]
    for sid, start, end, artifact, index in uses:
        accepted.add((sid, start, end), artifact, index)
        plain.setdefault((sid, start, end), []).append((artifact, index))
    assert accepted == plain and dict(accepted) == plain and len(accepted) == 3
    assert accepted[("s", 1, 5)] == [("art-1", 0), ("art-1", 1), ("art-2", 0)]
    assert accepted.sources() == ["s", "t"]
    accepted[("s", 1, 5)].clear()  # a reading is a copy
    assert len(accepted[("s", 1, 5)]) == 3
    copy = pickle.loads(pickle.dumps(accepted))
    assert copy == plain


def test_span_codes_order_like_their_pairs() -> None:
    pairs = [(0, 0), (0, 1), (1, 1), (2**31, 2**32 - 1), (5, 2**32 - 1), (6, 6)]
    codes = [span_code(s, e) for s, e in pairs]
    assert [c for c in codes if c is not None] == codes
    assert sorted(pairs) == [p for _, p in sorted(zip(codes, pairs, strict=True))]


def test_accepted_spans_added_after_a_reading_are_sorted_in() -> None:
    rng = random.Random(11)
    accepted, plain = AcceptedSpans(), {}
    for round_ in range(4):
        for n in range(200):
            sid, start = f"s{rng.randrange(3)}", rng.randrange(50)
            key = (sid, start, start + rng.randrange(5))
            accepted.add(key, f"art-{round_}-{n // 7}", n % 7)
            plain.setdefault(key, []).append((f"art-{round_}-{n // 7}", n % 7))
        assert dict(accepted) == plain and len(accepted) == len(plain)  # each round reads, then adds more
    assert sorted(accepted) == sorted(plain) and pickle.loads(pickle.dumps(accepted)) == plain


def test_an_excerpt_table_survives_pickling_and_absorbing_with_changes_pending() -> None:
    rng = random.Random(3)
    left, right, plain = ExcerptTable(), ExcerptTable(), {}
    for n in range(400):
        table = left if n % 2 else right
        key = (f"s{rng.randrange(4)}", n, n + rng.randrange(9))
        table[key] = f"text {n} é"
        plain[key] = f"text {n} é"
    for key in list(right)[:30]:  # deleted after some were sorted in, some still waiting
        del right[key], plain[key]
    right[("s0", 5, 5)] = "replaced"
    plain[("s0", 5, 5)] = "replaced"
    copy = pickle.loads(pickle.dumps(right))
    assert dict(copy) == dict(right) and len(copy) == len(right)
    spans = left.spans_of("s1")
    left.absorb(copy)
    assert dict(left) == plain and len(left) == len(plain)
    assert set(spans) == {(s, e) for (i, s, e) in plain if i == "s1"}


def _entries(seed: int, count: int) -> list[tuple[tuple[str, int, int], str, int, str]]:
    """Claims of a run in result order: (span, artifact id, claim index, excerpt), spans repeated
    (across artifacts, and with another excerpt, which replaces the first)."""
    rng = random.Random(seed)
    out: list[tuple[tuple[str, int, int], str, int, str]] = []
    for artifact in range(rng.randrange(1, 6)):
        for index in range(rng.randrange(0, count)):
            if out and rng.random() < 0.2:
                key = rng.choice(out)[0]
            else:
                start = rng.randrange(0, 2_000)
                key = (f"src-{rng.randrange(4)}", start, start + rng.randrange(0, 200))
            text = "".join(rng.choice("ab β😀\ud800") for _ in range(rng.randrange(0, 9)))
            out.append((key, f"art-{artifact}", index, text))
    return out


@pytest.mark.parametrize("seed", range(40))
def test_tables_made_whole_are_the_tables_made_entry_by_entry(seed: int) -> None:
    """A run's index is made in one pass (``of``): the same excerpts, claims, sources in the same
    order, counts, pickles and absorption as setting and adding each claim in turn."""
    entries = _entries(seed, 8)
    excerpts, accepted = ExcerptTable(), AcceptedSpans()
    for key, artifact, index, text in entries:
        accepted.add(key, artifact, index)
        excerpts[key] = text
    made = ExcerptTable.of([(key, text) for key, _, _, text in entries])
    cited = AcceptedSpans.of([(key, artifact, index) for key, artifact, index, _ in entries])
    assert list(made.items()) == list(excerpts.items()) and len(made) == len(excerpts)
    assert list(made._by_source) == list(excerpts._by_source)
    assert list(cited.items()) == list(accepted.items()) and len(cited) == len(accepted)
    assert cited.sources() == accepted.sources() and cited._artifacts == accepted._artifacts
    assert dict(pickle.loads(pickle.dumps(made))) == dict(excerpts)
    assert dict(pickle.loads(pickle.dumps(cited))) == dict(accepted)
    wiki_made, wiki_set = ExcerptTable(), ExcerptTable()
    for other in (ExcerptTable.of([(("src-0", 1, 3), "old")]), made):
        wiki_made.absorb(other)
    for other in (ExcerptTable.of([(("src-0", 1, 3), "old")]), excerpts):
        wiki_set.absorb(other)
    assert dict(wiki_made) == dict(wiki_set) and len(wiki_made) == len(wiki_set)
    for sid in {key[0] for key, *_ in entries}:
        assert set(made.spans_of(sid)) == set(excerpts.spans_of(sid))


@pytest.mark.parametrize("key", [("s", -1, 4), ("s", 5, 4), ("s", 0, 2**32), ("s", True, 2), (b"s", 1, 2), ("s", 1)])
def test_tables_made_whole_refuse_what_setting_refuses(key: object) -> None:
    with pytest.raises(ValueError):
        ExcerptTable.of([(("s", 1, 2), "x"), (key, "y")])  # type: ignore[list-item]
    with pytest.raises(ValueError):
        AcceptedSpans.of([(("s", 1, 2), "a", 0), (key, "a", 1)])  # type: ignore[list-item]
    with pytest.raises(TypeError):
        ExcerptTable.of([(("s", 1, 2), b"x")])  # type: ignore[list-item]
    for index in (-1, 2**32, 1.0, True):
        with pytest.raises(ValueError):
            AcceptedSpans.of([(("s", 1, 2), "a", index)])  # type: ignore[list-item]
