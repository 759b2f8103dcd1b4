"""The writers: the only code that records operations and what they derive.

``operations`` (commit a validated proposal — lease, group claim, sources, erasure fence,
owner blocks, kind rules, budget and input idempotency rechecked in one transaction — and
invalidate everything derived from a changed source), ``apply`` (each kind's rules at
commit; membership and projections once an operation is committed), ``hypotheses`` (the
stricter lane of ``infer_connection``: its rules and its erasable projection), ``blocks``
(hash-only owner blocks) and ``invalidation`` (the ``memory.hooks`` listener that runs
``operations.invalidate`` inside every source change's transaction).

Writers never call or await a provider and never open a transaction around one; they never
rewrite or delete an original and never take an owner other than the authenticated
principal. They import nothing of the pipeline or of the owner's surfaces, which call them.
"""
