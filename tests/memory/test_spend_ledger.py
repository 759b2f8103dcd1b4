"""The owner's one daily spend ledger: every paid request reserves before it is sent, each
purpose against its own ceiling, and the old per-app day tables move into it."""
from __future__ import annotations

import uuid
from datetime import date
from decimal import Decimal

import pytest
from django.core.management import call_command
from django.db import connections

from memory.models import SpendDay
from memory.services.spend import DailyCeilingReached, spend_release, spend_reserve
from tests.factories import T0, make_owner
from veetbot.rls import owner_context

DAY = T0.date()


def reserve(principal, usd: str, *, purpose: str = "encoder", ceiling: str = "1.00") -> Decimal:
    with owner_context(principal):
        return spend_reserve(principal=principal, purpose=purpose, day=DAY, usd=Decimal(usd),
                             ceiling=Decimal(ceiling), now=T0)


def charged(principal, purpose: str = "encoder") -> Decimal:
    with owner_context(principal):
        row = SpendDay.objects.filter(purpose=purpose, day=DAY).first()
        return row.charged_usd if row else Decimal(0)


def test_a_reservation_that_reaches_the_ceiling_is_charged_and_one_past_it_charges_nothing(db):
    owner, _ = make_owner()
    assert reserve(owner, "0.60") == Decimal("0.60")
    assert reserve(owner, "0.40") == Decimal("1.00")  # exactly at the ceiling
    with pytest.raises(DailyCeilingReached):
        reserve(owner, "0.00000001")  # just past it
    assert charged(owner) == Decimal("1.00")
    with owner_context(owner):
        assert SpendDay.objects.get(purpose="encoder").reservations == 2


def test_each_purpose_is_held_to_its_own_ceiling_in_the_one_ledger(db):
    owner, _ = make_owner()
    reserve(owner, "0.90", purpose="encoder")
    assert reserve(owner, "0.90", purpose="dreaming") == Decimal("0.90")
    assert (charged(owner, "encoder"), charged(owner, "dreaming")) == (Decimal("0.90"), Decimal("0.90"))


def test_a_release_gives_back_part_of_a_reservation_and_other_owners_are_untouched(db):
    alice, _ = make_owner("Alice")
    bob, _ = make_owner("Bob")
    reserve(alice, "0.50")
    reserve(bob, "0.30")
    with owner_context(alice):
        assert spend_release(principal=alice, purpose="encoder", day=DAY, usd=Decimal("0.20"), now=T0) == Decimal("0.30")
    assert (charged(alice), charged(bob)) == (Decimal("0.30"), Decimal("0.30"))


def test_an_unknown_purpose_is_refused(db):
    owner, _ = make_owner()
    with pytest.raises(ValueError):
        reserve(owner, "0.10", purpose="gifts")


def _migrate(app: str, target: str) -> None:
    call_command("migrate", app, target, database="owner", verbosity=0, interactive=False)


def test_the_encoders_day_table_moves_into_the_ledger_and_a_downgrade_refuses_to_forget_it(live_db):
    tenant, principal, day = uuid.uuid4(), uuid.uuid4(), date(2026, 9, 1)
    try:
        _migrate("recall", "0008_trace_relevance_floor")
        with connections["owner"].cursor() as cursor:  # every owner's rows: the owning role, FORCE lifted
            cursor.execute("ALTER TABLE recall_encoderspendday NO FORCE ROW LEVEL SECURITY")
            cursor.execute("INSERT INTO recall_encoderspendday (id, tenant_id, principal_id, day, spent_usd, requests,"
                           " updated_at) VALUES (%s, %s, %s, %s, 0.25, 3, now())",
                           [uuid.uuid4(), tenant, principal, day])
            cursor.execute("ALTER TABLE recall_encoderspendday FORCE ROW LEVEL SECURITY")
        _migrate("recall", "0009_encoder_spend_into_the_ledger")
        with connections["owner"].cursor() as cursor:
            cursor.execute("ALTER TABLE memory_spendday NO FORCE ROW LEVEL SECURITY")
            cursor.execute("SELECT purpose, day, charged_usd, reservations FROM memory_spendday WHERE tenant_id = %s",
                           [tenant])
            moved = cursor.fetchall()
            cursor.execute("ALTER TABLE memory_spendday FORCE ROW LEVEL SECURITY")
        assert moved == [("encoder", day, Decimal("0.25"), 3)]
        with pytest.raises(RuntimeError, match="1 day\\(s\\) of encoder spend recorded"):
            _migrate("recall", "0008_trace_relevance_floor")
    finally:
        for alias in ("default", "owner"):
            connections[alias].close()
        call_command("migrate", database="owner", verbosity=0, interactive=False)
