"""The OpenAPI document and the server agree: schemathesis over every /v1 route, in-process.

The served document (/v1/schema) is loaded from the WSGI application with all four flags
on, and every operation is driven through that same application against the real
database (rows committed for real, truncated afterwards) with a real owner token and
real rows: memories, a session with an owner message, a person, and reconsolidation
operations in every actionable state (proposed merge, committed merge, proposed and
committed summary — so the derived-memory controls have an ID too).

Every default check runs on every response (no server error, only documented statuses,
content types and headers, conforming bodies, schema-valid requests accepted, invalid
ones refused, missing required headers refused). Generation is derandomized and bounded
so the run is deterministic and fits CI; ``tests/api/schemathesis_semantics.py`` gives
positive cases the real references no schema can state (see there).

The same agreement is checked against a served gunicorn by the schemathesis CLI with
``tests/api/schemathesis_cli_hooks.py``.
"""
from __future__ import annotations

from typing import Optional
from urllib.parse import urlencode

import pytest
import schemathesis
from django.db import connections
from django.test import Client, override_settings
from hypothesis import HealthCheck, Phase, settings

from memory import services
from reconsolidation.store import ReconsolidationStore
from tests.api.recon_builders import committed_merge, committed_summary, proposed
from tests.api.schemathesis_semantics import NOT_FUZZED, Fixtures, make_meaningful
from tests.conftest import ALIASES, truncate_all
from tests.factories import T0, make_owner, owner_message
from tests.reconsolidation.helpers import original
from tests.reconsolidation.work_builders import derived_rows
from veetbot.wsgi import application

FLAGS = dict(
    AGENT_MEMORY_API_ENABLED=True, AGENT_MEMORY_RECONSOLIDATION_API_ENABLED=True,
    AGENT_MEMORY_RECONSOLIDATION_ENABLED=True, AGENT_MEMORY_SEMANTIC_ENABLED=True,
)
# Fuzzing examples per operation (the coverage phase adds its own deterministic cases).
MAX_EXAMPLES = 10
BOUNDED = settings(
    max_examples=MAX_EXAMPLES, derandomize=True, deadline=None, database=None,
    phases=[Phase.explicit, Phase.generate],  # no shrinking: a failure is reported as found
    suppress_health_check=list(HealthCheck),
)


def _rows(principal) -> dict:
    """Real rows of every kind a route can name, built through the real services."""
    store = ReconsolidationStore()
    session = services.session_create(principal=principal, started_at=T0)
    event = owner_message(principal, "I keep my bike in the hallway.", session_id=session.id)
    person = services.person_create(principal=principal, name="Dana", now=T0)
    plain = [original(principal, "The owner cycles to work.", subject="commute"),
             original(principal, "The owner likes rye bread.", subject="food", sensitivity="sensitive")]
    operations = [
        proposed(store, principal, [original(principal, "The owner drinks oat milk.", subject="milk")
                                    for _ in range(2)], "merge_equivalent"),
        committed_merge(store, principal),
        proposed(store, principal, [original(principal, "The owner runs on Sundays.", subject="running"),
                                    original(principal, "The owner runs along the river.", subject="running")],
                 "summarize_related"),
        committed_summary(store, principal),
    ]
    return {
        "source": {"event": str(event.id), "part": str(event.parts[0].id)},
        "session_id": str(session.id), "person_id": str(person.id),
        "memory_ids": [str(m.id) for m in plain] + [str(d.id) for d in derived_rows(principal)],
        "operation_ids": [str(op.id) for op in operations],
    }


@pytest.fixture(scope="module")
def owner_world(django_db_setup, django_db_blocker):
    """One owner with committed rows for the whole module; everything truncated after."""
    with django_db_blocker.unblock(), override_settings(**FLAGS):
        principal, token = make_owner("Schema conformance")
        yield principal, token, _rows(principal)
        for alias in ALIASES:
            connections[alias].close()
        truncate_all()


def _cursor_issuer(token: str):
    client = Client()

    def cursor_for(path: str, query: dict) -> Optional[str]:
        response = client.get(f"{path}?{urlencode({**query, 'limit': 1})}", HTTP_AUTHORIZATION=f"Bearer {token}")
        return response.json().get("next_cursor") if response.status_code == 200 else None
    return cursor_for


def _disposable(principal):
    """Fresh rows for the erasure routes to erase: a session with one owner message, a person."""
    def make(kind: str) -> str:
        if kind == "session":
            session = services.session_create(principal=principal, started_at=T0)
            owner_message(principal, "A conversation made to be erased.", session_id=session.id)
            return str(session.id)
        return str(services.person_create(principal=principal, name="Erasable", now=T0).id)
    return make


@pytest.fixture(scope="module")
def api_schema(owner_world):
    principal, token, rows = owner_world
    with override_settings(**FLAGS):
        schema = schemathesis.openapi.from_wsgi("/v1/schema", application)
    fixtures = Fixtures(session_ids=[rows["session_id"]], cursor_for=_cursor_issuer(token),
                        disposable=_disposable(principal), **rows)

    @schema.hook
    def map_case(context, case):
        return make_meaningful(case, fixtures)

    return schema.exclude(path=list(NOT_FUZZED))


schema = schemathesis.pytest.from_fixture("api_schema")


def test_the_document_names_every_owner_route(api_schema):
    assert set(api_schema.raw_schema["paths"]) == {
        "/v1/memories", "/v1/memories/search", "/v1/memories/context", "/v1/memories/{memory_id}", "/v1/memories/{memory_id}/review",
        "/v1/sessions", "/v1/sessions/{session_id}", "/v1/sessions/{session_id}/events", "/v1/people/{person_id}",
        "/v1/sessions/{session_id}/turns", "/v1/sessions/{session_id}/snapshot",
        "/v1/sessions/{session_id}/turns/{turn}/citations",
        "/v1/account/erase", "/v1/memory-reconsolidations",
        "/v1/memory-reconsolidations/{operation_id}", "/v1/memory-reconsolidations/{operation_id}/undo",
        "/v1/memory-reconsolidations/{operation_id}/approve", "/v1/memory-reconsolidations/{operation_id}/reject",
        "/v1/memory-reconsolidations/approve-exact-copies",
    }


@schema.parametrize()
@BOUNDED
def test_every_route_answers_as_documented(case, owner_world):
    _principal, token, _rows = owner_world
    case.call_and_validate(headers={"Authorization": f"Bearer {token}"})
