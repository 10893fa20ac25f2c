"""What "a view holds what the model holds" means, once, for every test that compares them."""

from __future__ import annotations

import itertools
from enum import Enum
from typing import Any

from publisher.kernel.models import Asset, Identity, IdentityEntry, Paper, Surface
from publisher.kernel.views import AssetView, IdentityEntryView, IdentityView, PaperView, SurfaceView

VIEW_OF: dict[type[Any], type[Any]] = {
    Paper: PaperView,
    Asset: AssetView,
    IdentityEntry: IdentityEntryView,
    Identity: IdentityView,
    Surface: SurfaceView,
}

DUMPS = [
    {"mode": mode, "exclude_unset": unset, "exclude_none": none}
    for mode, unset, none in itertools.product(("python", "json"), (False, True), (False, True))
]
"""Every combination of the ``model_dump`` arguments callers use."""


def assert_same(view: Any, model: Any) -> None:
    """``view`` holds exactly what ``model`` holds: every field (of the same type: enum members,
    tuples), the methods callers use, and ``model_dump`` with every combination of arguments,
    key order and value types included. Both may be None."""
    if model is None:
        assert view is None
        return
    assert type(view) is VIEW_OF[type(model)], (type(view), type(model))
    for name in type(model).model_fields:
        mine, theirs = getattr(view, name), getattr(model, name)
        if type(theirs) in VIEW_OF:
            assert_same(mine, theirs)
        else:
            assert type(mine) is type(theirs) and mine == theirs, (name, mine, theirs)
            if isinstance(theirs, Enum):
                assert mine is theirs, name
    if isinstance(model, Paper):
        assert view.ids() == model.ids()
    if isinstance(model, IdentityEntry):
        assert view.derived is model.derived
    if isinstance(model, Identity):
        assert list(view.ids()) == list(model.ids())
        for kind, entry in model.ids().items():
            assert_same(view.ids()[kind], entry)
        assert view.derived_ids() == model.derived_ids()
    if isinstance(model, Paper | Identity):
        assert view.given == tuple(name for name in type(model).model_fields if name in model.model_fields_set)
    for kw in DUMPS:
        mine, theirs = view.model_dump(**kw), model.model_dump(**kw)
        assert mine == theirs and repr(mine) == repr(theirs), (kw, mine, theirs)  # repr: key order, types
    again = type(view).of(model.model_dump(mode="json", exclude_unset=True))
    assert again == view and hash(again) == hash(view), "a view is equal to its own JSON's view"
