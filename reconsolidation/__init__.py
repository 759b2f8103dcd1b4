"""Reconsolidation ("dreaming"): bounded, leased, budget-reserved maintenance that merges
equivalent beliefs reversibly, writes extractive summaries, proposes tentative hypotheses and
flags conflicts. It never rewrites or deletes an original and is invalidated through
``memory.hooks`` whenever a source changes.

Layout: ``models`` (rows, forced RLS in ``migrations``), ``domain`` (frozen values),
``bounds`` (named limits of ``reconsolidation@1``), ``store.ReconsolidationStore`` (the unit
of work) composed of ``leases`` (due jobs, leases, recovery), ``inventory`` (two lanes,
slice plan, checkpoint, queued groups), ``grouping`` (bounded neighbour lookup), ``groups``
(model work claims and outcomes), ``spend`` (reservations and settlement) and
``operations`` (commit, invalidation); ``passes.inventory_slice`` runs one bounded slice.
The write path: ``work.process_group`` (one claimed group: read ``sources``, reserve,
``providers.rules`` proposes from the ``equivalence`` key and ``summaries``, settle, commit,
finish); with a model provider (``openai``, or ``scripted`` injected by tests and evals)
``model_work`` runs ``admission`` (fresh sources/lease/policy + the exact digest reserved in
one transaction), ``executor`` (proposal then verification outside transactions: limits,
renewal, cancellation, settlement) and ``apply_review`` (verified candidates to the local
writers, one transaction per group); ``hypotheses`` (infer_connection rules, clocks and
projection), ``apply`` (kind rules at commit, membership/projection when committed), ``mode``
(reviewed | unattended, the latter gated by matching release evidence), ``review`` (owner approve/reject), ``undo``, ``blocks`` (hash-only
owner blocks), ``receipts`` (idempotency), ``reads`` (ceiling-filtered history) and
``invalidation`` (the ``memory.hooks`` listener).

It must never call a provider inside a transaction, accept an owner other than the
authenticated principal, put source text in a content-free table, or report a scanned
anchor as analysed.
"""
