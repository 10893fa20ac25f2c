"""Complete example records, one per kind an agent or a maintainer writes: ``publisher schema --example``.

The examples are one small review (the walk-through in ``docs/walkthrough.md`` builds it step by
step): two open-access JMIR trials of remotely delivered care for depression, fetched as JATS from
Europe PMC. Offsets and source ids are what ``source fetch`` and ``source spans --sentence`` gave
for those articles' text; a test assembles, verifies and promotes a run built from these very
records, so they stay valid as the formats evolve. Copy one, then put in your own source ids and
offsets: the ones your commands print.
"""

from __future__ import annotations

import json
from typing import Any

__all__ = ["EXAMPLES", "SOURCES", "QUESTION", "example"]

QUESTION = "Do remotely delivered psychological programmes reduce depressive symptoms?"

_EUROPE_PMC = "https://www.ebi.ac.uk/europepmc/webservices/rest/{}/fullTextXML"
SOURCES = {
    "PMC5812981": {
        "url": _EUROPE_PMC.format("PMC5812981"),
        "source_id": "src-e598aba3a434b04ff46843f8f6efa5959ab7f3567e36bc778726ea3c74fe95a3",
    },
    "PMC3668608": {
        "url": _EUROPE_PMC.format("PMC3668608"),
        "source_id": "src-082a9b0b0e25c31eb282e5df8a1b13cab47dae75f35dfdaad0f71250d19e723f",
    },
}
"""The two articles: where the walk-through fetches them and the source id that fetch printed."""

_RCDC = SOURCES["PMC5812981"]["source_id"]
_IPT = SOURCES["PMC3668608"]["source_id"]


def _span(claim: str, source_id: str, start: int, end: int) -> dict[str, Any]:
    """What an agent contributes of a span: a claim label, a source id and offsets, nothing else."""
    return {"claim": claim, "source_id": source_id, "start": start, "end": end}


_CONFIG = {
    "schema_version": 1,
    "run_slug": "remote-depression-care",
    "created_at": "2026-03-02T09:15:00Z",
    "gates": {"evidence_kernel": True},
    "question": QUESTION,
}

_EXTRACTION = {
    "schema_version": 1,
    "pmid": "29386172",
    "evidence_id": "pmid:29386172",
    "design": "cluster randomised, assessor-blind trial in 16 primary care centres",
    "n_total": 143,
    "n_arms": [65, 78],
    "population": "adolescents aged 13-19 with major depressive disorder, Araucanía Region, Chile",
    "intervention": "3 months of remote collaborative depression care (RCDC): psychiatrists supervising "
    "primary care teams through shared electronic health records, and phone monitoring",
    "comparator": "enhanced usual care (EUC) by clinicians trained in the clinical guidelines",
    "outcomes": [
        {
            "name": "depressive symptoms (Beck Depression Inventory)",
            "timepoint": "12 weeks",
            "effect_measure": "difference between means, adjusted for baseline and socioeconomic status",
            "effect": 1.5,
            "ci_low": -2.4,
            "ci_high": 5.6,
            "p_value": None,
            "direction": "null_effect",
            "spans": [
                _span("BDI at 12 weeks: adjusted difference 1.5 (95% CI -2.4 to 5.6)", _RCDC, 24852, 24936),
                _span("no difference in depressive symptoms at 12 weeks", _RCDC, 22919, 23142),
            ],
        }
    ],
    "funding": "FONIS (CONICYT and the Chilean Ministry of Health) and the Innovation Fund for Competitiveness",
    "coi": "none declared",
    "limitations": "only 60% of the planned sample was recruited",
    "evidence_basis": "fulltext",
    "extractor_notes": "Effect from Table 3; positive differences favour enhanced usual care.",
    "spans": [
        _span("design: cluster randomised, assessor-blind, 16 primary care centres", _RCDC, 680, 797),
        _span("143 adolescents aged 13-19 with major depression", _RCDC, 937, 994),
        _span("intervention arm: 65, remote collaborative care", _RCDC, 995, 1246),
        _span("control arm: 78, enhanced usual care", _RCDC, 1247, 1377),
        _span("funding: FONIS and the Innovation Fund for Competitiveness", _RCDC, 39483, 39927),
        _span("conflicts of interest: none declared", _RCDC, 40016, 40053),
        _span("limitation: 60% of the planned sample", _RCDC, 31246, 31303),
    ],
}

_APPRAISAL = {
    "schema_version": 1,
    "pmid": "23669884",
    "evidence_id": "pmid:23669884",
    "tool": "RoB2",
    "domains": [
        {
            "domain": "D1 Randomisation process",
            "judgement": "low",
            "rationale": "Automated randomisation in the trial software; sequence concealed from the researchers.",
            "spans": [
                _span("RoB2 D1: automated randomisation", _IPT, 8710, 8898),
                _span("RoB2 D1: allocation concealed", _IPT, 8899, 8958),
            ],
        },
        {
            "domain": "D2 Deviations from intended interventions",
            "judgement": "some concerns",
            "rationale": "Participants knew their programme and used it unguided.",
            "spans": [_span("RoB2 D2: participants aware of their arm", _IPT, 8959, 9042)],
        },
        {
            "domain": "D3 Missing outcome data",
            "judgement": "high",
            "rationale": "70% had dropped out by the posttest, most in the control programme.",
            "spans": [_span("RoB2 D3: 70% dropout at posttest", _IPT, 1772, 1849)],
        },
        {
            "domain": "D4 Measurement of the outcome",
            "judgement": "some concerns",
            "rationale": "Self-reported online questionnaires from participants who knew their arm.",
            "spans": [_span("RoB2 D4: self-reported outcomes", _IPT, 989, 1245)],
        },
        {
            "domain": "D5 Selection of the reported result",
            "judgement": "unclear",
            "rationale": "The paper does not say whether the analysis plan was fixed before unblinding.",
            "spans": [],
        },
    ],
    "overall_judgement": "high",
    "grade": None,
    "evidence_basis": "fulltext",
}

_QUOTED = '"There were no significant differences in depressive symptoms or HRQoL between groups."'
"""The excerpt as the author believes it reads: optional, and compared with the re-slice when given."""

_REPORT = f"""# Remote psychological care for depression

**Question.** {QUESTION}

In Chilean adolescents with major depression, three months of remote collaborative care did not
change depressive symptoms at 12 weeks compared with enhanced usual care.[^rcdc-symptoms]

In adults who found an online therapy website themselves, self-guided internet interpersonal
psychotherapy and cognitive behavioural therapy reduced depressive symptoms among those who
completed them,[^ipt-completers] but 70% had dropped out by the posttest.[^ipt-dropout]

[^rcdc-symptoms]: {_RCDC}#2267-2352 {_QUOTED}
[^ipt-completers]: {_IPT}#1256-1410
[^ipt-dropout]: {_IPT}#1772-1849 — abstract, results.
"""

_CONCEPT = """---
schema_version: 1
title: Remote psychological care for depression
concept: remote-depression-care
summary: What trials say about depression care delivered online or from a distance.
claims: []
---
# Remote psychological care for depression

Prose written by hand: what the page is about, for whom, and what is still unknown. `publisher
promote --concept remote-depression-care` adds the verified evidence below it, between markers it
owns, and keeps everything outside them.
"""

EXAMPLES: dict[str, tuple[str, str]] = {
    "config": ("runs/<run>/config.json (written by `publisher run init`)", json.dumps(_CONFIG, indent=2)),
    "extraction": (
        "runs/<run>/workspace/extractions/rcdc-chile.json",
        json.dumps(_EXTRACTION, indent=2, ensure_ascii=False),
    ),
    "appraisal": (
        "runs/<run>/workspace/appraisals/ipt-online-rob2.json",
        json.dumps(_APPRAISAL, indent=2, ensure_ascii=False),
    ),
    "report": ("runs/<run>/outputs/report.md", _REPORT),
    "concept": ("concepts/remote-depression-care.md (before its first promotion)", _CONCEPT),
}
"""Each example's name: where the file goes, and its complete text."""


def example(name: str) -> str:
    """The complete text of one example, ending with a newline."""
    text = EXAMPLES[name][1]
    return text if text.endswith("\n") else text + "\n"
