"""The seal's cost: the hooked build before and after a change, and each HTML parser on its pages.

For each size (N and 2N pages, the wiki of ``bench_build.py``) the hooked build runs with the
library of a baseline git revision (exported with ``git archive``, first on ``PYTHONPATH``) and
with this checkout's, interleaved round by round, so both see the same load. Then every page of
the built site is scanned in a fresh interpreter by each parser:

- *lexbor*: this checkout's ``scan_page`` (selectolax's lexbor, WHATWG tokenizer and tree builder);
- *baseline*: the baseline revision's ``scan_page``;
- *html5lib*: ``html5lib.parse`` of every page (parsing alone: any html5lib scanner costs more),
  when html5lib is installed (``pip install html5lib``; it is not a dependency).

    python benchmarks/bench_seal.py --pages 1000 --repeat 3 --baseline 6afcc2f
    python benchmarks/bench_seal.py --pages 10000 --repeat 1 --baseline 6afcc2f   # 10,000 and 20,000
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from statistics import median

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks._common import table
from benchmarks.bench_build import _hooked, make_wiki

REPO = Path(__file__).resolve().parents[1]

_SCAN = """
import sys, time
from pathlib import Path
site, parser = Path(sys.argv[1]), sys.argv[2]
pages = [p.read_text(encoding="utf-8") for p in sorted(site.rglob("*.html"))]
if parser == "html5lib":
    import html5lib
    scan = html5lib.parse
else:
    from publisher.site.checks.scan import scan_page as scan
began = time.perf_counter()
for page in pages:
    scan(page)
print(len(pages), sum(len(p.encode()) for p in pages), time.perf_counter() - began)
"""


def _export(revision: str, into: Path) -> Path:
    """The tree of ``revision`` (publisher/ and templates/), as ``git archive`` gives it."""
    into.mkdir(parents=True)
    archive = subprocess.run(
        ["git", "-C", str(REPO), "archive", revision, "publisher", "templates"], capture_output=True, check=True
    )
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive.stdout, check=True)
    return into


def _build(root: Path, env: dict[str, str]) -> float:
    shutil.rmtree(root / "site", ignore_errors=True)
    began = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "-q", "-f", str(root / "mkdocs.yml")],
        capture_output=True,
        text=True,
        env={**os.environ, **env, "CI": "true"},
    )
    elapsed = time.perf_counter() - began
    if done.returncode != 0:
        raise SystemExit(f"build of {root} failed: {done.stderr.strip().splitlines()[-1:]}")
    return elapsed


def _scan(site: Path, parser: str, env: dict[str, str]) -> tuple[int, int, float] | None:
    done = subprocess.run(
        [sys.executable, "-c", _SCAN, str(site), parser], capture_output=True, text=True, env={**os.environ, **env}
    )
    if done.returncode != 0:
        return None
    pages, size, seconds = done.stdout.split()
    return int(pages), int(size), float(seconds)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pages", type=int, default=1000, help="N (the second size is 2N)")
    parser.add_argument("--repeat", type=int, default=3, help="rounds of (baseline, this checkout) builds")
    parser.add_argument("--baseline", default="main", help="git revision whose library is the 'before'")
    parser.add_argument("--quick", action="store_true", help="N = 20, one round")
    parser.add_argument("--no-html5lib", action="store_true", help="skip html5lib (minutes at 10,000 pages)")
    args = parser.parse_args(argv)
    n, repeat = (20, 1) if args.quick else (args.pages, max(1, args.repeat))
    builds, scans = [], []
    with tempfile.TemporaryDirectory(prefix="bench-seal-") as tmp:
        base = _export(args.baseline, Path(tmp) / "baseline")
        before = {"PYTHONPATH": os.pathsep.join(p for p in (str(base), os.environ.get("PYTHONPATH", "")) if p)}
        for pages in (n, 2 * n):
            wiki = make_wiki(Path(tmp) / f"wiki-{pages}", pages, seed=pages)
            _hooked(wiki)
            old, new = [], []
            for _ in range(repeat):
                old.append(_build(wiki, before))
                new.append(_build(wiki, {}))
            paired = median(b / a - 1 for a, b in zip(old, new, strict=True))
            built = sum(1 for _ in (wiki / "site").rglob("*.html"))
            if "Content-Security-Policy" not in (wiki / "site" / "index.html").read_text(encoding="utf-8"):
                raise SystemExit("the last build did not run this checkout's library")
            builds.append(
                [built, min(old), min(new), f"{(min(new) / min(old) - 1) * 100:+.1f} %", f"{paired * 100:+.1f} %"]
            )
            row: list[object] = [built]
            for name, env in (("lexbor", {}), ("baseline", before), ("html5lib", {})):
                if name == "html5lib" and args.no_html5lib:
                    row.append("-")
                    continue
                got = _scan(wiki / "site", "html5lib" if name == "html5lib" else "scan", env)
                row.append("-" if got is None else f"{got[2]:.2f} s ({got[1] / got[2] / 1e6:.1f} MB/s)")
            scans.append(row)
            shutil.rmtree(wiki, ignore_errors=True)
    print(
        table(
            f"Hooked build (s), baseline {args.baseline} vs this checkout",
            ["pages", "before", "after", "best", "paired"],
            builds,
        )
    )
    print(
        table("Scanning every page of the built site", ["pages", "lexbor", "baseline", "html5lib (parse only)"], scans)
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
