"""Mutation testing of the integrity core: does breaking a check make a test fail?

Two kinds of mutant, each applied to a scratch copy of the repository (the working tree is never
touched) and run against the tests that guard it, stopping at the first failure:

* NAMED: mutations a reviewer listed (a check disabled, a comparison removed), written as an exact
  text substitution in one file, each with the tests expected to catch it;
* OPERATORS (``--operators``): every comparison of the integrity core's modules flipped in turn
  (``==``/``!=``, ``<``/``>=``, ``>``/``<=``, ``is``/``is not``, ``in``/``not in``).

A mutant *survives* when every selected test still passes. Prints one line per mutant and a
summary; exit status 1 if any survives. docs/mutation.md records a run and what was done about
each survivor.

    python scripts/mutation.py                 # the named mutations
    python scripts/mutation.py --operators     # plus every comparison of the core (long)
    python scripts/mutation.py --only log-head # one named mutation
"""

from __future__ import annotations

import argparse
import ast
import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

CORE = (
    "publisher/kernel/store.py",
    "publisher/kernel/eventlog.py",
    "publisher/kernel/spans.py",
    "publisher/kernel/ids.py",
    "publisher/gate/artifacts.py",
    "publisher/gate/claims.py",
    "publisher/gate/freshness.py",
    "publisher/gate/checks/assembler.py",
    "publisher/gate/checks/eventlog.py",
    "publisher/gate/checks/snapshot.py",
    "publisher/gate/checks/span.py",
    "publisher/gate/checks/freshfetch.py",
    "publisher/gate/checks/gate.py",
    "publisher/gate/checks/report.py",
    "publisher/gate/checks/publication.py",
    "publisher/gate/pipeline.py",
    "publisher/wiki/conceptcheck.py",
    "publisher/wiki/check.py",
    "publisher/wiki/runchecks.py",
)
"""The modules whose comparisons decide what is evidence."""

GUARDS = (
    "tests/test_agreement.py",
    "tests/test_assemble_reasons.py",
    "tests/test_verify.py",
    "tests/test_wiki_check.py",
    "tests/test_freshness.py",
    "tests/test_eventlog.py",
    "tests/test_store.py",
    "tests/test_promote.py",
    "tests/test_models.py",
    "tests/test_span_properties.py",
    "tests/test_provenance_receipts.py",
    "tests/test_provenance_signing.py",
    "tests/test_hook_build.py",
    "tests/test_site_check.py",
    "tests/test_site_windows.py",
    "tests/test_mutation_guards.py",
    "tests/test_upstream.py",
    "tests/test_upstream_rejections.py",
    "tests/test_corpus.py",
    "tests/test_hostile_inputs.py",
    "tests/test_hostile_wiki.py",
    "tests/test_hostile_files.py",
    "tests/test_assemble.py",
    "tests/test_batch_commands.py",
)
"""The tests run against an operator mutant (a named one names its own)."""


@dataclass(frozen=True)
class Mutant:
    name: str
    path: str
    old: str
    new: str
    tests: tuple[str, ...] = GUARDS


NAMED = (
    Mutant(
        "access-check-disabled",
        "publisher/gate/artifacts.py",
        "if access is not None and access != snap.access:",
        "if False:",
        ("tests/test_assemble_reasons.py", "tests/test_mutation_guards.py"),
    ),
    Mutant(
        "paper-id-check-disabled",
        "publisher/gate/artifacts.py",
        "problem = self._paper_problem(evidence_id, snap)",
        "problem = None",
        ("tests/test_assemble_reasons.py", "tests/test_mutation_guards.py"),
    ),
    Mutant(
        "result-comparison-removed",
        "publisher/gate/checks/assembler.py",
        "if written or same_json(_without_time(stored), _without_time(fresh)):",
        "if True:",
        ("tests/test_agreement.py", "tests/test_mutation_guards.py"),
    ),
    Mutant(
        "stored-bytes-proof-forged",
        "publisher/gate/checks/assembler.py",
        "return candidate if _written_ending(source, candidate) is not None else None",
        "return candidate",
        ("tests/test_pipeline_stored.py", "tests/test_stored_pieces.py", "tests/test_agreement.py"),
    ),
    Mutant(
        "settled-result-not-verified",
        "publisher/gate/checks/runcheck.py",
        "if not isinstance(again, dict) or _digest(again) != self.digest:",
        "if not isinstance(again, dict):",
        ("tests/test_kept_checks.py",),
    ),
    Mutant(
        "duplicate-keys-not-counted",
        "publisher/kernel/canonical.py",
        'if written.count(b":") != data.count(b":"):',
        "if False:",
        ("tests/test_canonical.py",),
    ),
    Mutant(
        "broken-chain-keeps-freshness",
        "publisher/gate/artifacts.py",
        "if hit.fresh and self.log.findings:",
        "if False:",
        ("tests/test_freshness.py", "tests/test_mutation_guards.py"),
    ),
    Mutant(
        "log-head-comparison-disabled",
        "publisher/gate/checks/eventlog.py",
        "elif count and log.head_at(count) != head:",
        "elif False:",
        ("tests/test_verify.py", "tests/test_mutation_guards.py"),
    ),
    Mutant(
        "dropped-excerpt-undetected",
        "publisher/site/checks/seal.py",
        "missing = expected_excerpts - found",
        "missing = found - found",
        ("tests/test_hook_build.py", "tests/test_mutation_guards.py"),
    ),
    Mutant(
        "misplaced-highlight-undetected",
        "publisher/site/checks/seal.py",
        """        out.findings += _misplaced(block, page)
        out.snapshots.append(""",
        """        out.snapshots.append(""",
        ("tests/test_hook_build.py", "tests/test_mutation_guards.py"),
    ),
    Mutant(
        "removed-windows-undetected",
        "publisher/site/checks/seal.py",
        "if windows != expected_windows:",
        "if False:",
        ("tests/test_site_windows.py", "tests/test_mutation_guards.py"),
    ),
    Mutant(
        "strict-warning-ignored",
        "publisher/site/lifecycle/events.py",
        "return bool(self.config is not None and self.config.strict and warnings_counted())",
        "return False",
        ("tests/test_hook_build.py", "tests/test_publish_last.py", "tests/test_mutation_guards.py"),
    ),
    Mutant(
        "claim-conditions-not-required",
        "publisher/wiki/claims/admission.py",
        "        if not any(c.strip() for c in p.conditions):",
        "        if False:",
        ("tests/test_claims_assess.py", "tests/test_claims_review.py", "tests/test_claims_hostile.py"),
    ),
    Mutant(
        "claim-conditions-allowed-anywhere",
        "publisher/wiki/claims/admission.py",
        "    elif p.conditions:",
        "    elif False:",
        ("tests/test_claims_assess.py", "tests/test_claims_review.py", "tests/test_claims_hostile.py"),
    ),
    Mutant(
        "claim-review-of-any-claim",
        "publisher/wiki/claims/admission.py",
        "    if review.claim_hash != chash:",
        "    if False:",
        ("tests/test_claims_assess.py", "tests/test_claims_review.py", "tests/test_claims_hostile.py"),
    ),
    Mutant(
        "claim-incomplete-review-accepted",
        "publisher/wiki/claims/admission.py",
        "    if not (review.protocol_complete and review.surface_complete):",
        "    if False:",
        ("tests/test_claims_assess.py", "tests/test_claims_review.py", "tests/test_claims_hostile.py"),
    ),
    Mutant(
        "claim-review-not-re-executed",
        "publisher/wiki/claims/admission.py",
        '    if again.model_copy(update={"created_at": review.created_at}) != review:',
        "    if False:",
        ("tests/test_claims_assess.py", "tests/test_claims_review.py", "tests/test_claims_hostile.py"),
    ),
    Mutant(
        "claim-missingness-of-any-claim",
        "publisher/wiki/claims/admission.py",
        "    if record.claim_hash != chash:",
        "    if False:",
        ("tests/test_claims_assess.py", "tests/test_claims_review.py", "tests/test_claims_hostile.py"),
    ),
    Mutant(
        "claim-front-matter-not-compared",
        "publisher/wiki/claims/provenance.py",
        "        differences = _differences(claim, entry, ce.slug)",
        "        differences = []",
        ("tests/test_claims_assess.py", "tests/test_claims_review.py", "tests/test_claims_hostile.py"),
    ),
    Mutant(
        "claim-broken-log-trusted",
        "publisher/wiki/claims/provenance.py",
        "        if not log_ok:",
        "        if False:",
        ("tests/test_claims_assess.py", "tests/test_claims_review.py", "tests/test_claims_hostile.py"),
    ),
    Mutant(
        "claim-any-event-is-unavailable",
        "publisher/wiki/claims/missingness.py",
        "        if event.type is not EventType.FETCH_FAILED:",
        "        if False:",
        ("tests/test_claims_assess.py", "tests/test_claims_review.py", "tests/test_claims_hostile.py"),
    ),
    Mutant(
        "claim-surface-complete-inferred",
        "publisher/wiki/claims/reviews.py",
        "    complete = surface_declared_complete(run, snap, logs)",
        "    complete = True",
        ("tests/test_claims_assess.py", "tests/test_claims_review.py", "tests/test_claims_hostile.py"),
    ),
    Mutant(
        "review-hits-unadjudicated-accepted",
        "publisher/wiki/claims/admission.py",
        "or _hits_adjudicated(ev, rid, review, keys)",
        "or None",
        ("tests/test_claims_adjudicate.py", "tests/test_claims_review.py"),
    ),
    Mutant(
        "unsigned-adjudication-counted",
        "publisher/wiki/claims/adjudications.py",
        "        if ring and adjudication_problem(entry, ring, name) is not None:",
        "        if False:",
        ("tests/test_claims_adjudicate.py",),
    ),
    Mutant(
        "unanchored-proof-accepted",
        "publisher/cli/proof.py",
        "    if not findings and anchor is None:",
        "    if False:",
        ("tests/test_proof_cli.py",),
    ),
    Mutant(
        "prose-check-not-blocking-render",
        "publisher/gate/render.py",
        'BLOCKING_CHECKS = ("C-SNAPSHOT", "C-SPAN", "C-PROSE")',
        'BLOCKING_CHECKS = ("C-SNAPSHOT", "C-SPAN")',
        ("tests/test_render.py",),
    ),
    Mutant(
        "mcp-writes-unsigned-on-a-signed-wiki",
        "publisher/mcp/tools.py",
        "    if ring and (ws.signer is None or not ring.has_role(ws.signer.key_id, Role.ASSESS)):",
        "    if False:",
        ("tests/test_claims_mcp.py",),
    ),
)

_FLIPS: dict[type[ast.cmpop], str] = {
    ast.Eq: "!=",
    ast.NotEq: "==",
    ast.Lt: ">=",
    ast.GtE: "<",
    ast.Gt: "<=",
    ast.LtE: ">",
    ast.Is: "is not",
    ast.IsNot: "is",
    ast.In: "not in",
    ast.NotIn: "in",
}


_BY_LAYER = {
    "publisher/kernel/": (
        "tests/test_provenance_signing.py",
        "tests/test_store.py",
        "tests/test_eventlog.py",
        "tests/test_models.py",
        "tests/test_span_properties.py",
        "tests/test_mutation_guards.py",
        "tests/test_agreement.py",
        "tests/test_assemble_reasons.py",
        "tests/test_verify.py",
        "tests/test_hostile_files.py",
    ),
    "publisher/gate/": (
        "tests/test_agreement.py",
        "tests/test_assemble_reasons.py",
        "tests/test_assemble.py",
        "tests/test_verify.py",
        "tests/test_freshness.py",
        "tests/test_mutation_guards.py",
        "tests/test_upstream.py",
        "tests/test_upstream_rejections.py",
        "tests/test_corpus.py",
        "tests/test_provenance_receipts.py",
        "tests/test_provenance_signing.py",
        "tests/test_hostile_inputs.py",
        "tests/test_batch_commands.py",
        "tests/test_render.py",
        "tests/test_verify_cli.py",
    ),
    "publisher/wiki/": (
        "tests/test_wiki_check.py",
        "tests/test_promote.py",
        "tests/test_agreement.py",
        "tests/test_mutation_guards.py",
        "tests/test_hostile_wiki.py",
        "tests/test_hostile_inputs.py",
        "tests/test_concepts.py",
        "tests/test_hook_build.py",
    ),
}
"""The tests that guard each layer of the core: an operator mutant runs those of its module's layer."""


def operator_mutants(paths: tuple[str, ...] = CORE) -> list[Mutant]:
    """One mutant per comparison operator of each core module (source positions from the AST)."""
    out: list[Mutant] = []
    for rel in paths:
        source = (REPO / rel).read_text(encoding="utf-8")
        lines = source.split("\n")
        tree = ast.parse(source)
        for node in ast.walk(tree):
            if not isinstance(node, ast.Compare) or len(node.ops) != 1 or node.lineno != node.end_lineno:
                continue
            flip = _FLIPS.get(type(node.ops[0]))
            if flip is None:
                continue
            line = lines[node.lineno - 1]
            left = ast.get_source_segment(source, node.left)
            right = ast.get_source_segment(source, node.comparators[0])
            segment = ast.get_source_segment(source, node)
            if not (left and right and segment) or line.count(segment) != 1 or source.count(line) != 1:
                continue
            mutated = line.replace(segment, f"{left} {flip} {right}")
            tests = next((t for prefix, t in _BY_LAYER.items() if rel.startswith(prefix)), GUARDS)
            out.append(Mutant(f"{rel}:{node.lineno} {segment[:60]!r} -> {flip}", rel, line, mutated, tests))
    return out


def _unplaced(name: str) -> str:
    """A mutant's name without its line number (``path:123 'segment' -> op`` -> ``path 'segment' -> op``)."""
    head, _, rest = name.strip().partition(" ")
    return f"{head.split(':')[0]} {rest}" if rest else head


def _scratch() -> Path:
    """A copy of the repository's tracked and untracked files (not .venv or caches)."""
    root = Path(tempfile.mkdtemp(prefix="publisher-mutation-"))
    listed = subprocess.run(
        ["git", "ls-files", "-co", "--exclude-standard"], cwd=REPO, capture_output=True, text=True, check=True
    ).stdout.split("\n")
    for rel in filter(None, listed):
        src = REPO / rel
        if src.is_file():
            dest = root / "repo" / rel
            dest.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dest)
    shared = REPO.parent / "shared"
    if shared.is_dir():
        (root / "shared").symlink_to(shared)
    return root / "repo"


def run_mutant(copy: Path, mutant: Mutant, python: str) -> tuple[bool, float]:
    """Apply the mutant to the copy, run its tests (stop at the first failure), restore. True: killed."""
    path = copy / mutant.path
    original = path.read_text(encoding="utf-8")
    if original.count(mutant.old) != 1:
        raise SystemExit(f"mutant {mutant.name}: {mutant.old!r} is not found exactly once in {mutant.path}")
    path.write_text(original.replace(mutant.old, mutant.new), encoding="utf-8")
    started = time.monotonic()
    try:
        env = {**os.environ, "PYTHONPATH": str(copy), "PYTHONDONTWRITEBYTECODE": "1"}
        tests = [t for t in mutant.tests if (copy / t).is_file()]
        proc = subprocess.run(
            [python, "-m", "pytest", "-x", "-q", "-p", "no:cacheprovider", *tests],
            cwd=copy,
            env=env,
            capture_output=True,
            text=True,
        )
        return proc.returncode != 0, time.monotonic() - started
    finally:
        path.write_text(original, encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--operators", action="store_true", help="also flip every comparison of the core")
    parser.add_argument("--only", help="run the named mutation (or operator mutants whose name contains this)")
    parser.add_argument(
        "--survivors",
        type=Path,
        help="rerun only the mutants a previous run's output lists as SURVIVED (lines may move)",
    )
    args = parser.parse_args(argv)
    mutants = list(NAMED) + (operator_mutants() if args.operators or args.survivors else [])
    if args.only:
        mutants = [m for m in mutants if args.only in m.name]
    if args.survivors:
        wanted = {
            _unplaced(line.split("  ", 2)[-1]) for line in args.survivors.read_text().splitlines() if "SURVIVED" in line
        }
        mutants = [m for m in mutants if _unplaced(m.name) in wanted]
    copy = _scratch()
    survivors = []
    try:
        for mutant in mutants:
            killed, seconds = run_mutant(copy, mutant, sys.executable)
            print(f"{'killed  ' if killed else 'SURVIVED'} {seconds:6.1f}s  {mutant.name}", flush=True)
            if not killed:
                survivors.append(mutant)
    finally:
        shutil.rmtree(copy.parent, ignore_errors=True)
    print(f"{len(mutants) - len(survivors)} of {len(mutants)} mutants killed; {len(survivors)} survived")
    return 1 if survivors else 0


if __name__ == "__main__":
    sys.exit(main())
