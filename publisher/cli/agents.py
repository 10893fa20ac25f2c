"""``publisher import anthropic``, ``export annotations`` and ``mcp``: where agents meet the wiki."""

from __future__ import annotations

import argparse
from pathlib import Path

from ._common import add_config, add_json, emit, error_line, missing_folder, refusal_lines, wiki_policy


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Add ``import``, ``export`` and ``mcp``."""
    imp = sub.add_parser("import", help="turn an agent API's located citations into an extraction record")
    isub = imp.add_subparsers(dest="import_command", metavar="FORMAT")
    isub.required = True
    p = isub.add_parser(
        "anthropic",
        help="a Messages API response whose text blocks carry citations (char_location, page_location)",
        description="Each citation is re-sliced from the snapshot its document maps to and kept only when "
        "cited_text equals the re-slice; any other is located and reported, never accepted as is. No network.",
    )
    p.add_argument("--run-dir", required=True, type=Path)
    p.add_argument("--response", required=True, type=Path, help="the response JSON, as the API returned it")
    p.add_argument(
        "--document",
        action="append",
        default=[],
        metavar="N=SRC",
        help="document index N of the request is snapshot SRC (repeat for each document)",
    )
    p.add_argument("--evidence-id", help="the paper (pmid:N, doi:X, pmcid:PMCN, web:…); default: the snapshots' ids")
    p.add_argument("--name", help="record file name without .json (default: anthropic-<message id>)")
    add_json(p)
    p.set_defaults(func=_import_anthropic)

    exp = sub.add_parser("export", help="publish the wiki's evidence in formats other tools read")
    esub = exp.add_subparsers(dest="export_command", metavar="FORMAT")
    esub.required = True
    p = esub.add_parser(
        "annotations",
        help="every published excerpt as a W3C Web Annotation (JSON-LD AnnotationCollection)",
    )
    p.add_argument("--wiki", required=True, type=Path, metavar="WIKI")
    p.add_argument("--out", type=Path, help="write the collection here (default: standard output)")
    p.add_argument("--base", help="absolute URI the annotation ids start with (default: urn:uuid ids)")
    p.add_argument(
        "--site",
        metavar="URL",
        help="the published site's address: targets are its source pages (default: the snapshot text's digest)",
    )
    add_config(p)
    p.set_defaults(func=_export_annotations)

    p = sub.add_parser(
        "mcp",
        help="the agents' tool server: the Model Context Protocol on stdio (read, check, review, assess)",
        description="Tools: list_sources, read_source, find_spans, locate_quote, check_span, run_document_review, "
        "validate_evidence_assessment, build_evidence_matrix. None acquires sources, registers text, or writes "
        "snapshots, events, results or missingness records.",
    )
    p.add_argument("--wiki", required=True, type=Path, metavar="WIKI", help="the wiki root (holds mkdocs.yml)")
    p.add_argument("--run-dir", type=Path, metavar="RUN", help="only this run's sources (default: every run)")
    p.add_argument(
        "--key",
        type=Path,
        metavar="FILE",
        help="Ed25519 private key (PEM), one the wiki trusts, that signs the assessments the server writes; "
        "without it, on a wiki that trusts keys, validate_evidence_assessment only proposes and writes nothing",
    )
    p.set_defaults(func=_mcp)


def _import_anthropic(args: argparse.Namespace) -> int:
    from ..gate.citations import import_anthropic, parse_documents
    from ..kernel.text import terminal_safe
    from ..runs import Run

    documents = parse_documents(args.document)
    run = Run.open(args.run_dir)
    outcome = import_anthropic(run, args.response, documents, evidence_id=args.evidence_id, name=args.name)
    summary = outcome.summary(run)
    lines = [
        f"{outcome.kept} of {len(outcome.citations)} citation(s) kept for {outcome.evidence_id}"
        + (f"; {'wrote' if outcome.written else 'unchanged:'} {summary['record']}" if summary["record"] else "")
    ]
    for c in outcome.citations:
        if c.kept:
            lines.append(f"  kept    block {c.block} citation {c.index}: {c.source_id}#{c.start}-{c.end}")
        else:
            code = c.reason.value if c.reason else "?"
            lines.append(
                f"  {code}  block {c.block} citation {c.index}: {terminal_safe(c.detail, keep_newlines=False)}"
            )
            for cand in c.candidates[:5]:
                lines.append(f"      candidate {cand.kind} #{cand.start}-{cand.end}")
    emit(args, summary, "\n".join(lines))
    if not outcome.citations:
        error_line("publisher: error: the response carries no citations")
    return 0 if outcome.ok else 1


def _export_annotations(args: argparse.Namespace) -> int:
    from ..kernel import _fs
    from ..kernel.errors import UsageError
    from ..wiki.annotations import AnnotationsRefused, export_annotations

    if not args.wiki.is_dir():
        raise UsageError(missing_folder(args.wiki, "wiki"))
    if args.out is not None and (args.out.is_dir() or not args.out.parent.is_dir()):
        where = "is a folder" if args.out.is_dir() else "is in no folder that exists"
        raise UsageError(f"--out {args.out} {where}; name the file to write")
    try:
        collection = export_annotations(
            args.wiki, base=args.base, site=args.site, policy=wiki_policy(args.wiki, args.config)
        )
    except AnnotationsRefused as exc:
        refusal_lines(exc.findings, exc.one_line())
        return exc.exit_status
    body = collection.to_bytes()
    if args.out is None:
        import sys

        sys.stdout.write(body.decode("utf-8"))
    else:
        _fs.write_atomic(args.out, body)
        error_line(f"wrote {collection.total} annotation(s) to {args.out}")
    return 0


def _mcp(args: argparse.Namespace) -> int:
    from ..kernel.errors import UsageError
    from ..mcp.server import serve
    from ..runs import Run

    if not (args.wiki / "mkdocs.yml").is_file():
        raise UsageError(f"{args.wiki} is not a wiki (no mkdocs.yml)")
    if args.run_dir is not None:
        Run.open(args.run_dir)
    signer = None
    if args.key is not None:  # only a key the person running the server names: never one found
        from ..kernel.trust import Role, load_signer
        from ..wiki.claims.log import SIGNED_FOR
        from ._common import wiki_policy

        signer = load_signer(args.key, SIGNED_FOR)
        ring = wiki_policy(args.wiki, None).trusted_keys
        if ring and not ring.has_role(signer.key_id, Role.ASSESS):
            raise UsageError(
                f"--key {args.key}: key {signer.key_id[:16]}… is not one this wiki trusts to assess "
                f"({', '.join(ring.shown(k) for k in ring.ids_for(Role.ASSESS)) or 'none'}); the server would "
                "write entries the build refuses"
            )
    serve(args.wiki, args.run_dir, signer)
    return 0
