"""Whether the owner has paused dreaming (``services.pause`` changes it)."""
from __future__ import annotations

from typing import Optional

from pydantic import AwareDatetime, BaseModel, ConfigDict

from reconsolidation.models import DreamingPause
from veetbot.identity import Principal
from veetbot.rls import owner_context


class PauseState(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    paused: bool
    changed_at: Optional[AwareDatetime]  # None: never paused


def is_paused() -> bool:
    """Call inside the owner's context (the lease functions do)."""
    return DreamingPause.objects.filter(paused=True).exists()


def dreaming_pause_get(*, principal: Principal) -> PauseState:
    with owner_context(principal):
        row = DreamingPause.objects.first()
        return PauseState(paused=bool(row and row.paused), changed_at=row.changed_at if row else None)
