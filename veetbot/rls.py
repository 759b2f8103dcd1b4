"""Row-level-security contexts: the only way application code reaches owner rows.

``owner_context(principal)`` opens a transaction on the runtime alias and sets
``app.tenant_id`` / ``app.principal_id`` transaction-locally; the forced policies on
every owner table compare against them. Nested contexts restore the previous owner on
exit, because transaction-local settings survive RELEASE SAVEPOINT and would otherwise
leak the inner owner into the rest of the outer transaction.

``staff_context()`` sets no owner and ``app.staff``; only content-free tables carry a
policy that admits it.
"""
from __future__ import annotations

from contextlib import contextmanager
from typing import Iterator

from django.db import connections, transaction

from veetbot.identity import Principal

RUNTIME_ALIAS = "default"
_KEYS = ("app.tenant_id", "app.principal_id", "app.staff")


def _read(cursor) -> tuple[str, str, str]:
    cursor.execute(
        "SELECT current_setting('app.tenant_id', true), current_setting('app.principal_id', true),"
        " current_setting('app.staff', true)"
    )
    return tuple(value or "" for value in cursor.fetchone())


def _write(cursor, values: tuple[str, str, str]) -> None:
    cursor.execute(
        "SELECT set_config(%s, %s, true), set_config(%s, %s, true), set_config(%s, %s, true)",
        [item for pair in zip(_KEYS, values) for item in pair],
    )


@contextmanager
def _settings(values: tuple[str, str, str], using: str) -> Iterator[None]:
    with transaction.atomic(using=using):
        with connections[using].cursor() as cursor:
            previous = _read(cursor)
            _write(cursor, values)
        yield
        # Reached only on success; on error the savepoint rollback restores the values.
        with connections[using].cursor() as cursor:
            _write(cursor, previous)


@contextmanager
def owner_context(principal: Principal, *, using: str = RUNTIME_ALIAS) -> Iterator[None]:
    """One unit of work for ``principal``: a transaction in which only its rows exist."""
    with _settings((str(principal.tenant_id), str(principal.principal_id), ""), using):
        yield


@contextmanager
def staff_context(*, using: str = RUNTIME_ALIAS) -> Iterator[None]:
    """A transaction that sees content-free operational tables only."""
    with _settings(("", "", "on"), using):
        yield


def current_owner(using: str = RUNTIME_ALIAS) -> tuple[str, str]:
    """The owner settings in force on ``using`` (empty strings when none)."""
    with connections[using].cursor() as cursor:
        tenant, principal, _ = _read(cursor)
    return tenant, principal
