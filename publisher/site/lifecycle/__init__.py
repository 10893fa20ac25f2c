"""The build lifecycle: MkDocs' events, from the wiki check to the atomic publication.

:mod:`.hook` is the way in (the wiki check that gates a build), :mod:`.plugin` the installable
plugin, :mod:`.events` one build event by event; :mod:`.sitefiles` adds the evidence files to
MkDocs' own, :mod:`.workers` renders costly slots ahead of MkDocs in helper processes,
:mod:`.finish` writes the seal and :mod:`.publish` swaps the built site into place.
:mod:`.options` and :mod:`.policy` read ``mkdocs.yml``; :mod:`.checkpages` runs the build's
checks for ``publisher check`` without publishing; :mod:`.refusal` is how every phase refuses (its
findings, raised once as :class:`~.refusal.EvidenceBuildError`). A change to how a build runs goes
here.

Importing this package imports nothing else (each module imports MkDocs itself).
"""
