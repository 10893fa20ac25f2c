"""``publisher check-site``: a built site re-read, byte for byte, and compared with its seal.

Every file must be the one the manifest lists (same SHA-256 and size), with none missing and
none added (check ``C-SITE-FILE``): that alone catches any edit after the build, to a page, the
stylesheets, ``verify.js`` or a snapshot record. The manifest's own digest names the whole site;
``--expect sha256:…`` compares it with a pinned one (check ``C-SITE-PIN``), e.g. the digest of
a site rebuilt from the same inputs. Independently of the manifest, every page is read as a
browser reads it (:mod:`publisher.site.checks.scan`) and every excerpt, snapshot text and window is
held by the build's own seal (:func:`publisher.site.checks.seal.check_evidence`) to a fresh
re-slice of the wiki's snapshots (:class:`Reslice`); every script of every page must be one the
site ships (:func:`publisher.site.checks.seal.check_scripts`), and every page must carry the
Content-Security-Policy that its own inline scripts call for (check ``C-CSP``).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

from ...kernel import _fs
from ...kernel.canonical import StrictJSONError, loads_strict, sha256_hex
from ...kernel.checkids import CheckId
from ...kernel.errors import PublisherError
from ...kernel.findings import Finding
from ...kernel.reasons import Reason
from ...kernel.spans import check_range
from ...wiki.policy import Policy
from ..pages.context import context_around
from . import csp
from .checkrecords import WikiTexts, check_records, check_site_proofs
from .manifest import MANIFEST_NAME, MANIFEST_VERSION, SITE_FILE_LIMIT, manifest_digest, manifest_problem, site_tree
from .scan import Excerpt, PageScan, scan_page
from .seal import Refusal, check_evidence, check_scripts

__all__ = ["SiteCheck", "Reslice", "check_site", "FILE_CHECK", "PIN_CHECK", "CSP_CHECK"]

FILE_CHECK = CheckId.SITE_FILE
PIN_CHECK = CheckId.SITE_PIN
CSP_CHECK = CheckId.CSP


@dataclass
class SiteCheck:
    """Outcome of ``check-site``: findings, the manifest's digest, and how much was checked."""

    findings: list[Finding] = field(default_factory=list)
    manifest_digest: str | None = None
    files: int = 0
    pages: int = 0
    excerpts: int = 0
    snapshots: int = 0
    windows: int = 0
    records: int = 0
    pinned: bool = False
    """Whether the manifest's digest was compared with one the caller trusts (``expect``); when
    not, the check trusts the manifest it found: a site re-sealed after an edit passes."""

    @property
    def ok(self) -> bool:
        return not self.findings

    @property
    def trust(self) -> str:
        """What the check's verdict rests on, in one line for people and machines alike."""
        if self.pinned:
            return "the manifest's digest compared with the pinned one (--expect)"
        return (
            "the manifest found in the site, not pinned: a site re-sealed after an edit passes; "
            "compare the manifest digest with one you trust, or pass --expect"
        )

    def summary(self) -> dict[str, Any]:
        return {
            "ok": self.ok,
            "manifest_sha256": self.manifest_digest,
            "manifest_pinned": self.pinned,
            "trust": self.trust,
            "files": self.files,
            "pages": self.pages,
            "excerpts": self.excerpts,
            "snapshots": self.snapshots,
            "windows": self.windows,
            "records": self.records,
            "findings": [f.to_dict() for f in self.findings],
        }


def _load_manifest(site: Path, check: SiteCheck) -> dict[str, Any] | None:
    out = check.findings
    path = site / MANIFEST_NAME
    try:
        data = _fs.read_regular(path, follow_symlinks=False, limit=SITE_FILE_LIMIT)
    except FileNotFoundError:
        out.append(
            Finding(Reason.SCHEMA_ERROR, MANIFEST_NAME, "no evidence manifest: the site was not built by the hook")
        )
        return None
    except OSError as exc:
        out.append(Finding(Reason.SCHEMA_ERROR, MANIFEST_NAME, f"unreadable manifest ({exc})"))
        return None
    check.manifest_digest = manifest_digest(data)
    try:
        raw = loads_strict(data)
    except (StrictJSONError, ValueError) as exc:
        out.append(Finding(Reason.SCHEMA_ERROR, MANIFEST_NAME, f"unreadable manifest ({exc})"))
        return None
    if isinstance(raw, dict) and raw.get("schema_version") != MANIFEST_VERSION:
        detail = f"manifest version {raw.get('schema_version')!r}, not {MANIFEST_VERSION}: rebuild the site"
        out.append(Finding(Reason.SCHEMA_ERROR, MANIFEST_NAME, detail))
        return None
    problem = manifest_problem(raw)
    if problem is not None:
        out.append(Finding(Reason.SCHEMA_ERROR, MANIFEST_NAME, f"manifest does not have the expected shape: {problem}"))
        return None
    return raw if isinstance(raw, dict) else None


def _entry_key(e: dict[str, Any]) -> tuple[Any, ...]:
    return (e.get("source_id"), e.get("start"), e.get("end"), e.get("sha256"))


def _by_page(entries: list[dict[str, Any]], key: Any) -> dict[str, Counter[tuple[Any, ...]]]:
    out: dict[str, Counter[tuple[Any, ...]]] = {}
    for entry in entries:
        out.setdefault(entry["page"], Counter())[key(entry)] += 1
    return out


def check_site(site_dir: Path | str, wiki_root: Path | str, *, policy: Policy, expect: str | None = None) -> SiteCheck:
    """Re-read a built site, every file byte for byte, and compare it with the seal and the snapshots.

    Findings: a missing or malformed manifest (SCHEMA_ERROR); a file missing, added, changed, or
    not a regular file (``C-SITE-FILE``); a manifest digest other than ``expect``
    (``C-SITE-PIN``); a page without the policy its inline scripts call for (``C-CSP``); an
    element that looks like evidence and is not sealed, a sealed element missing from its page,
    markup inside an excerpt, text that differs from the re-slice, or a highlight off its
    offsets (EXCERPT_MISMATCH); a snapshot that no longer verifies, or a published
    ``record.json`` that is missing, differs from the stored snapshot file or does not verify
    (SNAPSHOT_HASH_MISMATCH); a snapshot that is gone (UNKNOWN_SOURCE); offsets outside the text
    (SPAN_OUT_OF_RANGE / SPAN_TOO_LONG).
    """
    site = Path(site_dir)
    check = SiteCheck()
    add = check.findings.append
    manifest = _load_manifest(site, check)
    if manifest is None:
        return check
    check.pinned = expect is not None
    if expect is not None and check.manifest_digest != expect:
        detail = f"manifest digest {check.manifest_digest} is not the expected {expect}"
        add(Finding(None, MANIFEST_NAME, detail, check=PIN_CHECK))
    texts = WikiTexts(Path(wiki_root))
    seal = _Seal(manifest)
    listed: dict[str, dict[str, Any]] = {}
    for e in manifest["files"]:
        if e["path"] in listed or e["path"] == MANIFEST_NAME:
            add(Finding(None, e["path"], "listed more than once in the manifest", check=FILE_CHECK))
        listed.setdefault(e["path"], e)
    records = Counter(e["source_id"] for e in manifest["records"])
    for sid in sorted(sid for sid, n in records.items() if n > 1):
        add(Finding(None, MANIFEST_NAME, f"the record of {sid} is listed more than once", check=FILE_CHECK))
    names, odd, folders = site_tree(site)
    for rel in odd:
        add(Finding(None, rel, "not a regular file", check=FILE_CHECK))
    holding = {parent.as_posix() for rel in names for parent in PurePosixPath(rel).parents}
    for rel in folders:
        if rel not in holding:
            add(Finding(None, rel + "/", "a folder that holds no listed file: added after the build", check=FILE_CHECK))
    for rel in sorted(set(listed) - set(names) - set(odd)):
        add(Finding(None, rel, "listed in the manifest but missing from the site", check=FILE_CHECK))
    for page in sorted(seal.pages() - set(names)):
        add(Finding(Reason.EXCERPT_MISMATCH, page, "sealed page is missing from the site"))
    for rel in names:
        try:
            data = _fs.read_regular(site / rel, follow_symlinks=False, limit=SITE_FILE_LIMIT)
        except OSError as exc:
            add(Finding(None, rel, f"unreadable ({exc.strerror or exc})", check=FILE_CHECK))
            continue
        check.files += 1
        entry = listed.get(rel)
        if entry is None:
            add(Finding(None, rel, "not in the manifest: added after the build", check=FILE_CHECK))
        elif entry["size"] != len(data) or entry["sha256"] != sha256_hex(data):
            add(Finding(None, rel, "differs from the manifest: changed after the build", check=FILE_CHECK))
        if rel.endswith(".html"):
            _check_page(rel, data, seal, texts, check)
    found, count = check_records(site, manifest, texts)
    check.findings += found
    check.records += count
    check.findings += check_site_proofs(site, manifest, texts, policy.trusted_keys)
    return check


class _Seal:
    """The manifest's sealed elements, page by page."""

    def __init__(self, manifest: dict[str, Any]) -> None:
        self.excerpts = _by_page(manifest["excerpts"], _entry_key)
        self.snapshots = _by_page(manifest["snapshots"], lambda e: (e.get("source_id"), e.get("sha256")))
        self.windows = _by_page(manifest["windows"], _entry_key)

    def pages(self) -> set[str]:
        return set(self.excerpts) | set(self.snapshots) | set(self.windows)


def _check_page(page: str, data: bytes, seal: _Seal, texts: WikiTexts, check: SiteCheck) -> None:
    """One page read as a browser reads it: its policy, and every evidence element against the seal."""
    add = check.findings.append
    try:
        page_html = data.decode("utf-8")
    except UnicodeDecodeError:
        add(Finding(Reason.EXCERPT_MISMATCH, page, "the page is not UTF-8, as its charset declares"))
        return
    scan = scan_page(page_html)
    _check_policy(page, scan, add)
    sealed = page in seal.pages()
    if not (scan.excerpts or scan.snapshots or scan.windows or scan.malformed or sealed):
        return
    check.pages += 1
    check.findings += check_evidence(scan, page, Reslice(texts)).findings
    found: Counter[tuple[Any, ...]] = Counter()
    for ex in scan.excerpts:
        check.excerpts += 1
        found[(ex.source_id, ex.start, ex.end, ex.sha256)] += 1
        _check_context(page, ex, texts, add)
    _compare_seal(found, seal.excerpts.get(page, Counter()), page, "excerpt", add)
    snaps: Counter[tuple[Any, ...]] = Counter()
    for block in scan.snapshots:
        check.snapshots += 1
        snaps[(block.source_id, sha256_hex(block.text.encode("utf-8")))] += 1
    if snaps != seal.snapshots.get(page, Counter()):
        add(Finding(Reason.EXCERPT_MISMATCH, page, "snapshot text on the page differs from the seal"))
    windows: Counter[tuple[Any, ...]] = Counter()
    for block in scan.windows:
        check.windows += 1
        digest = sha256_hex(block.text.encode("utf-8"))
        windows[(block.source_id, block.window_start, block.window_end, digest)] += 1
    _compare_seal(windows, seal.windows.get(page, Counter()), page, "window", add)


def _check_context(page: str, ex: Excerpt, texts: WikiTexts, add: Any) -> None:
    """The sentence context shown beside an excerpt is the rest of its sentence in the verified
    text, as the build derives it (EXCERPT_MISMATCH): edited, it could drop a "No" the excerpt
    was cut from. An excerpt shown without one has nothing to compare (an excerpt that does not
    verify is reported by the seal)."""
    if (ex.before is None and ex.after is None) or ex.start is None or ex.end is None:
        return
    try:
        text = texts.get(ex.source_id)
        if not 0 <= ex.start < ex.end <= len(text):
            return
        shown = context_around(texts.sentences(ex.source_id), text, ex.start, ex.end).shown()
    except PublisherError:
        return
    # HTML cannot carry a NUL: the templates write it as "&#0;", which every parser reads as U+FFFD.
    want = tuple(side.replace("\x00", "\ufffd") for side in shown)
    if (ex.before or "", ex.after or "") != want:
        detail = "the sentence context beside the excerpt differs from the verified text"
        add(Finding(Reason.EXCERPT_MISMATCH, page, detail, source_id=ex.source_id, start=ex.start, end=ex.end))


def _check_policy(page: str, scan: PageScan, add: Any) -> None:
    """The page's scripts are those the site ships, and it carries one Content-Security-Policy:
    the one its own inline scripts and styles call for."""
    for finding in check_scripts(scan, page):
        add(finding)
    wanted = csp.policies(scan.scripts, scan.styles, scan.policies[0] if scan.policies else None)
    if len(scan.policies) != 1 or scan.policies[0] not in wanted:
        detail = (
            f"{len(scan.policies)} Content-Security-Policy element(s), expected the one the page's scripts call for"
        )
        add(Finding(None, page, detail, check=CSP_CHECK))


def _compare_seal(
    found: Counter[tuple[Any, ...]], sealed: Counter[tuple[Any, ...]], page: str, what: str, add: Any
) -> None:
    """One finding per element on the page but not in the seal, and per sealed one not on the page."""
    extra, missing = found - sealed, sealed - found
    for detail, keys in ((f"{what} not in the seal", extra), (f"sealed {what} not on the page", missing)):
        for sid, start, end, _ in keys:
            add(Finding(Reason.EXCERPT_MISMATCH, page, detail, source_id=sid, start=start, end=end))


class Reslice:
    """The seal's :class:`~publisher.site.checks.seal.Verified` of ``check-site``: a fresh re-slice
    of the wiki's verified snapshots, whatever the manifest says."""

    def __init__(self, texts: WikiTexts) -> None:
        self.texts = texts

    def _text(self, source_id: str) -> str | Refusal:
        try:
            return self.texts.get(source_id)
        except PublisherError as exc:
            return Refusal(exc.reason or Reason.SNAPSHOT_HASH_MISMATCH, exc.one_line())

    def excerpt(self, source_id: str, start: int, end: int) -> str | Refusal:
        text = self._text(source_id)
        if isinstance(text, Refusal):
            return text
        problem = check_range(start, end, len(text))
        if problem is not None:
            return Refusal(problem, f"[{start}, {end}) on a text of {len(text)}")
        return text[start:end]

    def snapshot(self, source_id: str, text: str) -> str | Refusal:
        expected = self._text(source_id)
        if isinstance(expected, Refusal):
            return expected
        if text != expected:
            return Refusal(Reason.EXCERPT_MISMATCH, "snapshot text differs from the snapshot")
        return sha256_hex(text.encode("utf-8"))

    def window(self, source_id: str, start: int, end: int, text: str, digest: str) -> Refusal | None:
        """A window's text is ``text[start:end]`` of the verified snapshot."""
        expected = self._text(source_id)
        if isinstance(expected, Refusal):
            return expected
        if not 0 <= start <= end <= len(expected):
            return Refusal(Reason.SPAN_OUT_OF_RANGE, f"window [{start}, {end}) on a text of {len(expected)}")
        if expected[start:end] != text:
            return Refusal(Reason.EXCERPT_MISMATCH, "window text differs from the re-slice")
        return None
