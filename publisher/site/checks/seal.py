"""The seal of one page: every evidence element it shows, checked against what was verified.

One implementation for the build and for ``publisher check-site``. A page's final HTML is scanned
(:mod:`publisher.site.checks.scan`) and :func:`check_evidence` holds each element to a
:class:`Verified`: an excerpt must be a verified span whose text is exactly the re-slice, a
snapshot text the verified snapshot, a window a verified slice of it, with every highlight at its
offsets; anything that only looks like evidence is a finding. The build's :func:`seal_page` asks
the spans and windows it verified and generated (and that every one reached the page); what passes
becomes the page's entries in ``evidence-manifest.json``. ``check-site`` asks a fresh re-slice of
the wiki's snapshots (:class:`publisher.site.checks.checksite.Reslice`).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from ...kernel.canonical import content_hash_for, sha256_hex
from ...kernel.checkids import CheckId
from ...kernel.findings import Finding
from ...kernel.reasons import Reason
from .csp import hash_source
from .scan import PageScan, SnapshotBlock
from .themescripts import is_theme_script

__all__ = [
    "PageSeal",
    "Refusal",
    "Verified",
    "check_evidence",
    "check_scripts",
    "script_source_problem",
    "seal_page",
    "SCRIPT_CHECK",
]

SCRIPT_CHECK = CheckId.CSP
"""The check of a page's scripts: only those the site ships."""

_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*:")
_URL_JUNK = str.maketrans("", "", "\t\n\r")


@dataclass(frozen=True)
class Refusal:
    """Why an element is not the verified evidence it claims to be."""

    reason: Reason
    detail: str


class Verified(Protocol):
    """What a page's evidence elements are held to."""

    def excerpt(self, source_id: str, start: int, end: int) -> str | Refusal:
        """The verified text of span ``[start, end)`` of ``source_id``."""
        ...

    def snapshot(self, source_id: str, text: str) -> str | Refusal:
        """The SHA-256 (hex) of ``text`` when it is the verified snapshot text of ``source_id``."""
        ...

    def window(self, source_id: str, start: int, end: int, text: str, digest: str) -> Refusal | None:
        """None when ``text`` (SHA-256 ``digest``) is the verified window ``[start, end)``."""
        ...


@dataclass
class PageSeal:
    """The manifest entries of one page and every finding on it."""

    excerpts: list[dict[str, Any]] = field(default_factory=list)
    snapshots: list[dict[str, Any]] = field(default_factory=list)
    windows: list[dict[str, Any]] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)


def check_evidence(scan: PageScan, page: str, verified: Verified) -> PageSeal:
    """Hold every evidence element of ``scan`` (page ``page``) to ``verified``; the entries of what passes."""
    out = PageSeal()
    add = out.findings.append
    for problem in scan.malformed:
        add(Finding(Reason.EXCERPT_MISMATCH, page, problem))
    for ex in scan.excerpts:
        sid, start, end = ex.source_id, ex.start, ex.end
        if start is None or end is None:
            add(Finding(Reason.SPAN_OUT_OF_RANGE, page, f"excerpt {sid} has no numeric offsets", source_id=sid or None))
            continue
        text = verified.excerpt(sid, start, end)
        if isinstance(text, Refusal) or ex.nested or ex.text != text:
            reason, detail = (
                (text.reason, text.detail)
                if isinstance(text, Refusal)
                else (Reason.EXCERPT_MISMATCH, f"excerpt {sid}#{start}-{end} differs from the verified re-slice")
            )
            add(Finding(reason, page, detail, source_id=sid or None, start=start, end=end))
            continue
        out.excerpts.append({"page": page, "source_id": sid, "start": start, "end": end, "sha256": ex.sha256})
    for block in scan.snapshots:
        sid = block.source_id
        digest = verified.snapshot(sid, block.text)
        if isinstance(digest, Refusal) or block.nested_excerpt:
            reason, detail = (
                (digest.reason, digest.detail)
                if isinstance(digest, Refusal)
                else (Reason.EXCERPT_MISMATCH, f"snapshot text of {sid} differs from the verified snapshot")
            )
            add(Finding(reason, page, detail, source_id=sid or None))
            continue
        out.findings += _misplaced(block, page)
        out.snapshots.append({"page": page, "source_id": sid, "sha256": digest})
    for block in scan.windows:
        sid, start, end = block.source_id, block.window_start, block.window_end
        where = f"window {sid}#{start}-{end}"
        if start is None or end is None:
            add(Finding(Reason.SPAN_OUT_OF_RANGE, page, f"{where} has no numeric offsets", source_id=sid or None))
            continue
        digest = sha256_hex(block.text.encode("utf-8"))
        refusal = verified.window(sid, start, end, block.text, digest)
        if refusal is not None or block.nested_excerpt:
            reason, detail = (
                (refusal.reason, refusal.detail)
                if refusal is not None
                else (Reason.EXCERPT_MISMATCH, f"{where} differs from the verified snapshot")
            )
            add(Finding(reason, page, detail, source_id=sid or None, start=start, end=end))
            continue
        out.findings += _misplaced(block, page)
        out.windows.append({"page": page, "source_id": sid, "start": start, "end": end} | {"sha256": digest})
    return out


def check_scripts(scan: PageScan, page: str) -> list[Finding]:
    """A ``C-CSP`` finding for each script of the whole page the site does not ship: an inline
    script that is not the theme's own (:mod:`.themescripts`), a script loaded from elsewhere or
    from a file that is not a ``.js``/``.mjs`` file of the site (a font or image whose bytes
    also parse as JavaScript), and markup that acts without one (:attr:`PageScan.actions`)."""
    found = []
    for text in scan.scripts:
        if not is_theme_script(text):
            detail = f"an inline script the build did not write ({hash_source(text)})"
            found.append(Finding(None, page, detail, check=SCRIPT_CHECK))
    for src in scan.script_sources:
        problem = script_source_problem(src)
        if problem is not None:
            found.append(Finding(None, page, f"script {src[:80]!r} {problem}", check=SCRIPT_CHECK))
    for action in scan.actions:
        detail = f"{action} acts without a script the site ships (an event handler or a refresh)"
        found.append(Finding(None, page, detail, check=SCRIPT_CHECK))
    return found


def script_source_problem(src: str) -> str | None:
    """Why a script address is not one of a script file the site ships (None: it may be)."""
    url = src.strip("".join(map(chr, range(0x21)))).translate(_URL_JUNK).replace("\\", "/")
    if _SCHEME.match(url) or url.startswith("//"):
        return "is loaded from elsewhere"
    path = url.split("#", 1)[0].split("?", 1)[0]
    if not path.lower().endswith((".js", ".mjs")):
        return "is not a .js or .mjs file"
    return None


def _misplaced(block: SnapshotBlock, page: str) -> list[Finding]:
    """A finding per highlight of ``block`` that does not sit at its offsets."""
    return [Finding(Reason.EXCERPT_MISMATCH, page, m, source_id=block.source_id) for m in block.misplaced_marks()]


@dataclass(frozen=True)
class _Built:
    """What the build verified and generated: the verified spans, snapshots and one page's windows."""

    excerpts: Mapping[tuple[str, int, int], str]
    content_hashes: Mapping[str, str]
    windows: Counter[tuple[str, int, int, str]]

    def excerpt(self, source_id: str, start: int, end: int) -> str | Refusal:
        text = self.excerpts.get((source_id, start, end))
        if text is None:
            return Refusal(Reason.EXCERPT_MISMATCH, f"excerpt {source_id}#{start}-{end} is not verified evidence")
        return text

    def snapshot(self, source_id: str, text: str) -> str | Refusal:
        content_hash = self.content_hashes.get(source_id)
        if content_hash is None or content_hash_for(text) != content_hash:
            return Refusal(Reason.EXCERPT_MISMATCH, f"snapshot text of {source_id} differs from the verified snapshot")
        return content_hash.removeprefix("sha256:")

    def window(self, source_id: str, start: int, end: int, text: str, digest: str) -> Refusal | None:
        if (source_id, start, end, digest) not in self.windows:
            return Refusal(
                Reason.EXCERPT_MISMATCH, f"window {source_id}#{start}-{end} differs from the verified snapshot"
            )
        return None


def seal_page(
    scan: PageScan,
    dest: str,
    excerpts: Mapping[tuple[str, int, int], str],
    content_hashes: Mapping[str, str],
    expected_excerpts: Counter[tuple[str, int, int]] | None,
    expected_windows: Counter[tuple[str, int, int, str]],
) -> PageSeal:
    """The build's seal of page ``dest`` (its path in the site).

    ``excerpts`` are the verified excerpts by (source id, start, end); ``content_hashes`` the
    verified snapshots' content hashes; ``expected_excerpts`` what a generated page must show
    (None for a page the hook did not generate) and ``expected_windows`` its context windows.
    """
    out = check_evidence(scan, dest, _Built(excerpts, content_hashes, expected_windows))
    out.findings += check_scripts(scan, dest)
    windows = Counter((w["source_id"], w["start"], w["end"], w["sha256"]) for w in out.windows)
    if windows != expected_windows:
        out.findings.append(
            Finding(Reason.EXCERPT_MISMATCH, dest, "the page's context windows are not the verified ones")
        )
    if expected_excerpts is not None:
        found = Counter((e["source_id"], e["start"], e["end"]) for e in out.excerpts)
        missing = expected_excerpts - found
        if missing:
            detail = f"{sum(missing.values())} verified excerpt(s) did not reach the page"
            out.findings.append(Finding(Reason.EXCERPT_MISMATCH, dest, detail))
    return out
