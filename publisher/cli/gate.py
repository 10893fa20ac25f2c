"""``publisher assemble``, ``publisher verify`` and ``publisher render``.

Exit statuses: assemble 0 for pass or warn, 1 for fail; verify 0 for Verified, 1 for Failed and
for Inconclusive 0 with the gate off, 1 with it on; render 0 when written, 1 when refused;
2 for usage or fatal errors. ``--json`` prints ``result.json`` / ``verification.json``.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from ..kernel.findings import Finding, grouped_lines
from ._common import add_config, add_json, emit, open_run, wiki_policy

if TYPE_CHECKING:
    from ..gate.inputs import RunOptions
    from ..runs import Run

_T = TypeVar("_T")


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Add ``assemble``, ``verify`` and ``render``."""
    commands = (
        (
            "assemble",
            _assemble,
            "check every record and report claim; write outputs/result.json",
            "turn the evidence gate on (unresolved artifacts fail)",
        ),
        (
            "verify",
            _verify,
            "run the numbered checks; write outputs/verification.json (publisher-verification.json beside "
            "an upstream verifier's, which is kept)",
            "turn the evidence gate on (Inconclusive exits 1)",
        ),
        ("render", _render, "write outputs/report.html with verified excerpts only", None),
    )
    for name, func, summary, gate_help in commands:
        p = sub.add_parser(name, help=summary)
        p.add_argument("--run-dir", required=True, type=Path)
        if gate_help is not None:
            p.add_argument("--gate", action="store_true", help=gate_help)
        p.add_argument(
            "--wiki",
            type=Path,
            help="wiki root holding assets/ (default: <wiki> of <wiki>/outputs/deep-research/<slug>, else the "
            "nearest folder with mkdocs.yml)",
        )
        add_config(p)
        add_json(p)
        p.set_defaults(func=func)


def _grouped(findings: Iterable[Finding]) -> list[str]:
    """Findings grouped by reason code: artifact, field, source id and the detail's numbers."""
    groups: dict[str, list[Finding]] = {}
    for finding in findings:
        groups.setdefault(finding.code, []).append(finding)
    lines: list[str] = []
    for code in sorted(groups):
        lines.append(f"  {code} ({len(groups[code])})")
        for f in groups[code]:
            where = " ".join(p for p in (f.artifact_id, f.field, f.source_id) if p)
            lines.append(f"    {where}: {f.detail}")
    return lines


def _keys(args: argparse.Namespace, run: Run) -> Any:
    """The trusted keys of the run's wiki, resolved through MkDocs (``--config`` or its mkdocs.yml)."""
    from ..runs import find_wiki_root

    root = args.wiki if args.wiki is not None else find_wiki_root(run.path)
    return wiki_policy(root, args.config).trusted_keys


def _over_run(args: argparse.Namespace, step: Callable[[Run, RunOptions], _T]) -> tuple[Run, _T]:
    """Open ``--run-dir`` and run ``step`` over it with the wiki's keys, drawing its progress."""
    from ..gate.inputs import RunOptions
    from .progress import terminal_progress

    run = open_run(args.run_dir)
    keys = _keys(args, run)
    with terminal_progress("verifying snapshots", quiet=args.json) as progress:
        return run, step(run, RunOptions(wiki_root=args.wiki, trusted_keys=keys, progress=progress))


def _assemble(args: argparse.Namespace) -> int:
    from ..gate.assemble import assemble_run

    run, assembly = _over_run(args, lambda run, options: assemble_run(run, options, gate=args.gate or None))
    result = assembly.result
    counts = result["counts"]
    gate = result["gate"]
    lines = [
        f"Assembled {result['run_slug']}: {gate['verdict']} (gate {'on' if gate['enabled'] else 'off'})",
        f"  {counts['accepted']} accepted, {counts['unresolved']} unresolved of {counts['artifacts_seen']} artifacts; "
        f"{counts['spans_checked']} spans checked over {counts['sources']} sources",
        *_grouped(assembly.findings),
    ]
    warnings = result["diagnostics"]["warnings"]
    if warnings:
        lines.append(f"  {len(warnings)} warning(s): ignored fields and discarded quotes (see result.json)")
    lines.append(f"  wrote {run.result_path}")
    emit(args, result, "\n".join(lines))
    return assembly.exit_status


def _verify(args: argparse.Namespace) -> int:
    from ..gate.pipeline import verify_run

    run, verification = _over_run(args, lambda run, options: verify_run(run, options, gate=args.gate or None))
    report = verification.report
    state = "on" if report["gate"]["enabled"] else "off"
    lines = [f"Verification of {report['run_slug']}: {report['verdict']} (gate {state})"]
    for check in report["checks"]:
        lines.append(f"  {check['status']:<4}  {check['check_id']:<17} {check['detail']}")
    lines += grouped_lines(verification.findings)
    lines.append(f"  wrote {verification.written}")
    if verification.written != run.verification_path:
        lines.append(f"  kept {run.verification_path} as is: another verifier's verdict, an input of the assembly")
    emit(args, {**report, "written": str(verification.written)}, "\n".join(lines))
    return verification.exit_status


def _render(args: argparse.Namespace) -> int:
    from ..gate.inputs import RunOptions
    from ..gate.render import write_report

    run = open_run(args.run_dir)
    path = write_report(run, RunOptions(wiki_root=args.wiki, trusted_keys=_keys(args, run)))
    emit(args, {"run_dir": str(run.path), "report_html": str(path)}, f"Rendered {path}")
    return 0
