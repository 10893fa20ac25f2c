"""Compare the sentence splitter with the hand-written one it replaced, on the real corpus.

Usage::

    python -m benchmarks.sentence_boundaries [--old-rev REV] [--texts N]

The product's splitter (:class:`publisher.acquire.sentences.Sentences`, NLTK Punkt with the
project's abbreviations) against the hand-written splitter as it stood at git revision ``REV``
(default ``a7054da``, the last commit that had it), loaded from ``git show`` into a temporary
module. Both segment every evidence-inference text (``../shared/corpus/evidence-inference/texts``)
as block text. A boundary is a sentence's end offset; boundaries that differ are those one splitter
draws and the other does not, counted per 1,000 sentences of the old splitter. Also prints the
share of the corpus's expert evidence spans that are exactly a run of whole sentences under each,
and the time each took. Writes nothing.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from types import ModuleType

REPO = Path(__file__).resolve().parents[1]
CORPUS = REPO.parent / "shared" / "corpus" / "evidence-inference"


def _old_module(rev: str) -> ModuleType:
    source = subprocess.run(
        ["git", "show", f"{rev}:publisher/acquire/sentences.py"], cwd=REPO, capture_output=True, text=True, check=True
    ).stdout
    with tempfile.NamedTemporaryFile("w", suffix=".py", delete=False, encoding="utf-8") as fh:
        fh.write(source)
    spec = importlib.util.spec_from_file_location("old_sentences", fh.name)
    if spec is None or spec.loader is None:
        raise SystemExit(f"cannot load the splitter of {rev}")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    Path(fh.name).unlink()
    return module


def _exact(segment: type, texts: dict[str, str], spans: list[dict[str, object]]) -> float:
    cache: dict[str, object] = {}
    exact = 0
    for span in spans:
        pmcid = str(span["pmcid"])
        seg = cache.setdefault(pmcid, segment(texts[pmcid]))
        text = texts[pmcid]
        start, end = int(str(span["start"])), int(str(span["end"]))
        while text[start].isspace():
            start += 1
        while text[end - 1].isspace():
            end -= 1
        exact += seg.covering(start, end) == (start, end)  # type: ignore[attr-defined]
    return exact / len(spans)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--old-rev", default="a7054da")
    parser.add_argument("--texts", type=int, default=0, help="only the first N texts (0: all)")
    args = parser.parse_args()
    from publisher.acquire.sentences import Sentences

    old = _old_module(args.old_rev).Sentences
    paths = sorted((CORPUS / "texts").glob("*.txt"))
    if args.texts:
        paths = paths[: args.texts]
    if not paths:
        raise SystemExit(f"no corpus under {CORPUS}")
    texts = {p.stem.removeprefix("PMC"): p.read_text(encoding="utf-8") for p in paths}
    old_n = new_n = only_old = only_new = 0
    old_s = new_s = 0.0
    for text in texts.values():
        t0 = time.perf_counter()
        a = list(old(text))
        t1 = time.perf_counter()
        b = list(Sentences(text))
        t2 = time.perf_counter()
        old_s += t1 - t0
        new_s += t2 - t1
        ends_a, ends_b = {e for _, e in a}, {e for _, e in b}
        old_n += len(a)
        new_n += len(b)
        only_old += len(ends_a - ends_b)
        only_new += len(ends_b - ends_a)
    differ = only_old + only_new
    print(f"texts {len(texts)}, {sum(map(len, texts.values())):,} code points")
    print(f"sentences: old {old_n:,}, new {new_n:,}")
    print(f"boundaries only the old draws {only_old:,}, only the new {only_new:,}")
    print(f"boundaries that differ per 1,000 sentences (of the old): {1000 * differ / old_n:.1f}")
    print(f"time: old {old_s:.2f} s, new {new_s:.2f} s")
    spans_file = CORPUS / "spans.jsonl"
    if spans_file.is_file():
        spans = [json.loads(line) for line in spans_file.read_text(encoding="utf-8").splitlines()]
        spans = [s for s in spans if str(s["pmcid"]) in texts]
        if spans:
            print(
                f"expert spans exactly whole sentences: old {_exact(old, texts, spans):.1%}, "
                f"new {_exact(Sentences, texts, spans):.1%} ({len(spans)} spans)"
            )
    sys.stdout.flush()


if __name__ == "__main__":
    main()
