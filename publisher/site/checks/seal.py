"""The build's seal of one page: every evidence element it shows, checked against what was verified.

The hook scans each page's final HTML (:mod:`publisher.site.checks.scan`) and calls :func:`seal_page`:
an excerpt must be a verified span whose text is exactly the re-slice, a snapshot text the
verified snapshot, a window one the page's generator rendered, with every highlight at its
offsets; anything that only looks like evidence is a problem. What passes becomes the page's
entries in ``evidence-manifest.json``.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ...kernel.canonical import content_hash_for, sha256_hex
from .scan import PageScan

__all__ = ["PageSeal", "seal_page"]


@dataclass
class PageSeal:
    """The manifest entries of one page and every problem found on it."""

    excerpts: list[dict[str, Any]] = field(default_factory=list)
    snapshots: list[dict[str, Any]] = field(default_factory=list)
    windows: list[dict[str, Any]] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)


def seal_page(
    scan: PageScan,
    dest: str,
    excerpts: Mapping[tuple[str, int, int], str],
    content_hashes: Mapping[str, str],
    expected_excerpts: Counter[tuple[str, int, int]] | None,
    expected_windows: Counter[tuple[str, int, int, str]],
) -> PageSeal:
    """Check the evidence of page ``dest`` (its path in the site).

    ``excerpts`` are the verified excerpts by (source id, start, end); ``content_hashes`` the
    verified snapshots' content hashes; ``expected_excerpts`` what a generated page must show
    (None for a page the hook did not generate) and ``expected_windows`` its context windows.
    """
    out = PageSeal()
    problems = out.problems
    problems += scan.malformed
    found: Counter[tuple[str, int, int]] = Counter()
    for ex in scan.excerpts:
        if ex.start is None or ex.end is None:
            problems.append(f"excerpt {ex.source_id} has no numeric offsets")
            continue
        key = (ex.source_id, ex.start, ex.end)
        verified = excerpts.get(key)
        if verified is None:
            problems.append(f"excerpt {ex.source_id}#{ex.start}-{ex.end} is not verified evidence")
            continue
        if ex.nested or ex.text != verified:
            problems.append(f"excerpt {ex.source_id}#{ex.start}-{ex.end} differs from the verified re-slice")
            continue
        found[key] += 1
        out.excerpts.append(
            {"page": dest, "source_id": ex.source_id, "start": ex.start, "end": ex.end, "sha256": ex.sha256}
        )
    for block in scan.snapshots:
        content_hash = content_hashes.get(block.source_id)
        if content_hash is None or content_hash_for(block.text) != content_hash or block.nested_excerpt:
            problems.append(f"snapshot text of {block.source_id} differs from the verified snapshot")
            continue
        problems += block.misplaced_marks()
        out.snapshots.append(
            {"page": dest, "source_id": block.source_id, "sha256": content_hash.removeprefix("sha256:")}
        )
    windows: Counter[tuple[str, int, int, str]] = Counter()
    for block in scan.windows:
        where = f"window {block.source_id}#{block.window_start}-{block.window_end}"
        if block.window_start is None or block.window_end is None:
            problems.append(f"{where} has no numeric offsets")
            continue
        digest = sha256_hex(block.text.encode("utf-8"))
        window_key = (block.source_id, block.window_start, block.window_end, digest)
        if window_key not in expected_windows or block.nested_excerpt:
            problems.append(f"{where} differs from the verified snapshot")
            continue
        problems += block.misplaced_marks()
        windows[window_key] += 1
        out.windows.append(
            {"page": dest, "source_id": block.source_id, "start": block.window_start, "end": block.window_end}
            | {"sha256": digest}
        )
    if windows != expected_windows:
        problems.append("the page's context windows are not the verified ones")
    if expected_excerpts is not None:
        missing = expected_excerpts - found
        if missing:
            problems.append(f"{sum(missing.values())} verified excerpt(s) did not reach the page")
    return out
