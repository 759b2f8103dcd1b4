"""The acceptance stack: the product in its production configuration, started once for
the acceptance session as separate processes — a standalone PostgreSQL 18 over TCP,
migrations as the owning role, gunicorn with two workers, two Celery workers and Celery
beat on the Redis at 127.0.0.1:6379 — and torn down at the end. Every journey creates
its own owners, so journeys share the stack without seeing each other's rows.

A missing Redis or Chromium fails the run with a message that says what to start or
install; nothing here is skipped.
"""
from __future__ import annotations

import tempfile
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.acceptance import stack
from tests.acceptance.client import Api


@dataclass
class Stack:
    database: stack.Postgres
    env: dict
    web: stack.Service
    base_url: str
    workers: list
    beat: stack.Service

    def api(self) -> Api:
        return Api(self.base_url)

    def services(self) -> list:
        return [self.web, *self.workers, self.beat]

    def logs(self) -> str:
        return "\n".join(service.log() for service in self.services())

    def new_owner(self, name: str) -> dict:
        """An owner and its token, made by the operator command (as a deployment would)."""
        return stack.manage_json(self.env, "create_owner", "--name", name)

    def vectors_backfilled(self, principal_id: str, originals: int) -> bool:
        """Beat has written a vector for each of the owner's ``originals``: from now on every
        search of theirs is hybrid, whatever the workers do next."""
        with self.database.connect() as conn:
            (count,) = conn.execute("SELECT count(*) FROM recall_memoryvector WHERE principal_id = %s",
                                    [principal_id]).fetchone()
        return count == originals

    def dreaming_settled(self, principal_id: str) -> bool:
        """The owner's dreaming is done for now: today's pass completed, no slice holds a
        lease and no group waits. A test that snapshots the owner's rows waits for this, so
        what it reads does not depend on how far the workers got."""
        with self.database.connect() as conn:
            open_jobs, completed = conn.execute(
                "SELECT count(*) FILTER (WHERE state = 'open' OR lease_token IS NOT NULL),"
                " count(*) FILTER (WHERE state = 'completed') FROM reconsolidation_reconsolidationjob"
                " WHERE principal_id = %s", [principal_id]).fetchone()
            waiting = conn.execute(
                "SELECT count(*) FROM reconsolidation_reconsolidationgroup"
                " WHERE principal_id = %s AND state IN ('pending', 'leased')", [principal_id]).fetchone()[0]
        return open_jobs == 0 and completed > 0 and waiting == 0


@pytest.fixture(scope="session")
def product():
    try:
        stack.require_redis()
        stack.require_chromium()
    except RuntimeError as missing:
        pytest.fail(str(missing), pytrace=False)
    root = Path(tempfile.mkdtemp(prefix="veetbot-acceptance-"))
    database = stack.Postgres(root)
    started: list[stack.Service] = []
    try:
        database.start()
        env = stack.product_env(database)
        stack.manage(env, "migrate", "-v0")
        stack.flush_redis()
        web, base_url = stack.gunicorn(env)
        started.append(web)
        workers = [stack.celery_worker(env, index) for index in (1, 2)]
        started.extend(workers)
        beat = stack.celery_beat(env, root)
        started.append(beat)
        yield Stack(database=database, env=env, web=web, base_url=base_url, workers=workers, beat=beat)
    finally:
        for service in reversed(started):
            service.stop()
        database.stop()
        stack.flush_redis()
        stack.remove(root)
