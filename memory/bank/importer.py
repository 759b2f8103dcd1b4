"""Import of a memory-bank@1 document into one owner's store: all or nothing.

One unit of work under ``owner_context``: take the owner lock, check the document's
references and existing IDs against the stored rows, then write people, sessions, events
(with ordered parts) and finally beliefs. Beliefs are created only through
``originals.insert_memories`` and revised only through ``originals.apply_content_change``,
so creation order, the change journal and hook publication are exactly those of live
writes; what each source and session scope names is checked here, against the document and
the stored rows, before anything is written (``insert_memories`` leaves that to its caller).
Rows go in batches through ``veetbot.bulk.insert_rows`` (a binary COPY into a temporary
table, then one INSERT per table and batch, which the owner policy checks row by row): about
three times less work per belief than model instances and ``bulk_create``.

Rules beyond the format's own (memory-bank-format.md; ``memory_bank_import`` lists them):
re-importing identical content is a no-op; evidence and history never change; an erased
row is never re-imported and does not exist for references (erasure is permanent); a claim
the owner rejected is refused as in live creation.

Nothing is written unless the whole document is accepted; a problem found while writing
raises after the fact and rolls everything back. This module never writes outside the
owner context and never creates or revises a belief except through ``originals``.
"""
from __future__ import annotations

import gc
import re
import time
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime
from typing import Callable, Iterable, Iterator, Optional, Sequence
from uuid import UUID

from django.conf import settings
from django.db import IntegrityError, connection, transaction

from memory import claims
from memory.bank.parse import Problems, key_path, parse_document
from memory.bank.validate import Bank, EventRecord, MemoryRecord, PersonRecord, SessionRecord, validate_document
from memory.domain import CONTENT_FIELDS, Value
from memory.errors import Conflict, Invalid
from memory.models import Memory, Person, Rejection
from memory.services.originals import REJECTED_CLAIM, apply_content_change, insert_memories
from memory.services.owner_state import lock_owner
from veetbot import statistics
from veetbot.bulk import id_array, insert_rows
from veetbot.clock import utcnow
from veetbot.identity import Principal
from veetbot.rls import owner_context

Progress = Callable[[str, int, int], None]
"""``progress(stage, done, total)``: called as each batch is written."""

ERASED = "erased by the owner; erased rows are never re-imported"
NO_UPDATE = "differs from the stored {what} (use --update to change it)"
IMMUTABLE = "differs from the stored {what} ({what}s cannot be changed by import)"
# IDs are primary keys across all owners: the same document cannot be imported into two
# owners of one database (give the copy new IDs).
IN_USE = "already in use by another owner (IDs are unique across owners)"


class ImportCounts(Value):
    """Rows created or updated by one import (a re-import counts zeros)."""

    memories: int
    events: int
    sessions: int
    people: int
    seconds: float


@dataclass
class _Plan:
    new_people: list[PersonRecord] = field(default_factory=list)
    renamed_people: list[PersonRecord] = field(default_factory=list)
    new_sessions: list[SessionRecord] = field(default_factory=list)
    new_events: list[EventRecord] = field(default_factory=list)
    new_memories: list[MemoryRecord] = field(default_factory=list)
    revised_memories: list[MemoryRecord] = field(default_factory=list)


def memory_bank_import(
    *, principal: Principal, data: bytes | str, update: bool = False, now: Optional[datetime] = None,
    progress: Optional[Progress] = None,
) -> ImportCounts:
    """Import one memory-bank@1 document for ``principal``; raises ``Invalid`` listing every problem.

    * An ID already stored for this owner with identical content is skipped, so re-importing
      a file is a no-op. A changed belief is refused unless ``update``; its ``created_at``
      and ``sources`` can never change (creation order and provenance are history). A
      changed person name is refused unless ``update``. Sessions and events are evidence and
      are never changed by import, with or without ``update``.
    * A stored row that was erased is never re-imported: erasure is permanent.
    * A new belief whose normalized claim the owner rejected is refused, as in live creation.
      Status ``deleted`` (in the format's table) is stored as given for a new belief, but an
      existing belief never becomes ``deleted`` by import: that is what erasure does.
    * References may name rows stored earlier for this owner (an incremental import), not
      only rows in the same document. Erased rows do not exist for references.
    * The owner need not exist beforehand: like every write service, import creates the
      owner's lock row. ``create_owner`` can issue a token for the same IDs later.
    * IDs are primary keys across all owners, so one document cannot be imported into two
      owners of the same database. Another owner's rows are invisible under row-level
      security, so such an ID is found only by its insert failing; the clashing IDs of that
      table are then located by bisection, reported by path, and everything rolls back.
    """
    started = time.monotonic()
    now = now or utcnow()
    problems = Problems()
    try:
        with _collector_paused():
            document = parse_document(data, problems)
            bank = validate_document(document, problems) if document is not None else None
            del document
        if bank is None:
            raise Invalid(problems.lines())
        with owner_context(principal):
            lock_owner(principal)
            plan = _plan(bank, problems, update=update)
            if problems:
                raise Invalid(problems.lines())
            _check_references_immediately(True)
            counts = _write(principal, plan, now, problems, progress or _quiet)
            if problems:
                raise Invalid(problems.lines())  # rolls back what was written
            _check_references_immediately(False)
    except _Collisions as clash:
        raise Invalid([f"{path}: {IN_USE}" for path in clash.paths]) from None
    except IntegrityError as error:
        raise Invalid([_refused(error)]) from None
    finally:
        gc.unfreeze()  # what _collector_paused froze is collectable again
    return ImportCounts(**counts, seconds=round(time.monotonic() - started, 3))


# A 100k-memory bank parses into millions of small dicts, lists and strings, none in a
# cycle. The cyclic collector would rescan them while they are built and again on every
# later collection (measured: parsing and validation took twice as long), so it pauses
# while the document is read, and what was read is frozen out of scans until the import
# ends. The freeze comes before the collector resumes: resumed first, its next collection
# was a full one over everything read (0.5 s of a 100,000-belief import, py-spy 2026-12-06).

@contextmanager
def _collector_paused() -> Iterator[None]:
    """Pause the collector; on leaving, freeze what was read (the caller unfreezes)."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        gc.freeze()
        if enabled:
            gc.enable()


def _quiet(stage: str, done: int, total: int) -> None:
    pass


# The first batch of events and of memories is this small: it is written before the planner
# has statistics counting the import's rows (``_analyze_after_first_batch``), and until then
# every foreign-key check of it reads all the rows written so far (measured with the staged
# COPY writes: a first batch of 2,000 memories spent 1.8 s in its sources' and revisions'
# checks, the next ones 0.1 s).
FIRST_BATCH_ROWS = 250


def _analyze_after_first_batch(done: int, total: int) -> None:
    """After the first of several batches, give the planner statistics that count them.

    The foreign-key checks of the batches to come are planned from ``memory_memory``'s (and
    the event tables') statistics. Without any for this owner they were served from an
    owner-prefixed index filtered on ID — each check reading every row written so far: a
    100,000-belief import into a new database was still writing after 7.5 minutes when
    stopped, and takes 78 s with this (memory migration 0005). A single-batch import is too
    small to matter and skips it.
    """
    if done == min(FIRST_BATCH_ROWS, settings.IMPORT_BATCH_ROWS) and total > done:
        statistics.analyze_import_tables()


def _check_references_immediately(immediate: bool) -> None:
    """Check the owner-bound foreign keys (deferred until commit by default) statement by
    statement, while the rows they lock are fresh in shared buffers.

    Measured on the embedded server: with the checks left to COMMIT, a 50k-memory import
    committed in 7 s but a 100k one was still committing after 10 minutes (every check
    re-reads and re-dirties, for its FOR KEY SHARE lock, a row written long before); with
    immediate checks the whole 100k import took 6 minutes. (Both numbers predate the
    statistics taken after the first batch, ``_analyze_after_first_batch``: the checks were
    then planned as owner-prefix scans, which may have been most of that cost; the deferred
    variant was not measured again.) Writes below go in dependency
    order, so an immediate check cannot fail where a deferred one would pass. The setting
    is switched back because it would outlive this block in an outer transaction (a
    savepoint rollback restores it on error).
    """
    with connection.cursor() as cursor:
        cursor.execute(f"SET CONSTRAINTS ALL {'IMMEDIATE' if immediate else 'DEFERRED'}")


# -- checks against the stored rows ---------------------------------------------------------

def _batched(items: Sequence, size: int, *, first: Optional[int] = None) -> Iterable[Sequence]:
    """``items`` in slices of ``size``; the first slice holds at most ``first`` items when given."""
    start = 0
    while start < len(items):
        end = start + (min(first, size) if first and not start else size)
        yield items[start:end]
        start = end


def _stored(table: str, ids: Iterable[str], *columns: str, key: str = "id") -> list[tuple]:
    """``columns`` of the owner's rows of ``table`` whose ``key`` (a UUID column) is in ``ids``,
    in bounded lists. ``table``, ``columns`` and ``key`` are code, never input."""
    ids = list(ids)
    rows: list[tuple] = []
    with connection.cursor() as cursor:
        for chunk in _batched(ids, settings.IMPORT_BATCH_ROWS):
            cursor.execute(f"SELECT {', '.join(columns)} FROM {table} WHERE {key} = ANY(%s::uuid[])", [id_array(chunk)])
            rows.extend(cursor.fetchall())
    return rows


def _plan(bank: Bank, problems: Problems, *, update: bool) -> _Plan:
    plan = _Plan()
    refs = {kind: {r.id for r in bank.references if r.kind == kind} for kind in ("person", "session", "source")}

    people = {str(i): (name, erased) for i, name, erased in _stored(
        "memory_person", {p.id for p in bank.people} | refs["person"], "id", "name", "erased_at")}
    for record in bank.people:
        stored = people.get(record.id)
        if stored is None:
            plan.new_people.append(record)
        elif stored[1] is not None:
            problems.add(f"{record.path}.id", ERASED, at=record.order)
        elif stored[0] != record.name:
            if update:
                plan.renamed_people.append(record)
            else:
                problems.add(f"{record.path}.name", NO_UPDATE.format(what="person"), at=record.order)

    sessions = {str(row[0]): row[1:] for row in _stored(
        "memory_session", {s.id for s in bank.sessions} | refs["session"], "id", "scope", "started_at", "erased_at")}
    for record in bank.sessions:
        stored = sessions.get(record.id)
        if stored is None:
            plan.new_sessions.append(record)
        elif stored[2] is not None:
            problems.add(f"{record.path}.id", ERASED, at=record.order)
        else:
            for name, value in zip(("scope", "started_at"), stored):
                if getattr(record, name) != value:
                    problems.add(f"{record.path}.{name}", IMMUTABLE.format(what="session"), at=record.order)

    _plan_events(bank, problems, plan, refs["source"])

    for ref in bank.references:
        if ref.kind == "person" and people.get(ref.id, (None, True))[1] is not None:
            problems.add(ref.path, "unknown person", at=ref.order)
        elif ref.kind == "session" and sessions.get(ref.id, (None, None, True))[2] is not None:
            problems.add(ref.path, "unknown session", at=ref.order)

    _plan_memories(bank, problems, plan, update=update)
    return plan


def _plan_events(bank: Bank, problems: Problems, plan: _Plan, cited: set[str]) -> None:
    event_columns = ("session_id", "kind", "speaker", "created_at")
    events = {str(row[0]): row[1:] for row in _stored(
        "memory_event", {e.id for e in bank.events} | cited, "id", *event_columns, "erased_at")}
    live = {event_id for event_id, row in events.items() if row[-1] is None}
    # Parts of every stored event we compare or cite, and any stored part the document declares.
    parts: dict[str, list[tuple[int, str, str]]] = {}
    part_owner: dict[str, str] = {}
    doc_parts = [part_id for e in bank.events for part_id, _ in e.parts]
    rows = _stored("memory_eventpart", live, "id", "event_id", "position", "text", key="event_id")
    rows += _stored("memory_eventpart", doc_parts, "id", "event_id", "position", "text")
    for part_id, event_id, position, text in set(rows):
        parts.setdefault(str(event_id), []).append((position, str(part_id), text))
        part_owner[str(part_id)] = str(event_id)

    for record in bank.events:
        stored = events.get(record.id)
        if stored is None:
            plan.new_events.append(record)
            for index, (part_id, _) in enumerate(record.parts):
                if part_id in part_owner:
                    problems.add(f"{record.path}.parts[{index}].id", "already used by another stored event",
                                 at=record.order)
            continue
        if stored[-1] is not None:
            problems.add(f"{record.path}.id", ERASED, at=record.order)
            continue
        wanted = {"session_id": record.session, "kind": record.kind, "speaker": record.speaker,
                  "created_at": record.created_at}
        for name, value in zip(event_columns, stored):
            if (str(value) if name == "session_id" else value) != wanted[name]:
                where = "session" if name == "session_id" else name
                problems.add(f"{record.path}.{where}", IMMUTABLE.format(what="event"), at=record.order)
        stored_parts = [(part_id, text) for _, part_id, text in sorted(parts.get(record.id, []))]
        if len(stored_parts) != len(record.parts):
            problems.add(f"{record.path}.parts", f"{IMMUTABLE.format(what='event')}: {len(stored_parts)} parts stored",
                         at=record.order)
            continue
        for index, ((part_id, text), (stored_id, stored_text)) in enumerate(zip(record.parts, stored_parts)):
            if part_id != stored_id:
                problems.add(f"{record.path}.parts[{index}].id", IMMUTABLE.format(what="event"), at=record.order)
            elif text != stored_text:
                problems.add(f"{record.path}.parts[{index}].text", IMMUTABLE.format(what="event"), at=record.order)

    for ref in bank.references:
        if ref.kind != "source":
            continue
        if ref.id not in live:
            problems.add(f"{ref.path}.event", "unknown event", at=ref.order)
        elif part_owner.get(ref.part) != ref.id:
            problems.add(f"{ref.path}.part", "not a part of that event", at=ref.order)


def _plan_memories(bank: Bank, problems: Problems, plan: _Plan, *, update: bool) -> None:
    columns = ("id", "created_at", "erased_at", *CONTENT_FIELDS)
    stored = {str(row[0]): dict(zip(columns, row)) for row in _stored(
        "memory_memory", [m.id for m in bank.memories], *columns)}
    sources: dict[str, list[tuple[str, str]]] = {}
    source_rows = _stored("memory_memorysource", list(stored), "memory_id", "position", "event_id", "part_id",
                          key="memory_id")
    for memory_id, _, event_id, part_id in sorted(source_rows):
        sources.setdefault(str(memory_id), []).append((str(event_id), str(part_id)))

    for record in bank.memories:
        row = stored.get(record.id)
        if row is None:
            plan.new_memories.append(record)
            continue
        if row["erased_at"] is not None:
            problems.add(f"{record.path}.id", ERASED, at=record.order)
            continue
        if row["created_at"] != record.created_at:
            problems.add(f"{record.path}.created_at", "differs from the stored memory (creation time cannot change)",
                         at=record.order)
        if sources.get(record.id, []) != record.sources:
            problems.add(f"{record.path}.sources", "differ from the stored sources (provenance cannot change)",
                         at=record.order)
        changed = [name for name in CONTENT_FIELDS if row[name] != record.content[name]]
        if not changed:
            continue
        if not update:
            for name in changed:
                problems.add(f"{record.path}.{name}", NO_UPDATE.format(what="memory"), at=record.order)
        elif "status" in changed and record.content["status"] == "deleted":
            problems.add(f"{record.path}.status", "cannot become deleted by import (erase the memory instead)",
                         at=record.order)
        else:
            plan.revised_memories.append(record)

    if plan.new_memories and Rejection.objects.exists():
        hashes = {}
        for record in plan.new_memories:
            content = record.content
            hashes.setdefault(claims.claim_sha256(
                statement=content["statement"], claim_kind=content["claim_kind"],
                polarity=content["polarity"], attribution=content["attribution"],
            ), []).append(record)
        rejected = Rejection.objects.filter(claim_sha256__in=list(hashes)).values_list("claim_sha256", flat=True)
        for claim in rejected:
            for record in hashes[claim]:
                problems.add(record.path, REJECTED_CLAIM, at=record.order)


# -- writes ---------------------------------------------------------------------------------

_PERSON_COLUMNS = ("id", "tenant_id", "principal_id", "name", "created_at")
_SESSION_COLUMNS = ("id", "tenant_id", "principal_id", "scope", "started_at")
_EVENT_COLUMNS = ("id", "tenant_id", "principal_id", "session_id", "kind", "speaker", "created_at", "excluded")
_PART_COLUMNS = ("id", "tenant_id", "principal_id", "event_id", "position", "text", "text_sha256")

class _Collisions(Exception):
    """IDs of the document that another owner's rows already hold (paths of their "id")."""

    def __init__(self, paths: list[str]) -> None:
        self.paths = paths


def _constraint(error: IntegrityError) -> str:
    return getattr(getattr(error.__cause__, "diag", None), "constraint_name", None) or ""


def _guarded_insert(insert: Callable[[list], None], items: list[tuple[str, object]], table: str) -> None:
    """Run ``insert(items)`` in a savepoint; on a primary-key clash, find every clashing item.

    Under row-level security another owner's rows are invisible, and PostgreSQL leaves the
    key out of the error when RLS applies, so the clashing IDs are found by bisection:
    halves that insert cleanly stay (the failed import rolls them back), halves that clash
    are split until single items remain. Only failed imports pay for this.
    """
    primary_key = f"{table}_pkey"
    found: list[str] = []

    def probe(subset: list) -> None:
        try:
            with transaction.atomic():
                insert(subset)
        except IntegrityError as error:
            if _constraint(error) != primary_key:
                raise
            if len(subset) == 1:
                found.append(subset[0][0])
                return
            middle = len(subset) // 2
            probe(subset[:middle])
            probe(subset[middle:])

    probe(items)
    if found:
        raise _Collisions(found)


def _write(principal: Principal, plan: _Plan, now: datetime, problems: Problems, progress: Progress) -> dict:
    owner = (principal.tenant_id, principal.principal_id)
    size = settings.IMPORT_BATCH_ROWS

    def rows(table: str, columns: tuple[str, ...]) -> Callable[[list], None]:
        return lambda items: insert_rows(table, columns, [row for _, row in items])

    _guarded_insert(rows("memory_person", _PERSON_COLUMNS), [
        (f"{r.path}.id", (UUID(r.id), *owner, r.name, now)) for r in plan.new_people
    ], "memory_person")
    for record in plan.renamed_people:
        Person.objects.filter(id=record.id).update(name=record.name)
    people = len(plan.new_people) + len(plan.renamed_people)
    progress("people", people, people)

    _guarded_insert(rows("memory_session", _SESSION_COLUMNS), [
        (f"{r.path}.id", (UUID(r.id), *owner, r.scope, r.started_at)) for r in plan.new_sessions
    ], "memory_session")
    progress("sessions", len(plan.new_sessions), len(plan.new_sessions))

    done = 0
    for chunk in _batched(plan.new_events, size, first=FIRST_BATCH_ROWS):
        event_ids = [UUID(r.id) for r in chunk]
        _guarded_insert(rows("memory_event", _EVENT_COLUMNS), [
            (f"{r.path}.id", (event_id, *owner, UUID(r.session), r.kind, r.speaker, r.created_at, False))
            for r, event_id in zip(chunk, event_ids)
        ], "memory_event")
        _guarded_insert(rows("memory_eventpart", _PART_COLUMNS), [
            (f"{r.path}.parts[{n}].id", (UUID(part_id), *owner, event_id, n, text, claims.text_sha256(text)))
            for r, event_id in zip(chunk, event_ids) for n, (part_id, text) in enumerate(r.parts)
        ], "memory_eventpart")
        done += len(chunk)
        _analyze_after_first_batch(done, len(plan.new_events))
        progress("events", done, len(plan.new_events))

    # insert_memories sorts each call by (created_at, id); sorting the whole set first and
    # feeding it in order makes the consecutive blocks one global (created_at, id) order.
    new = sorted(plan.new_memories, key=lambda r: (r.draft.created_at, r.draft.id))

    def create(items: list[tuple[str, MemoryRecord]]) -> None:
        try:
            insert_memories(principal, [record.draft for _, record in items], now)
        except Invalid as error:
            # Checked above already; if the service still objects, name the document paths.
            raise Invalid([
                re.sub(r"^memories\[(\d+)\]", lambda m: items[int(m.group(1))][1].path, line)
                for line in error.problems
            ])

    done = 0
    for chunk in _batched(new, size, first=FIRST_BATCH_ROWS):
        _guarded_insert(create, [(f"{r.path}.id", r) for r in chunk], "memory_memory")
        done += len(chunk)
        _analyze_after_first_batch(done, len(new))
        progress("memories", done, len(new))

    for n, record in enumerate(plan.revised_memories, 1):
        row = Memory.objects.get(id=record.id)
        status = record.content["status"]
        kind = status if status != row.status and status in ("retracted", "expired") else "revised"
        try:
            apply_content_change(principal, row, dict(record.content), now, kind=kind)
        except Invalid as error:
            for line in error.problems:
                name, _, message = line.partition(":")
                problems.add(key_path(record.path, name), message.strip(), at=record.order)
        except Conflict as error:
            problems.add(record.path, str(error), at=record.order)
        progress("revisions", n, len(plan.revised_memories))

    return {
        "memories": len(new) + len(plan.revised_memories),
        "events": len(plan.new_events),
        "sessions": len(plan.new_sessions),
        "people": people,
    }


def _refused(error: IntegrityError) -> str:
    # The primary message names a constraint, never row content (the detail may hold content).
    primary = getattr(getattr(error.__cause__, "diag", None), "message_primary", None) or "integrity error"
    return f"$: the database refused the import ({primary}); nothing was written"
