"""Everything an assembly reads from a run, read once, and the list of inputs that digests it.

:func:`load_inputs` reads the run's config, agent records, report, independent checkers' verdicts
(``workspace/verifier.json`` and an upstream ``outputs/verification.json``), corpus and event log,
each through the fail-closed reader. An input that cannot be read at all (a malformed config, a
report that is not UTF-8, a verifier file or corpus line of the wrong shape) raises a
:class:`~publisher.kernel.errors.UsageError` with ``SCHEMA_ERROR``: the run cannot be assembled.

``inputs`` is this list, in this order (digests are ``"sha256:"`` + hex of the file's exact bytes,
null when absent), and ``inputs_hash`` is ``"sha256:" + sha256(canonical_bytes(inputs))``:

1. ``["run_slug", slug]``
2. ``["config", digest of config.json]``
3. ``["record", "workspace/<folder>/<name>.json", digest]`` for every agent record, extractions
   then appraisals, each folder in name order
4. ``["verifier", digest of workspace/verifier.json]``
5. ``["verification", digest of outputs/verification.json]`` when that file is another
   verifier's (upstream's ``unsupported_claims``); null when absent or written by ``publisher
   verify``, whose report holds no verdict on artifacts (:mod:`.verdicts`)
6. ``["report", digest of outputs/report.md]``
7. ``["corpus", digest of corpus.jsonl]``
8. ``["source", source_id, status, record_hash, content_hash]`` for every referenced snapshot in
   source-id order; ``status`` is ``ok``, ``UNKNOWN_SOURCE`` or ``SNAPSHOT_HASH_MISMATCH``, and the
   two hashes are null unless it is ``ok``
9. ``["asset", path, bare hex sha256 of the file now or null]`` for every asset of those snapshots,
   in path order (freshness of a local PDF depends on the file)
10. ``["log", log.events, log.head]``

Provenance inputs (CONTRACT section 12), appended only where they apply, so a run assembled
before them hashes as it did:

11. ``["raw", sha256, "ok" or the problem]`` for every receipt's raw file the fresh-fetch rule
    consulted, in digest order

The wiki's trust policy (its trusted keys) is not among them: it is an input of the check,
declared in the result's ``policy`` (:meth:`.freshness.Provenance.declared`), so the same run
hashes the same in any wiki, and a change of keys is reported as such, never as an edit.

The same inputs therefore always assemble to the same result apart from ``generated_at``. The
result stores the list itself beside its digest, so the verifier can name the input that changed
since assembly ("stale") and tell it from a result edited by hand.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..kernel import _fs
from ..kernel.blobs import BlobChecker
from ..kernel.canonical import StrictJSONError, canonical_bytes, loads_strict, prefixed, sha256_hex
from ..kernel.errors import EventLogError, UsageError
from ..kernel.eventlog import LogState, read_log
from ..kernel.eventviews import EventView
from ..kernel.reasons import Reason
from ..kernel.shapes import ConfigView
from ..kernel.trust import KeyRing
from ..parallel import CheckedSnapshots, ProgressFn
from ..runs import Run, find_wiki_root
from .corpus import Corpus, parse_corpus
from .freshness import Provenance
from .records import AgentRecord, read_records
from .reportmd import Footnote, ProseBlock, read_report
from .verdicts import UpstreamVerification, read_upstream_verification

if TYPE_CHECKING:
    from concurrent.futures import Executor

__all__ = ["RunOptions", "RunInputs", "load_inputs", "file_digest", "gate_setting", "inputs_digest", "changed_inputs"]


def file_digest(path: Path) -> tuple[str | None, bytes | None]:
    """``sha256:`` of a regular file's bytes and the bytes; ``(None, None)`` when it is absent."""
    try:
        data = _fs.read_regular(path, follow_symlinks=False)
    except FileNotFoundError:
        return None, None
    except _fs.NotRegularFileError as exc:
        raise UsageError(str(exc), reason=Reason.SCHEMA_ERROR, path=str(path)) from exc
    except OSError as exc:
        raise UsageError(f"cannot read {path}: {exc.strerror or exc}", path=str(path)) from exc
    return prefixed(sha256_hex(data)), data


def gate_setting(cli_gate: bool | None, config: ConfigView) -> tuple[bool, str | None]:
    """Whether the gate is on and what turned it on (``--gate`` first, then the config)."""
    if cli_gate:
        return True, "--gate"
    if config.gates.evidence_kernel:
        return True, "gates.evidence_kernel"
    return False, None


class RunOptions:
    """How a command reads a run: where its wiki is, which keys it trusts, and how the snapshots
    are read (the one options object of :func:`~publisher.gate.assemble.assemble_run`,
    :func:`~publisher.gate.pipeline.check_run` and :func:`~publisher.gate.pipeline.verify_run`).

    ``trusted_keys``: the wiki's trusted keys, from the policy MkDocs resolved (``KeyRing()``:
    unsigned, on purpose); ``wiki_root``: the wiki whose ``assets/papers/`` holds user-supplied
    PDFs (default: found from the run); ``executor``: where snapshots are verified (default: a
    pool of ``workers`` processes); ``progress``: told ``(done, total)`` as snapshots are
    verified. A plain slotted class: a dataclass compiles its methods at import, which every
    ``assemble`` and ``verify`` paid, and nothing compares, copies or changes these."""

    __slots__ = ("executor", "progress", "trusted_keys", "wiki_root", "workers")

    def __init__(
        self,
        trusted_keys: KeyRing,
        wiki_root: Path | None = None,
        executor: Executor | None = None,
        workers: int | None = None,
        progress: ProgressFn | None = None,
    ) -> None:
        self.trusted_keys, self.wiki_root, self.executor = trusted_keys, wiki_root, executor
        self.workers, self.progress = workers, progress

    def load(self, run: Run) -> RunInputs:
        """The run's inputs, read with these options (:func:`load_inputs`)."""
        return load_inputs(run, wiki_root=self.wiki_root, trusted_keys=self.trusted_keys)

    def reader(self, run: Run, inputs: RunInputs) -> CheckedSnapshots:
        """A fresh snapshot reader over the run's sources, reading on this executor."""
        return CheckedSnapshots(
            run.sources_dir,
            executor=self.executor,
            workers=self.workers,
            progress=self.progress,
            assets_root=inputs.wiki_root,
        )


class RunInputs:
    """What one assembly reads of a run, besides the snapshots (which a reader verifies).

    ``footnotes``: the report's footnote definitions, None when the run has no report;
    ``verifier``: artifact id -> the independent checker's reasons for calling it unsupported;
    ``verification``: the upstream verifier's ``unsupported_claims`` (empty unless another
    verifier wrote the file); ``log``: the whole event log as found on disk; ``provenance``: the
    trusted keys, the run's name and its raw bytes, for the fresh-fetch rule; ``log_problem``: why
    the log could not be read at all (a link, folder or FIFO in its place), or None;
    ``report_blocks``: the report's headings and prose outside footnotes and ``report_text`` the
    report as written (both None when the run has no report). A plain slotted class: a dataclass
    compiles its methods each time its module is imported, which every ``assemble`` and
    ``verify`` pays, and nothing compares these.
    """

    __slots__ = (
        "config",
        "config_digest",
        "corpus",
        "corpus_digest",
        "footnotes",
        "log",
        "log_problem",
        "provenance",
        "records",
        "report_blocks",
        "report_digest",
        "report_text",
        "run",
        "slug",
        "verification",
        "verifier",
        "verifier_digest",
        "wiki_root",
    )  # fmt: skip

    def __init__(
        self,
        run: Run,
        config: ConfigView,
        slug: str,
        wiki_root: Path | None,
        config_digest: str | None,
        records: list[AgentRecord],
        report_digest: str | None,
        footnotes: list[Footnote] | None,
        verifier: dict[str, list[str]],
        verifier_digest: str | None,
        verification: UpstreamVerification,
        corpus: Corpus,
        corpus_digest: str | None,
        log: LogState[EventView],
        provenance: Provenance,
        log_problem: str | None = None,
        report_blocks: list[ProseBlock] | None = None,
        report_text: str | None = None,
    ) -> None:
        self.run, self.config, self.slug, self.wiki_root = run, config, slug, wiki_root
        self.config_digest, self.records, self.report_digest = config_digest, records, report_digest
        self.footnotes, self.verifier, self.verifier_digest = footnotes, verifier, verifier_digest
        self.verification, self.corpus, self.corpus_digest = verification, corpus, corpus_digest
        self.log, self.provenance, self.log_problem = log, provenance, log_problem
        self.report_blocks, self.report_text = report_blocks, report_text


def _read_verifier(run: Run) -> tuple[dict[str, list[str]], str | None]:
    """``workspace/verifier.json``: artifact id -> reasons; a malformed file is fatal."""
    digest, data = file_digest(run.verifier_path)
    if data is None:
        return {}, None
    try:
        raw = loads_strict(data)
    except (StrictJSONError, ValueError) as exc:
        raise UsageError(f"{run.verifier_path}: not strict JSON ({exc})", reason=Reason.SCHEMA_ERROR) from exc
    entries = raw.get("unsupported") if isinstance(raw, dict) else None
    if not isinstance(entries, list):
        raise UsageError(f'{run.verifier_path}: expected {{"unsupported": [...]}}', reason=Reason.SCHEMA_ERROR)
    out: dict[str, list[str]] = {}
    for index, entry in enumerate(entries):
        if not isinstance(entry, dict) or not isinstance(entry.get("artifact_id"), str):
            raise UsageError(
                f"{run.verifier_path}: unsupported[{index}] has no artifact_id string", reason=Reason.SCHEMA_ERROR
            )
        reason = entry.get("reason")
        out.setdefault(entry["artifact_id"], []).append(reason if isinstance(reason, str) else "no reason given")
    return out, digest


@contextmanager
def _about(path: Path) -> Iterator[None]:
    """An input that cannot be read names its file (``context["path"]``), so the wiki check
    reports the finding on that file rather than on the run's config."""
    try:
        yield
    except UsageError as exc:
        exc.context.setdefault("path", str(path))
        raise


def load_inputs(run: Run, *, trusted_keys: KeyRing, wiki_root: Path | None = None) -> RunInputs:
    """Read every input of ``run`` once (snapshots aside). Raises UsageError when one is unreadable.

    ``wiki_root`` locates user-supplied PDFs (default: :func:`~publisher.runs.find_wiki_root`, from
    the upstream layout or the nearest ``mkdocs.yml``). ``trusted_keys`` are the keys a fresh
    acquisition must be signed by, from the policy the caller resolved (an empty ring: unsigned
    provenance, as the wiki's configuration says).
    """
    try:  # read once, for the config and its digest alike (as the two readings below would read it)
        config_bytes: bytes | None = _fs.read_regular(run.config_path, follow_symlinks=False)
    except OSError:
        config_bytes = None  # not a regular file here: each reading says why, as it would
    config = run.load_config(config_bytes)
    if config_bytes is None:
        config_digest, _ = file_digest(run.config_path)
    else:
        config_digest = prefixed(sha256_hex(config_bytes))
    with _about(run.verifier_path):
        verifier, verifier_digest = _read_verifier(run)
    records = read_records(run.extractions_dir, run.appraisals_dir)
    footnotes: list[Footnote] | None = None
    blocks: list[ProseBlock] | None = None
    text: str | None = None
    with _about(run.report_md):
        report_digest, report_bytes = file_digest(run.report_md)
        if report_bytes is not None:
            try:
                text = report_bytes.decode("utf-8")
            except UnicodeDecodeError as exc:
                raise UsageError(
                    f"{run.report_md} is not UTF-8 (byte {exc.start})", reason=Reason.SCHEMA_ERROR
                ) from exc
            parsed = read_report(text)
            footnotes, blocks = parsed.footnotes, parsed.blocks
    with _about(run.verification_path):
        verification = read_upstream_verification(run)
    with _about(run.corpus_path):
        corpus_digest, corpus_bytes = file_digest(run.corpus_path)
        corpus = parse_corpus(corpus_bytes)
    log_problem = None
    try:
        log = read_log(run.events_path)
    except EventLogError as exc:
        log, log_problem = LogState(exists=True), exc.message
    root = wiki_root if wiki_root is not None else find_wiki_root(run.path)
    keys = trusted_keys
    return RunInputs(
        run=run,
        config=config,
        slug=run.slug(config),
        wiki_root=root,
        config_digest=config_digest,
        records=records,
        report_digest=report_digest,
        footnotes=footnotes,
        verifier=verifier,
        verifier_digest=verifier_digest,
        verification=verification,
        corpus=corpus,
        corpus_digest=corpus_digest,
        log=log,
        provenance=Provenance(keys, run.name(config), BlobChecker(run.raw_dir)),
        log_problem=log_problem,
        report_blocks=blocks,
        report_text=text,
    )


def inputs_digest(inputs: Sequence[Any]) -> str:
    """``inputs_hash`` of an inputs list."""
    return prefixed(sha256_hex(canonical_bytes(list(inputs))))


def _label(entry: Sequence[Any]) -> str:
    kind = entry[0] if entry else "?"
    if kind in ("record", "source", "asset") and len(entry) > 1:
        return f"{kind} {entry[1]}"
    return str(kind)


def changed_inputs(then: Sequence[Any], now: Sequence[Any]) -> list[str]:
    """What differs between two inputs lists, one short phrase per input (``record x changed``)."""

    def keyed(entries: Sequence[Any]) -> dict[str, str]:
        out: dict[str, str] = {}
        for entry in entries:
            if isinstance(entry, list | tuple):
                out[_label(entry)] = canonical_bytes(list(entry)).decode("utf-8")
        return out

    old, new = keyed(then), keyed(now)
    out = []
    for label in new:
        if label not in old:
            out.append(f"{label} added")
        elif old[label] != new[label]:
            out.append(f"{label} changed")
    out += [f"{label} removed" for label in old if label not in new]
    return out
