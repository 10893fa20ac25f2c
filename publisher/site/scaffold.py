"""``publisher new``: scaffold an evidence wiki that builds as is.

Writes ``mkdocs.yml`` (Material theme with the example wiki's reader features such as footnote
tooltips, the evidence hook, footnotes, a navigation of the generated index pages),
``docs/index.md``, the hook shim ``hooks/evidence.py``, a ``.gitignore``, a ``.gitattributes``
that keeps the evidence files byte-exact (``-text``: no line-ending conversion) and the empty
``concepts/``, ``runs/`` and ``assets/papers/`` folders, and (unless unsigned) the wiki's
acquisition key pair: ``keys/wiki.pub`` listed under ``trusted_keys``, its private half in the
user's configuration folder. Every file is created exclusively; an
existing wiki (or any file in the way) is refused before anything is written, and a failure
part-way removes what was created.
"""

from __future__ import annotations

import json
from pathlib import Path

import jinja2

from ..acquire.signing import new_wiki_key
from ..kernel import _fs
from ..kernel.errors import UsageError
from . import TEMPLATES_DIR

__all__ = ["SCAFFOLD_DIR", "new_wiki"]

SCAFFOLD_DIR = TEMPLATES_DIR / "new"

_FILES = (
    ("mkdocs.yml", "mkdocs.yml.j2"),
    ("docs/index.md", "docs/index.md.j2"),
    ("hooks/evidence.py", "hooks/evidence.py"),
    (".gitignore", "gitignore"),
    (".gitattributes", "gitattributes"),
    ("concepts/.gitkeep", None),
    ("runs/.gitkeep", None),
    ("assets/papers/.gitkeep", None),
)


WIKI_KEY = "keys/wiki.pub"
"""Where ``publisher new`` puts the wiki's public acquisition key (listed under ``trusted_keys``)."""


def _render(template: str | None, title: str, trusted_key: str | None = None, require_warrant: bool = False) -> bytes:
    if template is None:
        return b""
    path = SCAFFOLD_DIR / template
    if not template.endswith(".j2"):
        return path.read_bytes()
    env = jinja2.Environment(undefined=jinja2.StrictUndefined, keep_trailing_newline=True, autoescape=False)
    text = env.from_string(path.read_text(encoding="utf-8")).render(
        site_name=json.dumps(title), title=title, trusted_key=trusted_key, require_warrant=require_warrant
    )
    return text.encode("utf-8")


def new_wiki(
    path: Path | str, *, title: str | None = None, signed: bool = True, require_warrant: bool = False
) -> list[str]:
    """Create the wiki at ``path``; returns the files written (relative paths).

    ``require_warrant`` turns on ``extra.evidence.require_warrant`` (CONTRACT 17): the wiki builds
    only once every claim has a current independent review.

    ``signed`` (the default) also creates the wiki's acquisition key pair (CONTRACT 12): the
    public key at :data:`WIKI_KEY`, listed under ``trusted_keys``; the private key in the user's
    configuration folder (:func:`~publisher.acquire.signing.new_wiki_key`), never in the wiki.
    """
    root = Path(path)
    if root.exists() and not root.is_dir():
        raise UsageError(f"{root} exists and is not a folder")
    for name in ("mkdocs.yml", "mkdocs.yaml"):
        if (root / name).exists():
            raise UsageError(f"{root} is already a wiki ({name} exists); refusing to overwrite it")
    files = [*_FILES, *([(WIKI_KEY, None)] if signed else [])]
    in_the_way = [rel for rel, _ in files if (root / rel).exists() or (root / rel).is_symlink()]
    if in_the_way:
        raise UsageError(f"{root}: {', '.join(in_the_way)} already exist; refusing to overwrite")
    name = title or root.resolve().name or "Evidence wiki"
    trusted = WIKI_KEY if signed else None
    planned = [(rel, _render(template, name, trusted, require_warrant)) for rel, template in _FILES]
    created: list[Path] = []
    private: Path | None = None
    try:
        if signed:
            _fs.own_folder((root / WIKI_KEY).parent, root)  # the public key never lands where a link points
            private, _ = new_wiki_key(root / WIKI_KEY)
            created.append(root / WIKI_KEY)
        for rel, data in planned:
            target = root / rel
            _fs.own_folder(target.parent, root)  # never a link or file in place of concepts/, docs/ ...
            if not _fs.create_exclusive(target, data, mode=0o644):
                raise UsageError(f"{target} appeared while scaffolding; refusing to overwrite")
            created.append(target)
    except BaseException:
        for target in reversed(created):
            target.unlink(missing_ok=True)
        if private is not None:
            private.unlink(missing_ok=True)
        raise
    return [rel for rel, _ in planned] + ([WIKI_KEY] if signed else [])
