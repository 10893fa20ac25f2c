"""A stored result's source assets are read as the kernel's ``Asset`` record reads them (held as
its view, ``AssetView``), as the snapshot they come from is: a forged asset (a path out of the
wiki, a missing or extra field) makes the stored result invalid, never a dictionary taken as it is."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from _gate_helpers import make_run, read_json
from _policy import options_of

from publisher.gate.assemble import assemble_run
from publisher.gate.checks.assembler import read_stored
from publisher.kernel.models import Asset
from publisher.kernel.views import AssetView

GOOD = {"path": "assets/papers/x.pdf", "sha256": "b" * 64, "bytes": 3}


def _stored_with(tmp_path: Path, asset: object) -> tuple[object, object, object]:
    fx = make_run(tmp_path, articles=1)
    assemble_run(fx.run, options_of(fx.run))
    result = read_json(fx.run.result_path)
    result["sources"][0]["asset"] = asset
    fx.run.result_path.chmod(0o644)
    fx.run.result_path.write_text(json.dumps(result), encoding="utf-8")
    return read_stored(fx.run)


def test_a_stored_asset_is_an_asset_record(tmp_path: Path) -> None:
    _raw, model, problem = _stored_with(tmp_path, GOOD)
    assert problem is None and model is not None
    asset = model.sources[0].asset  # type: ignore[attr-defined]
    assert asset == AssetView(**GOOD) and asset.model_dump() == Asset(**GOOD).model_dump()


@pytest.mark.parametrize(
    "asset",
    [{**GOOD, "path": "../outside.pdf"}, {"path": "x.pdf", "sha256": "b" * 64}, {**GOOD, "more": 1}, "x.pdf"],
    ids=["escaping-path", "missing-field", "extra-field", "not-an-object"],
)
def test_a_forged_asset_makes_the_stored_result_invalid(tmp_path: Path, asset: object) -> None:
    raw, model, problem = _stored_with(tmp_path, asset)
    assert raw is None and model is None and problem is not None
