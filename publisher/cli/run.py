"""``publisher run init`` and ``publisher run agent``."""

from __future__ import annotations

import argparse
from pathlib import Path

from ._common import add_config, add_json, emit, open_run, wiki_policy


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Add ``run`` and its sub-commands."""
    run = sub.add_parser("run", help="create and manage run directories")
    run_sub = run.add_subparsers(dest="run_command", metavar="SUBCOMMAND")
    run_sub.required = True
    init = run_sub.add_parser("init", help="create a run directory with its config.json")
    init.add_argument("run_dir", metavar="RUN", help="folder to create (e.g. runs/my-review)")
    init.add_argument("--slug", required=True, help="short name of the run")
    init.add_argument("--gate", action="store_true", help="turn the evidence gate on for this run")
    init.add_argument("--question", help="the review question (one line); the wiki shows it as the concept's title")
    init.add_argument(
        "--from",
        dest="from_run",
        metavar="OLD",
        help="copy OLD's agent records, report and corpus (not its sources or log): fetch the sources "
        "again, with their ids, and assemble",
    )
    add_json(init)
    init.set_defaults(func=_init)

    agent = run_sub.add_parser(
        "agent",
        help="record the agent that wrote a run: a signed agent_run with its trace's digests",
        description="Reads the agent's trace (JSON: requested_model_profile, reported_model_identity, prompt, "
        "answer, tools, retrieval_infrastructure), keeps its texts in RUN/agent/<sha256> and appends a signed "
        "agent_run to RUN/agent_runs.jsonl. Runs sharing a model profile and prompt count as one independent run.",
    )
    agent.add_argument("--run-dir", required=True, metavar="RUN", help="the run directory")
    agent.add_argument("--trace", required=True, type=Path, metavar="FILE", help="the agent's trace (JSON)")
    agent.add_argument("--key", type=Path, metavar="FILE", help="signing key (default: as source fetch finds it)")
    add_config(agent)
    add_json(agent)
    agent.set_defaults(func=_agent)


def _agent(args: argparse.Namespace) -> int:
    from ..acquire.agentrun import read_trace, record_agent_run
    from ..kernel.trust import Role, require_signer
    from ..runs import find_wiki_root

    run = open_run(args.run_dir)
    trace = read_trace(args.trace)  # read and checked before anything is written
    ring = wiki_policy(find_wiki_root(run.path), args.config).trusted_keys
    signer = require_signer(args.key, ring=ring, role=Role.ACQUIRE, run=run.name())
    entry = record_agent_run(run, trace, signer)
    emit(
        args,
        {"ok": True, "agent_run": entry.wire()},
        f"recorded {entry.agent_run_id}: {entry.requested_model_profile}, prompt sha256 {entry.prompt_sha256[:16]}…"
        + (f", signed by key {entry.sig.key_id[:16]}…" if entry.sig else ", unsigned"),
    )
    return 0


def _init(args: argparse.Namespace) -> int:
    from ..runs import Run, init_run, read_workspace, write_workspace

    old = Run.open(args.from_run) if args.from_run is not None else None
    planned = read_workspace(old) if old is not None else []  # read all before creating anything
    run = init_run(args.run_dir, args.slug, gate=args.gate, question=args.question)
    copied = write_workspace(run, planned)
    config = run.load_config()
    question = config.extras().get("question")
    emit(
        args,
        {
            "run_dir": str(run.path),
            "run_slug": config.run_slug,
            "created_at": config.created_at,
            "gate": config.gates.evidence_kernel,
            "question": question,
            "copied": copied,
        },
        f"Initialised run {config.run_slug} in {run.path} (created_at {config.created_at}, "
        f"gate {'on' if config.gates.evidence_kernel else 'off'})"
        + (f"\n  question: {question}" if question else "")
        + (
            f"\n  copied {len(copied)} file(s) from {args.from_run}: fetch its sources again (with --pmid/--doi/"
            "--pmcid), then 'publisher assemble'"
            if old is not None
            else ""
        ),
    )
    return 0
