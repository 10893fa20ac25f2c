"""A finding's fix is a field set where the finding is made: the site's own ``fix=`` where it names
one, else the fix of its reason code or check, chosen by the enum member at construction. Never
looked up from, or switched off by, the wording of its detail."""

from __future__ import annotations

import pickle
from dataclasses import fields, replace

import pytest

from publisher.kernel.checkids import CheckId
from publisher.kernel.findings import Finding, grouped_lines, typed_fix
from publisher.kernel.reasons import Reason


def test_fix_is_a_field_of_the_finding() -> None:
    assert "fix" in {f.name for f in fields(Finding)}


@pytest.mark.parametrize("reason", list(Reason))
def test_every_reason_code_has_a_typed_fix_chosen_at_construction(reason: Reason) -> None:
    finding = Finding(reason, "runs/a/outputs/report.md", "anything")
    assert finding.fix is not None and finding.fix == typed_fix(reason, None)
    assert finding.__dict__["fix"] == finding.fix  # stored, not computed on each read
    assert finding.to_dict()["fix"] == finding.fix


def test_a_check_without_a_reason_takes_its_checks_fix() -> None:
    for check in (CheckId.EVENT_LOG, CheckId.PAGE_PROSE, CheckId.META, CheckId.SITE_FILE):
        assert Finding(None, "f", "d", check=check).fix == typed_fix(None, check) is not None
    assert Finding(None, "f", "d", check=CheckId.PUBLISH).fix is None
    assert Finding(None, "f", "d").fix is None


def test_the_reason_codes_fix_wins_except_for_checks_that_say_what_to_do() -> None:
    gate = Finding(Reason.NO_SPANS, "f", "d", check=CheckId.GATE)
    assert gate.fix == typed_fix(Reason.NO_SPANS, None) != typed_fix(None, CheckId.GATE)
    promoted = Finding(Reason.SCHEMA_ERROR, "f", "d", check=CheckId.PROMOTED)
    assert promoted.fix == typed_fix(None, CheckId.PROMOTED) != typed_fix(Reason.SCHEMA_ERROR, None)


def test_the_sites_own_fix_wins_over_the_typed_one() -> None:
    own = Finding(Reason.SCHEMA_ERROR, "f", "d", check=CheckId.CONFIG, fix="own")
    assert own.fix == "own" and own.to_dict()["fix"] == "own"
    assert grouped_lines([own], indent="")[1:] == ["  fix: own"]


@pytest.mark.parametrize("detail", ["run 'publisher assemble' first", "bad key; fix: keep to title", ""])
def test_the_detail_never_decides_the_fix(detail: str) -> None:
    """Whatever the detail's words, the fix is the one of the reason code or check."""
    assert Finding(Reason.SPAN_TOO_LONG, "f", detail).fix == typed_fix(Reason.SPAN_TOO_LONG, None)
    assert Finding(None, "f", detail, check=CheckId.CSP).fix == typed_fix(None, CheckId.CSP)


def test_the_fix_survives_pickling_and_replace() -> None:
    """Findings cross process pools pickled: the fix travels as the value it was given."""
    own = Finding(None, "f", "d", check=CheckId.ASSEMBLER, fix="run it")
    typed = Finding(Reason.EXCERPT_MISMATCH, "f", "d", source_id="src-x", start=1, end=2)
    for finding in (own, typed):
        back = pickle.loads(pickle.dumps(finding))
        assert back == finding and back.fix == finding.fix
        assert replace(finding, severity="warn").fix == finding.fix


def test_a_site_that_knows_what_to_do_names_its_own_fix() -> None:
    """An unknown front matter key: the fix lists the keys the theme may render (the site's fix,
    not the check's), and a key with a refused value gets the check's typed fix."""
    from pathlib import Path

    from publisher.site.checks.frontmatter import META_RULES, ThemeMeta, check_meta

    theme = ThemeMeta(frozenset(), (Path("/nonexistent/.icons"),))
    unknown, refused = check_meta({"x-unknown": 1, "hide": 7}, file="docs/p.md", source=None, theme=theme)
    assert (unknown.check, unknown.field, refused.field) == (CheckId.META, "x-unknown", "hide")
    assert unknown.fix is not None and unknown.fix != typed_fix(None, CheckId.META)
    assert all(key in unknown.fix for key in META_RULES)
    assert refused.fix == typed_fix(None, CheckId.META)
