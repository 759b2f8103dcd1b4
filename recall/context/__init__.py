"""Automatic context assembly: what the assistant's memory contributes to each turn without
a deliberate search.

``former`` composes bounded queries from the turn's task context (deterministic, no model
call, never an invented value), with ``references`` finding the people and things the
message names by role ("my male sibling"); ``planner`` runs them — at most four searches in at most two
rounds, under one deadline and one shared item/token allowance — through the same retriever
as deliberate search, and renders one cited context with explicit limitation notices.
Nothing here writes except the retriever's own content-free traces.
"""
