"""Reconsolidation ("dreaming"): bounded, leased, budget-reserved maintenance that merges
equivalent beliefs reversibly, writes extractive summaries, proposes tentative hypotheses and
flags conflicts. It never rewrites or deletes an original and is invalidated through
``memory.hooks`` whenever a source changes.

Layout, by stage: ``models`` (forced RLS in ``migrations``), ``domain``, ``bounds`` (the
named limits), ``rows``; ``leases`` (due jobs and leases); ``inventory/`` and ``grouping``
(scan lanes, slice plan, groups); ``driver`` (the slice loop); ``work/`` (a slice's claimed
groups: claim, admission, executor, spend, review); ``providers/`` (rules, openai,
scripted; egress policy); ``writers/`` (the only code that records operations and what
they derive); ``services/`` and ``selectors/`` (what the owner does with and reads of the
results); ``mode`` (reviewed | unattended, the latter gated by ``evidence/``);
``read_paths`` (what recall renders of reconsolidation); ``tasks``, ``api/`` and
``management/`` (thin entry points).

It must never call a provider inside a transaction, accept an owner other than the
authenticated principal, put source text in a content-free table, or report a scanned
anchor as analysed.
"""
