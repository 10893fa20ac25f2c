"""Rebuild the repository's example evidence run from scratch, with the real commands.

What it does, in order (each step through the ``publisher`` console script of the Python that runs
this file, and the whole script stops at the first step that is not clean):

1. removes ``runs/example/``, the example's concept files and its PDF in ``assets/papers/``, and
   makes sure this user holds the private half of ``keys/example.pub`` (the key ``mkdocs.yml``
   trusts), making a new pair when not: every acquisition below is signed with it;
2. ``publisher run init runs/example --slug example --gate --question …`` (the concept's title);
3. serves ``examples/sources/`` on 127.0.0.1 from a thread and acquires the two trial articles
   with ``publisher source fetch`` (real HTTP round trips, so the sources are fresh), then adds
   the guideline PDF with ``publisher source local --wiki``;
4. plays the agent: finds every quoted phrase with ``publisher source spans --json`` (never
   hand-counted offsets) and writes three extractions, one appraisal and ``outputs/report.md``;
5. ``publisher assemble --gate``, ``publisher verify --gate`` and ``publisher render``;
6. writes the hand-written prose of ``concepts/morning-light-sleep-onset.md`` and promotes the run
   into it: ``publisher promote --run-dir runs/example --wiki . --concept morning-light-sleep-onset``
   (first with ``--check``), which appends the generated evidence block.

Usage: ``.venv/bin/python examples/build_example.py [--wiki DIR] [--port N]``. Afterwards
``.venv/bin/mkdocs build`` builds the example wiki.
"""

from __future__ import annotations

import argparse
import functools
import hashlib
import http.server
import json
import os
import shlex
import shutil
import subprocess
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = ["RUN_SLUG", "QUESTION", "BuildError", "build", "main"]

RUN_SLUG = "example"
QUESTION = "Does a structured morning-light routine shorten sleep-onset latency in shift workers?"
DEFAULT_PORT = 47291
"""A fixed port keeps the fetched URLs, and so the source ids, the same from one rebuild to the next."""

HERE = Path(__file__).resolve().parent
SOURCES = HERE / "sources"
PDF_NAME = "eoss-practice-statement.pdf"

CONCEPT = "morning-light-sleep-onset"
"""The concept the example is promoted into; its prose is written here, its evidence block by promotion."""

LUMEN, DAWN, EOSS = "lumen", "dawn", "eoss"
LUMEN_ID = "doi:10.5555/jee.2025.0142"
DAWN_ID = "pmid:48213507"
EOSS_ID = "doi:10.5555/eoss.2026.001"


class BuildError(RuntimeError):
    """A step of the build was not clean; the message names the step and what it printed."""


# --------------------------------------------------------------------------------------------
# Running the publisher


@dataclass
class Publisher:
    """The ``publisher`` console script, run from the wiki root, failing loudly."""

    command: list[str]
    wiki: Path
    env: dict[str, str]

    def __call__(self, *args: str, json_out: bool = False, quiet: bool = False) -> Any:
        argv = [*self.command, *args, *(["--json"] if json_out else [])]
        done = subprocess.run(argv, cwd=self.wiki, env=self.env, capture_output=True, text=True, check=False)
        shown = shlex.join(["publisher", *args])
        if done.returncode != 0:
            raise BuildError(
                f"step failed (exit {done.returncode}): {shown}\n{done.stdout.strip()}\n{done.stderr.strip()}".rstrip()
            )
        if not quiet:
            print(f"$ {shown}")
            if not json_out and done.stdout.strip():
                print("  " + done.stdout.strip().replace("\n", "\n  "))
        if json_out:
            try:
                return json.loads(done.stdout)
            except json.JSONDecodeError as exc:
                raise BuildError(f"{shown} --json did not print JSON: {done.stdout[:200]!r}") from exc
        return done.stdout


def _publisher_command() -> list[str]:
    """The console script beside this interpreter (the venv's), else ``python -m publisher``."""
    script = Path(sys.executable).parent / "publisher"
    if script.is_file():
        return [str(script)]
    return [sys.executable, "-m", "publisher"]


def _child_env() -> dict[str, str]:
    """The environment for the steps: the loopback server must never be reached through a proxy."""
    env = dict(os.environ)
    for key in ("NO_PROXY", "no_proxy"):
        env[key] = ",".join(filter(None, [env.get(key, ""), "127.0.0.1", "localhost"]))
    env.setdefault("PYTHONIOENCODING", "utf-8")
    return env


# --------------------------------------------------------------------------------------------
# The loopback server


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    extensions_map = {  # noqa: RUF012 - the base class declares it as a class attribute
        **http.server.SimpleHTTPRequestHandler.extensions_map,
        ".txt": "text/plain; charset=utf-8",
        ".xml": "application/xml",
    }

    def log_message(self, format: str, *args: Any) -> None:
        print(f"  [http.server] {format % args}")


@contextmanager
def serve(folder: Path, port: int) -> Iterator[str]:
    """Serve ``folder`` on 127.0.0.1 from a daemon thread; yields the base URL."""
    handler = functools.partial(_QuietHandler, directory=str(folder))
    try:
        server = http.server.ThreadingHTTPServer(("127.0.0.1", port), handler)
    except OSError:
        print(f"  port {port} is busy; serving on a free port instead (source ids will differ)")
        server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, name="example-sources", daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


# --------------------------------------------------------------------------------------------
# The agent's side: spans found by the publisher, records written as an agent would


@dataclass
class Agent:
    """Looks phrases up with ``publisher source spans`` and turns them into span records."""

    publisher: Publisher
    run_dir: str
    sources: dict[str, dict[str, Any]]

    def locate(self, key: str, query: str, occurrence: int | None = None) -> tuple[int, int]:
        """Offsets of ``query`` in source ``key``; it must occur once unless ``occurrence`` picks one."""
        source_id = self.sources[key]["source_id"]
        found = self.publisher(
            "source", "spans", "--run-dir", self.run_dir, "--source-id", source_id, "--query", query,
            json_out=True, quiet=True,
        )  # fmt: skip
        matches = found["matches"]
        if occurrence is None and len(matches) != 1:
            raise BuildError(f"{key}: {query[:60]!r} occurs {len(matches)} times; expected exactly once")
        if occurrence is not None and len(matches) <= occurrence:
            raise BuildError(f"{key}: {query[:60]!r} occurs {len(matches)} times; wanted occurrence {occurrence}")
        match = matches[occurrence or 0]
        return match["start"], match["end"]

    def span(self, key: str, evidence_id: str, claim: str, query: str, occurrence: int | None = None) -> dict[str, Any]:
        """A span record: claim label, evidence id, source id, offsets and the access it asserts."""
        start, end = self.locate(key, query, occurrence)
        source = self.sources[key]
        return {
            "claim": claim,
            "evidence_id": evidence_id,
            "source_id": source["source_id"],
            "start": start,
            "end": end,
            "access": source["access"],
        }

    def ref(self, key: str, query: str, occurrence: int | None = None, *, excerpt: bool = True) -> str:
        """A footnote span reference (CONTRACT section 7), with the excerpt as a JSON string."""
        start, end = self.locate(key, query, occurrence)
        text = f"{self.sources[key]['source_id']}#{start}-{end}"
        return text + (" " + json.dumps(query, ensure_ascii=False) if excerpt else "")


def _lumen_extraction(a: Agent) -> dict[str, Any]:
    e = LUMEN_ID
    sol = (
        "At 6 weeks the mean sleep-onset latency was 17.8 ± 9.6 min with morning light and 27.1 ± 12.3 min "
        "with control (mean difference −9.4 min, 95% CI −14.1 to −4.7; p < 0.001)."
    )
    return {
        "schema_version": 1,
        "pmid": None,
        "evidence_id": e,
        "design": "pragmatic, assessor-blinded, parallel-group randomised controlled trial at three hospitals",
        "n_total": 184,
        "n_arms": [92, 92],
        "population": "rotating shift workers aged 18–60 with at least 4 night shifts a month and a usual "
        "sleep-onset latency of at least 20 min",
        "intervention": "light box of at least 10 000 lux for 30 min within 60 min of the main wake time, daily "
        "for 6 weeks, with a fixed wake time",
        "comparator": "identical-looking box with a dim red filter (at most 50 lux), same schedule",
        "outcomes": [
            {
                "name": "Sleep-onset latency (wrist actigraphy, mean of 7 nights)",
                "timepoint": "6 weeks",
                "effect_measure": "mean difference (min)",
                "effect": -9.4,
                "ci_low": -14.1,
                "ci_high": -4.7,
                "p_value": 0.001,
                "direction": "favors_intervention",
                "spans": [
                    a.span(
                        LUMEN,
                        e,
                        "sleep-onset latency, 6 weeks: MD −9.4 min (95% CI −14.1 to −4.7), p < 0.001 [results]",
                        sol,
                        occurrence=1,
                    ),
                    a.span(
                        LUMEN,
                        e,
                        "sleep-onset latency, 6 weeks: MD −9.4 min (95% CI −14.1 to −4.7), p < 0.001 [abstract]",
                        sol,
                        occurrence=0,
                    ),
                ],
            },
            {
                "name": "Total sleep time (actigraphy)",
                "timepoint": "6 weeks",
                "effect_measure": "mean difference (min)",
                "effect": 21,
                "ci_low": 6,
                "ci_high": 36,
                "p_value": 0.006,
                "direction": "favors_intervention",
                "spans": [
                    a.span(
                        LUMEN,
                        e,
                        "total sleep time, 6 weeks: +21 min (95% CI 6 to 36), p = 0.006",
                        "Total sleep time increased by 21 min with morning light compared with control "
                        "(95% CI 6 to 36; p = 0.006).",
                    ),
                ],
            },
            {
                "name": "Insomnia Severity Index (0–28)",
                "timepoint": "6 weeks",
                "effect_measure": "mean difference (points)",
                "effect": -2.1,
                "ci_low": -3.4,
                "ci_high": -0.8,
                "p_value": 0.002,
                "direction": "favors_intervention",
                "spans": [
                    a.span(
                        LUMEN,
                        e,
                        "Insomnia Severity Index, 6 weeks: −2.1 points (95% CI −3.4 to −0.8), p = 0.002",
                        "The ISI score was 2.1 points lower with morning light (95% CI −3.4 to −0.8; p = 0.002).",
                    ),
                ],
            },
        ],
        "funding": "Fictional Example Foundation for Occupational Health",
        "coi": "none declared",
        "limitations": "adherence measured by the light box's own log; the dim red control may not be inert",
        "evidence_basis": "fulltext",
        "extractor_notes": "p for the primary outcome is reported as < 0.001 and recorded as the bound.",
        "spans": [
            a.span(
                LUMEN,
                e,
                "design: assessor-blinded, parallel-group RCT at three hospitals",
                "LUMEN was a pragmatic, assessor-blinded, parallel-group randomised controlled trial at three "
                "hospitals (Lyon, Köln and Ōsaka).",
            ),
            a.span(LUMEN, e, "184 randomised, 92 per arm", "184 participants were randomised (92 per group)"),
            a.span(
                LUMEN,
                e,
                "population: rotating shift workers aged 18–60 with sleep-onset latency ≥ 20 min",
                "Eligible participants were aged 18–60 years, had worked a rotating roster with ≥ 4 night shifts "
                "per month for at least 6 months, and reported a usual sleep-onset latency ≥ 20 min.",
            ),
            a.span(
                LUMEN,
                e,
                "intervention: ≥ 10 000 lux for 30 min within 60 min of waking, daily for 6 weeks",
                "The intervention group used a light box delivering ≥ 10 000 lux at eye level (irradiance ≈ "
                "250 μW/cm²) for 30 minutes within 60 minutes of the main wake time, every day for 6 weeks",
            ),
            a.span(
                LUMEN,
                e,
                "comparator: dim red light (≤ 50 lux) on the same schedule",
                "The control group used an identical-looking box fitted with a dim red filter (≤ 50 lux) on the "
                "same schedule.",
            ),
            a.span(
                LUMEN,
                e,
                "funding: Fictional Example Foundation for Occupational Health",
                "Funding: Fictional Example Foundation for Occupational Health (grant EX-4471).",
            ),
            a.span(LUMEN, e, "competing interests: none declared", "Competing interests: none declared."),
            a.span(
                LUMEN,
                e,
                "limitation: adherence known only from the light box's log",
                "Adherence was measured by the light box’s own log, so we cannot exclude that some participants "
                "sat beside the box rather than in front of it.",
            ),
        ],
    }


_DAWN_SOL = (
    "Sleep-onset latency fell by 6.2 min more with the light routine than with advice (95% CI −12.9 to 0.5; p = 0.07)."
)


def _dawn_extraction(a: Agent) -> dict[str, Any]:
    e = DAWN_ID
    return {
        "schema_version": 1,
        "pmid": "48213507",
        "evidence_id": e,
        "design": "open-label, two-arm, parallel-group randomised trial at two teaching hospitals",
        "n_total": 120,
        "n_arms": [60, 60],
        "population": "registered nurses aged 21–63 working at least eight night shifts a month with difficulty "
        "falling asleep after night shifts",
        "intervention": "app-guided routine of at least 20 min of outdoor daylight or a light box within one hour "
        "of waking, fixed wake window, 8 weeks",
        "comparator": "printed sleep-hygiene leaflet",
        "outcomes": [
            {
                "name": "Sleep-onset latency (sleep diary, week 8)",
                "timepoint": "8 weeks",
                "effect_measure": "mean difference (min)",
                "effect": -6.2,
                "ci_low": -12.9,
                "ci_high": 0.5,
                "p_value": 0.07,
                "direction": "unclear",
                "spans": [
                    a.span(
                        DAWN,
                        e,
                        "sleep-onset latency (diary), 8 weeks: MD −6.2 min (95% CI −12.9 to 0.5), p = 0.07 [results]",
                        _DAWN_SOL,
                        occurrence=1,
                    ),
                    a.span(
                        DAWN,
                        e,
                        "sleep-onset latency (diary), 8 weeks: MD −6.2 min (95% CI −12.9 to 0.5), p = 0.07 [abstract]",
                        _DAWN_SOL,
                        occurrence=0,
                    ),
                ],
            },
            {
                "name": "Pittsburgh Sleep Quality Index (0–21)",
                "timepoint": "8 weeks",
                "effect_measure": "mean difference (points)",
                "effect": -1.4,
                "ci_low": -2.5,
                "ci_high": -0.3,
                "p_value": 0.01,
                "direction": "favors_intervention",
                "spans": [
                    a.span(
                        DAWN,
                        e,
                        "Pittsburgh Sleep Quality Index, 8 weeks: −1.4 points (95% CI −2.5 to −0.3), p = 0.01",
                        "The Pittsburgh Sleep Quality Index improved by 1.4 points (95% CI −2.5 to −0.3; p = 0.01).",
                        occurrence=1,
                    ),
                ],
            },
        ],
        "funding": "Example Nursing Research Fund",
        "coi": None,
        "limitations": "self-reported outcomes from participants who knew their allocation",
        "evidence_basis": "fulltext",
        "extractor_notes": "Competing interests are not reported.",
        "spans": [
            a.span(
                DAWN,
                e,
                "design: open-label, two-arm, parallel-group RCT at two hospitals",
                "DAWN was an open-label, two-arm, parallel-group randomised trial at two teaching hospitals.",
            ),
            a.span(DAWN, e, "120 randomised, 60 per arm", "Of 120 randomised nurses (60 per group)"),
            a.span(
                DAWN,
                e,
                "population: nurses working ≥ 8 night shifts a month with difficulty falling asleep",
                "Registered nurses aged 21 to 63 years who worked at least eight night shifts a month and reported "
                "difficulty falling asleep after night shifts were eligible.",
            ),
            a.span(
                DAWN,
                e,
                "intervention: app-guided morning daylight or light box, ≥ 20 min within an hour of waking",
                "The intervention group followed an app-guided routine of at least 20 min of outdoor daylight or a "
                "light box within one hour of waking, with a fixed wake window on work and rest days, for 8 weeks.",
            ),
            a.span(
                DAWN,
                e,
                "comparator: printed sleep-hygiene leaflet",
                "The control group received a printed sleep-hygiene leaflet and no further contact.",
            ),
            a.span(
                DAWN,
                e,
                "funding: Example Nursing Research Fund",
                "Supported by the Example Nursing Research Fund (fictional).",
            ),
            a.span(
                DAWN,
                e,
                "limitation: self-reported outcomes from unblinded participants",
                "Sleep diaries completed by participants who knew their allocation may overstate benefit.",
            ),
        ],
    }


def _eoss_extraction(a: Agent) -> dict[str, Any]:
    e = EOSS_ID
    return {
        "schema_version": 1,
        "pmid": None,
        "evidence_id": e,
        "design": "practice statement (guideline) developed by a seven-member panel using GRADE",
        "n_total": None,
        "n_arms": [],
        "population": "adults working rotating or permanent night shifts who have difficulty falling asleep "
        "after a shift",
        "intervention": "structured, timed morning-light routine; light box of at least 10 000 lux at eye level for "
        "20–30 min",
        "comparator": None,
        "outcomes": [],
        "funding": None,
        "coi": "conflicts declared; none judged relevant",
        "limitations": "low certainty of evidence from two trials",
        "evidence_basis": "fulltext",
        "extractor_notes": "A guideline: its recommendations, not effect sizes, are extracted.",
        "spans": [
            a.span(
                EOSS,
                e,
                "method: GRADE, with a panel vote on each recommendation",
                "Evidence was summarised with GRADE; the panel voted on each recommendation",
            ),
            a.span(
                EOSS,
                e,
                "scope: adults on night shifts who have difficulty falling asleep",
                "This statement covers adults who work rotating or permanent night shifts and who report\n"
                "difficulty falling asleep after a shift.",
            ),
            a.span(
                EOSS,
                e,
                "R1: structured, timed morning-light routine (conditional, low certainty)",
                "R1. For shift workers with difficulty falling asleep, we suggest a structured, timed\n"
                "morning-light routine (conditional recommendation, low certainty of evidence).",
            ),
            a.span(
                EOSS,
                e,
                "R2: light box of at least 10 000 lux at eye level for 20–30 min",
                "R2. A light box used for this purpose should deliver at least 10 000 lux at eye level for\n"
                "20–30 minutes",
            ),
            a.span(
                EOSS,
                e,
                "conflicts of interest declared; none judged relevant",
                "Conflicts of interest were declared and none was judged to be relevant.",
            ),
            a.span(
                EOSS,
                e,
                "certainty low: imprecision and self-reported outcomes",
                "The panel judged the certainty of evidence to be low because of imprecision and because one\n"
                "trial relied on self-reported outcomes from participants who knew their allocation.",
            ),
        ],
    }


def _dawn_appraisal(a: Agent) -> dict[str, Any]:
    e = DAWN_ID
    return {
        "schema_version": 1,
        "pmid": "48213507",
        "evidence_id": e,
        "tool": "RoB2",
        "domains": [
            {
                "domain": "D1 Randomisation process",
                "judgement": "low",
                "rationale": "Computer-generated sequence held centrally; allocation concealed until enrolment.",
                "spans": [
                    a.span(
                        DAWN,
                        e,
                        "RoB2 D1 low: computer-generated sequence, concealed allocation",
                        "Participants were allocated 1:1 by a computer-generated sequence held by the trial unit, "
                        "with allocation concealed until enrolment was confirmed.",
                    ),
                ],
            },
            {
                "domain": "D2 Deviations from intended interventions",
                "judgement": "some concerns",
                "rationale": "Open label; about a third of the intervention group did not follow the routine on most "
                "days. The analysis was by intention to treat.",
                "spans": [
                    a.span(
                        DAWN,
                        e,
                        "RoB2 D2 some concerns: nobody blinded",
                        "Because the interventions differed visibly, neither participants nor the nurses delivering "
                        "the programme were blinded.",
                    ),
                    a.span(
                        DAWN,
                        e,
                        "RoB2 D2 some concerns: 71% adherent on most days",
                        "In the intervention group, 71% of participants followed the routine on at least five days "
                        "a week.",
                    ),
                ],
            },
            {
                "domain": "D3 Missing outcome data",
                "judgement": "low",
                "rationale": "92% provided the primary outcome; missing diaries were imputed.",
                "spans": [
                    a.span(DAWN, e, "RoB2 D3 low: primary outcome for 92%", "110 (92%) provided week-8 diaries"),
                ],
            },
            {
                "domain": "D4 Measurement of the outcome",
                "judgement": "high",
                "rationale": "Sleep diaries were completed by participants who knew their allocation; a subjective "
                "outcome assessed by unblinded participants is at high risk of bias.",
                "spans": [
                    a.span(
                        DAWN,
                        e,
                        "RoB2 D4 high: outcomes self-reported by unblinded participants",
                        "Both outcomes were self-reported.",
                    ),
                ],
            },
            {
                "domain": "D5 Selection of the reported result",
                "judgement": "unclear",
                "rationale": "The article cites no protocol, registration or statistical analysis plan, so the "
                "reported analysis cannot be compared with a pre-specified one.",
                "spans": [],
            },
        ],
        "overall_judgement": "high",
        "grade": {
            "outcome": "sleep-onset latency",
            "certainty": "low",
            "downgraded_for": ["risk of bias", "imprecision"],
        },
        "evidence_basis": "fulltext",
    }


def _report(a: Agent) -> str:
    """The synthesis, with footnotes whose span references are found, never counted."""
    lumen_sol = a.ref(
        LUMEN,
        "At 6 weeks the mean sleep-onset latency was 17.8 ± 9.6 min with morning light and 27.1 ± 12.3 min "
        "with control (mean difference −9.4 min, 95% CI −14.1 to −4.7; p < 0.001).",
        occurrence=1,
    )
    dawn_sol = "; ".join([a.ref(DAWN, _DAWN_SOL, occurrence=1), a.ref(DAWN, _DAWN_SOL, occurrence=0)])
    dawn_rob = a.ref(DAWN, "Both outcomes were self-reported.", excerpt=False)
    lumen_ae = a.ref(
        LUMEN,
        "Eleven participants in the light group (12 %) and four in the control group (4 %) reported mild "
        "headache or eye strain; none stopped the intervention because of it.",
    )
    eoss_r1 = a.ref(
        EOSS,
        "R1. For shift workers with difficulty falling asleep, we suggest a structured, timed\n"
        "morning-light routine (conditional recommendation, low certainty of evidence).",
    )
    return f"""# Morning light and sleep onset in shift workers

> **Fictional example.** Every trial, guideline, name and number below is invented; this report
> exists to show how the publisher checks a synthesis against its sources.

**Question.** {QUESTION}

**Evidence considered.** Two randomised trials (LUMEN, DAWN) and one practice statement (EOSS 2026/1),
all retrieved in this run.

## Findings

In LUMEN, 184 rotating shift workers who sat in front of a 10 000 lux light box for 30 minutes after
waking fell asleep 9.4 minutes sooner at 6 weeks than those given a dim red light, measured by
actigraphy.[^lumen-sol]

In DAWN, an app-guided morning-light routine for 120 night-shift nurses shortened diary-recorded sleep
onset by 6.2 minutes at 8 weeks, but the confidence interval includes no effect.[^dawn-sol]

DAWN's result is at high risk of bias in the measurement of the outcome: both of its outcomes were
recorded by participants who knew which group they were in.[^dawn-rob]

Light was not free of side effects: in LUMEN, 12% of the light group reported mild headache or eye
strain, against 4% of controls, and nobody stopped because of it.[^lumen-ae]

The EOSS practice statement suggests a structured, timed morning-light routine for shift workers who
struggle to fall asleep, as a conditional recommendation on low-certainty evidence.[^eoss-r1]

## Bottom line

Morning light probably shortens sleep onset in shift workers by a few minutes to about ten minutes.
The better-blinded trial shows the larger effect; certainty is low.

[^lumen-sol]: {lumen_sol} — LUMEN, results.
[^dawn-sol]: {dawn_sol}
[^dawn-rob]: {dawn_rob}
[^lumen-ae]: {lumen_ae}
[^eoss-r1]: {eoss_r1}
"""


_CONCEPT_TEXT = f"""---
schema_version: 1
title: Morning light and sleep onset in shift workers
concept: {CONCEPT}
summary: Fictional example. Timed morning light and how quickly shift workers fall asleep.
claims: []
---
# Morning light and sleep onset in shift workers

!!! warning "Fictional example"
    The trials and the practice statement behind this page are invented for the example wiki.

Shift workers often lie awake after a night shift although they are tired: the circadian clock
still signals daytime. Bright light soon after waking is the strongest signal that resets the
clock, which makes a *timed morning-light routine* (a light box or outdoor daylight at the same
time after every main sleep) a cheap candidate treatment.

This page is written by hand above the evidence block. Everything below the block's marker is
written by `publisher promote` from the verified result of run `{RUN_SLUG}`: each footnote quotes
its source exactly, and the build re-checks every quote against the stored snapshot. Follow a
footnote to read the excerpt in context on its source page.

## What the evidence says, in short

- One assessor-blinded trial found sleep onset about ten minutes sooner with morning light.
- A second, open-label trial found a smaller, imprecise effect on self-reported sleep onset, and
  is at high risk of bias in how that outcome was measured.
- A practice statement makes a conditional recommendation for the routine.

"""


# --------------------------------------------------------------------------------------------
# Cleaning, writing, checking


def _write_json(path: Path, data: dict[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")


def _example_concepts(wiki: Path) -> list[Path]:
    """Concept files that a previous promotion of the example run wrote."""
    folder = wiki / "concepts"
    if not folder.is_dir():
        return []
    found = []
    for path in sorted(folder.glob("*.md")):
        head = path.read_text(encoding="utf-8").split("\n---", 1)[0]
        if f"runs/{RUN_SLUG}" in head or f"run_slug: {RUN_SLUG}" in head or f"run: {RUN_SLUG}" in head:
            found.append(path)
    return found


def _clean(wiki: Path, run_dir: Path, pdf: Path) -> None:
    removed = []
    if run_dir.exists():
        shutil.rmtree(run_dir)
        removed.append(str(run_dir.relative_to(wiki)))
    asset = wiki / "assets" / "papers" / f"{hashlib.sha256(pdf.read_bytes()).hexdigest()}.pdf"
    if asset.exists():
        asset.unlink()
        removed.append(str(asset.relative_to(wiki)))
    for concept in sorted({*_example_concepts(wiki), wiki / "concepts" / f"{CONCEPT}.md"}):
        if not concept.exists():
            continue
        concept.unlink()
        removed.append(str(concept.relative_to(wiki)))
    print("removed " + (", ".join(removed) if removed else "nothing (fresh tree)"))


def _check_outcome(run_dir: Path) -> tuple[dict[str, Any], dict[str, Any]]:
    """The result must pass the gate with nothing unresolved; the verification must be Verified."""
    result = json.loads((run_dir / "outputs" / "result.json").read_text(encoding="utf-8"))
    verdict = result.get("gate", {}).get("verdict")
    unresolved = result.get("counts", {}).get("unresolved")
    if verdict != "pass" or unresolved != 0:
        raise BuildError(f"result.json: gate verdict {verdict!r}, {unresolved!r} unresolved; expected pass and 0")
    verification = json.loads((run_dir / "outputs" / "verification.json").read_text(encoding="utf-8"))
    overall = verification.get("verdict") or verification.get("overall")
    if str(overall).lower() != "verified":
        raise BuildError(f"verification.json: verdict {overall!r}; expected Verified")
    failing = [c["check_id"] for c in verification.get("checks", []) if c.get("status") != "pass"]
    if failing:
        raise BuildError(f"verification.json: checks not passing: {', '.join(failing)}")
    return result, verification


EXAMPLE_KEY = "keys/example.pub"
"""The example wiki's public acquisition key (committed; listed under ``trusted_keys``)."""


def _wiki_key(wiki: Path) -> str:
    """The example wiki's acquisition key id, as ``publisher new`` would make it: the public key at
    :data:`EXAMPLE_KEY`, the private key in the user's configuration folder (never in the wiki),
    where ``publisher source fetch`` and ``source local`` find it and sign. A checkout whose user
    does not hold that private key gets a new pair (the public key file is replaced), so the
    rebuilt runs are signed by a key the wiki trusts."""
    from publisher.acquire.signing import key_id_of, load_public_key, new_wiki_key, wiki_key_file

    config = (wiki / "mkdocs.yml").read_text(encoding="utf-8")
    if f"- {EXAMPLE_KEY}" not in config:
        raise BuildError(f"mkdocs.yml does not list {EXAMPLE_KEY} under extra: evidence: trusted_keys")
    public = wiki / EXAMPLE_KEY
    if public.is_file():
        key_id = key_id_of(load_public_key(public))
        if wiki_key_file([key_id]) is not None:
            return key_id
        public.unlink()
    _, key_id = new_wiki_key(public)
    print(f"made the example's key pair: {EXAMPLE_KEY} (key id {key_id[:16]}…), private key outside the wiki")
    return key_id


def build(wiki: Path, port: int = DEFAULT_PORT) -> dict[str, Any]:
    """Rebuild the example run under ``wiki`` from scratch; returns a summary of what was made."""
    wiki = wiki.resolve()
    if not (wiki / "mkdocs.yml").is_file():
        raise BuildError(f"{wiki} is not a wiki root (no mkdocs.yml)")
    sources = wiki / "examples" / "sources"
    pdf = sources / PDF_NAME
    run_rel = f"runs/{RUN_SLUG}"
    run_dir = wiki / run_rel
    pub = Publisher(_publisher_command(), wiki, _child_env())

    _clean(wiki, run_dir, pdf)
    key_id = _wiki_key(wiki)
    pub("run", "init", run_rel, "--slug", RUN_SLUG, "--gate", "--question", QUESTION)

    acquired: dict[str, dict[str, Any]] = {}
    with serve(sources, port) as base:
        acquired[LUMEN] = pub(
            "source", "fetch", "--run-dir", run_rel, "--url", f"{base}/lumen-trial.txt",
            "--access", "full_text", "--doi", LUMEN_ID.removeprefix("doi:"),
            "--title", "Morning bright-light exposure and sleep-onset latency in rotating shift workers: "
            "the LUMEN randomised controlled trial",
            json_out=True,
        )  # fmt: skip
        acquired[DAWN] = pub("source", "fetch", "--run-dir", run_rel, "--url", f"{base}/dawn-trial.xml", json_out=True)
    acquired[EOSS] = pub(
        "source", "local", "--run-dir", run_rel, "--file", str(pdf.relative_to(wiki)), "--wiki", ".",
        "--access", "guideline", "--doi", EOSS_ID.removeprefix("doi:"),
        json_out=True,
    )  # fmt: skip
    for key, info in acquired.items():
        if not info.get("fresh"):
            raise BuildError(f"{key}: acquisition was not logged as fresh ({info.get('event_id')})")
        if info.get("signed_by") != key_id:
            raise BuildError(f"{key}: acquisition was not signed by the example's key ({info.get('event_id')})")
        print(f"  {key}: {info['source_id']} ({info['chars']} chars, {info['access']}, {info['event_id']} fresh)")

    agent = Agent(pub, run_rel, acquired)
    records = {
        "workspace/extractions/lumen.json": _lumen_extraction(agent),
        "workspace/extractions/dawn.json": _dawn_extraction(agent),
        "workspace/extractions/eoss-2026-1.json": _eoss_extraction(agent),
        "workspace/appraisals/dawn-rob2.json": _dawn_appraisal(agent),
    }
    for relative, record in records.items():
        _write_json(run_dir / relative, record)
    (run_dir / "outputs").mkdir(exist_ok=True)
    (run_dir / "outputs" / "report.md").write_text(_report(agent), encoding="utf-8")
    print(f"wrote {len(records)} agent records and outputs/report.md (offsets from 'publisher source spans')")

    pub("assemble", "--run-dir", run_rel, "--gate")
    pub("verify", "--run-dir", run_rel, "--gate")
    pub("render", "--run-dir", run_rel)
    before = {p.name for p in (wiki / "concepts").glob("*.md")} if (wiki / "concepts").is_dir() else set()
    concept = wiki / "concepts" / f"{CONCEPT}.md"
    concept.parent.mkdir(exist_ok=True)
    concept.write_text(_CONCEPT_TEXT, encoding="utf-8")
    print(f"wrote the prose of concepts/{CONCEPT}.md (promotion appends the evidence block)")
    pub("promote", "--run-dir", run_rel, "--wiki", ".", "--concept", CONCEPT, "--check")
    pub("promote", "--run-dir", run_rel, "--wiki", ".", "--concept", CONCEPT)
    result, verification = _check_outcome(run_dir)
    after = sorted(p.name for p in (wiki / "concepts").glob("*.md"))
    summary = {
        "run_dir": run_rel,
        "sources": {k: v["source_id"] for k, v in acquired.items()},
        "accepted": len(result.get("accepted", [])),
        "spans_checked": result.get("counts", {}).get("spans_checked"),
        "verification": verification.get("verdict") or verification.get("overall"),
        "concepts": after,
        "new_concepts": sorted(set(after) - before),
    }
    print(
        f"done: {summary['accepted']} accepted artifacts, {summary['spans_checked']} spans checked, "
        f"verification {summary['verification']}; concepts: {', '.join(after) or 'none'}"
    )
    print("next: .venv/bin/mkdocs build")
    return summary


def main(argv: list[str] | None = None) -> int:
    """Command-line entry: one line on failure, exit 1."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--wiki", type=Path, default=HERE.parent, help="wiki root (default: the repository)")
    parser.add_argument("--port", type=int, default=DEFAULT_PORT, help=f"loopback port (default {DEFAULT_PORT})")
    args = parser.parse_args(argv)
    try:
        build(args.wiki, args.port)
    except BuildError as exc:
        print(f"build_example: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
