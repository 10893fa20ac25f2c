"""Peak memory and wall time of span search on one large snapshot, as whole processes.

Each row runs one command in a fresh interpreter (``python -m publisher …``) on a run holding one
generated snapshot of the given size, and reads the child's peak resident set (``ru_maxrss`` from
``os.wait4``) and its wall time. The text is prose in the shape of an article's (sentences with
numbers, a little non-ASCII: accented letters, typographic quotes and dashes, no-break spaces, a
ligature), so both the verbatim and the normalised searches do real work.

    python benchmarks/bench_spans.py                 # 20 MB and 200 MB
    python benchmarks/bench_spans.py --sizes 5       # quick
    python benchmarks/bench_spans.py --runs RUN ...  # runs made already, one snapshot each
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks._common import MB, table

_WORDS = (
    "the patients were randomised to receive either treatment or placebo and followed for twelve weeks "
    "primary outcome was change in score secondary outcomes included adverse events quality of life and "
    "adherence baseline characteristics were similar between groups analysis followed intention to treat"
).split()
_ODD = ["café", "“effect”", "–", "\u00a0", "ﬁnding", "naïve", "‘dose’", "p\u2009<\u20090.05"]

QUERIES = {
    "spans --query": ["--query", "quality of life"],
    "spans --query (typographic)": ["--query", '"effect"'],
    "spans --query --sentence": ["--query", "adherence baseline", "--sentence"],
    "spans --from --to": ["--from", "primary outcome", "--to", "adverse events"],
}


def prose(size: int, seed: int = 7) -> str:
    """About ``size`` code points of article-like prose (deterministic for a seed)."""
    rng = random.Random(seed)
    parts: list[str] = []
    total = 0
    while total < size:
        words = [rng.choice(_WORDS) for _ in range(rng.randint(8, 30))]
        if rng.random() < 0.3:
            words.insert(rng.randrange(len(words)), rng.choice(_ODD))
        words.insert(rng.randrange(len(words)), f"{rng.randint(1, 500)}.{rng.randint(0, 99):02d}")
        sentence = " ".join(words).capitalize() + ". "
        if rng.random() < 0.05:
            sentence += "\n\n"
        parts.append(sentence)
        total += len(sentence)
    return "".join(parts)[:size]


def _cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "publisher", *args], cwd=cwd, capture_output=True, text=True)


def make_run(base: Path, mb: float) -> tuple[Path, str]:
    """A run with one registered snapshot of ``mb`` MB of prose; its directory and source id."""
    run = base / f"run-{mb:g}"
    done = _cli("run", "init", str(run), "--slug", f"spans-{mb:g}".replace(".", "-"), cwd=base)
    if done.returncode:
        raise SystemExit(done.stderr)
    text_file = base / f"text-{mb:g}.txt"
    text_file.write_text(prose(int(mb * MB)), encoding="utf-8")
    done = _cli(
        "source",
        "register",
        "--run-dir",
        str(run),
        "--url",
        f"https://example.org/{mb:g}",
        "--text-file",
        str(text_file),
        "--json",
        cwd=base,
    )
    if done.returncode:
        raise SystemExit(done.stderr)
    text_file.unlink()
    return run, json.loads(done.stdout)["source_id"]


def measure(run: Path, source_id: str, extra: list[str]) -> tuple[float, float, int, int]:
    """Wall seconds, peak RSS in MB, exit status and number of matches of one spans command."""
    argv = [
        sys.executable,
        "-m",
        "publisher",
        "source",
        "spans",
        "--run-dir",
        str(run),
        "--source-id",
        source_id,
        *extra,
        "--json",
    ]
    began = time.perf_counter()
    with tempfile.TemporaryFile() as out:
        child = subprocess.Popen(argv, stdout=out, stderr=subprocess.DEVNULL)
        _, status, usage = os.wait4(child.pid, 0)
        wall = time.perf_counter() - began
        out.seek(0)
        body = out.read()
    code = os.waitstatus_to_exitcode(status)
    matches = len(json.loads(body)["matches"]) if code == 0 and body else 0
    return wall, usage.ru_maxrss / 1024, code, matches


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=float, nargs="+", default=[20.0, 200.0], help="snapshot sizes in MB")
    parser.add_argument(
        "--runs", type=Path, nargs="+", help="run folders made already (one snapshot each), instead of --sizes"
    )
    parser.add_argument("--quick", action="store_true", help="one small snapshot (a smoke test)")
    args = parser.parse_args()
    rows = []

    def row(label: str, run: Path, source_id: str) -> None:
        size = (run / "sources" / f"{source_id}.json").stat().st_size / MB
        for name, extra in QUERIES.items():
            wall, rss, code, matches = measure(run, source_id, extra)
            rows.append([label, f"{size:.1f}", name, code, matches, f"{wall:.2f}", f"{rss:.0f}"])

    if args.runs:
        for run in args.runs:
            (snapshot,) = sorted((run / "sources").glob("src-*.json"))
            row(run.name, run, snapshot.stem)
    else:
        with tempfile.TemporaryDirectory() as tmp:
            for mb in [0.2] if args.quick else args.sizes:
                run, source_id = make_run(Path(tmp), mb)
                row(f"{mb:g}", run, source_id)
    print(table("span search, whole processes", ["MB", "file MB", "command", "exit", "matches", "s", "peak MB"], rows))


if __name__ == "__main__":
    main()
