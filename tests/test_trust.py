"""The one key ring (publisher.kernel.trust): roles, verification, signer discovery, no defaults."""

from __future__ import annotations

import inspect
import pickle
from pathlib import Path
from typing import Any

import pytest

from publisher.acquire.signing import new_key_pair
from publisher.kernel.errors import UsageError
from publisher.kernel.models import Event, Signature, signed_payload
from publisher.kernel.reasons import Reason
from publisher.kernel.trust import (
    DEFAULT_ROLES,
    KEY_ENV,
    KeyRing,
    Role,
    SignatureFault,
    event_signature_problem,
    find_signer,
    key_ring,
    line_signature_fault,
    line_signature_problem,
    load_signer,
    require_signer,
    sign_line,
    trusted_key_entries,
)

RUN = "r@2026-05-01T10:00:00Z"


def _keys(tmp_path: Path, name: str) -> tuple[Path, Path, str]:
    return new_key_pair(tmp_path / "out", name)


def _wiki_ring(tmp_path: Path, listed: list[Any]) -> KeyRing:
    return key_ring(trusted_key_entries(listed), tmp_path / "out")


def _signed_event(private: Path, run: str = RUN) -> Event:
    signer = load_signer(private, run)
    raw: dict[str, Any] = {
        "schema_version": 1,
        "event_id": "ev-0001",
        "type": "fetch",
        "source_id": "src-" + "a" * 64,
        "url": "https://example.org/a",
        "at": "2026-05-01T10:00:05Z",
        "fresh": True,
        "sha256": "b" * 64,
        "actor": "main",
        "detail": None,
    }
    event = Event.model_validate({**raw, "sig": Signature(alg="ed25519", key_id=signer.key_id, run=run, value="")})
    value = signer.sign(signed_payload(event))
    return event.model_copy(update={"sig": event.sig.model_copy(update={"value": value})})  # type: ignore[union-attr]


def test_a_bare_path_holds_acquire_and_assess_and_a_mapping_its_roles(tmp_path: Path) -> None:
    _, _, both = _keys(tmp_path, "both")
    _, _, warrant = _keys(tmp_path, "warrant")
    ring = _wiki_ring(tmp_path, ["both.pub", {"path": "warrant.pub", "roles": ["warrant"]}])
    assert ring.roles_of(both) == DEFAULT_ROLES == {Role.ACQUIRE, Role.ASSESS}
    assert ring.has_role(warrant, Role.WARRANT) and not ring.has_role(warrant, Role.ACQUIRE)
    assert ring.ids_for(Role.ASSESS) == [both]
    assert not ring.has_role("f" * 64, Role.ACQUIRE)  # a key the ring does not hold has no role
    again = pickle.loads(pickle.dumps(ring))  # the ring travels to worker processes with its roles
    assert again.roles_of(warrant) == {Role.WARRANT} and again.ids == ring.ids


@pytest.mark.parametrize(
    "listed",
    [
        [{"path": "k.pub", "roles": ["admin"]}],
        [{"path": "k.pub", "roles": []}],
        [{"path": "k.pub"}],
        [{"path": "k.pub", "roles": ["acquire"], "extra": 1}],
        [{"roles": ["acquire"]}],
        [{"path": "../k.pub", "roles": ["acquire"]}],
        [7],
        "k.pub",
    ],
)
def test_a_bad_trusted_key_entry_is_a_schema_error(listed: Any) -> None:
    with pytest.raises(UsageError) as refused:
        trusted_key_entries(listed)
    assert refused.value.reason is Reason.SCHEMA_ERROR


def test_a_signature_counts_only_for_its_keys_roles(tmp_path: Path) -> None:
    private, _, _ = _keys(tmp_path, "assessor")
    ring = _wiki_ring(tmp_path, [{"path": "assessor.pub", "roles": ["assess"]}])
    event = _signed_event(private)
    assert event_signature_problem(event, ring, RUN, Role.ASSESS) is None
    assert event_signature_problem(event, ring, RUN, Role.ACQUIRE) is not None  # an assessor cannot acquire
    assert event_signature_problem(event, ring, "other@2026-05-01T10:00:00Z", Role.ASSESS) is not None
    assert event_signature_problem(event, KeyRing(), RUN, Role.ASSESS) is not None


def test_an_altered_event_does_not_verify(tmp_path: Path) -> None:
    private, _, _ = _keys(tmp_path, "k")
    ring = _wiki_ring(tmp_path, ["k.pub"])
    event = _signed_event(private)
    assert event_signature_problem(event, ring, RUN, Role.ACQUIRE) is None
    edited = event.model_copy(update={"url": "https://example.org/b"})
    assert event_signature_problem(edited, ring, RUN, Role.ACQUIRE) is not None


def test_one_check_names_each_way_a_signed_line_fails(tmp_path: Path) -> None:
    # Every signed log line (events, assessments, adjudications, warrants, notices, agent runs)
    # is checked by line_signature_fault: each fault has its kind, and only changed lines are
    # "altered" (a build failure where a caller makes that distinction).
    private, _, _ = _keys(tmp_path, "assessor")
    ring = _wiki_ring(tmp_path, [{"path": "assessor.pub", "roles": ["assess"]}])
    event = _signed_event(private)
    sig = event.sig
    assert sig is not None

    def fault(line: Event, role: Role = Role.ASSESS, ring: KeyRing = ring, **kw: str) -> SignatureFault | None:
        found = line_signature_fault(line, "ev-0001", ring, signed_for=kw.get("signed_for", RUN), role=role)
        problem = line_signature_problem(line, "ev-0001", ring, signed_for=kw.get("signed_for", RUN), role=role)
        assert (found is None) == (problem is None) and (found is None or found[1] == problem)
        assert found is None or found[1].startswith("ev-0001")
        return None if found is None else found[0]

    assert fault(event) is None
    bare = event.model_copy(update={"sig": None})
    assert fault(bare) is SignatureFault.UNSIGNED
    assert sign_line(bare, load_signer(private, RUN), signed_for=RUN) == event  # the one way a line is signed
    assert fault(sign_line(bare, load_signer(private, RUN), signed_for="other@x")) is SignatureFault.OTHER_TARGET
    assert fault(event, signed_for="other@2026-05-01T10:00:00Z") is SignatureFault.OTHER_TARGET
    assert fault(event.model_copy(update={"sig": sig.model_copy(update={"alg": "rsa"})})) is SignatureFault.ALGORITHM
    assert fault(event, ring=KeyRing()) is SignatureFault.UNTRUSTED
    assert fault(event, role=Role.ACQUIRE) is SignatureFault.ROLE
    edited = event.model_copy(update={"url": "https://example.org/b"})
    assert fault(edited) is SignatureFault.ALTERED
    assert fault(edited, role=Role.WARRANT) is SignatureFault.ALTERED  # altered, whatever role is asked
    assert [f for f in SignatureFault if f.altered] == [
        SignatureFault.OTHER_TARGET,
        SignatureFault.ALGORITHM,
        SignatureFault.ALTERED,
    ]


def test_the_signer_is_found_in_the_users_key_folder_by_role(tmp_path: Path) -> None:
    folder = tmp_path / "config" / "publisher" / "keys"
    private, _, kid = _keys(tmp_path, "k")
    folder.mkdir(parents=True)
    (folder / f"{kid}.key").write_bytes(private.read_bytes())
    env = {"XDG_CONFIG_HOME": str(tmp_path / "config")}
    ring = _wiki_ring(tmp_path, [{"path": "k.pub", "roles": ["acquire"]}])
    found = find_signer(None, ring=ring, role=Role.ACQUIRE, run=RUN, environ=env)
    assert found is not None and found.key_id == kid and found.run == RUN
    assert find_signer(None, ring=ring, role=Role.ASSESS, run=RUN, environ=env) is None  # not for this role
    with pytest.raises(UsageError) as refused:
        require_signer(None, ring=ring, role=Role.ASSESS, run=RUN, environ=env)
    assert refused.value.reason is Reason.SCHEMA_ERROR  # the wiki trusts no key for assess at all


def test_a_signed_wiki_refuses_a_write_it_cannot_sign(tmp_path: Path) -> None:
    _, _, _ = _keys(tmp_path, "wiki")
    other, _, _ = _keys(tmp_path, "other")
    ring = _wiki_ring(tmp_path, ["wiki.pub"])
    env = {"XDG_CONFIG_HOME": str(tmp_path / "nobody")}
    with pytest.raises(UsageError) as none_found:
        require_signer(None, ring=ring, role=Role.ACQUIRE, run=RUN, environ=env)
    assert none_found.value.context["file"] == "wiki.pub"  # names the key to use
    assert none_found.value.context["key_ids"] == ring.ids_for(Role.ACQUIRE)
    assert none_found.value.finding().file == "wiki.pub"
    with pytest.raises(UsageError) as untrusted:
        require_signer(other, ring=ring, role=Role.ACQUIRE, run=RUN, environ=env)  # not a trusted key
    assert untrusted.value.context["file"] == "wiki.pub"
    with pytest.raises(UsageError):
        require_signer(None, ring=ring, role=Role.ACQUIRE, run=RUN, environ={**env, KEY_ENV: str(other)})
    # An unsigned wiki, as configured: no signer is no refusal.
    assert require_signer(None, ring=KeyRing(), role=Role.ACQUIRE, run=RUN, environ=env) is None


def _entries() -> list[tuple[Any, str]]:
    from publisher.gate.assemble import assemble_run
    from publisher.gate.freshness import freshness
    from publisher.gate.inputs import RunOptions, load_inputs
    from publisher.gate.pipeline import verify_run
    from publisher.gate.render import render_report, write_report
    from publisher.site.checks.checksite import check_site
    from publisher.wiki.annotations import export_annotations
    from publisher.wiki.assess import assess
    from publisher.wiki.check import check_wiki
    from publisher.wiki.claims.reviews import build_review, run_review, surface_declared_complete
    from publisher.wiki.promote import plan_promotion, promote

    return [
        (check_wiki, "policy"),
        (check_site, "policy"),
        (promote, "policy"),
        (plan_promotion, "policy"),
        (export_annotations, "policy"),
        (assess, "policy"),
        (assess, "signer"),
        (load_inputs, "trusted_keys"),
        (freshness, "trusted_keys"),
        (RunOptions, "trusted_keys"),
        (assemble_run, "options"),
        (verify_run, "options"),
        (render_report, "options"),
        (write_report, "options"),
        (build_review, "keys"),
        (run_review, "keys"),
        (surface_declared_complete, "keys"),
    ]


@pytest.mark.parametrize("index", range(17))
def test_no_entry_that_checks_trust_has_a_default_policy(index: int) -> None:
    function, name = _entries()[index]
    parameter = inspect.signature(function).parameters[name]
    assert parameter.default is inspect.Parameter.empty, f"{function.__qualname__}({name}=...) has a default"


def test_the_fallback_readers_are_gone() -> None:
    import publisher.acquire.signing as signing
    import publisher.runs as runs
    import publisher.wiki.policy as policy

    assert not hasattr(policy, "fallback_policy")
    assert not hasattr(signing, "load_trusted_keys") and not hasattr(signing, "signer_from")
    assert not hasattr(runs, "read_wiki_extra") and not hasattr(runs, "trusted_key_paths")


def test_every_check_id_is_one_member_and_the_page_check_has_its_own() -> None:
    from publisher.gate.checks.prose import PROSE
    from publisher.kernel.checkids import RUN_CHECKS, CheckId
    from publisher.site.checks.inert import CHECK as DOCS_FILES
    from publisher.site.checks.prose import CHECK as PAGES

    assert len({c.value for c in CheckId}) == len(CheckId)
    assert PROSE is CheckId.PROSE and PAGES is DOCS_FILES is CheckId.PAGE_PROSE and PAGES is not PROSE
    assert CheckId.PROSE in RUN_CHECKS and CheckId.PAGE_PROSE not in RUN_CHECKS
