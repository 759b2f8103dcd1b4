"""The authenticated owner, as a domain value free of the ORM.

Every service takes a ``Principal`` first; a store never accepts a caller-supplied
owner in its place.
"""
from __future__ import annotations

from uuid import UUID

from pydantic import BaseModel, ConfigDict

SCOPE_READ = "memory.read"
SCOPE_WRITE = "memory.write"
ALL_SCOPES = (SCOPE_READ, SCOPE_WRITE)


class Principal(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    tenant_id: UUID
    principal_id: UUID
    scopes: frozenset[str] = frozenset(ALL_SCOPES)

    @property
    def label(self) -> str:
        """The ``TENANT/PRINCIPAL`` form the commands take; opaque IDs only."""
        return f"{self.tenant_id}/{self.principal_id}"

    @classmethod
    def parse(cls, value: str) -> "Principal":
        tenant, sep, principal = value.partition("/")
        if not sep:
            raise ValueError("owner must be TENANT_UUID/PRINCIPAL_UUID")
        return cls(tenant_id=UUID(tenant), principal_id=UUID(principal))
