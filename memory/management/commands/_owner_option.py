"""Shared parsing of the ``--owner TENANT_UUID/PRINCIPAL_UUID`` option."""
from django.core.management.base import CommandError

from veetbot.identity import Principal


def parse_owner(value: str) -> Principal:
    try:
        return Principal.parse(value)
    except ValueError:
        raise CommandError("--owner must be TENANT_UUID/PRINCIPAL_UUID")
