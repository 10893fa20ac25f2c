"""``publisher warrant``: a reviewer confirms, qualifies or rejects a wiki's claims (CONTRACT 17).

Thin adapter over :mod:`publisher.wiki.warrant`. Without ``--claim`` it walks every claim that
awaits review, showing its statement, status, conditions, counts and each excerpt in its
sentence, and asks the decision on the terminal; with ``--claim`` it records one decision
(scripted review). Either way the warrant key's passphrase is asked on the terminal: warrant is
a person's act. ``--list`` only lists what awaits review and needs no key.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from ._common import add_config, add_json, emit, missing_folder, say, wiki_policy

_DECISIONS = ("confirmed", "qualified", "rejected")


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Add ``warrant``."""
    p = sub.add_parser(
        "warrant",
        help="review claims: confirm, qualify or reject what their excerpts warrant (a person's signed act)",
        description="Shows each claim not yet reviewed (statement, status, conditions, every excerpt in its "
        "sentence, counts) and records a decision signed by a passphrase-protected key with the warrant role, "
        "never one that signed the claim's assessment or acquisitions. The passphrase is read from the terminal.",
    )
    p.add_argument("--wiki", required=True, type=Path, metavar="WIKI", help="the wiki root (holds mkdocs.yml)")
    p.add_argument("--concept", metavar="SLUG", help="only the claims of this concept")
    p.add_argument("--claim", metavar="ID", help="record one decision on this claim (no questions but the passphrase)")
    p.add_argument("--decision", choices=_DECISIONS, help="with --claim: the decision")
    p.add_argument("--reason", metavar="TEXT", help="with --claim: why (what the excerpts do and do not say)")
    p.add_argument(
        "--correction",
        metavar="KIND:TEXT",
        help="with --decision qualified: KIND among scope, population, direction, magnitude, dependence, edition",
    )
    p.add_argument("--list", action="store_true", help="list the claims awaiting review; sign nothing")
    p.add_argument(
        "--key",
        type=Path,
        metavar="FILE",
        help="the warrant key (encrypted PEM; default: your key for one of the wiki's warrant keys)",
    )
    add_config(p)
    add_json(p)
    p.set_defaults(func=_warrant)


def _signer(key: Path | None, policy: Any) -> Any:
    from ..acquire.signing import load_signer, wiki_key_file
    from ..kernel.errors import UsageError
    from ..kernel.trust import Role
    from ..wiki.claims.warrant import SIGNED_FOR

    ring = policy.trusted_keys
    path = key if key is not None else wiki_key_file(ring.ids_for(Role.WARRANT))
    if path is None:
        raise UsageError(
            "no warrant key: make one with 'publisher keys new --out DIR --role warrant', list its .pub under "
            "extra.evidence.trusted_keys with roles: [warrant], and pass --key DIR/NAME.key"
        )
    return load_signer(path, SIGNED_FOR, encrypted_only=True)


def _warrant(args: argparse.Namespace) -> int:
    from ..kernel.errors import UsageError
    from ..wiki.check import check_wiki
    from ..wiki.claims.warrant import Decision, key_label
    from ..wiki.warrant import admitted_claim, awaiting_review, parse_correction, record_warrant

    wiki_root = Path(args.wiki)
    if not wiki_root.is_dir():
        raise UsageError(missing_folder(wiki_root, "wiki"))
    scripted = (args.decision, args.reason, args.correction)
    if args.claim is None and any(v is not None for v in scripted):
        raise UsageError("--decision, --reason and --correction go with --claim ID")
    if args.claim is not None and (args.decision is None or args.reason is None):
        raise UsageError("--claim needs --decision and --reason")
    if args.list and args.claim is not None:
        raise UsageError("--list records nothing; leave out --claim")
    policy = wiki_policy(wiki_root, args.config)
    if args.list:
        wiki = check_wiki(wiki_root, policy=policy)
        items = awaiting_review(wiki, args.concept)
        rows = [_row(item.view) for item in items]
        human = (
            "\n".join(f"{r['concept']}/{r['id']}  {r['code']}  {r['warrant']}: {_flat(r['statement'])}" for r in rows)
            or "no claim awaits review"
        )
        emit(args, {"awaiting": rows}, human)
        return 0
    if args.claim is not None:
        correction = parse_correction(args.correction)
        wiki = check_wiki(wiki_root, policy=policy)
        concept = args.concept or _concept_of(wiki, args.claim)
        admitted_claim(wiki, concept, args.claim)  # an unknown claim is refused before the passphrase
        signer = _signer(args.key, policy)
        done = record_warrant(
            wiki_root,
            concept,
            args.claim,
            Decision(args.decision),
            args.reason,
            correction,
            signer=signer,
            policy=policy,
            wiki=wiki,
        )
        emit(
            args,
            {"ok": True, "warrant": done.wire()},
            f"recorded {done.warrant_id}: claim {concept}/{done.claim_id} {done.decision.value}, "
            f"signed by key {key_label(policy.trusted_keys, signer.key_id)}",
        )
        return 0
    if args.json:
        raise UsageError("the interactive review has no --json; use --list --json, or --claim for scripted review")
    return _interactive(wiki_root, args, policy)


def _flat(text: str) -> str:
    """``text`` as one line: white space runs (line breaks too) one space, every other control
    shown, never acted on. A statement, a condition or a source's text printed as it is could
    print a line of its own (a condition the claim lacks, a second excerpt); on one line it reads
    only as the value of the label that precedes it."""
    from ..kernel.text import terminal_safe

    return terminal_safe(" ".join(text.split()), keep_newlines=False)


def _row(view: dict[str, Any]) -> dict[str, Any]:
    return {
        "concept": view["concept"],
        "id": view["id"],
        "code": view["code"],
        "statement": view["statement"],
        "warrant": view["warrant"]["state"],
        "counts": view["counts"],
    }


def _concept_of(wiki: Any, claim_id: str) -> str:
    """The one concept with a claim ``claim_id`` (ids are unique within a concept only). None has
    it: the refusal ``--concept`` would meet (``CLAIM_UNKNOWN``, exit 1), not a usage error."""
    from ..kernel.errors import UsageError
    from ..wiki.claims.warrant import WarrantGuard, WarrantRefusal

    found = sorted({s.concept for s in wiki.claims if s.claim.id == claim_id})
    if len(found) == 1:
        return str(found[0])
    if not found:
        raise WarrantRefusal(
            WarrantGuard.CLAIM_UNKNOWN,
            f"no concept has a claim {claim_id[:60]!r}; 'publisher warrant --wiki WIKI --list' lists them",
            artifact_id=f"claim:{claim_id[:60]}",
        )
    raise UsageError(f"claim {claim_id[:60]!r} is in {', '.join(found)}; name one with --concept")


def _show(item: Any, at: int, total: int) -> None:
    view = item.view
    say("")
    say(f"[{at}/{total}] {view['concept']}/{view['id']}  {view['code']} · {view['status']}")
    say(f"  statement: {_flat(view['statement'])}")
    for condition in view["conditions"]:
        say(f"  condition: {_flat(condition)}")
    counts = view["counts"]
    say(
        f"  counts: {counts['citations']} citations, {counts['excerpts']} excerpts, {counts['snapshots']} snapshots, "
        f"{counts['urls']} URLs, {counts['works']} works"
    )
    warrant = view["warrant"]
    if warrant["state"] == "stale":
        say(f"  earlier review {warrant['warrant_id']} is stale: {', '.join(warrant['changed'])} changed since")
    if not item.excerpts:
        say("  (no excerpt: this status rests on a document review or a missingness record)")
    for ex in item.excerpts:
        labels = _flat(", ".join(f"[^{label}]" for label in ex["labels"]))
        say(f"  --- {labels} {_flat(ex['source'])} ({ex['source_id'][:16]}… {ex['start']}-{ex['end']})")
        say(f"      before:  …{_flat(ex['before'] + ex['sentence_before'])}")
        say(f"      excerpt: >>>{_flat(ex['excerpt'])}<<<")
        say(f"      after:   {_flat(ex['sentence_after'] + ex['after'])}…")


def _interactive(wiki_root: Path, args: argparse.Namespace, policy: Any) -> int:
    from ..kernel.errors import UsageError
    from ..kernel.tty import ask
    from ..wiki.check import check_wiki
    from ..wiki.claims.warrant import Decision, WarrantRefusal
    from ..wiki.warrant import awaiting_review, parse_correction, record_warrant

    wiki = check_wiki(wiki_root, policy=policy)
    items = awaiting_review(wiki, args.concept)
    if not items:
        say("no claim awaits review")
        return 0
    signer = _signer(args.key, policy)
    choices = {"c": Decision.CONFIRMED, "q": Decision.QUALIFIED, "r": Decision.REJECTED}
    recorded = 0
    for at, item in enumerate(items, start=1):
        _show(item, at, len(items))
        answer = ask("decision: [c]onfirmed, [q]ualified, [r]ejected, [s]kip, [x] stop: ", secret=False).strip().lower()
        if answer == "x":
            break
        if answer not in choices:
            continue
        decision = choices[answer]
        correction = None
        if decision is Decision.QUALIFIED:
            kind = ask("correction kind (scope, population, direction, magnitude, dependence, edition): ", secret=False)
            text = ask("correction: ", secret=False)
            try:
                correction = parse_correction(f"{kind.strip()}:{text}")
            except UsageError as exc:
                say(f"  not recorded: {exc.message}")
                continue
        reason = ask("reason: ", secret=False)
        try:
            done = record_warrant(
                wiki_root,
                item.state.concept,
                item.state.claim.id,
                decision,
                reason,
                correction,
                signer=signer,
                policy=policy,
                wiki=wiki,
            )
        except WarrantRefusal as exc:
            say(f"  not recorded: {exc.one_line()}")
            continue
        except UsageError as exc:  # a reason longer than a warrant holds
            say(f"  not recorded: {exc.message}")
            continue
        recorded += 1
        say(f"  recorded {done.warrant_id} ({done.decision.value})")
    say(f"{recorded} decision(s) recorded")
    return 0
