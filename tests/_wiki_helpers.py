"""Helpers for wiki tests: tiny wikis with runs whose result.json is written by the real assembler.

A result.json written by hand is never what assembling the run produces, so the wiki check,
promotion and the build refuse it (C-ASSEMBLER); tests that attack results edit an assembled one.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import re
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from _policy import keys_of

from publisher.acquire.signing import load_signer
from publisher.gate.inputs import RunOptions
from publisher.gate.result import Result
from publisher.kernel.canonical import canonical_bytes, sha256_hex
from publisher.kernel.eventlog import append_event
from publisher.kernel.findings import Finding
from publisher.kernel.reasons import Reason
from publisher.kernel.store import build_record
from publisher.runs import Run, init_run

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared"
HOOK_SHIM = REPO / "hooks" / "evidence.py"

WHEN = "2030-01-02T03:04:05Z"


EXTENSIONS = ("footnotes", "attr_list", "md_in_html")

HEAVY_EXTENSIONS = (
    *EXTENSIONS,
    "smarty",
    "abbr",
    "def_list",
    "pymdownx.emoji",
    "pymdownx.smartsymbols",
    "pymdownx.arithmatex",
    "pymdownx.mark",
    "pymdownx.tilde",
    "pymdownx.caret",
    "pymdownx.betterem",
    "pymdownx.magiclink",
    "pymdownx.keys",
    "pymdownx.critic",
    "pymdownx.inlinehilite",
)
"""Extensions that would each like to rewrite some character of an excerpt."""


def mkdocs_yml(
    site_name: str = "Test wiki",
    *,
    extensions: tuple[str, ...] = EXTENSIONS,
    hooks: tuple[str, ...] = (),
    extra: str = "",
) -> str:
    """A minimal Material wiki config wired to the evidence hook (plus any test hooks)."""
    hook_lines = "".join(f"  - {h}\n" for h in ("hooks/evidence.py", *hooks))
    ext_lines = "".join(f"  - {e}\n" for e in extensions)
    return (
        f"site_name: {json.dumps(site_name)}\n"
        "docs_dir: docs\n"
        "theme:\n  name: material\n"
        f"hooks:\n{hook_lines}"
        f"markdown_extensions:\n{ext_lines}"
        "plugins: []\n"
        f"{extra}"
    )


def make_wiki(
    root: Path, *, extensions: tuple[str, ...] = EXTENSIONS, hooks: dict[str, str] | None = None, extra: str = ""
) -> Path:
    """A wiki folder: mkdocs.yml, docs/index.md, the hook shim, empty runs/ and concepts/.

    ``hooks`` maps extra hook file names (under ``hooks/``) to their source.
    """
    root.mkdir(parents=True, exist_ok=True)
    (root / "hooks").mkdir(exist_ok=True)
    for name, source in (hooks or {}).items():
        (root / "hooks" / name).write_text(source, encoding="utf-8")
    names = tuple(f"hooks/{n}" for n in (hooks or {}))
    text = mkdocs_yml(extensions=extensions, hooks=names, extra=extra)
    (root / "mkdocs.yml").write_text(text, encoding="utf-8")
    (root / "docs").mkdir(exist_ok=True)
    (root / "docs" / "index.md").write_text("# Home\n\nAn evidence wiki.\n", encoding="utf-8")
    (root / "hooks" / "evidence.py").write_bytes(HOOK_SHIM.read_bytes())
    (root / "runs").mkdir(exist_ok=True)
    (root / "concepts").mkdir(exist_ok=True)
    return root


@dataclass
class Claim:
    """A claim to accept: field, label, and offsets into a source added with :meth:`RunBuilder.source`."""

    field: str
    claim: str | None
    source_id: str
    start: int
    end: int


@dataclass
class RunBuilder:
    """Builds one run under a wiki: snapshots, fetch events, and a result.json."""

    wiki: Path
    slug: str
    question: str | None = None
    key: Path | None = None
    """A signing key: every fresh event this builder logs is signed with it."""
    run: Run = field(init=False)
    texts: dict[str, str] = field(default_factory=dict)
    records: dict[str, dict[str, Any]] = field(default_factory=dict)
    artifacts: list[dict[str, Any]] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.run = init_run(self.wiki / "runs" / self.slug, self.slug)
        if self.question is not None:
            config = json.loads(self.run.config_path.read_text(encoding="utf-8"))
            config["question"] = self.question
            os.chmod(self.run.config_path, 0o644)
            self.run.config_path.write_bytes(canonical_bytes(config) + b"\n")
        self.signer = load_signer(self.key, self.run.name(self.run.load_config())) if self.key else None

    def source(
        self,
        url: str,
        text: str,
        *,
        paper: dict[str, str | None] | None = None,
        access: str = "full_text",
        origin: str = "pmc",
        title: str | None = "A title",
        asset: dict[str, Any] | None = None,
        fresh_type: str = "fetch",
        surface: dict[str, Any] | None = None,
        identity: dict[str, Any] | None = None,
        supersedes: str | None = None,
    ) -> str:
        """Store a snapshot and log a fresh event for it; returns its source id.

        ``surface`` is a declared surface without its manifest hash (sealed in the snapshot and
        recorded in the event, as acquisition does)."""
        record = build_record(
            url=url,
            text=text,
            title=title,
            retrieved_at=WHEN,
            access=access,
            origin=origin,
            paper=paper,
            asset=asset,
            surface=surface,
            identity=identity,
            supersedes=supersedes,
        )
        snap, _ = self.run.store.put(record)
        digest = asset["sha256"] if asset and fresh_type == "local_pdf" else sha256_hex(text.encode("utf-8"))
        append_event(
            self.run.events_path,
            type=fresh_type,
            source_id=snap.source_id,
            url=url,
            fresh=True,
            sha256=digest,
            detail="test fixture",
            record_hash=snap.record_hash,
            signer=self.signer,
            merkle_root=snap.merkle_root,
            merkle_size=snap.merkle_size,
            surface=snap.surface,
            supersedes=snap.supersedes,
        )
        self.texts[snap.source_id] = text
        self.records[snap.source_id] = record
        return snap.source_id

    def record(self, kind: str, name: str, record: dict[str, Any]) -> None:
        """Write an agent record (``workspace/extractions`` or ``workspace/appraisals``)."""
        folder = self.run.extractions_dir if kind == "extraction" else self.run.appraisals_dir
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"{name}.json").write_text(json.dumps(record, ensure_ascii=False, indent=2), encoding="utf-8")

    def assemble(self, *, gate: bool = False) -> dict[str, Any]:
        """Assemble the run's records with the real assembler; returns result.json."""
        from publisher.gate.assemble import assemble_run
        from publisher.kernel.errors import UsageError
        from publisher.kernel.trust import KeyRing

        try:
            keys = keys_of(self.wiki)
        except UsageError:  # a test of a bad configuration: the build refuses the configuration itself
            keys = KeyRing()
        assembly = assemble_run(self.run, RunOptions(keys, wiki_root=self.wiki), gate=gate or None, write=True)
        Result.model_validate(assembly.result)
        return assembly.result

    def extraction(self, evidence_id: str, claims: list[Claim], name: str | None = None) -> None:
        """Write an extraction record whose record-level spans are ``claims``."""
        spans = [{"claim": c.claim, "source_id": c.source_id, "start": c.start, "end": c.end} for c in claims]
        record = {"schema_version": 1, "evidence_id": evidence_id, "design": "trial", "spans": spans}
        self.record("extraction", name or re.sub(r"[^a-z0-9]+", "-", evidence_id.lower()), record)

    def unresolved(self, name: str = "broken") -> None:
        """Add an extraction the gate rejects: its evidence id names a paper its snapshot is not
        (NO_PAPER_ID, a gated code: with the gate off the rest of the run stays publishable)."""
        sid = next(iter(self.texts))
        self.extraction("pmid:999999", [Claim("spans[0]", None, sid, 0, 5)], name=name)


TRICKY = (
    "Intro. *stars* and _under_ <b>bold</b> [x](y) &amp; `tick` $$x$$ :smile: -- ... "
    "\"straight\" 'single' (c) ==x== ~~x~~ ^^x^^ 1st H~2~O\nsecond\tline & < > end."
)
"""Text whose every character some Markdown extension would like to rewrite."""


def sample_run(
    wiki: Path,
    slug: str = "alpha",
    *,
    question: str | None = "Does CBT help?",
    title: str | None = "A title",
    base_url: str = "https://example.org/",
    key: Path | None = None,
) -> RunBuilder:
    """A run with three sources and three accepted artifacts, one citing overlapping spans.

    The agent records are written and the real assembler produces result.json. ``title`` and
    ``base_url`` are those of the two web sources (the PDF's are fixed).
    """
    rb = RunBuilder(wiki, slug, question=question, key=key)
    text_a = "Background. " + TRICKY + " Results: SMD -0.41 (95% CI -0.7 to -0.1) at 12 weeks."
    text_b = "Appraisal text. Randomisation was adequate and allocation was concealed. Blinding unclear."
    a = rb.source(base_url + "a", text_a, paper={"pmid": "111", "doi": "10.1/a", "pmcid": None}, title=title)
    b = rb.source(
        base_url + "b", text_b, paper={"pmid": "222", "doi": None, "pmcid": None}, access="abstract", title=title
    )
    t_start = text_a.index("Intro.")
    t_end = text_a.index("end.") + 4
    r_start = text_a.index("SMD")
    pdf_bytes = b"%PDF-1.4 user supplied fixture"
    digest = hashlib.sha256(pdf_bytes).hexdigest()
    papers = wiki / "assets" / "papers"
    papers.mkdir(parents=True, exist_ok=True)
    (papers / f"{digest}.pdf").write_bytes(pdf_bytes)
    text_c = "Page one of a PDF. Adherence was 87% over 8 weeks."
    c = rb.source(
        "file:///papers/" + digest + ".pdf",
        text_c,
        paper={"pmid": None, "doi": "10.9/pdf", "pmcid": None},
        origin="user-supplied-pdf",
        asset={"path": f"assets/papers/{digest}.pdf", "sha256": digest, "bytes": len(pdf_bytes)},
        fresh_type="local_pdf",
    )
    p_start = text_c.index("Adherence")
    s = text_b.index("Randomisation")

    def span(claim: str | None, sid: str, start: int, end: int) -> dict[str, Any]:
        return {"claim": claim, "source_id": sid, "start": start, "end": end}

    rb.record(
        "extraction",
        "pmid-111",
        {
            "schema_version": 1,
            "evidence_id": "pmid:111",
            "pmid": "111",
            "design": "randomised trial",
            "population": "adolescents with depression",
            "spans": [span("Adolescents with depression.", a, t_start, t_end)],
            "outcomes": [
                {
                    "name": "CDI-2",
                    "effect": -0.41,
                    "ci_low": -0.7,
                    "ci_high": -0.1,
                    "spans": [
                        span("SMD -0.41 at 12 weeks.", a, r_start, r_start + 12),
                        span(None, a, r_start + 4, r_start + 30),
                    ],
                }
            ],
        },
    )
    rb.record(
        "appraisal",
        "pmid-222",
        {
            "schema_version": 1,
            "evidence_id": "pmid:222",
            "tool": "RoB2",
            "domains": [
                {
                    "domain": "randomisation",
                    "judgement": "low",
                    "rationale": "adequate",
                    "spans": [span("Low risk: randomisation <adequate>.", b, s, s + 30)],
                }
            ],
            "overall_judgement": "low",
        },
    )
    rb.record(
        "extraction",
        "doi-pdf",
        {
            "schema_version": 1,
            "evidence_id": "doi:10.9/PDF",
            "design": "cohort",
            "spans": [span("Adherence 87%.", c, p_start, p_start + 22)],
        },
    )
    rb.assemble()
    return rb


WARNING_HOOK = """
import logging
log = logging.getLogger("mkdocs.hooks.warner")

def on_page_markdown(markdown, page, config, files):
    if page.file.src_uri == "index.md":
        log.warning("a warning that --strict turns into an abort")
    return markdown
"""
"""A hook file that logs one warning while the pages are built: ``--strict`` must abort the build."""


def tree_digest(root: Path) -> dict[str, str]:
    """Every file under ``root`` (relative path -> sha256), links and modes included; Python's
    byte-code caches (``__pycache__``, written by the interpreter when MkDocs imports the wiki's
    hook module, unless PYTHONDONTWRITEBYTECODE is set) left out."""
    out: dict[str, str] = {}
    if not root.exists():
        return out
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root).as_posix()
        if "__pycache__" in path.relative_to(root).parts:
            continue
        if path.is_symlink():
            out[rel] = "link:" + os.readlink(path)
        elif path.is_file():
            out[rel] = hashlib.sha256(path.read_bytes()).hexdigest() + f":{path.stat().st_mode:o}"
        else:
            out[rel + "/"] = "dir"
    return out


_RETIRED = re.compile(r"\..+-old-\d+-[0-9a-f]{12}")
"""A previous site retired by a build (``.<site>-old-<pid>-<random>``), being removed by a
detached process after the build returned."""


def leftovers(parent: Path, settle: float = 30.0) -> list[str]:
    """Staging or aside folders a build left beside the site.

    Retired previous sites (of any site folder in ``parent``) are waited for first, up to
    ``settle`` seconds, before anything counts as left."""
    deadline = time.monotonic() + settle
    while any(_RETIRED.fullmatch(p.name) for p in parent.iterdir()) and time.monotonic() < deadline:
        time.sleep(0.02)
    return sorted(p.name for p in parent.iterdir() if p.name.startswith(".site-"))


def writable(path: Path) -> Path:
    """Make a write-once file writable so a test can tamper with it."""
    os.chmod(path, 0o644)
    return path


def edit_json(path: Path, change: Any) -> None:
    """Load, change (a function of the parsed value), and write back a JSON file."""
    data = json.loads(path.read_text(encoding="utf-8"))
    change(data)
    writable(path).write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")


def tamper(kind: str, rb: RunBuilder) -> str:
    """Apply one kind of tampering to a sample run's wiki; returns the reason code or check id it must raise."""
    wiki = rb.wiki
    sid = next(iter(rb.texts))
    snap = rb.run.sources_dir / f"{sid}.json"
    if kind == "snapshot-text":
        edit_json(snap, lambda d: d.__setitem__("text", d["text"].replace("Results", "Resulta")))
        return "SNAPSHOT_HASH_MISMATCH"
    if kind == "snapshot-meta":
        edit_json(snap, lambda d: d.__setitem__("title", "A different title"))
        return "SNAPSHOT_HASH_MISMATCH"
    if kind == "snapshot-missing":
        snap.unlink()
        return "UNKNOWN_SOURCE"
    if kind == "result-excerpt":
        edit_json(rb.run.result_path, lambda d: d["accepted"][0]["claims"][0].__setitem__("excerpt", "forged"))
        return "EXCERPT_MISMATCH"
    if kind == "result-offsets":
        edit_json(rb.run.result_path, lambda d: d["accepted"][0]["claims"][0].__setitem__("end", 10**6))
        return "SPAN_OUT_OF_RANGE"
    if kind == "result-url":
        edit_json(rb.run.result_path, lambda d: d["accepted"][0].__setitem__("url", "https://evil.example/"))
        return "C-ASSEMBLER"
    if kind == "event-line":
        path = writable(rb.run.events_path)
        lines = path.read_bytes().split(b"\n")
        lines[0] = lines[0].replace(b"test fixture", b"test fixturE")
        path.write_bytes(b"\n".join(lines))
        return "C-EVENT-LOG"
    if kind == "event-truncated":
        path = writable(rb.run.events_path)
        lines = path.read_bytes().split(b"\n")
        path.write_bytes(b"\n".join(lines[:1]) + b"\n")
        return "C-EVENT-LOG"
    if kind == "pdf-asset":
        (pdf,) = (wiki / "assets" / "papers").glob("*.pdf")
        pdf.write_bytes(pdf.read_bytes() + b" appended")
        return "ASSET_HASH_MISMATCH"
    if kind == "concept-excerpt":
        (concept,) = (wiki / "concepts").glob("*.md")
        text = concept.read_text(encoding="utf-8")
        head, tail = text.split("\n[^", 1)
        concept.write_text(head + "\n[^" + tail.replace('"Intro.', '"Intr0.', 1), encoding="utf-8")
        return "EXCERPT_MISMATCH"
    if kind == "concept-offsets":
        (concept,) = (wiki / "concepts").glob("*.md")
        text = concept.read_text(encoding="utf-8")
        concept.write_text(re.sub(r"#12-166", "#12-167", text, count=1), encoding="utf-8")
        return "SOURCE_OUTSIDE_ACCEPTED"
    raise ValueError(kind)


TAMPERINGS = (
    "snapshot-text",
    "snapshot-meta",
    "snapshot-missing",
    "result-excerpt",
    "result-offsets",
    "result-url",
    "event-line",
    "event-truncated",
    "pdf-asset",
)
"""Tamperings of a run; concepts add ``concept-excerpt`` and ``concept-offsets``."""


def build_wiki(wiki: Path, **overrides: Any) -> Any:
    """Run a real in-process ``mkdocs build`` of ``wiki`` as the command does (``on_startup``,
    the build, ``on_shutdown`` in a ``finally``); returns the config."""
    from mkdocs.commands.build import build
    from mkdocs.config import load_config

    config = load_config(str(wiki / "mkdocs.yml"), **overrides)
    config.plugins.on_startup(command="build", dirty=False)
    try:
        build(config)
    finally:
        config.plugins.on_shutdown()
    return config


def refused_build(wiki: Path, **overrides: Any) -> tuple[Finding, ...]:
    """Build ``wiki`` in-process (:func:`build_wiki`), which must be refused; the findings of the
    refusal (fails the test when the build passes or fails without an evidence refusal)."""
    import pytest
    from mkdocs.exceptions import Abort, PluginError

    with pytest.raises((Abort, PluginError)) as info:
        build_wiki(wiki, **overrides)
    return build_findings(info.value)


def build_findings(error: BaseException) -> tuple[Finding, ...]:
    """The findings of the evidence refusal behind ``error`` (MkDocs turns the plugin's error
    into an ``Abort`` raised while handling it, so the refusal is its context)."""
    from publisher.site.lifecycle.refusal import refusal_of

    refusal = refusal_of(error)
    if refusal is None:
        raise AssertionError(f"the build failed without an evidence refusal: {error!r}")
    return refusal.findings


def finding_of(data: dict[str, Any]) -> Finding:
    """A finding read back from its JSON (``Finding.to_dict``: ``publisher check --json`` and the
    build's ``evidence finding:`` lines)."""
    names = {f.name for f in dataclasses.fields(Finding)} - {"reason"}
    code = data["reason_code"]
    return Finding(Reason(code) if code is not None else None, **{name: data[name] for name in names})


def logged_findings(output: str) -> list[Finding]:
    """The findings a refused ``mkdocs build -v`` logged, one ``evidence finding:`` line of JSON
    each (:mod:`publisher.site.lifecycle.refusal`), read back in order."""
    from publisher.site.lifecycle.refusal import FINDING_LINE

    found = []
    for line in output.splitlines():
        at = line.find(FINDING_LINE)
        if at >= 0:
            found.append(finding_of(json.loads(line[at + len(FINDING_LINE) :])))
    return found


def codes(findings: Any) -> set[str]:
    """The codes (reason code, else check id) of ``findings``."""
    return {f.code for f in findings}


def count_asset_hashes(monkeypatch: Any) -> list[str]:
    """Record every asset the snapshot workers hash; any other hashing of an asset fails the test."""
    import pytest

    from publisher.kernel import assets
    from publisher.kernel import snapshots as checks

    hashed: list[str] = []
    real = checks.hash_asset

    def counting(root: str, relative: str) -> str | None:
        hashed.append(relative)
        return real(root, relative)

    monkeypatch.setattr(checks, "hash_asset", counting)
    monkeypatch.setattr(assets.AssetChecker, "_hash", lambda self, rel: pytest.fail(f"{rel} hashed again"))
    return hashed


class RecordingHelpers(ThreadPoolExecutor):
    """The build's helper pool on threads, in-process, recording the name of every job it was
    handed, in order (tests patch ``helper_pool`` with it)."""

    def __init__(self, max_workers: int = 2) -> None:
        super().__init__(max_workers=max_workers)
        self.jobs: list[str] = []

    def submit(self, fn, /, *args, **kwargs):  # type: ignore[no-untyped-def, override]
        self.jobs.append(fn.__name__)
        return super().submit(fn, *args, **kwargs)
