"""Shared fixtures: the corpus beside the repository, a CLI runner, runs and records.

The real corpus lives in the ``shared`` folder beside the repository; tests that need it skip
with a clear message when it is absent, so the suite still runs from a bare checkout.
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from publisher.kernel.store import build_record
from publisher.runs import Run, init_run

SHARED = Path(__file__).resolve().parents[2] / "shared"


@pytest.fixture(scope="session")
def shared_dir() -> Path:
    """The ``shared`` folder beside the repository (skips when absent)."""
    if not SHARED.is_dir():
        pytest.skip(f"../shared not present: expected {SHARED}")
    return SHARED


@pytest.fixture(scope="session")
def corpus_dir(shared_dir: Path) -> Path:
    """``../shared/corpus`` (skips when absent)."""
    corpus = shared_dir / "corpus"
    if not (corpus / "evidence-inference" / "texts").is_dir():
        pytest.skip(f"../shared/corpus not present: expected {corpus}/evidence-inference/texts")
    return corpus


@pytest.fixture(autouse=True)
def _user_config(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """Keys that ``publisher new`` keeps in the user's configuration folder go to a temporary one,
    never to the real ``~/.config`` of whoever runs the tests. Set apart from the test's own
    ``monkeypatch``, so that a test undoing its patches midway keeps it."""
    with pytest.MonkeyPatch.context() as patched:
        patched.setenv("XDG_CONFIG_HOME", str(tmp_path_factory.getbasetemp() / "user-config"))
        yield


@dataclass
class CliResult:
    """What one ``publisher`` invocation produced."""

    status: int
    out: str
    err: str

    def json(self) -> Any:
        return json.loads(self.out)

    @property
    def err_lines(self) -> list[str]:
        return [line for line in self.err.splitlines() if line.strip()]


@pytest.fixture
def cli(capsys: pytest.CaptureFixture[str]) -> Callable[..., CliResult]:
    """Run ``publisher.cli.main(argv)`` in-process; argparse exits are caught as statuses."""
    from publisher.cli import main

    def invoke(*argv: str | os.PathLike[str]) -> CliResult:
        capsys.readouterr()
        try:
            status = main([str(a) for a in argv])
        except SystemExit as exc:
            status = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 2)
        captured = capsys.readouterr()
        return CliResult(status, captured.out, captured.err)

    return invoke


@pytest.fixture
def run(tmp_path: Path) -> Run:
    """A freshly initialised run directory."""
    return init_run(tmp_path / "run", "test-run")


def make_record(
    *,
    url: str = "https://example.org/paper",
    text: str = "Background. The trial randomised 120 children.\nResults: SMD -0.41.",
    title: str | None = "A trial",
    retrieved_at: str = "2026-01-02T03:04:05Z",
    access: str = "full_text",
    origin: str = "pmc",
    paper: dict[str, str | None] | None = None,
    asset: dict[str, Any] | None = None,
    sections: list[dict[str, Any]] | None = None,
    pages: list[dict[str, Any]] | None = None,
    identity: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """A sealed snapshot record with sensible defaults."""
    if paper is None:
        paper = {"pmid": "12345678", "doi": "10.1000/example", "pmcid": "PMC123"}
    return build_record(
        url=url,
        text=text,
        title=title,
        retrieved_at=retrieved_at,
        access=access,
        origin=origin,
        paper=paper,
        asset=asset,
        sections=sections,
        pages=pages,
        identity=identity,
    )


@pytest.fixture
def record_factory() -> Callable[..., dict[str, Any]]:
    """:func:`make_record` as a fixture."""
    return make_record


def _pdf_escape(text: str) -> str:
    return text.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)")


def minimal_pdf(pages: list[str]) -> bytes:
    """A small, valid PDF built by hand: one line of Helvetica text per page."""
    objects: list[bytes] = []
    n_pages = len(pages)
    font_num = 3 + 2 * n_pages
    kids = " ".join(f"{3 + 2 * i} 0 R" for i in range(n_pages))
    objects.append(b"<< /Type /Catalog /Pages 2 0 R >>")
    objects.append(f"<< /Type /Pages /Kids [{kids}] /Count {n_pages} >>".encode())
    for i, line in enumerate(pages):
        content = f"BT /F1 12 Tf 72 720 Td ({_pdf_escape(line)}) Tj ET".encode("latin-1")
        objects.append(
            f"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents {4 + 2 * i} 0 R "
            f"/Resources << /Font << /F1 {font_num} 0 R >> >> >>".encode()
        )
        objects.append(b"<< /Length %d >>\nstream\n" % len(content) + content + b"\nendstream")
    objects.append(b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>")
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += f"{number} 0 obj\n".encode() + body + b"\nendobj\n"
    xref = len(out)
    out += f"xref\n0 {len(objects) + 1}\n0000000000 65535 f \n".encode()
    for offset in offsets:
        out += f"{offset:010d} 00000 n \n".encode()
    out += f"trailer\n<< /Size {len(objects) + 1} /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n".encode()
    return bytes(out)


@pytest.fixture
def pdf_factory() -> Callable[[list[str]], bytes]:
    """:func:`minimal_pdf` as a fixture."""
    return minimal_pdf


@pytest.fixture
def no_proxy(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Keep proxies out of loopback HTTP tests."""
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("NO_PROXY", "*")
    yield


# In CI the corpus and the browser are present: a test that would skip for lack of them must fail
# instead, so a broken install step can never pass as "skipped".
_REQUIRED = (
    ("PUBLISHER_REQUIRE_CORPUS", ("../shared", "corpus")),
    ("PUBLISHER_REQUIRE_BROWSER", ("chromium", "playwright", "browser")),
)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]):  # type: ignore[no-untyped-def]
    outcome = yield
    report = outcome.get_result()
    if not report.skipped or not isinstance(report.longrepr, tuple):
        return
    message = str(report.longrepr[2]).lower()
    for variable, words in _REQUIRED:
        if os.environ.get(variable) and any(word in message for word in words):
            report.outcome = "failed"
            report.longrepr = f"{variable} is set but the test skipped: {report.longrepr[2]}"


@pytest.fixture
def mkdocs_log() -> Iterator[list[str]]:
    """Messages logged under ``mkdocs`` during the test."""
    messages: list[str] = []

    class _Keep(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            messages.append(record.getMessage())

    handler = _Keep(level=logging.INFO)
    logger = logging.getLogger("mkdocs")
    level = logger.level
    logger.setLevel(logging.INFO)
    logger.addHandler(handler)
    try:
        yield messages
    finally:
        logger.removeHandler(handler)
        logger.setLevel(level)
