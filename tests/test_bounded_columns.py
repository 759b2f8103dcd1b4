"""No composed or configured string can overflow its column or be cut to fit it.

Every bounded column is one of three kinds, and each kind is held here against the
database's own catalog (``format_type``), not against the model's declaration:

* a closed vocabulary — every member, including the longest, fits; a new longer code
  fails this test, not a write in production;
* composed or configured — the column is unbounded ``varchar`` (or ``text[]``) and the
  writer stores a value at the old bound and one just past it whole;
* input — validated where it enters with a clear error: accepted at the bound, refused
  whole just past it, nothing written.

Digest columns (``varchar(64)``) hold SHA-256 hex digests by construction.
"""
from __future__ import annotations

import os
import re
import socket
import uuid
from datetime import timedelta
from typing import get_args

import pytest
from django.apps import apps
from django.db import connection, models
from pydantic import ValidationError

from memory import vocabulary
from memory.domain import MemoryContent
from memory.errors import Invalid
from memory.models import OwnerToken, Owner
from memory.services import owners
from memory.services import receipts as memory_receipts
from recall import retriever
from recall.domain import (
    Channel, EmbeddingTuple, FallbackReason, SelectionMode, SemanticSearch, Sensitivity, Surface,
)
from recall.encoders import MINILM_TUPLE, OpenAIEncoder
from recall.models import MemoryVector
from recall.vectors import write_vectors
from reconsolidation import bounds, tasks
from reconsolidation.domain import input_digest
from reconsolidation.errors import Invalid as ReconInvalid
from reconsolidation.management.commands import dream
from reconsolidation.models import (
    ReconsolidationAudit, ReconsolidationGroup, ReconsolidationJob, ReconsolidationOperation,
)
from reconsolidation.store import ReconsolidationStore
from reconsolidation.rows import audit
from reconsolidation.providers.rules import summaries
from reconsolidation.services import derived as derived_services
from reconsolidation.services import operations as operation_services
from tests.factories import T0, make_owner
from tests.recall.helpers import Bank, basis
from tests.reconsolidation.helpers import original, proposal
from tests.reconsolidation.work_builders import claimed_group
from veetbot.identity import ALL_SCOPES, Principal
from veetbot.rls import owner_context

DAY_ONE = T0 + timedelta(days=1)  # after that day's due time


def column_type(table: str, column: str) -> str:
    """The column's type as PostgreSQL reports it, e.g. ``character varying(40)``."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT format_type(atttypid, atttypmod) FROM pg_attribute"
            " WHERE attrelid = %s::regclass AND attname = %s AND NOT attisdropped", [table, column],
        )
        (found,) = cursor.fetchone()
    return found


def bound(table: str, column: str) -> int:
    """The character bound of a varchar column (or of an array's elements)."""
    match = re.fullmatch(r"character varying\((\d+)\)(\[\])?", column_type(table, column))
    assert match, f"{table}.{column} is {column_type(table, column)}, not a bounded varchar"
    return int(match.group(1))


def longest_fits(values, limit: int) -> bool:
    return max(len(value) for value in values) <= limit


# --- closed vocabularies -----------------------------------------------------------------

RECON_TABLES_WITH_POLICY = ("reconsolidationjob", "reconsolidationgroup", "reconsolidationanchorreceipt",
                            "reconsolidationoperation")
VOCABULARIES = [
    ("recall_recalltrace", "surface", retriever.SURFACES),
    ("recall_recalltrace", "selection_mode", get_args(SelectionMode)),
    ("recall_recalltrace", "channel", get_args(Channel)),
    ("recall_recalltrace", "requested_channel", get_args(Channel)),
    ("recall_recalltrace", "fallback_reason", get_args(FallbackReason)),
    ("recall_recalltrace", "ceiling", get_args(Sensitivity)),
    ("recall_recalltrace", "semantic_search", get_args(SemanticSearch)),
    *[(f"reconsolidation_{table}", "policy", (bounds.POLICY,)) for table in RECON_TABLES_WITH_POLICY],
    # memory's own kinds and the two reconsolidation writes into the same receipts table
    ("memory_idempotencyreceipt", "resource_kind",
     (*memory_receipts.RESOURCE_KINDS, operation_services.RESOURCE_KIND, derived_services.RESOURCE_KIND)),
    ("memory_ownertoken", "scopes", ALL_SCOPES),
    # a derived memory copies its sources' type (or "mixed") and their highest sensitivity
    ("reconsolidation_derivedmemory", "belief_type", (*vocabulary.BELIEF_TYPES, summaries.MIXED_BELIEF_TYPES)),
    ("reconsolidation_derivedmemory", "sensitivity", vocabulary.SENSITIVITIES),
]


def test_the_surfaces_the_retriever_accepts_are_the_surfaces_the_domain_names():
    assert set(retriever.SURFACES) == set(get_args(Surface))


@pytest.mark.parametrize(("table", "column", "values"), VOCABULARIES, ids=[f"{t}.{c}" for t, c, _ in VOCABULARIES])
def test_every_code_of_a_closed_vocabulary_fits_its_column(db, table, column, values):
    limit = bound(table, column)
    assert longest_fits(values, limit), (table, column, max(values, key=len), limit)
    assert not longest_fits((*values, "x" * (limit + 1)), limit)  # one code past the bound fails here


def _choice_fields():
    for model in apps.get_models():
        if model._meta.managed and not model._meta.proxy:
            for field in model._meta.concrete_fields:
                if isinstance(field, models.CharField) and field.choices:
                    yield model._meta.db_table, field.column, [str(value) for value, _ in field.flatchoices]


CHOICE_FIELDS = sorted(_choice_fields())


@pytest.mark.parametrize(("table", "column", "values"), CHOICE_FIELDS, ids=[f"{t}.{c}" for t, c, _ in CHOICE_FIELDS])
def test_every_choice_of_a_coded_column_fits_it_in_the_database(db, table, column, values):
    assert longest_fits(values, bound(table, column)), (table, column)


def test_digest_columns_get_digests_whatever_the_tuple_names():
    tuple_ = EmbeddingTuple(provider="p" * 1000, model="m" * 10_000, model_revision="r" * 1000, dimensions=384)
    assert len(tuple_.space) == 64 == len(MINILM_TUPLE.space)
    assert len(input_digest([])) == 64


# --- composed or configured: unbounded columns -----------------------------------------------

UNBOUNDED = [
    ("recall_memoryvector", "provider"), ("recall_memoryvector", "model"), ("recall_memoryvector", "model_revision"),
    ("recall_memoryvector", "text_version"), ("reconsolidation_reconsolidationjob", "lease_owner"),
    ("reconsolidation_reconsolidationgroup", "reason"), ("reconsolidation_reconsolidationanchorreceipt", "reason"),
    ("reconsolidation_reconsolidationoperation", "reason"), ("reconsolidation_reconsolidationaudit", "event"),
    ("reconsolidation_reconsolidationaudit", "reason"),
]


@pytest.mark.parametrize(("table", "column"), UNBOUNDED, ids=[f"{t}.{c}" for t, c in UNBOUNDED])
def test_composed_and_configured_names_have_unbounded_columns(db, table, column):
    assert column_type(table, column) == "character varying"


def test_a_recall_policy_is_an_unbounded_list_of_tags(db):
    assert column_type("recall_recalltrace", "policy") == "text[]"


@pytest.mark.parametrize("length", [200, 201, 1000])
def test_an_operator_model_name_of_any_length_is_stored_whole_with_its_vectors(bank, length):
    encoder = OpenAIEncoder(base_url="http://127.0.0.1:9", model="m" * length)
    memory_id = bank.add("The owner drinks tea in the afternoon.", subject="tea")
    written, stale = write_vectors(bank.principal, [(memory_id, bank.revision(memory_id), "0" * 64, basis(0))],
                                   encoder.tuple, now=T0)
    assert (written, stale) == (1, 0)
    with owner_context(bank.principal):
        row = MemoryVector.objects.get(memory_id=memory_id)
    assert (row.model, row.space) == ("m" * length, encoder.tuple.space)


@pytest.fixture
def bank(db) -> Bank:
    return Bank.new()


@pytest.fixture
def store() -> ReconsolidationStore:
    return ReconsolidationStore()


@pytest.fixture
def enabled(settings):
    settings.AGENT_MEMORY_RECONSOLIDATION_ENABLED = True
    return settings


@pytest.mark.parametrize("composer", [tasks.lease_owner, dream.lease_owner], ids=["celery", "dream"])
@pytest.mark.parametrize("length", [200, 201, 270])  # the old bound, just past it, a 253-character host
def test_a_worker_label_from_any_hostname_holds_the_lease_whole(db, enabled, store, monkeypatch, composer, length):
    monkeypatch.setattr(socket, "gethostname", lambda: "")
    host = "h" * (length - len(composer()))
    monkeypatch.setattr(socket, "gethostname", lambda: host)
    label = composer()
    assert len(label) == length and (composer is dream.lease_owner or label.endswith(f":{os.getpid()}"))
    principal, _ = make_owner()
    original(principal, "The owner prefers Celsius.", subject="units")
    lease = store.claim_due(principal, lease_owner=label, now=DAY_ONE)
    with owner_context(principal):
        assert ReconsolidationJob.objects.get(id=lease.job_id).lease_owner == label == lease.lease_owner


def test_a_lease_owner_must_name_someone(db, enabled, store):
    principal, _ = make_owner()
    with pytest.raises(ReconInvalid, match="lease_owner: required"):
        store.claim_due(principal, lease_owner="", now=DAY_ONE)


def _committed(principal: Principal, store: ReconsolidationStore):
    a = original(principal, "The owner prefers Celsius.", subject="units")
    b = original(principal, "The owner prefers Celsius readings.", subject="units")
    _lease, group = claimed_group(store, principal, [a, b], DAY_ONE)
    operation = store.commit(principal, group, expected_inputs=group.inputs, expected_fence=0,
                             proposal=proposal("flag_conflict", group.inputs), now=DAY_ONE)
    return a, group, operation


@pytest.mark.parametrize("length", [40, 41, 120])
def test_a_reason_code_of_any_length_is_recorded_whole_on_group_operation_and_audit(db, enabled, store, length):
    principal, _ = make_owner()
    source, group, operation = _committed(principal, store)
    reason = "r" * length
    store.finish_group(principal, group, outcome="no_change", reason=reason, now=DAY_ONE)
    store.invalidate(principal, [source.id], reason=reason, now=DAY_ONE)
    with owner_context(principal):
        assert ReconsolidationGroup.objects.get(id=group.group_id).reason == reason
        assert ReconsolidationOperation.objects.get(id=operation.id).reason == reason
        events = dict(ReconsolidationAudit.objects.values_list("event", "reason"))
    assert events["group_no_change"] == reason and events["sources_invalidated"] == reason


@pytest.mark.parametrize("length", [40, 41])
def test_an_audit_event_name_of_any_length_is_recorded_whole(db, length):
    principal, _ = make_owner()
    with owner_context(principal):
        audit(principal, "e" * length, DAY_ONE, reason="x" * length)
        assert list(ReconsolidationAudit.objects.values_list("event", "reason")) == [("e" * length, "x" * length)]


# --- input: validated where it enters ---------------------------------------------------------

def test_a_display_name_is_accepted_at_its_bound_and_refused_whole_past_it(db):
    limit = bound("memory_principal", "display_name")
    created = owners.owner_create(display_name="n" * limit, now=T0)
    with owner_context(Principal(tenant_id=created.tenant_id, principal_id=created.principal_id)):
        assert Owner.objects.get().display_name == "n" * limit
    tenant, principal = uuid.uuid4(), uuid.uuid4()
    with pytest.raises(Invalid, match=f"display_name: at most {limit} characters"):
        owners.owner_create(tenant_id=tenant, principal_id=principal, display_name="n" * (limit + 1), now=T0)
    with owner_context(Principal(tenant_id=tenant, principal_id=principal)):
        assert not Owner.objects.exists()


def test_a_token_label_is_accepted_at_its_bound_and_refused_whole_past_it(db):
    principal, _ = make_owner()
    limit = bound("memory_ownertoken", "label")
    owners.token_create(principal=principal, label="l" * limit, now=T0)
    with pytest.raises(Invalid, match=f"label: at most {limit} characters"):
        owners.token_create(principal=principal, label="l" * (limit + 1), now=T0)
    with owner_context(principal):
        assert sorted(len(label) for label in OwnerToken.objects.values_list("label", flat=True)) == [
            len("create_owner"), limit]


def test_the_longest_scope_speaker_and_attribution_fit_and_one_character_more_is_refused(db):
    person = f"person:{uuid.uuid4()}"
    longest_scope = "project:" + "p" * 100
    assert vocabulary.SCOPE.match(longest_scope) and not vocabulary.SCOPE.match(longest_scope + "p")
    for table in ("memory_memory", "memory_session", "reconsolidation_derivedmemory"):
        assert len(longest_scope) <= bound(table, "scope"), table
    assert vocabulary.SPEAKER.match(person) and not vocabulary.SPEAKER.match(person + "0")
    assert vocabulary.ATTRIBUTION.match(person) and not vocabulary.ATTRIBUTION.match(person + "0")
    assert len(person) <= bound("memory_event", "speaker") and len(person) <= bound("memory_memory", "attribution")


def test_an_entity_id_is_accepted_at_its_column_bound_and_refused_past_it(db):
    limit = bound("memory_memory", "entity_ids")
    fields = dict(subject="s", statement="t", belief_type="fact", derivation="explicit", attribution="owner",
                  authority="USER", sensitivity="internal", scope="user", portable=True, confidence=0.5,
                  evidence_at=T0, valid_from=T0)
    assert MemoryContent(**fields, entity_ids=("e" * limit,)).entity_ids == ("e" * limit,)
    with pytest.raises(ValidationError, match="entity IDs must be 1-200 characters"):
        MemoryContent(**fields, entity_ids=("e" * (limit + 1),))
