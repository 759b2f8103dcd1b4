"""The expiry sweep and the daily decay sweep, through the services and the command."""
import json
from datetime import timedelta
from io import StringIO

from django.core.management import call_command

from memory import services
from memory.models import ChangeJournal, Memory
from tests.factories import T0, make_memory, make_owner
from veetbot.rls import owner_context


def row(principal, memory_id):
    with owner_context(principal):
        return Memory.objects.get(id=memory_id)


def test_expire_due_expires_only_beliefs_past_their_expiry(db):
    principal, _ = make_owner()
    due = make_memory(principal, "The owner is in Lisbon this week.", expires_at=T0 + timedelta(days=7))
    later = make_memory(principal, "The owner is renovating the kitchen.", expires_at=T0 + timedelta(days=60))
    forever = make_memory(principal)
    assert services.memories_expire_due(principal=principal, now=T0 + timedelta(days=8)) == 1
    assert row(principal, due.id).status == "expired"
    assert row(principal, due.id).content_revision == 2
    assert row(principal, later.id).status == "active" and row(principal, forever.id).status == "active"
    with owner_context(principal):
        assert ChangeJournal.objects.filter(memory_id=due.id, kind="expired").count() == 1


def test_expire_due_at_the_exact_instant_expires(db):
    principal, _ = make_owner()
    due = make_memory(principal, expires_at=T0 + timedelta(days=7))
    assert services.memories_expire_due(principal=principal, now=T0 + timedelta(days=7) - timedelta(microseconds=1)) == 0
    assert services.memories_expire_due(principal=principal, now=T0 + timedelta(days=7)) == 1
    assert services.memories_expire_due(principal=principal, now=T0 + timedelta(days=7)) == 0  # idempotent
    assert row(principal, due.id).status == "expired"


def test_decay_lowers_utility_of_unused_non_user_beliefs_without_a_revision(db, settings):
    settings.MEMORY_DECAY_UNUSED_DAYS = 30
    principal, _ = make_owner()
    extracted = make_memory(principal, "The owner seems to like jazz.", authority="EXTRACTED", derivation="extracted")
    told = make_memory(principal)  # authority USER never decays
    day31 = T0 + timedelta(days=31)
    assert services.memories_decay_due(principal=principal, now=day31) == (1, 0)
    decayed = row(principal, extracted.id)
    assert decayed.utility < 1.0 and decayed.content_revision == 1
    assert decayed.store_position == extracted.store_position
    assert row(principal, told.id).utility == 1.0
    # Once per day: a second run the same day changes nothing.
    assert services.memories_decay_due(principal=principal, now=day31 + timedelta(hours=1)) == (0, 0)


def test_decay_skips_recently_used_beliefs(db):
    principal, _ = make_owner()
    memory = make_memory(principal, "The owner seems to like jazz.", authority="EXTRACTED", derivation="extracted")
    services.memory_record_usage(principal=principal, memory_ids=[memory.id], now=T0 + timedelta(days=20))
    assert services.memories_decay_due(principal=principal, now=T0 + timedelta(days=31)) == (0, 0)


def test_decay_retires_beliefs_below_the_floor(db, settings):
    settings.MEMORY_DECAY_FACTOR = 0.5
    settings.MEMORY_DECAY_FLOOR = 0.3
    principal, _ = make_owner()
    memory = make_memory(principal, "The owner seems to like jazz.", authority="INFERRED", derivation="inferred")
    day = T0 + timedelta(days=31)
    assert services.memories_decay_due(principal=principal, now=day) == (1, 0)  # 0.5: at/above floor
    assert services.memories_decay_due(principal=principal, now=day + timedelta(days=1)) == (1, 1)  # 0.25 < 0.3
    retired = row(principal, memory.id)
    assert retired.status == "expired" and retired.content_revision == 2
    assert retired.store_position > memory.store_position


def test_sweep_command_runs_for_every_owner_and_prints_json(db):
    alice, _ = make_owner()
    bob, _ = make_owner()
    for principal in (alice, bob):
        make_memory(principal, expires_at=T0 + timedelta(days=1))
    out = StringIO()
    call_command("memory_sweeps", "expire", "--now", (T0 + timedelta(days=2)).isoformat(), "--json", stdout=out)
    assert json.loads(out.getvalue()) == {"expired": 2, "decayed": 0, "retired": 0}
