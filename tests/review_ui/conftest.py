"""Fixtures of the dashboard suites.

The browser suites serve the app with pytest-django's ``live_server`` on 127.0.0.1 only.
``live_server`` asks for ``transactional_db``, whose flush would run as the runtime role
(which may not truncate); here it is the suite's ``live_db`` instead: real commits, then
everything truncated through the owner alias.
"""
from __future__ import annotations

import os

import pytest

# Read by pytest-django when the session-scoped live server starts: loopback only.
os.environ["DJANGO_LIVE_TEST_SERVER_ADDRESS"] = "127.0.0.1"


@pytest.fixture
def transactional_db(live_db):
    yield
