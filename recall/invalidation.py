"""Deletes a belief's vectors in the same transaction as any change of its content.

Registered with ``memory.hooks`` when the app loads. Usage-only changes publish nothing,
so they never cost a re-embedding.
"""
from memory import hooks
from recall.models import MemoryVector
from veetbot.rls import owner_context


@hooks.register
def drop_vectors(change: hooks.ContentChange) -> None:
    if change.kind == "created":
        return
    with owner_context(change.principal):
        MemoryVector.objects.filter(memory_id__in=change.memory_ids).delete()
