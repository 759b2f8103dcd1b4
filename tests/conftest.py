"""Test database and shared fixtures.

The suite runs against the embedded PostgreSQL. Django's test runner would create the
test database through the ``default`` alias, but that alias is the runtime role, which
may not create databases or run migrations; so the database is created and migrated
here through the ``owner`` alias, exactly as production migrates.

Ordinary tests run inside a rolled-back transaction on the runtime role. Tests that
need real concurrency (several connections, committed data) take ``live_db``, which
commits for real and truncates everything through the owner alias afterwards.
"""
from __future__ import annotations

import os
import uuid
from contextlib import contextmanager
from datetime import datetime, timezone
from typing import Iterator

import pytest
from django.conf import settings
from django.core.management import call_command
from django.db import connections

from veetbot.identity import Principal

ALIASES = ("default", "owner")
# For rolled-back tests of operator commands that also reach the owner alias (bulk writers
# analyse what they wrote there: veetbot.statistics).
WITH_OWNER_ALIAS = pytest.mark.django_db(databases=ALIASES)


def _point_at(name: str) -> None:
    for alias in ALIASES:
        connections[alias].close()
        settings.DATABASES[alias]["NAME"] = name
        connections[alias].settings_dict["NAME"] = name


@pytest.fixture(scope="session")
def django_db_setup(django_db_blocker):
    # One database per test process, so parallel runs never drop each other's.
    test_name = f'{settings.DATABASES["owner"]["TEST"]["NAME"]}_{os.getpid()}'
    with django_db_blocker.unblock():
        with connections["owner"]._nodb_cursor() as cursor:
            cursor.execute(f'DROP DATABASE IF EXISTS "{test_name}" WITH (FORCE)')
            cursor.execute(f'CREATE DATABASE "{test_name}"')
        _point_at(test_name)
        call_command("migrate", database="owner", verbosity=0, interactive=False)
    yield
    with django_db_blocker.unblock():
        for alias in ALIASES:
            connections[alias].close()
        with connections["owner"]._nodb_cursor() as cursor:
            cursor.execute(f'DROP DATABASE IF EXISTS "{test_name}" WITH (FORCE)')


# Reference rows that migrate writes once (content types and their permissions): truncating
# them would leave later tests' cached content types pointing at nothing, so a test's outcome
# would depend on whether a live_db test ran before it.
KEPT_TABLES = ("django_migrations", "django_content_type", "auth_permission")


def truncate_all() -> None:
    with connections["owner"].cursor() as cursor:
        cursor.execute(
            "SELECT string_agg(format('%%I', tablename), ', ') FROM pg_tables"
            " WHERE schemaname = 'public' AND NOT (tablename = ANY(%s))", [list(KEPT_TABLES)]
        )
        (tables,) = cursor.fetchone()
        cursor.execute(f"TRUNCATE {tables} CASCADE")


@contextmanager
def committed(django_db_blocker) -> Iterator[None]:
    """Real commits on real connections; everything is truncated afterwards."""
    with django_db_blocker.unblock():
        yield
        for alias in ALIASES:
            connections[alias].close()
        truncate_all()


@pytest.fixture
def live_db(django_db_setup, django_db_blocker):
    """Real commits on real connections; everything is truncated afterwards."""
    with committed(django_db_blocker):
        yield


@pytest.fixture(scope="module")
def committed_db(django_db_setup, django_db_blocker):
    """``live_db`` at module scope, for suites served by ``live_server`` (which asks for
    ``transactional_db``, whose flush would run as the runtime role, which may not
    truncate): such a suite overrides ``transactional_db`` with this, every test builds
    fresh owners, row-level security keeps them apart, and one truncation ends the module."""
    with committed(django_db_blocker):
        yield


@pytest.fixture
def now() -> datetime:
    return datetime(2026, 9, 1, 12, 0, tzinfo=timezone.utc)


def new_principal() -> Principal:
    return Principal(tenant_id=uuid.uuid4(), principal_id=uuid.uuid4())


@pytest.fixture(autouse=True, scope="session")
def smallest_summaries():
    """Most tests build the smallest summary — two clauses from one conversation — to test what
    happens to summaries (commit, blocks, invalidation, recall, owner controls). The value rule
    that keeps such summaries from being proposed in production (at least
    ``RECON_SUMMARY_MIN_CLAUSES`` clauses from ``RECON_SUMMARY_MIN_SESSIONS`` conversations,
    ``summaries.worth_proposing``) is tested on its own under ``production_summary_rules``, and
    the acceptance suite runs the product with the production settings."""
    from reconsolidation import bounds

    # Session-wide, so module-scoped banks (tests/review_ui/seed.py) are built under it too.
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(bounds, "RECON_SUMMARY_MIN_CLAUSES", 2)
        patch.setattr(bounds, "RECON_SUMMARY_MIN_SESSIONS", 1)
        yield


@pytest.fixture
def production_summary_rules(monkeypatch):
    """The summary value rule as a deployment runs it (``veetbot/settings.py``)."""
    from reconsolidation import bounds

    monkeypatch.setattr(bounds, "RECON_SUMMARY_MIN_CLAUSES", settings.RECON_SUMMARY_MIN_CLAUSES)
    monkeypatch.setattr(bounds, "RECON_SUMMARY_MIN_SESSIONS", settings.RECON_SUMMARY_MIN_SESSIONS)
