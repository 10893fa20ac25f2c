"""``outputs/report.html``: the report with verified excerpts only.

Rendering first runs the verifier in memory. When ``C-SNAPSHOT`` or ``C-SPAN`` fails it refuses
with an :class:`~publisher.errors.IntegrityError` and writes nothing: a tampered snapshot or a bad
span never reaches a page. Otherwise the Markdown is rendered with raw HTML disabled, and every
claim footnote is replaced by the excerpts re-sliced from the snapshots during this very
verification (an author's quoted excerpt is never shown); an unresolved claim shows its reason
codes instead of any excerpt. The evidence table lists accepted artifacts with their excerpts.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import jinja2
from markdown_it.token import Token
from markupsafe import Markup

from ..kernel import _fs
from ..kernel.errors import IntegrityError
from ..kernel.reasons import Reason
from ..resources import TEMPLATES_DIR
from ..runs import Run
from .reportmd import markdown_parser
from .verify import Verification, verify_run

__all__ = ["render_report", "render_report_body", "write_report", "TEMPLATES_DIR", "BLOCKING_CHECKS"]

"""The repository's top-level ``templates/`` folder."""

BLOCKING_CHECKS = ("C-SNAPSHOT", "C-SPAN")
"""Checks whose failure refuses rendering whatever the gate."""


def _environment() -> jinja2.Environment:
    return jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(TEMPLATES_DIR)),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )


def _refuse_if_broken(verification: Verification) -> None:
    failing = [c for c in verification.report["checks"] if c["check_id"] in BLOCKING_CHECKS and c["status"] == "fail"]
    if not failing:
        return
    blocking = [f for f in verification.report["findings"] if f["check_id"] in {c["check_id"] for c in failing}]
    codes = [f["reason_code"] for f in blocking if f["reason_code"] != Reason.NO_SPANS.value]
    reason = Reason(codes[0]) if codes else Reason.SNAPSHOT_HASH_MISMATCH
    names = ", ".join(f"{c['check_id']} ({c['detail']})" for c in failing)
    raise IntegrityError(
        f"refusing to render: {names}; nothing written", reason=reason, checks=[c["check_id"] for c in failing]
    )


def _macros(env: jinja2.Environment) -> Any:
    """The macros of ``report.html.j2`` (rendered with ``page`` false, so only they are built)."""
    return env.get_template("report.html.j2").make_module({"page": False})


def _body_html(run: Run, verification: Verification, macros: Any) -> str:
    """report.md as HTML, with claim footnotes replaced by verified excerpts or reason codes."""
    try:
        # Fail closed: never a FIFO, folder or device in place of the report (assembly read the
        # same bytes through the same primitive and refused anything else).
        text = _fs.read_regular(run.report_md).decode("utf-8")
    except FileNotFoundError:
        return ""
    except (OSError, UnicodeDecodeError) as exc:
        raise IntegrityError(
            f"{run.report_md}: cannot be read as a UTF-8 file ({exc})", reason=Reason.SCHEMA_ERROR
        ) from exc
    accepted = {a["artifact_id"]: a for a in verification.assembly.result["accepted"]}
    unresolved: dict[str, list[dict[str, Any]]] = {}
    for finding in verification.assembly.findings:
        unresolved.setdefault(finding["artifact_id"], []).append(finding)
    md = markdown_parser()
    out: list[Token] = []
    claim: str | None = None
    for token in md.parse(text):
        if token.type == "footnote_open":
            artifact_id = f"report:{token.meta.get('label')}"
            out.append(token)
            if artifact_id in accepted or artifact_id in unresolved:
                claim = artifact_id
                block = Token("html_block", "", 0)
                block.content = str(macros.claim_footnote(accepted.get(claim), unresolved.get(claim, [])))
                out.append(block)
            continue
        if token.type == "footnote_close":
            claim = None
        elif claim is not None and token.type != "footnote_anchor":
            continue  # the author's footnote text of a claim is never shown
        out.append(token)
    return str(md.renderer.render(out, md.options, {}))


def _fragment(run: Run, verification: Verification, env: jinja2.Environment) -> Markup:
    _refuse_if_broken(verification)
    macros = _macros(env)
    result = verification.assembly.result
    return Markup(
        macros.report_body(
            result,
            verification.report,
            Markup(_body_html(run, verification, macros)),
            result["config"].get("question"),
        )
    )


def render_report_body(
    run: Run,
    *,
    wiki_root: Path | None = None,
    verification: Verification | None = None,
) -> str:
    """The report as an HTML fragment (no ``<html>``/``<head>``), for a page or a wiki site.

    Refuses (IntegrityError) when C-SNAPSHOT or C-SPAN fails.
    """
    verification = verification or verify_run(run, wiki_root=wiki_root, write=False)
    return str(_fragment(run, verification, _environment()))


def render_report(run: Run, *, wiki_root: Path | None = None) -> str:
    """The full report page (HTML). Refuses (IntegrityError) when C-SNAPSHOT or C-SPAN fails."""
    verification = verify_run(run, wiki_root=wiki_root, write=False)
    env = _environment()
    fragment = _fragment(run, verification, env)
    css = (TEMPLATES_DIR / "report.css").read_text(encoding="utf-8")
    page = env.get_template("report.html.j2").render(
        page=True,
        title=f"Evidence report: {verification.assembly.result['run_slug']}",
        fragment=fragment,
        css=Markup(css),
    )
    return page.lstrip()


def write_report(run: Run, *, wiki_root: Path | None = None) -> Path:
    """Render and write ``outputs/report.html`` atomically; nothing is written on refusal."""
    html = render_report(run, wiki_root=wiki_root)
    run.outputs_dir.mkdir(parents=True, exist_ok=True)
    _fs.write_atomic(run.report_html, html.encode("utf-8"))
    return run.report_html
