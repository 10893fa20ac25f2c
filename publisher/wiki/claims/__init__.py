"""Claims and their epistemic statuses (CONTRACT section 14), one module per job.

:mod:`.model` claim identity, statuses and guard names; :mod:`.records` the write-once,
content-addressed review and missingness records; :mod:`.missingness` and :mod:`.reviews` the
trusted commands that derive them; :mod:`.log` the hash-chained ``assessments.jsonl``;
:mod:`.admission` the ``C-CLAIM`` guards that decide whether ``publisher assess``
(:mod:`publisher.wiki.assess`) admits a status; :mod:`.provenance` the wiki check's re-check of
each front-matter claim against its admitted entry and of the grounds it bound, at every build;
:mod:`.counts` what each claim rests on, counted without flattery. The
declared surface a review depends on is written at acquisition (:mod:`publisher.acquire.surface`)
and sealed in the snapshot (:class:`publisher.kernel.models.Surface`).

Proposal is not evidence, evidence is not admissibility, admissibility is not adjudication: an
agent proposes a status; only these commands create the facts that make it admissible, and
passing the guards only ever means "structurally admissible proposal".
"""
