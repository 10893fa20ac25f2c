"""The wiki check on a Dask cluster from the command line and from the build: ``publisher check
--scheduler ADDRESS`` and ``PUBLISHER_SCHEDULER`` (a LocalCluster stands in); never from the
wiki's own configuration."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from _policy import policy_of
from _wiki_helpers import build_wiki, make_wiki, sample_run, tamper
from conftest import CliResult

from publisher.kernel.errors import UsageError
from publisher.kernel.reasons import Reason
from publisher.parallel.cluster import SCHEDULER_ENV
from publisher.wiki.promote import promote

Cli = Callable[..., CliResult]


@pytest.fixture(scope="module")
def scheduler() -> Iterator[str]:
    distributed = pytest.importorskip("distributed")
    with distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=False, dashboard_address=None
    ) as cluster:
        yield cluster.scheduler_address


def _tasks_run(address: str) -> int:
    import distributed

    with distributed.Client(address, set_as_default=False) as client:
        return int(client.run_on_scheduler(lambda dask_scheduler: len(dask_scheduler.task_prefixes)))


def test_check_on_a_cluster_agrees_with_one_machine(tmp_path: Path, cli: Cli, scheduler: str) -> None:
    wiki = make_wiki(tmp_path / "wiki")
    rb = sample_run(wiki)
    promote(rb.run.path, wiki, policy=policy_of(wiki))
    assert cli("check", "--wiki", wiki, "--scheduler", scheduler).status == 0
    assert _tasks_run(scheduler) > 0  # the snapshots were checked on the cluster
    tamper("snapshot-text", rb)
    here = cli("check", "--wiki", wiki, "--json")
    there = cli("check", "--wiki", wiki, "--scheduler", scheduler, "--json")
    assert here.status == there.status == 1
    assert json.loads(here.out)["findings"] == json.loads(there.out)["findings"]


def test_the_build_runs_its_check_on_the_scheduler_its_environment_names(
    tmp_path: Path, scheduler: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    wiki = make_wiki(tmp_path / "wiki")
    promote(sample_run(wiki).run.path, wiki, policy=policy_of(wiki))
    before = _tasks_run(scheduler)
    monkeypatch.setenv(SCHEDULER_ENV, scheduler)
    build_wiki(wiki)
    assert (wiki / "site" / "index.html").is_file()
    assert _tasks_run(scheduler) >= before


def test_a_wiki_naming_a_scheduler_is_one_schema_error(tmp_path: Path, cli: Cli) -> None:
    # The scheduler decides whose results the check trusts: the wiki cannot choose it.
    wiki = make_wiki(tmp_path / "wiki", extra="extra:\n  evidence:\n    scheduler: tcp://10.0.0.1:8786\n")
    done = cli("check", "--wiki", wiki, "--json")
    assert done.status == 2
    assert json.loads(done.out)["error"]["reason_code"] == "SCHEMA_ERROR"
    with pytest.raises(UsageError) as refused:
        policy_of(wiki)
    assert refused.value.reason is Reason.SCHEMA_ERROR


def test_an_unreachable_scheduler_is_one_line(tmp_path: Path, cli: Cli) -> None:
    pytest.importorskip("distributed")
    wiki = make_wiki(tmp_path / "wiki")
    done = cli("check", "--wiki", wiki, "--scheduler", "tcp://127.0.0.1:9")
    assert done.status == 2 and len(done.err_lines) == 1
