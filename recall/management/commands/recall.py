"""``recall "QUERY" --owner T/P --ceiling C [...]``, ``recall --queries FILE.jsonl --owner ...``
and ``recall --context TURN.json --owner ...``: recall from the command line, as the API does.

A thin wrapper over ``recall.retriever.recall`` (surface "cli"). ``--scope``,
``--belief-type``, ``--exclude-id`` and ``--selection-mode`` are the hard filters of
``POST /v1/memories/search``, applied to every query of the run; ``--context`` is automatic
context assembly as ``POST /v1/memories/context`` (``_read_turn``, ``context_json``).

Other tools rely on these names, options and JSON keys; keep them exactly (a key may be
added, never renamed or removed): ``result_json`` and ``_read_queries`` describe them.
Without ``--json`` (single query) it prints the rendered context and a one-line summary.
"""
from __future__ import annotations

import json
import uuid
from dataclasses import asdict
from datetime import datetime
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError
from pydantic import ValidationError

from memory import vocabulary
from memory.management.commands._owner_option import parse_owner
from recall import retriever
from recall.context import planner
from recall.context.former import ContextNeed
from recall.domain import RecallRequest, RecallResult
from veetbot.clock import utcnow

CHANNELS = ("hybrid", "dense", "sparse")


def result_json(result: RecallResult) -> dict[str, Any]:
    """The ``--json`` object of one query: ``{"query", "channel", "requested_channel",
    "fallback_reason", "items": [{"id", "score"}, ...], "rendered"}``, items in rank order.

    ``channel`` is the channel that ran, ``requested_channel`` the one asked for
    (``--channel``, by default hybrid) and ``fallback_reason`` why they differ
    (``semantic_disabled`` or ``encoder_unavailable``; empty when they do not).
    """
    return {
        "query": result.query,
        "channel": result.channel,
        "requested_channel": result.requested_channel,
        "fallback_reason": result.fallback_reason,
        "items": [{"id": str(item.id), "score": item.score} for item in result.items],
        "rendered": result.rendered,
    }


def _instant(value: str) -> datetime:
    try:
        parsed = datetime.fromisoformat(value)
    except ValueError:
        raise CommandError("--as-of must be an ISO 8601 instant with an offset")
    if parsed.tzinfo is None or parsed.utcoffset() is None:
        raise CommandError("--as-of must be an ISO 8601 instant with an offset")
    return parsed


def _uuid(value: str) -> uuid.UUID:
    try:
        return uuid.UUID(value)
    except ValueError:
        raise CommandError("--exclude-id must be a UUID")


def filter_fields(options: dict) -> dict:
    """The RecallRequest filter fields the command's options set."""
    if options.get("scope") is not None and not vocabulary.SCOPE.match(options["scope"]):
        raise CommandError("--scope must be user, project:<id> or session:<session id>")
    return {
        "scope": options.get("scope") or "user",
        "belief_types": tuple(dict.fromkeys(options.get("belief_type") or ())),
        "exclude_ids": tuple(dict.fromkeys(_uuid(v) for v in options.get("exclude_id") or ())),
        "selection_mode": options.get("selection_mode") or "relevance",
    }


def _read_queries(path: str) -> list[tuple[Any, str]]:
    """The ``--queries`` file: lines ``{"id": ..., "query": "..."}``, blank lines skipped, every
    line checked before any query runs. The command prints one ``result_json`` object per
    line, in file order, with the line's ``"id"`` added first — many queries, one process.
    """
    try:
        with open(path, encoding="utf-8") as handle:
            lines = handle.read().splitlines()
    except OSError as error:
        raise CommandError(f"cannot read {path}: {error.strerror}")
    except UnicodeDecodeError:
        raise CommandError(f"{path}: not UTF-8")
    queries = []
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            entry = json.loads(line)
        except ValueError:
            raise CommandError(f"{path}:{number}: not a JSON object")
        if not isinstance(entry, dict) or set(entry) != {"id", "query"}:
            raise CommandError(f'{path}:{number}: each line must be exactly {{"id": ..., "query": "..."}}')
        if not isinstance(entry["query"], str) or not entry["query"].strip():
            raise CommandError(f"{path}:{number}: query must be a non-blank string")
        if not isinstance(entry["id"], (str, int)) or isinstance(entry["id"], bool):
            raise CommandError(f"{path}:{number}: id must be a string or an integer")
        queries.append((entry["id"], entry["query"]))
    return queries


class Command(BaseCommand):
    help = ("Recall an owner's memories for a query within an item/token budget (the same retriever "
            "as the API). --json prints {query, channel, requested_channel, fallback_reason, "
            "items: [{id, score}], rendered}.")

    def add_arguments(self, parser):
        parser.add_argument("query", nargs="?", help="the task query (or use --queries)")
        parser.add_argument("--owner", required=True, metavar="TENANT_UUID/PRINCIPAL_UUID")
        parser.add_argument("--ceiling", required=True, choices=vocabulary.SENSITIVITIES,
                            help="highest sensitivity that may be recalled")
        parser.add_argument("--channel", choices=CHANNELS,
                            help="hybrid (default), dense or sparse; falls back to sparse without semantic recall")
        parser.add_argument("--max-items", type=int, default=settings.RECALL_MAX_ITEMS, metavar="N")
        parser.add_argument("--max-tokens", type=int, default=settings.RECALL_MAX_TOKENS, metavar="N")
        parser.add_argument("--as-of", metavar="ISO", help="recall as of this past instant (with an offset)")
        parser.add_argument("--scope", metavar="SCOPE",
                            help="user (default), project:<id> or session:<id>; local scopes never cross")
        parser.add_argument("--belief-type", action="append", choices=vocabulary.BELIEF_TYPES, metavar="TYPE",
                            help="only beliefs of this type (repeatable)")
        parser.add_argument("--exclude-id", action="append", metavar="MEMORY_ID",
                            help="never return this memory (repeatable)")
        parser.add_argument("--selection-mode", choices=("relevance", "recent"),
                            help="relevance (default) or the legacy newest-first selection")
        parser.add_argument("--json", action="store_true", help="machine-readable output")
        parser.add_argument("--queries", metavar="FILE.jsonl",
                            help='answer every {"id", "query"} line of FILE, one JSON object per line')
        parser.add_argument("--context", metavar="TURN.json",
                            help="assemble the context for one assistant turn described in the file "
                                 "(at most 4 searches in 2 rounds under one deadline and one allowance)")

    def handle(self, *args, **options):
        principal = parse_owner(options["owner"])
        if sum(options[name] is not None for name in ("query", "queries", "context")) != 1:
            raise CommandError("give QUERY, --queries FILE.jsonl or --context TURN.json (exactly one)")
        as_of = _instant(options["as_of"]) if options["as_of"] else None
        filters = filter_fields(options)
        if options["context"] is not None:
            self._context(principal, options, as_of, filters)
            return

        def run(query: str) -> RecallResult:
            try:
                request = RecallRequest(
                    query=query, ceiling=options["ceiling"], max_items=options["max_items"],
                    max_tokens=options["max_tokens"], as_of=as_of, channel=options["channel"], **filters,
                )
            except ValidationError as error:
                fields = sorted({str(e["loc"][0]) for e in error.errors(include_input=False) if e["loc"]})
                raise CommandError(f"invalid {', '.join(fields) or 'request'}")
            return retriever.recall(principal=principal, request=request, surface="cli")

        if options["queries"] is not None:
            for query_id, query in _read_queries(options["queries"]):
                line = {"id": query_id, **result_json(run(query))}
                self.stdout.write(json.dumps(line))
            return
        result = run(options["query"])
        if options["json"]:
            self.stdout.write(json.dumps(result_json(result)))
            return
        self.stdout.write(result.rendered or "(nothing recalled)")
        self._summary(result)

    def _summary(self, result: RecallResult) -> None:
        fallback = f" (fallback: {result.fallback_reason})" if result.fallback_reason else ""
        self.stdout.write(
            f"-- {len(result.items)} items, {result.rendered_tokens} tokens, channel {result.channel}{fallback}, "
            f"trace {result.trace_id}"
        )

    def _context(self, principal, options: dict, as_of, filters: dict) -> None:
        need = _read_turn(options["context"])
        for name, bound in (("max_items", settings.RECALL_MAX_ITEMS), ("max_tokens", settings.RECALL_MAX_TOKENS)):
            if not 1 <= options[name] <= bound:
                raise CommandError(f"--{name.replace('_', '-')} must be between 1 and {bound} for --context")
        result = planner.assemble(principal, need, filters={"ceiling": options["ceiling"], "as_of": as_of, **filters},
                                  max_items=options["max_items"], max_tokens=options["max_tokens"], now=utcnow())
        if options["json"]:
            self.stdout.write(json.dumps(context_json(result)))
            return
        self.stdout.write(result.context or "(nothing recalled)")
        purposes = ", ".join(t.purpose for t in result.searches)
        self.stdout.write(f"-- {len(result.items)} items, {result.tokens} tokens, {len(result.searches)} of "
                          f"{result.planned} planned searches ({purposes}) in {result.rounds} round(s)"
                          + (f", stopped: {result.stopped}" if result.stopped else ""))


def _read_turn(path: str) -> ContextNeed:
    """The ``--context`` file: the turn — ``current_message`` and optionally ``task``,
    ``unresolved_references``, ``active_entities``, ``open_questions`` and ``working_state``
    [{``text``, ``completed``}]; the options give ceiling, instant, filters and the shared
    allowance.
    """
    try:
        with open(path, encoding="utf-8") as handle:
            raw = json.load(handle)
    except (OSError, ValueError):
        raise CommandError("--context must name a readable JSON file")
    try:
        return ContextNeed.model_validate(raw)
    except ValidationError as error:
        fields = sorted({str(e["loc"][0]) for e in error.errors(include_input=False) if e["loc"]})
        raise CommandError(f"invalid turn: {', '.join(fields) or 'not an object'}")


def context_json(result) -> dict[str, Any]:
    """The ``--context --json`` object: ``{"context", "tokens", "items": [{"id", "score"}],
    "notices", "trace"}``.
    """
    return {
        "context": result.context, "tokens": result.tokens,
        "items": [{"id": str(item.id), "score": item.score} for item in result.items],
        "notices": list(result.notices),
        "trace": {"rounds": result.rounds, "planned": result.planned, "stopped": result.stopped,
                  "deadline_ms": result.deadline_ms, "elapsed_ms": result.elapsed_ms,
                  "searches": [{**asdict(t), "trace_id": str(t.trace_id)} for t in result.searches]},
    }
