"""The pages an evidence build generates, and what every page shows.

:mod:`.model` holds the page value types the page modules share; :mod:`.generate` builds every
generated page of a wiki (concept and report pages itself, then :mod:`.source`,
:mod:`.indexes` and :mod:`.claims`), :mod:`.highlight` a source's text, :mod:`.context` an
excerpt's sentence, :mod:`.markup` the evidence elements, :mod:`.proofs` and :mod:`.offline`
the files beside the pages. :mod:`.titles` and :mod:`.a11y` are the boundary between page data
and the theme's HTML. A new page type goes here.
"""
