"""``erase --owner T/P (--memory ID | --session ID | --person ID | --account --yes) [--json]``.

The operator's way to carry out an owner's right to be forgotten: the same services as
``DELETE /v1/memories/{id}``, ``DELETE /v1/sessions/{id}``, ``DELETE /v1/people/{id}`` and
``POST /v1/account/erase`` (one transaction each, with reverse invalidation of everything
derived from what goes). Whole-account erasure also revokes every token, so it needs
``--yes``. An unknown, foreign or already erased ID is an error and nothing is written.
Output names only kinds, opaque IDs and instants, never what was erased.
"""
from __future__ import annotations

import json
import uuid

from django.core.management.base import BaseCommand, CommandError

from memory import selectors
from memory.errors import NotFound
from memory.management.commands._owner_option import parse_owner
from memory.services import erasure, receipts
from veetbot.clock import utcnow
from veetbot.rls import owner_context

TARGETS = ("memory", "session", "person")


def _uuid(option: str, value: str) -> uuid.UUID:
    try:
        return uuid.UUID(value)
    except ValueError:
        raise CommandError(f"--{option} must be a UUID")


class Command(BaseCommand):
    help = ("Erase one memory, a conversation, a person or the owner's whole account: the words go from every "
            "table, opaque IDs and hashes stay. --account also revokes every token and needs --yes.")

    def add_arguments(self, parser):
        parser.add_argument("--owner", required=True, metavar="TENANT_UUID/PRINCIPAL_UUID")
        target = parser.add_mutually_exclusive_group(required=True)
        for name in TARGETS:
            target.add_argument(f"--{name}", metavar="ID", help=f"erase this {name}")
        target.add_argument("--account", action="store_true", help="erase the whole account and revoke its tokens")
        parser.add_argument("--yes", action="store_true", help="confirm whole-account erasure")
        parser.add_argument("--json", action="store_true", help='print {"erased", "id", "erased_at"}')

    def handle(self, *args, **options):
        principal = parse_owner(options["owner"])
        if options["account"] and not options["yes"]:
            raise CommandError("whole-account erasure needs --yes (nothing was erased)")
        target = "account" if options["account"] else next(name for name in TARGETS if options[name])
        target_id = principal.principal_id if target == "account" else _uuid(target, options[target])
        with owner_context(principal):
            if not selectors.owner_registered():
                raise CommandError("no such owner (nothing was erased)")
        now = utcnow()
        try:
            if target == "memory":
                erasure.memory_erase(principal=principal, memory_id=target_id, now=now)
            else:
                # A fresh key per run: an operator's re-run is a new request, not a replay.
                erasure.erase_requested(
                    principal=principal, target=target, target_id=target_id, key=f"cli-erase-{uuid.uuid4()}",
                    request_sha256=receipts.request_sha256(route=f"cli.erase.{target}",
                                                           params={"id": str(target_id)}, body=None),
                    now=now)
        except NotFound:
            raise CommandError(f"no such {target} for this owner (nothing was erased)")
        result = {"erased": target, "id": str(target_id), "erased_at": now.isoformat()}
        if options["json"]:
            self.stdout.write(json.dumps(result))
        else:
            self.stdout.write(f"Erased {target} {target_id} at {result['erased_at']}.")
