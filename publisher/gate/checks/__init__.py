"""The checks of a run: one module per numbered check of CONTRACT section 9, and the policy that
decides from them whether a run may be published.

:func:`publisher.gate.pipeline.check_run` runs them all, in this order, against a fresh in-memory
assembly; each adds its status and its :class:`~publisher.kernel.findings.Finding` values to one
:class:`~.runcheck.RunCheck` through a :class:`~.collect.Collector` (collected, never raised).
"Gated" is warn with the gate off and fail with it on.

==  ======================  ==================  ====================================================
#   check id                module              reason codes it can emit
==  ======================  ==================  ====================================================
1   ``C-SNAPSHOT``          :mod:`.snapshot`    ``UNKNOWN_SOURCE``, ``SNAPSHOT_HASH_MISMATCH``,
                                                ``ASSET_HASH_MISMATCH`` (fail)
2   ``C-SPAN``              :mod:`.span`        ``SPAN_OUT_OF_RANGE``, ``SPAN_TOO_LONG``,
                                                ``EXCERPT_MISMATCH`` (fail); ``NO_SPANS`` (gated)
3   ``C-FRESH-FETCH``       :mod:`.freshfetch`  ``NO_FRESH_FETCH``, ``ASSET_HASH_MISMATCH`` (gated)
4   ``C-ASSEMBLER``         :mod:`.assembler`   ``SCHEMA_ERROR`` (fail); edited (fail), stale or
                                                absent (gated) carry the check id only
5   ``C-EVENT-LOG``         :mod:`.eventlog`    check id only (fail)
6   ``C-GATE``              :mod:`.gate`        every other code of the assembly (``SCHEMA_ERROR``,
                                                ``URL_NOT_RETRIEVED``, ``UNSUPPORTED_VERDICT``,
                                                ``NO_PAPER_ID``, ``ACCESS_MISMATCH`` ...);
                                                ``NO_SPANS`` for an empty evidence set (gated)
7   ``C-CITE-RESOLVE``      :mod:`.report`      ``SOURCE_OUTSIDE_ACCEPTED`` (gated)
8   ``C-FULLTEXT``          :mod:`.report`      ``ACCESS_MISMATCH`` on ``evidence_basis`` (gated);
                                                an unlabelled abstract-only claim (fail)
9   ``C-HYPOTHESIS-WALL``   :mod:`.report`      check id only (fail)
10  ``C-PROSE``             :mod:`.prose`       ``EXCERPT_MISMATCH``, or the check id with the
                                                offsets to cite (fail)
==  ======================  ==================  ====================================================

:mod:`.publication` holds the publication policy (:func:`~.publication.refusals`). The wiki's own
checks (``C-CLAIM``, ``C-CONFIG`` ...) live in :mod:`publisher.wiki.check`.
"""

from ...kernel.checkids import RUN_CHECKS

CHECK_IDS = RUN_CHECKS
"""Every numbered check, in the order a report lists them."""

__all__ = ["CHECK_IDS"]
