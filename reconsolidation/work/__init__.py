"""Work on a slice's queued groups: claim them, read its sources, reserve spend, ask the provider,
verify, commit through the writers, finish.

``claims`` (claim a queued group under the job lease, record its outcome), ``process``
(``process_batch``: the rules path over a slice's batch; ``process_group``: one group, and
the router to the model path), ``model_path`` (the
model provider's proposal and verification calls), ``admission`` (the only way a prepared
model request becomes sendable: fresh sources, lease, egress policy, its maximum price
reserved), ``executor`` (one admitted request sent once, outside every transaction),
``spend`` (reservations before a call, settlement after) and ``apply_review`` (verified
candidates to the writers).

A provider is never called inside a transaction, and nothing here stores source text in a
content-free table.
"""
