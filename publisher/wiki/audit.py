"""An independent re-retrieval audit: re-download every cited public URL, compare, change nothing.

For each run of the wiki with a ``result.json``, every snapshot an accepted artifact cites whose
URL is ``http`` or ``https`` is retrieved again (the same no-ambient-authority client as
``source fetch``) and its text derived again by media type. Each source is then

* ``identical`` - the text derived now equals the snapshot's text;
* ``drifted`` - the URL answered, but the text differs (or can no longer be derived);
* ``unreachable`` - no usable answer (transport error, timeout, non-2xx status, too large).

Nothing is written: no snapshot, no event, no raw file. Sources that are not public URLs (a
user-supplied PDF's ``urn:sha256:``, an upstream ``file://``) are listed as skipped. What cannot be
audited at all (a run whose config, result or event log cannot be read, a cited snapshot that does
not verify) is a :class:`~publisher.kernel.findings.Finding` in :attr:`Audit.problems`: the file
relative to the wiki root, the run, the source, and the reason code the library gave. This is the
check a CI job with network access can run nightly: provenance says what was retrieved then; the
audit says whether the world still agrees.
"""

from __future__ import annotations

import hashlib
import shlex
from collections.abc import Callable
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any, Literal

from ..acquire import AcquireError, extract
from ..acquire.http import HttpResult, http_get
from ..kernel import _fs
from ..kernel.canonical import StrictJSONError, loads_strict
from ..kernel.checkids import CheckId
from ..kernel.errors import PublisherError, UsageError
from ..kernel.eventlog import read_log
from ..kernel.findings import Finding
from ..kernel.models import EventType
from ..kernel.text import one_line
from ..runs import Run
from .discover import discover_runs

__all__ = ["AuditEntry", "Audit", "refetch_audit", "STATUSES"]

Status = Literal["identical", "drifted", "unreachable"]
STATUSES: tuple[Status, ...] = ("identical", "drifted", "unreachable")
_PUBLIC = ("http://", "https://")


@dataclass(frozen=True)
class AuditEntry:
    """The audit of one cited source of one run."""

    run: str
    source_id: str
    url: str
    status: Status
    detail: str
    raw_sha256_then: str | None
    """The raw bytes' digest the acquisition receipt recorded (None: no receipt)."""
    raw_sha256_now: str | None
    """The digest of the bytes retrieved by the audit (None: nothing retrieved)."""
    revise: str | None = None
    """For a drifted source: the command (run from the wiki root) that records what the URL serves
    now as a new revision superseding the stored one, in the run that holds it."""


@dataclass
class Audit:
    """Every audited source, the ones skipped (not a public URL) and what could not be audited."""

    entries: list[AuditEntry]
    skipped: list[dict[str, str]]
    problems: list[Finding]

    @property
    def counts(self) -> dict[str, int]:
        """Sources per status."""
        return {status: sum(1 for e in self.entries if e.status == status) for status in STATUSES}

    @property
    def clean(self) -> bool:
        """Every audited source identical, and every run readable."""
        return not self.problems and all(e.status == "identical" for e in self.entries)

    def to_json(self) -> dict[str, Any]:
        """Machine-readable report for ``--json`` (the command adds each problem as a line of text)."""
        return {
            "counts": self.counts,
            "sources": [asdict(e) for e in self.entries],
            "skipped": self.skipped,
            "findings": [f.to_dict() for f in self.problems],
        }


Fetcher = Callable[[str], HttpResult]


def _cited(run: Run) -> list[str]:
    """Source ids the run's ``result.json`` cites in accepted artifacts, in first-cited order."""
    try:
        result = loads_strict(_fs.read_regular(run.result_path))
    except (OSError, ValueError, StrictJSONError) as exc:
        raise UsageError(f"cannot be read ({' '.join(str(exc).split())[:160]})") from exc
    ids: dict[str, None] = {}
    accepted = result.get("accepted") if isinstance(result, dict) else None
    for artifact in accepted if isinstance(accepted, list) else []:
        for sid in artifact.get("source_ids", []) if isinstance(artifact, dict) else []:
            if isinstance(sid, str):
                ids[sid] = None
    return list(ids)


def _receipts(run: Run) -> dict[str, str]:
    """Source id -> raw digest of its latest receipted fetch (what the audit compares bytes with)."""
    out: dict[str, str] = {}
    for event in read_log(run.events_path).events:
        if event.type is EventType.FETCH and event.source_id and event.receipt and event.receipt.raw_sha256:
            out[event.source_id] = event.receipt.raw_sha256
    return out


def _relative(path: Path, root: Path) -> str:
    """``path`` relative to the wiki root (a finding names no path of the machine)."""
    try:
        return path.relative_to(root).as_posix()
    except ValueError:
        return path.name


def _problem(exc: PublisherError, file: str, run: str, check: CheckId | None, source_id: str | None = None) -> Finding:
    """What kept ``file`` of ``run`` from being audited: the library's reason code, else ``check``."""
    detail = one_line(exc.message).removeprefix(f"{file}: ")
    return Finding(exc.reason, file, detail, check=check, run=run, source_id=source_id)


def _first_difference(a: str, b: str) -> int:
    for index, (x, y) in enumerate(zip(a, b, strict=False)):
        if x != y:
            return index
    return min(len(a), len(b))


def refetch_audit(
    wiki_root: Path, *, timeout: float = 30.0, max_bytes: int = 64 * 1024 * 1024, fetcher: Fetcher | None = None
) -> Audit:
    """Re-retrieve every cited public URL of the wiki's runs and compare (see the module docstring)."""
    root = Path(wiki_root)
    if not root.is_dir():
        raise UsageError(f"wiki folder {root} does not exist")
    get: Fetcher = fetcher or (lambda url: http_get(url, timeout=timeout, max_bytes=max_bytes))
    answers: dict[str, HttpResult | AcquireError] = {}
    audit = Audit([], [], [])
    for path in discover_runs(root):
        run = Run(path)
        rel = _relative(path, root)
        reading: tuple[Path, CheckId | None] = (run.config_path, None)
        try:
            slug = run.slug()
            reading = (run.result_path, None)
            cited = _cited(run)
            reading = (run.events_path, CheckId.EVENT_LOG)
            receipts = _receipts(run)
        except PublisherError as exc:
            file, check = reading
            audit.problems.append(_problem(exc, _relative(file, root), rel, check))
            continue
        for sid in cited:
            try:
                snap = run.store.read(sid)
            except PublisherError as exc:
                where = _relative(run.sources_dir / f"{sid}.json", root)
                audit.problems.append(_problem(exc, where, rel, CheckId.SNAPSHOT, source_id=sid))
                continue
            if not snap.url.startswith(_PUBLIC):
                audit.skipped.append({"run": slug, "source_id": sid, "url": snap.url, "why": "not a public URL"})
                continue
            if snap.url not in answers:
                try:
                    answers[snap.url] = get(snap.url)
                except AcquireError as exc:
                    answers[snap.url] = exc
            entry = _compare(slug, sid, snap.url, snap.text, receipts.get(sid), answers[snap.url])
            if entry.status == "drifted":
                command = f"publisher source revise --run-dir {shlex.quote(rel)} --source-id {sid}"
                entry = replace(entry, revise=command)
            audit.entries.append(entry)
    return audit


def _compare(
    slug: str, sid: str, url: str, text: str, then: str | None, answer: HttpResult | AcquireError
) -> AuditEntry:
    if isinstance(answer, AcquireError):
        return AuditEntry(slug, sid, url, "unreachable", answer.one_line(), then, None)
    now = hashlib.sha256(answer.body).hexdigest()
    try:
        derived = extract(answer.body, answer.media_type, answer.charset, url=answer.final_url).text
    except AcquireError as exc:
        return AuditEntry(slug, sid, url, "drifted", f"text can no longer be derived: {exc.one_line()}", then, now)
    bytes_note = "" if then is None else ("; raw bytes identical" if then == now else "; raw bytes differ")
    if answer.final_url != url:
        bytes_note += f"; now served from {answer.final_url[:120]}"
    if derived == text:
        return AuditEntry(slug, sid, url, "identical", f"HTTP {answer.status}; text identical{bytes_note}", then, now)
    at = _first_difference(text, derived)
    detail = f"HTTP {answer.status}; text differs from code point {at} (stored {len(text)}, now {len(derived)} chars)"
    return AuditEntry(slug, sid, url, "drifted", detail + bytes_note, then, now)
