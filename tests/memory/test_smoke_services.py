from memory import services
from memory.domain import MemoryChanges
from tests.factories import make_memory, make_owner


def test_create_and_revise_roundtrip(db):
    principal, _ = make_owner()
    created = make_memory(principal)
    assert created.content_revision == 1 and created.creation_sequence == 1
    revised = services.memory_revise(principal=principal, memory_id=created.id, changes=MemoryChanges(confidence=0.5))
    assert revised.content_revision == 2
    assert revised.store_position > created.store_position
