"""verify.js on its own, in a real Chromium: the SHA-256 fallback, the code-point slicer, canonical JSON.

The script is loaded into a bare page served from 127.0.0.1 (a secure context, so WebCrypto is
there to compare against). Expected values come from Python: ``hashlib`` for digests and ``str``
slicing for code points, which is what the publisher uses.
"""

from __future__ import annotations

import hashlib
import json
import random
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from _browser_helpers import VERIFY_JS, guarded_page, launched_browser, serve

from publisher.kernel.canonical import canonical_bytes, record_hash_for
from publisher.kernel.store import build_record

pytestmark = pytest.mark.browser

ASTRAL = "𝛼𝒳😀👍🏽🇫🇷"  # mathematical letters, emoji with skin tone modifier, a flag (two regional indicators)
COMBINING = "e\u0301 a\u0308\u0323 ﬁ Å Å"  # combining acute, stacked marks, a ligature, Å precomposed vs A+ring
MIXED = "Résumé: " + ASTRAL + " / " + COMBINING + " \r\n\t\u2028 end 田中健二 ☀️"

VECTORS = [
    ("", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"),
    ("abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"),
    (
        "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
        "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1",
    ),
    (
        "abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjklmnopqklmnopqrlmnopqrsmnopqrstnopqrstu",
        "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1",
    ),
]


@pytest.fixture(scope="module")
def js_page(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """A blank page with verify.js loaded, served from 127.0.0.1."""
    folder: Path = tmp_path_factory.mktemp("jsunit")
    (folder / "assets" / "publisher").mkdir(parents=True)
    shutil.copyfile(VERIFY_JS, folder / "assets" / "publisher" / "verify.js")
    (folder / "index.html").write_text(
        '<!doctype html><meta charset="utf-8"><title>verify.js unit</title>'
        '<script src="assets/publisher/verify.js"></script><body></body>',
        encoding="utf-8",
    )
    with launched_browser() as browser, serve(folder) as base, guarded_page(browser) as guard:
        guard.page.goto(base + "index.html")
        guard.page.wait_for_function("() => !!window.EvidenceVerify")
        assert guard.page.evaluate("() => window.isSecureContext && !!crypto.subtle")
        yield guard
        guard.check_clean()


def _hashes(page: Any, texts: list[str]) -> list[dict[str, str]]:
    """For each text: the fallback digest, the WebCrypto digest, and the fallback fed in odd chunks."""
    return page.evaluate(
        """async (texts) => {
            const E = window.EvidenceVerify, enc = new TextEncoder(), out = [];
            for (const t of texts) {
                const bytes = enc.encode(t);
                const h = new E.Sha256();
                for (let i = 0; i < bytes.length; i += 13) h.update(bytes.subarray(i, i + 13));
                const hex = Array.from(h.digest(), (b) => b.toString(16).padStart(2, "0")).join("");
                out.push({
                    fallback: E.sha256HexFallback([bytes]),
                    chunked: hex,
                    webcrypto: await E.sha256Hex([bytes]),
                });
            }
            return out;
        }""",
        texts,
    )


def test_sha256_fallback_matches_known_vectors(js_page: Any) -> None:
    got = _hashes(js_page.page, [text for text, _ in VECTORS])
    for (_, want), digests in zip(VECTORS, got, strict=True):
        assert digests == {"fallback": want, "chunked": want, "webcrypto": want}


def test_sha256_fallback_million_a(js_page: Any) -> None:
    want = "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0"
    got = js_page.page.evaluate("() => window.EvidenceVerify.sha256HexFallback([new Uint8Array(1000000).fill(97)])")
    assert got == want


def test_sha256_fallback_agrees_with_webcrypto_and_hashlib_at_every_padding_length(js_page: Any) -> None:
    rng = random.Random(20260908)
    alphabet = list("abc ") + list(ASTRAL) + list(COMBINING) + ["\u0000", "\uffff", "\U0010ffff"]
    texts = ["x" * n for n in range(0, 140)]
    texts += ["".join(rng.choice(alphabet) for _ in range(rng.randrange(0, 300))) for _ in range(60)]
    got = _hashes(js_page.page, texts)
    for text, digests in zip(texts, got, strict=True):
        want = hashlib.sha256(text.encode("utf-8")).hexdigest()
        assert digests == {"fallback": want, "chunked": want, "webcrypto": want}, repr(text)


def test_source_id_digest_over_url_nul_text(js_page: Any) -> None:
    url, text = "https://example.org/𝛼?q=é", MIXED
    want = hashlib.sha256(url.encode() + b"\x00" + text.encode()).hexdigest()
    got = js_page.page.evaluate(
        """async ([url, text]) => {
            const E = window.EvidenceVerify, enc = new TextEncoder();
            const parts = [enc.encode(url), new Uint8Array([0]), enc.encode(text)];
            return [await E.sha256Hex(parts), await E.sha256Hex(parts, {fallback: true})];
        }""",
        [url, text],
    )
    assert got == [want, want]


def _slices(page: Any, text: str, ranges: list[tuple[int, int]]) -> list[str | None]:
    return page.evaluate(
        """([text, ranges]) => {
            const points = new window.EvidenceVerify.CodePoints(text);
            return ranges.map(([s, e]) => points.slice(s, e));
        }""",
        [text, ranges],
    )


def test_code_point_slice_counts_astral_characters_as_one(js_page: Any) -> None:
    text = MIXED
    ranges = [(s, e) for s in range(len(text) + 1) for e in range(s, len(text) + 1)]
    got = _slices(js_page.page, text, ranges)
    assert got == [text[s:e] for s, e in ranges]


def test_code_point_slice_keeps_combining_marks_as_separate_code_points(js_page: Any) -> None:
    text = "e\u0301e\u0301"
    assert _slices(js_page.page, text, [(0, 1), (1, 2), (0, 2), (1, 3)]) == ["e", "\u0301", "e\u0301", "\u0301e"]


def test_code_point_slice_refuses_ranges_outside_the_text(js_page: Any) -> None:
    text = "a😀b"
    got = _slices(js_page.page, text, [(0, 4), (-1, 1), (2, 1), (3, 3)])
    assert got == [None, None, None, ""]


_COUNT_WORK = """([text, starts]) => {
    const real = String.prototype.charCodeAt;
    let reads = 0;
    String.prototype.charCodeAt = function (i) { reads++; return real.call(this, i); };
    try {
        const points = new window.EvidenceVerify.CodePoints(text);
        const index = reads;
        const slices = starts.map((s) => { reads = 0; points.slice(s, s + 500); return reads; });
        return [index, slices];
    } finally {
        String.prototype.charCodeAt = real;
    }
}"""
"""Code units read (``charCodeAt`` calls) to index ``text`` once and to slice 500 code points at
each start: the work itself, counted, so no clock on a shared machine decides the test."""


def test_code_point_slices_cost_the_same_anywhere_in_a_text_twice_as_long(js_page: Any) -> None:
    """Indexing is one pass (n against 2n: twice the reads); a slice reads at most one index stride
    plus its own length wherever it starts and however long the text (no scan from the start)."""
    rng = random.Random(11)
    alphabet = list("abcdefgh ") + list(ASTRAL) + ["\u0301"]
    short = "".join(rng.choice(alphabet) for _ in range(100_000))
    long = short + short
    work: dict[int, tuple[int, list[int]]] = {}
    for text in (short, long):
        starts = [0, 1023, 1024, len(text) // 2, len(text) - 1500, len(text) - 600]
        index, slices = js_page.page.evaluate(_COUNT_WORK, [text, starts])
        work[len(text)] = (index, slices)
        units = len(text.encode("utf-16-le")) // 2
        assert units <= index <= 2 * units  # one pass over the code units
        assert max(slices) <= 2 * (1024 + 500), slices  # a stride and the span, never the text before it
    (index_n, slices_n), (index_2n, slices_2n) = work[len(short)], work[len(long)]
    assert 1.8 <= index_2n / index_n <= 2.2
    assert slices_2n[:3] == slices_n[:3]  # the same starts over the same prefix: the same reads


def test_code_point_slice_on_a_long_text_across_index_strides(js_page: Any) -> None:
    rng = random.Random(7)
    alphabet = list("abcdefgh ") + list(ASTRAL) + ["\u0301"]
    text = "".join(rng.choice(alphabet) for _ in range(200_000))
    ranges = [(s, s + n) for s in (0, 1, 1023, 1024, 1025, 2047, 2048, 99_999, 199_990) for n in (0, 1, 7, 10)]
    ranges += [(rng.randrange(0, 190_000), 0) for _ in range(40)]
    ranges = [(s, min(len(text), e if e else s + rng.randrange(0, 2000))) for s, e in ranges]
    got = _slices(js_page.page, text, ranges)
    assert got == [text[s:e] for s, e in ranges]


def test_first_difference_is_a_code_point_index(js_page: Any) -> None:
    pairs = [("a😀b", "a😀c"), ("a😀b", "a😀b"), ("😀😀", "😀"), ("", "x"), ("e\u0301", "é")]
    got = js_page.page.evaluate("(pairs) => pairs.map(([a, b]) => window.EvidenceVerify.firstDifference(a, b))", pairs)
    assert got == [2, -1, 1, 0, 0]


def test_canonical_json_matches_the_publisher(js_page: Any) -> None:
    record = build_record(
        url='https://example.org/é?x="q"',
        text=MIXED + '\\ "quoted" \u0000\u001f\u007f',
        title='Title with 𝛼 and "quotes"',
        retrieved_at="2026-01-02T03:04:05Z",
        access="full_text",
        origin="web",
        paper={"pmid": "1", "doi": None, "pmcid": None},
        asset=None,
        sections=[{"title": "Résumé", "start": 0, "end": 3}],
        pages=None,
    )
    body = {k: v for k, v in record.items() if k != "record_hash"}
    odd = {"b": 1, "a": [None, "\n\u2028é"], "\U0001f600": 1, "\uffff": 2, "A": {"z": [], "y": {}}}
    got = js_page.page.evaluate("(values) => values.map(window.EvidenceVerify.canonicalJson)", [body, odd])
    assert [g.encode("utf-8") for g in got] == [canonical_bytes(body), canonical_bytes(odd)]
    assert record["record_hash"] == record_hash_for(record)


def _verify(page: Any, record: dict[str, Any], claim: dict[str, Any], fallback: bool = False) -> dict[str, Any]:
    return page.evaluate(
        """async ([record, claim, fallback]) =>
            window.EvidenceVerify.verifyRecord(record, claim, {fallback})""",
        [record, claim, fallback],
    )


@pytest.mark.parametrize("fallback", [False, True], ids=["webcrypto", "fallback"])
def test_verify_record_accepts_the_true_excerpt(js_page: Any, fallback: bool) -> None:
    record = build_record(
        url="https://example.org/t",
        text=MIXED,
        title="t",
        retrieved_at="2026-01-02T03:04:05Z",
        access="web",
        origin="web",
        paper=None,
        asset=None,
        sections=None,
        pages=None,
    )
    start, end = MIXED.index("𝛼"), MIXED.index("/") + 3
    claim = {"sourceId": record["source_id"], "start": start, "end": end, "shown": MIXED[start:end]}
    result = _verify(js_page.page, record, claim, fallback)
    assert result == {"ok": True, "problems": [], "notes": []}


def test_verify_record_reports_each_mismatch(js_page: Any) -> None:
    record = build_record(
        url="https://example.org/t",
        text=MIXED,
        title="t",
        retrieved_at="2026-01-02T03:04:05Z",
        access="web",
        origin="web",
        paper=None,
        asset=None,
        sections=None,
        pages=None,
    )
    start, end = MIXED.index("𝛼"), MIXED.index("/") + 3
    good = {"sourceId": record["source_id"], "start": start, "end": end, "shown": MIXED[start:end]}

    tampered_text = json.loads(json.dumps(record))
    tampered_text["text"] = MIXED.replace("😀", "😁")
    result = _verify(js_page.page, tampered_text, good)
    checks = [p["check"] for p in result["problems"]]
    assert checks == ["source_id", "content_hash", "record_hash", "excerpt"]
    got_id = "src-" + hashlib.sha256(b"https://example.org/t\x00" + tampered_text["text"].encode()).hexdigest()
    assert result["problems"][0]["expected"] == record["source_id"]
    assert result["problems"][0]["got"] == got_id
    assert result["problems"][3]["index"] == MIXED[start:end].index("😀")

    moved_url = dict(record, url="https://example.org/u")
    assert [p["check"] for p in _verify(js_page.page, moved_url, good)["problems"]] == ["source_id", "record_hash"]

    retitled = dict(record, title="another title")
    assert [p["check"] for p in _verify(js_page.page, retitled, good)["problems"]] == ["record_hash"]

    unsealed = {k: v for k, v in record.items() if k != "record_hash"}
    result = _verify(js_page.page, unsealed, good)
    assert not result["ok"] and [p["check"] for p in result["problems"]] == ["record_hash"]
    for forged in ("", "sha256:", "SHA256:" + record["record_hash"][7:], None, 7):
        result = _verify(js_page.page, dict(record, record_hash=forged), good)
        assert not result["ok"] and [p["check"] for p in result["problems"]] == ["record_hash"]

    shifted = dict(good, start=start + 1, end=end + 1)
    result = _verify(js_page.page, record, shifted)
    assert [p["check"] for p in result["problems"]] == ["excerpt"]
    assert result["problems"][0]["index"] == 0

    outside = dict(good, end=len(MIXED) + 1)
    assert [p["check"] for p in _verify(js_page.page, record, outside)["problems"]] == ["range"]


def test_chunked_fallback_agrees_with_hashlib_and_yields_between_mebibytes(js_page: Any) -> None:
    """The fallback over several MiB, split across parts at odd places: hashlib's digest, with the
    page given back between chunks (a timer fires during the hash) and the progress counted to 1."""
    size = 3 * 1024 * 1024 + 17
    data = bytes((i * 31 + (i >> 8)) & 255 for i in range(size))
    out = js_page.page.evaluate(
        """async (size) => {
            const E = window.EvidenceVerify;
            const bytes = new Uint8Array(size);
            for (let i = 0; i < size; i++) bytes[i] = (i * 31 + (i >> 8)) & 255;
            let ticks = 0;
            const timer = setInterval(() => ticks++, 0);
            const seen = [];
            const parts = [bytes.subarray(0, 1000), bytes.subarray(1000)];
            const hex = await E.sha256HexChunked(parts, (f) => seen.push(f));
            clearInterval(timer);
            const rising = seen.every((f, i) => i === 0 || f >= seen[i - 1]);
            return { hex, ticks, last: seen[seen.length - 1], rising, steps: seen.length };
        }""",
        size,
    )
    assert out["hex"] == hashlib.sha256(data).hexdigest()
    assert out["last"] == 1 and out["rising"] and out["steps"] >= 3
    assert out["ticks"] > 0, "the page was never given back during the hash"
