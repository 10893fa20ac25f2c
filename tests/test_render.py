"""report.html shows verified excerpts only and refuses to render tampered evidence."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from _gate_helpers import make_run, write_json
from _policy import options_of

from publisher.gate.assemble import assemble_run
from publisher.gate.pipeline import check_run
from publisher.gate.render import ReportView, render_report, render_report_body, write_report
from publisher.kernel.errors import IntegrityError
from publisher.kernel.reasons import Reason
from publisher.kernel.refs import format_ref


def test_report_shows_re_sliced_excerpts_and_no_author_text(tmp_path: Path) -> None:
    fx = make_run(tmp_path, articles=1)
    article = fx.articles[0]
    span = article.spans[0]
    outside = fx.add_snapshot("A page that backs no record of the run, cited anyway.", url="https://example.org/o")
    fx.report.write_text(
        fx.report.read_text().replace(
            format_ref(article.source_id, span["start"], span["end"], span["excerpt"]),
            format_ref(article.source_id, span["start"], span["end"]) + " AUTHOR COMMENTARY",
        )
        + "Outside claim.[^out]\n\n[^out]: "
        + format_ref(outside.source_id, 0, 20, outside.text[:20])
        + "\n"
    )
    assemble_run(fx.run, options_of(fx.run))
    html = write_report(fx.run, options_of(fx.run)).read_text(encoding="utf-8")
    assert html.startswith("<!DOCTYPE html>")
    assert "AUTHOR COMMENTARY" not in html
    footnotes = html.split('class="footnotes"')[1]
    assert article.text[span["start"] : span["end"]].replace("<", "&lt;") in footnotes
    assert "SOURCE_OUTSIDE_ACCEPTED" in footnotes and outside.text[:20] not in footnotes


def test_raw_html_in_the_report_is_escaped(tmp_path: Path) -> None:
    fx = make_run(tmp_path, articles=1)
    fx.report.write_text("<script>alert(1)</script>\n\n" + fx.report.read_text())
    assemble_run(fx.run, options_of(fx.run))
    html = render_report(fx.run, options_of(fx.run))
    assert "<script>" not in html and "&lt;script&gt;" in html


def test_body_fragment_has_no_page_wrapper(tmp_path: Path) -> None:
    fx = make_run(tmp_path, articles=1)
    assemble_run(fx.run, options_of(fx.run))
    body = render_report_body(ReportView.of(check_run(fx.run, options_of(fx.run))))
    assert "<html" not in body and "<head>" not in body
    assert 'class="evidence-report"' in body and "Verified" in body


def test_render_refuses_a_tampered_snapshot_and_writes_nothing(tmp_path: Path) -> None:
    fx = make_run(tmp_path, articles=2)
    assemble_run(fx.run, options_of(fx.run))
    path = fx.snapshot_file(0)
    raw = json.loads(path.read_bytes())
    raw["text"] = raw["text"][:-1] + "!"
    write_json(path, raw)
    with pytest.raises(IntegrityError) as caught:
        write_report(fx.run, options_of(fx.run))
    assert caught.value.reason is Reason.SNAPSHOT_HASH_MISMATCH
    assert not fx.run.report_html.exists()


def test_render_refuses_a_bad_span_and_keeps_the_previous_report(tmp_path: Path) -> None:
    fx = make_run(tmp_path, articles=1)
    assemble_run(fx.run, options_of(fx.run))
    write_report(fx.run, options_of(fx.run))
    before = fx.run.report_html.read_bytes()
    record = fx.extraction(0)
    record["spans"][0]["start"] = -3
    fx.put_extraction(0, record)
    with pytest.raises(IntegrityError) as caught:
        write_report(fx.run, options_of(fx.run))
    assert caught.value.reason is Reason.SPAN_OUT_OF_RANGE
    assert fx.run.report_html.read_bytes() == before


def test_render_refuses_an_unverified_quotation_and_writes_nothing(tmp_path: Path, cli: object) -> None:
    """C-PROSE blocks report.html like C-SPAN: a blockquote no cited span verifies is never rendered,
    an existing report.html is left as it was, and the command exits 1 naming the check."""
    fx = make_run(tmp_path, articles=1)
    assemble_run(fx.run, options_of(fx.run))
    invented = "\n> No harm was found in any of the trials this review could find anywhere.\n"
    fx.report.write_text(fx.report.read_text() + invented)
    assemble_run(fx.run, options_of(fx.run))
    assert check_run(fx.run, options_of(fx.run)).status("C-PROSE") == "fail"
    with pytest.raises(IntegrityError) as caught:
        write_report(fx.run, options_of(fx.run))
    assert caught.value.reason is Reason.EXCERPT_MISMATCH
    assert caught.value.context["checks"] == ["C-PROSE"]
    assert not fx.run.report_html.exists()
    out = cli("render", "--run-dir", fx.run.path, "--json")  # type: ignore[operator]
    assert out.status == 1 and not fx.run.report_html.exists()
    # An earlier report.html stays byte for byte.
    fx.run.report_html.parent.mkdir(parents=True, exist_ok=True)
    fx.run.report_html.write_bytes(b"<!DOCTYPE html>earlier")
    with pytest.raises(IntegrityError):
        write_report(fx.run, options_of(fx.run))
    assert fx.run.report_html.read_bytes() == b"<!DOCTYPE html>earlier"
