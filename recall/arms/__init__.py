"""The candidate arms: each finds permitted originals related to the query in its own way.

``permitted`` is the one relation every arm and the rejoin select FROM (no arm can widen a
hard predicate) and what every arm's statement shares; ``lexical`` and ``structured`` run
together in one statement (``sparse``); ``semantic`` searches the vectors; ``expansion`` is
the second hop from the first fusion's top; ``recent`` is the newest-first control. Every
arm keeps at most ``arm_limit(max_items)`` candidates, ranked in SQL before that LIMIT; none
filters or re-sorts in Python. Call inside the owner's context.
"""
