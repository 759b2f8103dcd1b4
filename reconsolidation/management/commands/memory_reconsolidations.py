"""``memory_reconsolidations list|get|undo --owner T/P --ceiling C [--json]``: the operator's
view of the operation journal, and undo of a committed merge.

An interface other tools rely on; keep names and options exactly:

* ``list`` takes ``--kind``, ``--state``, ``--limit``, ``--cursor``;
* ``get OPERATION_ID``;
* ``undo OPERATION_ID --expected-revision N --idempotency-key KEY`` (a reusable key: the
  same key and revision replay the first receipt).

All require ``--ceiling`` and ``--owner``. ``--json`` prints exactly the HTTP response
body of the matching route (the same owner services and serializers, rendered by the
same JSON renderer), errors included as the API's envelope (then the exit status is
non-zero). Works whatever the HTTP surface flags and the processing switch say. Human
output shows IDs, kinds, states and counts only, never content.
"""
from __future__ import annotations

from uuid import UUID

from django.core.management.base import BaseCommand, CommandError

from memory import errors as memory_errors, vocabulary
from memory.management.commands._owner_option import parse_owner
from reconsolidation import bounds
from reconsolidation.api.serializers import render_operation, render_page, to_json
from reconsolidation.domain import OPERATION_KINDS, OPERATION_STATES
from reconsolidation.selectors import operation_views
from reconsolidation.services.operations import operation_undo
from veetbot import api_errors

ACTIONS = ("list", "get", "undo")


class Command(BaseCommand):
    help = "Inspect reconsolidation operations (list, get) and undo a committed merge; --json = the HTTP body."

    def add_arguments(self, parser):
        parser.add_argument("action", choices=ACTIONS)
        parser.add_argument("operation_id", nargs="?", help="the operation ID (get, undo)")
        parser.add_argument("--owner", required=True, metavar="TENANT_UUID/PRINCIPAL_UUID")
        parser.add_argument("--ceiling", required=True, choices=vocabulary.SENSITIVITIES)
        parser.add_argument("--kind", choices=OPERATION_KINDS)
        parser.add_argument("--state", choices=OPERATION_STATES)
        parser.add_argument("--limit", type=int, default=bounds.RECON_OPERATIONS_PAGE_DEFAULT,
                            help=f"1-{bounds.RECON_OPERATIONS_PAGE_MAX}")
        parser.add_argument("--cursor")
        parser.add_argument("--expected-revision", type=int)
        parser.add_argument("--idempotency-key")
        parser.add_argument("--json", action="store_true", help="print exactly the HTTP response body")

    def handle(self, *args, **options):
        principal = parse_owner(options["owner"])
        action = options["action"]
        self._check_options(action, options)
        try:
            if action == "list":
                data = render_page(operation_views.operation_page(
                    principal=principal, ceiling=options["ceiling"], cursor=options["cursor"], limit=options["limit"],
                    kind=options["kind"], state=options["state"]))
            else:
                operation_id = self._operation_id(options["operation_id"])
                if action == "undo":
                    operation_views.operation_detail(principal=principal, operation_id=operation_id, ceiling=options["ceiling"])
                    operation_undo(principal=principal, operation_id=operation_id,
                                   expected_revision=options["expected_revision"],
                                   idempotency_key=options["idempotency_key"])
                data = render_operation(operation_views.operation_detail(principal=principal, operation_id=operation_id,
                                                                 ceiling=options["ceiling"]))
        except memory_errors.MemoryError_ as error:
            self._fail(error, options["json"])
        if options["json"]:
            self.stdout.write(to_json(data))
        elif action == "list":
            for item in data["items"]:
                self.stdout.write(_line(item))
            if data["next_cursor"]:
                self.stdout.write(f"next cursor: {data['next_cursor']}")
        else:
            self.stdout.write(_line(data))
            for link in data["sources"]:
                self.stdout.write(f"  source {link['memory_id']} r{link['content_revision']} {link['role']}")

    def _check_options(self, action: str, options) -> None:
        if action == "list" and options["operation_id"]:
            raise CommandError("list takes no operation ID")
        if action != "list" and not options["operation_id"]:
            raise CommandError(f"{action} needs an operation ID")
        if action != "list" and (options["kind"] or options["state"] or options["cursor"]):
            raise CommandError("--kind, --state and --cursor apply to list only")
        if action == "undo" and (options["expected_revision"] is None or options["idempotency_key"] is None):
            raise CommandError("undo needs --expected-revision and --idempotency-key")
        if action != "undo" and (options["expected_revision"] is not None or options["idempotency_key"] is not None):
            raise CommandError("--expected-revision and --idempotency-key apply to undo only")

    @staticmethod
    def _operation_id(raw: str) -> UUID:
        try:
            return UUID(raw)
        except ValueError:
            raise CommandError("operation ID: not a UUID")

    def _fail(self, error: Exception, as_json: bool) -> None:
        if isinstance(error, memory_errors.Invalid):
            body, code = {"error": {"code": "validation_error", "details": []}}, "validation_error"
        else:
            response = api_errors.exception_handler(error, {})
            if response is None:
                raise error
            body, code = response.data, response.data["error"]["code"]
        if as_json:
            self.stdout.write(to_json(body))
        raise CommandError(code)


def _line(item: dict) -> str:
    content = "content withheld" if item["content"] is None else f"{len(item['content']['clauses'])} clauses"
    return (f"{item['id']} {item['kind']} {item['state']} r{item['revision']} {item['created_at']} "
            f"{item['reason'] or '-'} {content}, {len(item['sources'])} sources")
