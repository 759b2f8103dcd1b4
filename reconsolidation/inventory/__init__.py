"""Inventory: which anchors a slice scans, which groups it queues, and the durable cursors.

Each submodule owns one rule and says why: ``lanes`` (the changed lane from the change
journal, the full lane in creation order), ``plan`` (the slice plan and pending cap),
``model_lane``, ``groups``, ``equivalence`` (exact-key merges without a group slot),
``coverage`` and ``checkpoint``; the SQL and its eligibility rules are in ``sql``.

* Fairness: part of every slice (``RECON_SLICE_FULL_LANE_ANCHORS``) is reserved for the
  full lane, so every creation key of a generation of N is visited within ceil(N/64)
  successful full-lane slices however busy the journal is.
* ``checkpoint`` is the one transaction that moves cursors, and only after every scanned
  anchor has a durable, content-free receipt.
* With ``RECON_PENDING_MAX_GROUPS`` groups awaiting the model a slice is *paused*: it
  consumes nothing and keeps every cursor (the equivalence backlog still drains).
* Scan and model coverage are reported apart: a scanned anchor is never "done".

Every statement is bounded by the slice, not the bank. No provider call happens here and
no source text leaves this package.
"""
