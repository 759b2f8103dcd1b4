"""Read claimed groups into the request builder's source values (``SourceGroup``).

Call inside the admission unit of work (``owner_context``, after the owner/People guards).
Eligibility is the maintenance read's (``reconsolidation.sources.current_sources``: lifecycle,
erasure, expiry, derivation, sensitivity ceiling, scope, revision); an input it cannot
supply is carried as a content-free reason so the builder defers the group with the right
finite code. Every part an original cites is read whole with its event kind, speaker,
exclusion and erasure, so the *builder* — not this read — decides what is admissible
evidence. Nothing is written, cached or logged.
"""
from __future__ import annotations

from collections import defaultdict
from datetime import datetime
from typing import Sequence

from django.db import connection

from reconsolidation.domain import GroupLease
from reconsolidation.providers.request import EvidencePart, SourceGroup, SourceMemory
from reconsolidation.rows import owner_fields
from reconsolidation.sources import current_sources
from veetbot.identity import Principal

CITED_PARTS = """
    SELECT s.memory_id, e.id, p.id, p.position, e.created_at, e.kind, e.speaker, e.excluded,
           e.erased_at IS NOT NULL, p.text
    FROM memory_memorysource s
    JOIN memory_event e ON e.id = s.event_id AND e.tenant_id = s.tenant_id AND e.principal_id = s.principal_id
    JOIN memory_eventpart p ON p.id = s.part_id AND p.tenant_id = s.tenant_id AND p.principal_id = s.principal_id
    WHERE s.tenant_id = %(tenant_id)s AND s.principal_id = %(principal_id)s AND s.memory_id = ANY(%(ids)s::uuid[])
    ORDER BY s.memory_id, s.position
"""


def read_source_groups(principal: Principal, leases: Sequence[GroupLease], now: datetime) -> list[SourceGroup]:
    """The current originals and cited parts of each claimed group, in the order given."""
    refs = {ref.memory_id: ref for lease in leases for ref in lease.inputs}
    views, reasons = current_sources(principal, list(refs.values()), now)
    parts: dict = defaultdict(list)
    with connection.cursor() as cursor:
        cursor.execute(CITED_PARTS, {**owner_fields(principal), "ids": sorted(views)})
        for memory_id, event_id, part_id, position, at, kind, speaker, excluded, erased, text in cursor.fetchall():
            parts[memory_id].append(EvidencePart(
                event_id=event_id, part_id=part_id, position=position, created_at=at, event_kind=kind,
                speaker=speaker, excluded=excluded, erased=erased, text=text,
            ))
    memories = {
        memory_id: SourceMemory(
            memory_id=memory_id, content_revision=view.content_revision, subject=view.subject,
            statement=view.statement, belief_type=view.belief_type, polarity=view.polarity,
            attribution=view.attribution, scope=view.scope, portable=view.portable, sensitivity=view.sensitivity,
            status="active", evidence_at=view.evidence_at, expires_at=view.expires_at,
            evidence=tuple(parts.get(memory_id, ())),
        )
        for memory_id, view in views.items()
    }
    return [
        SourceGroup(
            group_id=lease.group_id, claimed=tuple(lease.inputs),
            sources=tuple(memories[ref.memory_id] for ref in lease.inputs if ref.memory_id in memories),
            unavailable=tuple((ref.memory_id, reasons[ref.memory_id]) for ref in lease.inputs
                              if ref.memory_id in reasons),
        )
        for lease in leases
    ]
