"""The seal and the checks of a site: what a page may hold, and a built site against its seal.

At build time: :mod:`.prose` (one allow-list for every page's HTML, :mod:`.trusted` telling the
trusted extensions' markup apart), :mod:`.inert` (files of ``docs/`` copied as they are),
:mod:`.scan` and :mod:`.seal` (every evidence element of a page against what was verified),
:mod:`.csp` (each page's Content-Security-Policy) and :mod:`.manifest` (the site's seal file).
After the build: :mod:`.checksite` and :mod:`.checkrecords` (``publisher check-site``).
A new check of a page or of a built site goes here.

Importing this package imports nothing (``check-site`` does not load MkDocs).
"""
