"""Two builds of the same inputs are byte-identical, whenever and wherever they run.

The second build runs with its clock moved three days and some hours on (``time.time`` and
``datetime``'s ``now``/``today``, through a ``sitecustomize`` module) and in another time zone;
every byte of every file must still be the same, the gzip'd sitemap included. Where a date is
wanted, ``SOURCE_DATE_EPOCH`` is honoured; without it the date comes from the inputs.
"""

from __future__ import annotations

import gzip
import os
import re
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path

import pytest
from _policy import policy_of
from _wiki_helpers import make_wiki, sample_run, tree_digest

from publisher.site.checks.checksite import check_site
from publisher.wiki.promote import promote

pytestmark = pytest.mark.slow

_SHIFTED_CLOCK = """
import datetime as _dt
import time as _time

_SHIFT = 3 * 86400 + 7 * 3600 + 11
_real_time, _real_ns = _time.time, _time.time_ns
_time.time = lambda: _real_time() + _SHIFT
_time.time_ns = lambda: _real_ns() + _SHIFT * 10**9


class _Shifted(_dt.datetime):
    @classmethod
    def now(cls, tz=None):
        return super().now(tz) + _dt.timedelta(seconds=_SHIFT)

    @classmethod
    def utcnow(cls):
        return super().utcnow() + _dt.timedelta(seconds=_SHIFT)

    @classmethod
    def today(cls):
        return cls.now()


class _ShiftedDate(_dt.date):
    @classmethod
    def today(cls):
        return (_dt.datetime.now() + _dt.timedelta(seconds=_SHIFT)).date()


_dt.datetime = _Shifted
_dt.date = _ShiftedDate
"""


def _build(wiki: Path, site: Path, env: dict[str, str]) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "-q", "-f", str(wiki / "mkdocs.yml"), "-d", str(site)],
        cwd=wiki,
        capture_output=True,
        text=True,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1", **env},
        check=False,
    )
    assert done.returncode == 0, done.stderr


@pytest.fixture
def wiki(tmp_path: Path) -> Path:
    root = make_wiki(tmp_path / "wiki", extra="site_url: https://wiki.example.org/\n")
    rb = sample_run(root)
    promote(rb.run.path, root, policy=policy_of(root))
    return root


def test_two_builds_at_different_times_are_byte_identical(
    wiki: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    clock = tmp_path / "clock"
    clock.mkdir()
    (clock / "sitecustomize.py").write_text(_SHIFTED_CLOCK, encoding="utf-8")
    monkeypatch.delenv("SOURCE_DATE_EPOCH", raising=False)
    first, second = tmp_path / "first", tmp_path / "second"
    _build(wiki, first, {})
    path = os.pathsep.join(p for p in (str(clock), os.environ.get("PYTHONPATH", "")) if p)
    shifted = {"PYTHONPATH": path, "TZ": "Pacific/Kiritimati"}
    _build(wiki, second, shifted)
    probe = subprocess.run(
        [sys.executable, "-c", "import time; print(int(time.time()))"],
        env={**os.environ, **shifted},
        capture_output=True,
        text=True,
        check=True,
    )
    assert int(probe.stdout) > datetime.now(UTC).timestamp() + 86400, "the shifted clock did not take"
    assert tree_digest(first) == tree_digest(second)
    assert check_site(first, wiki, policy=policy_of(wiki)).ok and check_site(second, wiki, policy=policy_of(wiki)).ok


def test_source_date_epoch_is_the_date_where_one_is_wanted(wiki: Path, tmp_path: Path) -> None:
    epoch = 1_900_000_000  # 2030-03-17T17:46:40Z
    site = tmp_path / "site"
    _build(wiki, site, {"SOURCE_DATE_EPOCH": str(epoch)})
    sitemap = (site / "sitemap.xml").read_text(encoding="utf-8")
    assert set(re.findall(r"<lastmod>(.*?)</lastmod>", sitemap)) == {"2030-03-17"}
    with gzip.open(site / "sitemap.xml.gz") as handle:
        assert handle.read().decode("utf-8") == sitemap
    mtime = int.from_bytes((site / "sitemap.xml.gz").read_bytes()[4:8], "little")
    assert datetime.fromtimestamp(mtime, UTC).date().isoformat() == "2030-03-17"
    report = next(site.glob("runs/*/report/index.html")).read_text(encoding="utf-8")
    assert "2030-03-17" not in report, "a report page shows when its run was assembled, not a build date"


def test_without_source_date_epoch_dates_come_from_the_inputs(
    wiki: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("SOURCE_DATE_EPOCH", raising=False)
    site = tmp_path / "site"
    _build(wiki, site, {})
    stamps = re.findall(r"promoted_at: '?(\d{4}-\d{2}-\d{2})", (wiki / "concepts" / "alpha.md").read_text())
    dates = set(re.findall(r"<lastmod>(.*?)</lastmod>", (site / "sitemap.xml").read_text(encoding="utf-8")))
    assert dates and dates <= set(stamps) | {"2030-01-02"}
    today = datetime.now(UTC).date().isoformat()
    report = next(site.glob("runs/*/report/index.html")).read_text(encoding="utf-8")
    assert today not in report or today in stamps
