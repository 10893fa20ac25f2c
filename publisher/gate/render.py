"""``outputs/report.html``: the report with verified excerpts only.

Rendering first runs the verifier in memory. When ``C-SNAPSHOT``, ``C-SPAN`` or ``C-PROSE`` fails
it refuses with an :class:`~publisher.errors.IntegrityError` and writes nothing: a tampered
snapshot, a bad span or a quotation in the prose that no cited span verifies never reaches a
page. Otherwise the Markdown is rendered with raw HTML disabled, and every
claim footnote is replaced by the excerpts re-sliced from the snapshots during this very
verification (an author's quoted excerpt is never shown); an unresolved claim shows its reason
codes instead of any excerpt. The evidence table lists accepted artifacts with their excerpts.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import jinja2
from markdown_it.token import Token
from markupsafe import Markup

from ..kernel import _fs
from ..kernel.checkids import CheckId
from ..kernel.errors import IntegrityError
from ..kernel.reasons import Reason
from ..kernel.refs import neutral_text, starts_with_ref
from ..resources import TEMPLATES_DIR
from ..runs import Run
from .checks.runcheck import RunCheck
from .inputs import RunOptions, file_digest
from .pipeline import check_run
from .reportmd import markdown_parser
from .urls import followable

__all__ = [
    "ReportView",
    "render_report",
    "render_report_body",
    "report_prose_html",
    "write_report",
    "TEMPLATES_DIR",
    "BLOCKING_CHECKS",
]

"""The repository's top-level ``templates/`` folder."""

BLOCKING_CHECKS = (CheckId.SNAPSHOT, CheckId.SPAN, CheckId.PROSE)
"""Checks whose failure refuses rendering whatever the gate: a tampered snapshot, a bad span, and
report prose holding a quotation no cited span verifies (a report never renders an unverified
quotation)."""


def _environment() -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(TEMPLATES_DIR)),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )
    env.tests["followable"] = followable
    env.filters["neutral"] = neutral_text  # text from outside: no bidi control, no look of evidence
    return env


@dataclass(frozen=True)
class ReportView:
    """What a rendered report shows, as plain values (it crosses to the build's helper processes).

    ``result`` is the result assembling the run now produces, ``report`` the verification of it
    (:attr:`~publisher.gate.checks.runcheck.RunCheck.report`), ``findings`` the assembly's findings, and
    ``assembled_at`` when the stored ``result.json`` was assembled (no clock of this render).
    """

    result: dict[str, Any]
    report: dict[str, Any]
    findings: list[dict[str, Any]]
    assembled_at: str | None
    markdown: str | None

    @classmethod
    def of(cls, rc: RunCheck) -> ReportView:
        """The view of a checked run; reads ``outputs/report.md`` through the fail-closed reader and
        refuses it unless it is the report the checks read (same digest): what is shown is what
        was checked, even if the file changed in between."""
        digest, data = file_digest(rc.run.report_md)
        if digest != rc.inputs.report_digest:
            raise IntegrityError(
                "outputs/report.md changed after it was checked; nothing rendered (run the command again)",
                path="outputs/report.md",
            )
        result, stored = rc.result, rc.stored  # read once: a packed check decodes on each reading
        stored_at = stored.get("generated_at") if stored else None
        return cls(
            result,
            rc.report_of(result, stored),
            list(result["diagnostics"]["unresolved"]),
            stored_at,
            data.decode("utf-8") if data is not None else None,
        )


def _refuse_if_broken(view: ReportView) -> None:
    checks = view.report["checks"]
    failing = [c for c in checks if c["check_id"] in BLOCKING_CHECKS and c["status"] == "fail"]
    if not failing:
        return
    blocking = [f for f in view.report["findings"] if f["check_id"] in {c["check_id"] for c in failing}]
    codes = [f["reason_code"] for f in blocking if f["reason_code"] not in (None, Reason.NO_SPANS.value)]
    reason = Reason(codes[0]) if codes else Reason.SNAPSHOT_HASH_MISMATCH
    names = ", ".join(f"{c['check_id']} ({c['detail']})" for c in failing)
    raise IntegrityError(
        f"refusing to render: {names}; nothing written", reason=reason, checks=[c["check_id"] for c in failing]
    )


def _macros(env: jinja2.Environment) -> Any:
    """The macros of ``report.html.j2`` (rendered with ``page`` false, so only they are built)."""
    return env.get_template("report.html.j2").make_module({"page": False})


def _body_html(view: ReportView, macros: Any, links: Mapping[str, str], contexts: Mapping[str, Any]) -> str:
    """report.md as HTML, with claim footnotes replaced by verified excerpts or reason codes.

    Headings go one level down: the page that shows the report has its own title.
    """
    if view.markdown is None:
        return ""
    accepted = {a["artifact_id"]: a for a in view.result["accepted"]}
    unresolved: dict[str, list[dict[str, Any]]] = {}
    for finding in view.findings:
        unresolved.setdefault(finding["artifact_id"], []).append(finding)
    md = markdown_parser()
    out: list[Token] = []
    claim: str | None = None
    for token in md.parse(view.markdown):
        if token.type == "footnote_open":
            artifact_id = f"report:{token.meta.get('label')}"
            out.append(token)
            if artifact_id in accepted or artifact_id in unresolved:
                claim = artifact_id
                block = Token("html_block", "", 0)
                found = unresolved.get(claim, [])
                block.content = str(macros.claim_footnote(accepted.get(claim), found, links, contexts))
                out.append(block)
            continue
        if token.type in ("heading_open", "heading_close"):
            token.tag = f"h{min(int(token.tag[1:]) + 1, 6)}"
        if token.type == "footnote_close":
            claim = None
        elif claim is not None and token.type != "footnote_anchor":
            continue  # the author's footnote text of a claim is never shown
        out.append(token)
    return str(md.renderer.render(out, md.options, {}))


def report_prose_html(markdown: str) -> str:
    """The author's prose of a report as the report renderer makes it (raw HTML off, footnotes
    on): what the site's prose allow-list judges. The body of a footnote that cites through a
    span reference is left out: the page never shows it (verified excerpts stand in its place)."""
    md = markdown_parser()
    out: list[Token] = []
    group: list[Token] | None = None
    for token in md.parse(markdown):
        if token.type == "footnote_open":
            group = [token]
            continue
        if group is not None:
            group.append(token)
            if token.type == "footnote_close":
                first = next((t.content for t in group if t.type == "inline"), "")
                out += [group[0], group[-1]] if starts_with_ref(first) else group
                group = None
            continue
        out.append(token)
    return str(md.renderer.render(out, md.options, {}))


def _fragment(
    view: ReportView,
    env: jinja2.Environment,
    links: Mapping[str, str] | None = None,
    contexts: Mapping[str, Any] | None = None,
) -> Markup:
    _refuse_if_broken(view)
    macros = _macros(env)
    result = view.result
    return Markup(
        macros.report_body(
            result,
            view.report,
            Markup(_body_html(view, macros, links or {}, contexts or {})),
            result["config"].get("question"),
            view.assembled_at,
            links or {},
            contexts or {},
        )
    )


def render_report_body(
    view: ReportView,
    source_links: Mapping[str, str] | None = None,
    contexts: Mapping[str, tuple[str, str, bool, bool]] | None = None,
) -> str:
    """The report as an HTML fragment (no ``<html>``/``<head>``), for a page or a wiki site.

    ``source_links`` maps source ids to the page showing each source (a wiki's source pages):
    an excerpt's "source" link then lands on its highlight there; without, it is the origin URL.
    ``contexts`` maps ``source_id#start-end`` to the rest of each excerpt's sentence (before,
    after, and whether each was shortened), shown around the excerpt outside its element.
    Refuses (IntegrityError) when C-SNAPSHOT, C-SPAN or C-PROSE fails.
    """
    return str(_fragment(view, _environment(), source_links, contexts))


def render_report(run: Run, options: RunOptions) -> str:
    """The full report page (HTML). Refuses (IntegrityError) when C-SNAPSHOT, C-SPAN or C-PROSE fails."""
    view = ReportView.of(check_run(run, options))
    env = _environment()
    fragment = _fragment(view, env)
    css = (TEMPLATES_DIR / "report.css").read_text(encoding="utf-8")
    page = env.get_template("report.html.j2").render(
        page=True,
        title=f"Evidence report: {view.result['run_slug']}",
        fragment=fragment,
        css=Markup(css),
    )
    return page.lstrip()


def write_report(run: Run, options: RunOptions) -> Path:
    """Render and write ``outputs/report.html`` atomically; nothing is written on refusal."""
    html = render_report(run, options)
    _fs.own_folder(run.outputs_dir)
    _fs.write_atomic(run.report_html, html.encode("utf-8"))
    return run.report_html
