"""Whole-process ``assemble --gate`` and ``verify --gate`` beside the upstream kit's assembler.

Each size is an upstream-layout run (``<wiki>/outputs/deep-research/<slug>/``: unsealed
snapshots, events without ``prev``, a report citing papers by PMCID) of that many real articles
of the evidence-inference corpus, every record accepted by both sides: the run carries a
``corpus.jsonl`` of its papers and its footnotes are keyed by PMCID (``[^pmc-1065070]``), the
one way the upstream assembler ties a report's footnote to a paper (it does not read the
footnote's text). Each command is run once before timing and must exit 0: a side that
rejected something would be timed on other work. The upstream assembler
(``scripts/assemble.py run --run-dir RUN --strict`` of a checkout of the upstream kit) works on
its own copy of the run, since it writes ``outputs/result.json`` in its own schema. Every command
is a fresh process; the commands are interleaved round by round (the order rotating each round),
so a machine whose speed drifts moves every row alike. Both sides run from byte-code cached in a
temporary folder (``PYTHONPYCACHEPREFIX``), as installed software does, whatever
``PYTHONDONTWRITEBYTECODE`` says.

    python benchmarks/bench_upstream.py --upstream ../deep-research      # 10, 40, 160 articles
    python benchmarks/bench_upstream.py --sizes 40 --rounds 15 --upstream ../deep-research
    python benchmarks/bench_upstream.py --quick                         # 3 articles, no upstream
    python benchmarks/bench_upstream.py --sizes 40 --against ../main    # paired with another checkout

Without ``--upstream`` (or when the folder holds no ``scripts/assemble.py``) only this project's
commands are timed, and the table says the comparison was skipped.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from _gate_helpers import make_upstream_run  # the tests' upstream-layout runs

from benchmarks._common import table
from benchmarks.bench_start import bytecode_env, timed

__all__ = ["upstream_assembler", "main"]

UPSTREAM = "upstream assemble.py --strict"


def upstream_assembler(checkout: Path | None) -> Path | None:
    """The upstream kit's assembler script in ``checkout``, or None (with the reason printed)."""
    if checkout is None:
        print("upstream comparison skipped: no --upstream checkout given", flush=True)
        return None
    script = checkout / "scripts" / "assemble.py"
    if not script.is_file():
        print(f"upstream comparison skipped: {script} does not exist", flush=True)
        return None
    return script


def _lines(run: Path, copy: Path | None, script: Path | None) -> dict[str, list[str]]:
    me = [sys.executable, "-m", "publisher"]
    lines = {
        "python -c pass": [sys.executable, "-c", "pass"],
        "publisher assemble --gate": [*me, "assemble", "--gate", "--run-dir", os.fspath(run)],
        "publisher verify --gate": [*me, "verify", "--gate", "--run-dir", os.fspath(run)],
    }
    if script is not None and copy is not None:
        lines[UPSTREAM] = [sys.executable, os.fspath(script), "run", "--run-dir", os.fspath(copy), "--strict"]
    return lines


def _keyed_by_pmcid(run: Path, pmcids: list[str]) -> None:
    """The run's report footnotes keyed by PMCID and a ``corpus.jsonl`` of its papers, so that
    the upstream assembler, which resolves a footnote by its key through the corpus alone,
    accepts the report's claims as this project's assembler does."""
    report = run / "outputs" / "report.md"
    text = report.read_text(encoding="utf-8")
    for number, pmcid in enumerate(pmcids):
        key = pmcid.removeprefix("PMC")
        text = text.replace(f"[^pmc-{number}]", f"[^pmc-{key}]")
    report.write_text(text, encoding="utf-8")
    corpus = "".join(json.dumps({"evidence_id": f"pmcid:{p}", "pmcid": p}) + "\n" for p in pmcids)
    (run / "corpus.jsonl").write_text(corpus, encoding="utf-8")


def _accepts(line: list[str], env: dict[str, str]) -> None:
    """Run a command once (warming the file cache and the byte-code); anything but exit 0, every
    artifact accepted, stops the benchmark."""
    done = subprocess.run(line, capture_output=True, env=env, cwd=os.path.abspath(os.sep), check=False)
    if done.returncode != 0:
        tail = (done.stdout + done.stderr).decode("utf-8", "replace")[-400:]
        raise SystemExit(f"{' '.join(line[:5])}: exit {done.returncode}, not every artifact accepted:\n{tail}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="10,40,160", help="articles per run, comma-separated (default 10,40,160)")
    parser.add_argument("--rounds", type=int, default=9, help="interleaved rounds (default 9)")
    parser.add_argument("--upstream", type=Path, metavar="DIR", help="a checkout of the upstream kit")
    parser.add_argument(
        "--against", type=Path, metavar="DIR", help="also time this project's commands from another checkout of it"
    )
    parser.add_argument("--quick", action="store_true", help="one run of 3 articles, 2 rounds, no upstream")
    args = parser.parse_args(argv)
    sizes = [3] if args.quick else [int(s) for s in args.sizes.split(",")]
    rounds = 2 if args.quick else args.rounds
    script = None if args.quick else upstream_assembler(args.upstream)
    with tempfile.TemporaryDirectory(prefix="bench-upstream-") as tmp:
        env = bytecode_env(Path(tmp))
        other = None
        if args.against is not None:
            pythonpath = {**os.environ, "PYTHONPATH": os.fspath(args.against.resolve())}
            other = bytecode_env(Path(tmp) / "against", pythonpath)
        runs: dict[tuple[int, str], tuple[list[str], dict[str, str]]] = {}
        for size in sizes:
            fixture = make_upstream_run(Path(tmp) / f"ours-{size}", articles=size)
            _keyed_by_pmcid(fixture.run.path, [article.pmcid for article in fixture.articles])
            where = fixture.run.path.relative_to(fixture.wiki.parent)
            copy = None
            if script is not None:  # each side on its own copy: each writes its own result.json
                shutil.copytree(fixture.wiki, Path(tmp) / f"upstream-{size}" / "wiki")
                copy = Path(tmp) / f"upstream-{size}" / where
            for name, line in _lines(fixture.run.path, copy, script).items():
                runs[(size, name)] = (line, env)
            if other is not None:
                shutil.copytree(fixture.wiki, Path(tmp) / f"against-{size}" / "wiki")
                for name, line in _lines(Path(tmp) / f"against-{size}" / where, None, None).items():
                    if name.startswith("publisher"):
                        runs[(size, f"{name} [against]")] = (line, other)
        for line, line_env in runs.values():  # assemble before verify; warms the file cache and the byte-code
            _accepts(line, line_env)
        got: dict[tuple[int, str], list[tuple[float, float]]] = {key: [] for key in runs}
        keys = list(runs)
        for n in range(rounds):
            turn = n % len(keys)
            for key in keys[turn:] + keys[:turn]:
                got[key].append(timed(*runs[key]))
    rows = []
    for size, name in keys:
        took, cpu = [w for w, _ in got[(size, name)]], [c for _, c in got[(size, name)]]
        upstream = [w for w, _ in got.get((size, UPSTREAM), [])]
        upstream_cpu = [c for _, c in got.get((size, UPSTREAM), [])]
        ratio = f"{statistics.median(took) / statistics.median(upstream):.2f}" if upstream else "-"
        cpu_ratio = f"{statistics.median(cpu) / statistics.median(upstream_cpu):.2f}" if upstream_cpu else "-"
        spread = [f"{min(took):.3f}", f"{statistics.median(took):.3f}", f"{max(took):.3f}"]
        rows.append([f"{size} articles: {name}", *spread, ratio, f"{statistics.median(cpu):.3f}", cpu_ratio])
    title = f"whole-process wall seconds, {rounds} interleaved rounds"
    header = ["command", "min", "median", "max", "median / upstream", "CPU s (median)", "CPU / upstream"]
    print(table(title, header, rows))
    if script is None:
        print("(no upstream column: give --upstream DIR, a checkout of the upstream kit)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
