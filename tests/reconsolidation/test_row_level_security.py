"""Forced row-level security, staff visibility and owner-bound keys on every reconsolidation
table, proven against the runtime role; the operation state guard; the neighbour function's
owner binding."""
from __future__ import annotations

from datetime import timedelta

import pytest
from django.apps import apps
from django.db import IntegrityError, connection, transaction
from django.db.utils import ProgrammingError

from memory.models import Memory
from reconsolidation.domain import input_digest
from reconsolidation.models import (
    DerivedMemory, DreamingPause, ReconsolidationBlock, ReconsolidationEquivalenceBacklog, ReconsolidationGroup, ReconsolidationJob, ReconsolidationMember,
    ReconsolidationOperation,
)
from tests.factories import T0, make_owner
from tests.reconsolidation.helpers import digest, original, proposal, refs
from veetbot.rls import owner_context, staff_context

NOT_STAFF_READABLE = {DerivedMemory, ReconsolidationBlock, ReconsolidationEquivalenceBacklog}


def recon_models():
    return list(apps.get_app_config("reconsolidation").get_models())


def populate(principal, store, now):
    """At least one row in every reconsolidation table for ``principal``."""
    a = original(principal, "The owner prefers Celsius.", subject="units")
    b = original(principal, "The owner prefers Celsius.", subject="units")  # equivalent: a merge
    lease = store.claim_due(principal, lease_owner="w", now=now)
    group = store.queue_group(principal, lease_token=lease.lease_token, inputs=refs(a, b),
                              input_digest=input_digest(refs(a, b)), now=now)
    claimed = store.claim_group(principal, lease_token=lease.lease_token, now=now)
    assert claimed.group_id == group.id
    store.reserve(principal, claimed, request_digest=digest("req"), maximum_usd="0.01", now=now)
    op = store.commit(principal, claimed, expected_inputs=claimed.inputs, expected_fence=0,
                      proposal=proposal("merge_equivalent", claimed.inputs), now=now)
    # The checkpoint after the commit: its equivalence pass finds a, b already merged.
    plan = store.plan_slice(principal, lease_token=lease.lease_token, now=now)
    store.checkpoint(principal, lease_token=lease.lease_token, plan=plan, now=now)
    with owner_context(principal):
        owner = {"tenant_id": principal.tenant_id, "principal_id": principal.principal_id}
        ReconsolidationMember.objects.create(**owner, operation_id=op.id, canonical_id=a.id, member_id=b.id, created_at=now)
        DerivedMemory.objects.create(
            **owner, operation_id=op.id, kind="summary", clauses=[{"text": "Celsius", "source_ids": [str(a.id)]}],
            subject="units", belief_type="preference", sensitivity="internal", scope="user", portable=True,
            confidence=0.5, evidence_at=T0, valid_from=T0, status="active", created_at=now, updated_at=now,
        )
        ReconsolidationBlock.objects.create(**owner, signature=digest("block"), reason="owner_undo", created_at=now)
        DreamingPause.objects.create(**owner, paused=False, changed_at=now)  # a row, not a pause
        ReconsolidationEquivalenceBacklog.objects.create(**owner, job_id=lease.job_id, key_digest=digest("set"),
                                                         generation=1, queued_at=now)
    return a, b, lease, op


def count_raw(table, **where):
    clause = " AND ".join(f"{k} = %s" for k in where) or "true"
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT count(*) FROM {table} WHERE {clause}", list(where.values()))
        return cursor.fetchone()[0]


def test_every_reconsolidation_table_is_owner_scoped_with_forced_rls(db):
    tables = {model._meta.db_table for model in recon_models()}
    assert len(tables) == 12  # the daily spend ledger is memory.SpendDay now
    with connection.cursor() as cursor:
        for model in recon_models():
            table = model._meta.db_table
            assert {"tenant_id", "principal_id"} <= {f.attname for f in model._meta.concrete_fields}, table
            cursor.execute("SELECT relrowsecurity, relforcerowsecurity FROM pg_class WHERE oid = %s::regclass", [table])
            assert cursor.fetchone() == (True, True), table
            cursor.execute("SELECT qual, with_check FROM pg_policies WHERE tablename = %s AND policyname = 'owner_isolation'", [table])
            qual, check = cursor.fetchone()
            assert "app.tenant_id" in qual and "app.principal_id" in qual, table
            assert "app.tenant_id" in check and "app.principal_id" in check, table
            cursor.execute("SELECT count(*) FROM pg_policies WHERE tablename = %s AND policyname = 'staff_read' AND cmd = 'SELECT'", [table])
            assert cursor.fetchone()[0] == (0 if model in NOT_STAFF_READABLE else 1), table
            cursor.execute("SELECT tableowner <> current_user FROM pg_tables WHERE tablename = %s", [table])
            assert cursor.fetchone()[0], table


def test_owner_sees_own_rows_and_another_owner_sees_none(db, enabled, store, day_one):
    alice, _ = make_owner("Alice")
    bob, _ = make_owner("Bob")
    populate(alice, store, day_one)
    with owner_context(alice):
        for model in recon_models():
            assert model.objects.count() > 0, model.__name__
    with owner_context(bob):
        for model in recon_models():
            assert model.objects.count() == 0, model.__name__
            assert count_raw(model._meta.db_table, tenant_id=alice.tenant_id) == 0, model.__name__
    for model in recon_models():  # no owner at all
        assert model.objects.count() == 0, model.__name__


def test_staff_reads_content_free_tables_only_and_never_derived_memory(db, enabled, store, day_one):
    alice, _ = make_owner("Alice")
    populate(alice, store, day_one)
    with staff_context():
        for model in recon_models():
            visible = model.objects.filter(tenant_id=alice.tenant_id).count()
            if model in NOT_STAFF_READABLE:
                assert visible == 0, model.__name__
            else:
                assert visible > 0, model.__name__
        assert ReconsolidationJob.objects.update(state="completed") == 0  # read only


def test_an_insert_for_another_owner_is_refused_by_the_policy(db):
    alice, _ = make_owner("Alice")
    bob, _ = make_owner("Bob")
    with owner_context(bob):
        with pytest.raises(ProgrammingError, match="row-level security"):
            with transaction.atomic():
                ReconsolidationJob.objects.create(
                    tenant_id=alice.tenant_id, principal_id=alice.principal_id, policy="reconsolidation@1",
                    due_day=T0.date(), state="open", created_at=T0, updated_at=T0,
                )


def test_a_group_cannot_reference_another_owners_job(db, enabled, store, day_one):
    alice, _ = make_owner("Alice")
    bob, _ = make_owner("Bob")
    original(alice, "The owner likes tea.", subject="tea")
    lease = store.claim_due(alice, lease_owner="w", now=day_one)
    m1 = original(bob, "The owner likes tea.", subject="tea")
    m2 = original(bob, "The owner likes green tea.", subject="tea")
    with owner_context(bob):
        with pytest.raises(IntegrityError):
            with transaction.atomic():
                with connection.cursor() as cursor:
                    cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")
                ReconsolidationGroup.objects.create(
                    tenant_id=bob.tenant_id, principal_id=bob.principal_id, job_id=lease.job_id, policy="reconsolidation@1",
                    anchor_id=m1.id, lane="full", input_ids=[m1.id, m2.id], input_revisions=[1, 1],
                    input_digest=digest("x"), fence_generation=0, state="pending", created_at=T0, updated_at=T0,
                )


def test_a_member_belongs_to_at_most_one_active_equivalence_set(db, enabled, store, day_one):
    alice, _ = make_owner("Alice")
    a, b, _, op = populate(alice, store, day_one)
    owner = {"tenant_id": alice.tenant_id, "principal_id": alice.principal_id}
    with owner_context(alice):
        with pytest.raises(IntegrityError):
            with transaction.atomic():
                ReconsolidationMember.objects.create(**owner, operation_id=op.id, canonical_id=a.id, member_id=b.id,
                                                     created_at=day_one)
        ReconsolidationMember.objects.filter(member_id=b.id).update(active=False)
        ReconsolidationMember.objects.create(**owner, operation_id=op.id, canonical_id=a.id, member_id=b.id, created_at=day_one)


@pytest.mark.parametrize("change", [
    {"kind": "flag_conflict"}, {"input_digest": "0" * 64}, {"input_revisions": [9, 9]}, {"policy": "reconsolidation@2"},
])
def test_operation_kind_and_input_identities_are_immutable(db, enabled, store, day_one, change):
    alice, _ = make_owner("Alice")
    *_, op = populate(alice, store, day_one)
    with owner_context(alice):
        with pytest.raises(IntegrityError, match="immutable"):
            with transaction.atomic():
                ReconsolidationOperation.objects.filter(id=op.id).update(**change)


def test_operation_states_move_forward_only(db, enabled, store, day_one):
    alice, _ = make_owner("Alice")
    *_, op = populate(alice, store, day_one)
    rows = ReconsolidationOperation.objects.filter(id=op.id)
    with owner_context(alice):
        rows.update(state="committed", revision=2)
        for back in ("proposed", "stale", "rejected"):
            with pytest.raises(IntegrityError, match="cannot become"):
                with transaction.atomic():
                    rows.update(state=back, revision=9)
        with pytest.raises(IntegrityError, match="revision"):
            with transaction.atomic():
                rows.update(state="undone", revision=2)
        rows.update(state="undone", revision=3)
        for again in ("committed", "invalidated"):
            with pytest.raises(IntegrityError, match="cannot become"):
                with transaction.atomic():
                    rows.update(state=again, revision=9)


def test_neighbour_function_sees_only_the_current_owner(db, enabled):
    alice, _ = make_owner("Alice")
    bob, _ = make_owner("Bob")
    anchor = original(alice, "The owner prefers Celsius.", subject="units")
    original(alice, "The owner likes Celsius readings.", subject="units")
    original(bob, "The owner prefers Celsius.", subject="units")  # same subject, other owner
    call = ("SELECT memory_id FROM reconsolidation_neighbours(%s::uuid[], %s, ARRAY['public','internal'], 1, 31, 64, 24, 2)")
    with connection.cursor() as cursor:
        cursor.execute(call, [[anchor.id], T0 + timedelta(days=1)])
        assert cursor.fetchall() == []  # no owner context: nothing
    with owner_context(bob):
        with connection.cursor() as cursor:
            cursor.execute(call, [[anchor.id], T0 + timedelta(days=1)])
            assert cursor.fetchall() == []  # alice's anchor is invisible to bob
    with owner_context(alice):
        with connection.cursor() as cursor:
            cursor.execute(call, [[anchor.id], T0 + timedelta(days=1)])
            found = [row[0] for row in cursor.fetchall()]
        assert len(found) == 1
        assert Memory.objects.get(id=found[0]).tenant_id == alice.tenant_id


def test_the_runtime_role_cannot_execute_the_neighbour_function_as_public(db):
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT has_function_privilege('public', 'reconsolidation_neighbours(uuid[], timestamptz, text[], bigint,"
            " integer, integer, integer, integer)', 'EXECUTE')"
        )
        assert cursor.fetchone()[0] is False
