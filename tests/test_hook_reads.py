"""A hooked build reads each snapshot file once for verification: report pages re-assemble their
run from the preflight's checks instead of verifying the snapshots again."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest
from _policy import policy_of
from _wiki_helpers import build_wiki, make_wiki, sample_run

from publisher.kernel import snapshots as checks
from publisher.kernel import store
from publisher.parallel import SnapshotCheck
from publisher.site.checks.manifest import MANIFEST_NAME
from publisher.site.checks.scan import scan_page
from publisher.site.lifecycle import workers as helper_module
from publisher.site.pages import context, highlight
from publisher.wiki.promote import promote


def test_build_verifies_each_snapshot_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    wiki = make_wiki(tmp_path / "wiki")
    rb = sample_run(wiki)
    promote(rb.run.path, wiki, policy=policy_of(wiki))
    checked: Counter[str] = Counter()
    texts: Counter[str] = Counter()
    check_one, read, read_view = checks.check_snapshot, store.read_snapshot, store.read_view

    def counting_check(task: tuple[str, str, object], assets_root: str | None = None) -> SnapshotCheck:
        checked[task[1]] += 1
        return check_one(task, assets_root)  # type: ignore[arg-type]

    def counting_read(folder: Path | str, source_id: str, *args: object):  # type: ignore[no-untyped-def]
        texts[source_id] += 1
        return read(folder, source_id, *args)  # type: ignore[arg-type]

    def counting_view(folder: Path | str, source_id: str, *args: object):  # type: ignore[no-untyped-def]
        texts[source_id] += 1
        return read_view(folder, source_id, *args)  # type: ignore[arg-type]

    # Every snapshot read goes through store.read_snapshot (SnapshotStore.read, the pages) or
    # store.read_view (the batch's checks).
    monkeypatch.setattr(checks, "check_snapshot", counting_check)
    monkeypatch.setattr(store, "read_snapshot", counting_read)
    monkeypatch.setattr(store, "read_view", counting_view)
    monkeypatch.setattr(checks, "read_view", counting_view)
    monkeypatch.setattr(highlight, "read_snapshot", counting_read)
    monkeypatch.setattr(context, "read_snapshot", counting_read)
    # Counted in this process: no helper process renders source texts or reports here.
    monkeypatch.setattr(helper_module, "helper_pool", lambda workers=1: None)
    build_wiki(wiki)
    site = wiki / "site"
    assert (site / MANIFEST_NAME).is_file()
    report = (site / "runs" / rb.run.slug() / "report" / "index.html").read_text(encoding="utf-8")
    assert scan_page(report).excerpts, "the report page shows its excerpts"
    assert checked and set(checked.values()) == {1}, checked
    # Beyond the verification pass (whose checks read through the store), the source page reads
    # a snapshot again (its text is what the page shows), and so does the sentence context of the
    # excerpts a concept quotes (once per source, re-verified against the check's digest).
    assert texts == checked + Counter(set(checked)) + Counter(set(checked)), texts
