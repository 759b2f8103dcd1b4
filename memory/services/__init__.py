"""The one write layer of the originals. Each public function is one unit of work under
the owner's context and takes the authenticated ``Principal`` first."""
from memory.services.conversations import event_append, person_create, session_create
from memory.services.erasure import memory_erase, person_erase, principal_erase, session_erase
from memory.services.originals import (
    memory_create, memory_record_usage, memory_reject, memory_review, memory_revise,
)
from memory.services.owners import owner_create, token_authenticate, token_create, token_revoke
from memory.services.sweeps import decay_due_all, expire_due_all, memories_decay_due, memories_expire_due

__all__ = [
    "event_append", "person_create", "session_create", "memory_erase", "person_erase",
    "principal_erase", "session_erase", "memory_create", "memory_record_usage", "memory_reject",
    "memory_review", "memory_revise", "owner_create", "token_authenticate", "token_create",
    "token_revoke", "decay_due_all", "expire_due_all", "memories_decay_due", "memories_expire_due",
]
