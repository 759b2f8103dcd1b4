"""Inventory: the two durable lanes (``lanes``), the bounded slice plan (``plan``), queued
groups (``groups``), the model lane (``model_lane``), the equivalence pass
(``equivalence``), coverage and the checkpoint (``checkpoint``).

* Changed lane: the owner's change journal after ``changed_cursor_seq``, changed originals
  first. Full lane: a fair pass in (creation_sequence, id) order up to the generation's
  high watermark; later creations wait for the next generation.
* A slice consumes at most ``RECON_SLICE_MAX_ANCHORS`` rows, of which
  ``RECON_SLICE_FULL_LANE_ANCHORS`` are reserved for the full lane whenever it has rows
  left. Either lane may borrow what the other leaves unused; changes never displace the
  reservation, so every creation key of a generation of N is visited within ceil(N/64)
  successful full-lane slices however busy the journal is.
* ``checkpoint`` is the one transaction that moves cursors. It recomputes both pages from
  the job's own cursors (a caller cannot skip or starve a lane), writes a receipt for every
  scanned anchor — grouped, duplicate, no_neighbours, queued, not_selected or excluded
  with a content-free reason — queues at most ``RECON_SLICE_MAX_GROUPS`` groups, and only
  then advances the cursors: every selected anchor has a durable outcome first.
* The model lane: the changed lane's anchors are grouped first (at most half the slots
  while the model lane has anchors left); the slots left go to the job's durable model
  cursor, which walks the generation's creation keys oldest first from its rotated start
  key (wrapping once), within the pending cap. A scanned anchor no lane took is ``queued``
  — the model lane reaches it later in the same generation — not ``not_selected``.
* The equivalence pass: exact-key sets (``memory_memory.recon_equivalence_digest``) of the
  slice's anchors are carried into a durable backlog with the cursors, then planned as
  merges through ``writers.operations.commit`` within the slice's operation budget, the
  rest carried to the next slice. No model and no group slot is involved.
* A job completes when both scan lanes, the model lane and the backlog are done.
* With ``RECON_PENDING_MAX_GROUPS`` groups awaiting the model, a slice is *paused*: it
  consumes nothing and keeps every cursor (the equivalence backlog still drains).
* Scan coverage and model coverage are reported apart; a scanned anchor that no model
  looked at is ``queued`` or ``not_selected``, never "done".

Every statement is bounded by the slice, not the bank (see ``reconsolidation/inventory/sql.py``).
No provider call happens here, and no source text leaves this module.
"""
