"""Reconsolidation ("dreaming"): bounded, leased, budget-reserved maintenance that merges
equivalent beliefs reversibly, writes extractive summaries, proposes tentative hypotheses and
flags conflicts. It never rewrites or deletes an original and is invalidated through
``memory.hooks`` whenever a source changes.

Layout, by stage: ``models`` (rows, forced RLS in ``migrations``), ``domain`` (frozen
values), ``bounds`` (the named limits of ``reconsolidation@1``), ``rows`` (row helpers every
stage shares); ``pipeline/`` (due jobs and leases, the scan lanes and slice plan, grouping,
the unit of work, the slice driver); ``group_work/`` (one queued group: claim, reserve,
provider call through admission and the executor, verification, settlement); ``providers/``
(rules, openai, scripted; egress policy); ``rules/`` (the equivalence key and extractive
summaries, pure functions); ``writers/`` (the only code that records operations and what
they derive, and the invalidation listener); ``owner/`` (journal reads, review, undo,
derived controls); ``mode`` (reviewed | unattended, the latter gated by release evidence);
``read_paths`` (what recall renders of reconsolidation); ``tasks`` (Celery); ``api/`` and
``management/`` (thin entry points).

It must never call a provider inside a transaction, accept an owner other than the
authenticated principal, put source text in a content-free table, or report a scanned
anchor as analysed.
"""
