"""What the owner reads of reconsolidation and does with it.

``reads`` (which operations a caller may see under a ceiling: one, or a signed-cursor page
of opaque metadata), ``journal`` (the allowlisted view the HTTP API and the CLI render:
content and source links only while the complete support is available, after read-time
validation), ``review`` (approve or reject a proposal in reviewed mode), ``undo`` (undo a
committed merge), ``derived`` (lookup, browse and controls of derived memories) and
``receipts`` (the idempotency of those actions).

None of it needs the processing switch: history, review, undo and the derived controls keep
working with processing off. It never calls a provider, never shows part of an operation
whose support is incomplete under the caller's ceiling, and never imports the pipeline.
"""
