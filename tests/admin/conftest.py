"""Fixtures of the staff admin suite: two planted owners, a staff user holding Django's
view permission on every registered model, and logged-in clients."""
from __future__ import annotations

import pytest
from django.contrib import admin
from django.contrib.auth.models import Permission, User
from django.contrib.contenttypes.models import ContentType
from django.test import Client

from tests.admin.planting import plant_owner


@pytest.fixture
def enabled(settings):
    settings.AGENT_MEMORY_RECONSOLIDATION_ENABLED = True
    return settings


@pytest.fixture
def planted(db, enabled):
    return [plant_owner("first"), plant_owner("second")]


def view_permissions() -> list[Permission]:
    types = ContentType.objects.get_for_models(*admin.site._registry).values()
    return list(Permission.objects.filter(content_type__in=types, codename__startswith="view_"))


@pytest.fixture
def staff_user(db) -> User:
    user = User.objects.create_user(username="operator", password="not-used", is_staff=True)
    user.user_permissions.set(view_permissions())
    return user


@pytest.fixture
def staff_client(staff_user) -> Client:
    client = Client()
    client.force_login(staff_user)
    return client


@pytest.fixture
def superuser_client(db) -> Client:
    client = Client()
    client.force_login(User.objects.create_superuser(username="root", password="not-used"))
    return client
