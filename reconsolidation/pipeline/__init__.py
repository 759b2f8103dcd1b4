"""The maintenance pipeline up to the point a group is queued: who is due and holds the
lease, what a slice scans, and the unit of work every stage shares.

``leases`` (the daily due job per owner, the one live lease, recovery), ``inventory`` (the
two durable scan lanes, the bounded slice plan, queued groups, the checkpoint) with its
SQL in ``inventory_sql``, ``grouping`` (a bounded group of related originals per anchor),
``sources`` (the current originals a group may use, read under the owner's policies),
``store`` (``ReconsolidationStore``, the unit-of-work repository), ``driver`` (one slice,
and the until-idle loop the ``dream`` command and the Celery task run) and ``dry_run`` (what
the next slice would select, with nothing written).

It never calls a provider itself (``group_work`` does, outside every transaction) and never
records an operation except through ``writers``.
"""
