"""Works: the snapshots that are one paper (the ledger's count grammar, CONTRACT sections 14, 18).

Two snapshots are one work when they share a derived PMID, DOI or PMCID (each in its canonical
form, a DOI case-insensitively) or the same text, transitively; a snapshot with no paper id is a
work of its own URL; a superseded snapshot belongs to the work of its current revision. The
claims' counts and the notices of retraction read works from here, so a retraction logged for the
article's DOI reaches every snapshot of that work, one that states only its PMCID too.
"""

from __future__ import annotations

from urllib.parse import urlsplit, urlunsplit

from ..kernel.ids import IdError, canonical_id
from .evidence import WikiCheck
from .revisions import revision_index

__all__ = ["url_identity", "work_keys", "Works", "works_of"]

_DEFAULT_PORTS = {"http": 80, "https": 443}


def url_identity(url: str) -> str:
    """``url`` as the address it names: scheme and host lowercased, a default port and the
    fragment (never sent to the server) dropped; path and query kept as they are."""
    try:
        parts = urlsplit(url.strip())
        scheme = parts.scheme.lower()
        host = (parts.hostname or "").rstrip(".")
        port = parts.port
    except ValueError:
        return url
    if not scheme or not host:
        return url
    if ":" in host:
        host = f"[{host}]"
    netloc = host if port is None or _DEFAULT_PORTS.get(scheme) == port else f"{host}:{port}"
    if parts.username is not None or parts.password is not None:
        netloc = parts.netloc.rsplit("@", 1)[0] + "@" + netloc
    return urlunsplit((scheme, netloc, parts.path or "/", parts.query, ""))


def work_keys(ids: dict[str, str], url: str | None, content_hash: str | None = None) -> list[str]:
    """The identity keys of one snapshot's work (the ledger's count grammar, section 14).

    ``ids`` are the snapshot's derived paper ids (``derived_ids()`` of a snapshot or its check:
    an id only asserted on the command line never joins two snapshots into one work) in their
    canonical form (a DOI lowercased, without a resolver prefix; PMIDs and PMCIDs as numbers),
    else its URL as :func:`url_identity` gives it; and its text's digest, so that the same text at
    two addresses is one work. Snapshots sharing any key are one work.
    """
    keys: list[str] = []
    for kind, value in sorted(ids.items()):
        try:
            value = canonical_id(kind, value)
        except IdError:
            value = value.strip()
        keys.append(f"{kind}:{value.lower() if kind == 'doi' else value}")
    if not keys:
        keys.append(f"url:{url_identity(url)}" if url else "url:")
    if content_hash:
        keys.append(f"text:{content_hash}")
    return keys


class Works:
    """The works of a wiki check's sources: which work each source belongs to, and its members."""

    def __init__(self, wiki: WikiCheck) -> None:
        self._parent: dict[str, str] = {}
        self._of: dict[str, str] = {}
        for sid, info in sorted(wiki.sources.items()):
            keys = work_keys(info.meta.derived_ids(), info.meta.url, info.meta.content_hash)
            for key in keys[1:]:
                self._union(keys[0], key)
            self._of[sid] = keys[0]
        self._follow_revisions(wiki)
        self._members: dict[str, list[str]] | None = None

    def _follow_revisions(self, wiki: WikiCheck) -> None:
        """A superseded snapshot belongs to the work of its current revision (membership follows
        the current revision: a revision that gained a derived id takes its old versions along)."""
        revisions = revision_index(wiki)
        for sid in sorted(wiki.sources):
            newer = revisions.current(sid)
            if newer is None:
                continue
            info = wiki.sources.get(newer.source_id)
            if info is not None:
                keys = work_keys(info.meta.derived_ids(), info.meta.url, info.meta.content_hash)
            elif (snap := revisions.snapshot(newer)) is not None:
                keys = work_keys(snap.derived_ids(), snap.url, snap.content_hash)
            else:
                continue
            for key in keys:
                self._union(self._of[sid], key)

    def _find(self, key: str) -> str:
        self._parent.setdefault(key, key)
        while self._parent[key] != key:
            self._parent[key] = self._parent[self._parent[key]]
            key = self._parent[key]
        return key

    def _union(self, a: str, b: str) -> None:
        ra, rb = self._find(a), self._find(b)
        if ra != rb:  # the root names the work: a paper id or URL before a text digest
            first, second = sorted((ra, rb), key=lambda k: (k.startswith("text:"), k))
            self._parent[second] = first

    def work(self, source_id: str) -> str:
        """The work a source belongs to: its smallest identity key (``pmcid:PMC1``, ``url:…``)."""
        key = self._of.get(source_id)
        return self._find(key) if key is not None else f"source:{source_id}"

    def members(self, source_id: str) -> list[str]:
        """Every source of the check in ``source_id``'s work, sorted (``[source_id]`` alone for a
        source the check does not hold)."""
        if self._members is None:
            grouped: dict[str, list[str]] = {}
            for sid in sorted(self._of):
                grouped.setdefault(self.work(sid), []).append(sid)
            self._members = grouped
        return self._members.get(self.work(source_id), [source_id])


def works_of(wiki: WikiCheck) -> Works:
    """The wiki's works, made once per wiki check."""
    held = getattr(wiki, "_works", None)
    if isinstance(held, Works):
        return held
    works = Works(wiki)
    setattr(wiki, "_works", works)  # noqa: B010 (an attribute of the check, held for its lifetime)
    return works
