"""Every check id of the product, one closed enum: a finding names its check by a member, never
by a free string, so two checks cannot share an id and a typo is a type error.

The numbered checks of a run (CONTRACT section 9) come first, in the order a report lists them;
then the checks of the wiki, the build and the published site.
"""

from __future__ import annotations

from enum import StrEnum

__all__ = ["CheckId", "RUN_CHECKS"]


class CheckId(StrEnum):
    """A check's id, as findings, reports and ``--json`` output name it."""

    SNAPSHOT = "C-SNAPSHOT"
    SPAN = "C-SPAN"
    FRESH_FETCH = "C-FRESH-FETCH"
    ASSEMBLER = "C-ASSEMBLER"
    EVENT_LOG = "C-EVENT-LOG"
    GATE = "C-GATE"
    CITE_RESOLVE = "C-CITE-RESOLVE"
    FULLTEXT = "C-FULLTEXT"
    HYPOTHESIS_WALL = "C-HYPOTHESIS-WALL"
    PROSE = "C-PROSE"
    """The report's prose quotes only through spans (verifier check 10)."""
    PAGE_PROSE = "C-PAGE-PROSE"
    """Hand-written pages, concept prose and files of ``docs/`` pass the page allow-list."""
    CLAIM = "C-CLAIM"
    PROMOTED = "C-PROMOTED"
    META = "C-META"
    NOTICE = "C-NOTICE"
    WARRANT = "C-WARRANT"
    CONFIG = "C-CONFIG"
    BUILD = "C-BUILD"
    PUBLISH = "C-PUBLISH"
    CSP = "C-CSP"
    SITE_FILE = "C-SITE-FILE"
    SITE_PIN = "C-SITE-PIN"


RUN_CHECKS = (
    CheckId.SNAPSHOT,
    CheckId.SPAN,
    CheckId.FRESH_FETCH,
    CheckId.ASSEMBLER,
    CheckId.EVENT_LOG,
    CheckId.GATE,
    CheckId.CITE_RESOLVE,
    CheckId.FULLTEXT,
    CheckId.HYPOTHESIS_WALL,
    CheckId.PROSE,
)
"""Every numbered check of a run, in the order a report lists them."""
