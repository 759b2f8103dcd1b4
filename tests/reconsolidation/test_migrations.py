"""The reconsolidation migrations are additive and reversible, and their downgrade refuses
to drop retained history or leased work, saying that derived history would be lost."""
from __future__ import annotations

import pytest
from django.core.management import call_command
from django.db import connections

from reconsolidation.domain import input_digest
from tests.factories import make_owner
from tests.reconsolidation.helpers import original, proposal, refs
from veetbot.clock import utcnow

TABLES = ("reconsolidation_reconsolidationjob", "reconsolidation_reconsolidationoperation",
          "reconsolidation_derivedmemory", "reconsolidation_reconsolidationspend")


def migrate(*target: str) -> None:
    """Migrate reconsolidation to ``target``; with none, every app to its latest migration
    (recall's migrations from 0004 depend on reconsolidation's, so taking reconsolidation down
    takes them down too, and only a full migrate brings them back)."""
    app = ("reconsolidation", *target) if target else ()
    call_command("migrate", *app, database="owner", verbosity=0, interactive=False)


def tables_present() -> set[str]:
    with connections["owner"].cursor() as cursor:
        cursor.execute("SELECT tablename FROM pg_tables WHERE tablename = ANY(%s)", [list(TABLES)])
        return {row[0] for row in cursor.fetchall()}


@pytest.fixture
def restore_schema(live_db):
    yield
    for alias in ("default", "owner"):
        connections[alias].close()
    migrate()


def test_an_empty_reconsolidation_schema_downgrades_and_upgrades_again(restore_schema, settings):
    settings.AGENT_MEMORY_RECONSOLIDATION_ENABLED = False
    migrate("zero")
    assert tables_present() == set()
    migrate()
    assert tables_present() == set(TABLES)


def test_downgrade_refuses_while_derived_history_exists(restore_schema, settings, day_one, store):
    settings.AGENT_MEMORY_RECONSOLIDATION_ENABLED = True
    principal, _ = make_owner()
    a = original(principal, "The owner prefers Celsius.", subject="units")
    b = original(principal, "The owner prefers Celsius readings.", subject="units")
    lease = store.claim_due(principal, lease_owner="w", now=day_one)
    store.queue_group(principal, lease_token=lease.lease_token, inputs=refs(a, b),
                      input_digest=input_digest(refs(a, b)), now=day_one)
    group = store.claim_group(principal, lease_token=lease.lease_token, now=day_one)
    store.commit(principal, group, expected_inputs=group.inputs, expected_fence=0,
                 proposal=proposal("flag_conflict", group.inputs), now=day_one)
    store.finish_group(principal, group, outcome="completed", now=day_one)
    store.release(principal, lease.lease_token, now=day_one)

    settings.AGENT_MEMORY_RECONSOLIDATION_ENABLED = False
    with pytest.raises(RuntimeError, match="derived history would be lost") as refused:
        migrate("zero")
    assert "reconsolidation_reconsolidationoperation holds 1 row" in str(refused.value)
    assert tables_present() == set(TABLES)  # nothing was dropped


def test_downgrade_refuses_with_leased_work_or_processing_switched_on(restore_schema, settings, store):
    settings.AGENT_MEMORY_RECONSOLIDATION_ENABLED = True
    principal, _ = make_owner()
    original(principal, "The owner prefers Celsius.", subject="units")
    store.claim_due(principal, lease_owner="w", now=utcnow())  # live by the database's clock
    with pytest.raises(RuntimeError, match="AGENT_MEMORY_RECONSOLIDATION_ENABLED is on"):
        migrate("zero")
    settings.AGENT_MEMORY_RECONSOLIDATION_ENABLED = False
    with pytest.raises(RuntimeError, match=r"1 job\(s\) hold a live lease"):
        migrate("zero")
    assert tables_present() == set(TABLES)


def test_downgrade_refuses_while_a_worker_label_would_not_fit_the_old_column(restore_schema, settings, store, day_one):
    settings.AGENT_MEMORY_RECONSOLIDATION_ENABLED = True
    principal, _ = make_owner()
    original(principal, "The owner prefers Celsius.", subject="units")
    label = "celery@" + "h" * 253 + ":4194304"
    store.claim_due(principal, lease_owner=label, now=day_one)  # expired by the database's clock
    settings.AGENT_MEMORY_RECONSOLIDATION_ENABLED = False
    with pytest.raises(RuntimeError, match=r"reconsolidation_reconsolidationjob: 1 row\(s\) whose lease_owner is"
                                           r" longer than 200"):
        migrate("0004")
    with connections["owner"].cursor() as cursor:
        cursor.execute("SELECT lease_owner FROM reconsolidation_reconsolidationjob")
        assert cursor.fetchall() == [(label,)]  # nothing was cut
