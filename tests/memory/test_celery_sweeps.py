"""The sweeps as Celery tasks: inline without a broker, and through a real worker with
beat on the Redis this machine runs at 127.0.0.1:6379."""
import os
import subprocess
import sys
import time
from datetime import timedelta

import pytest
from django.conf import settings
from django.db import connections

from memory import tasks
from memory.models import Memory
from tests.factories import T0, make_memory, make_owner
from veetbot.rls import owner_context

REDIS_URL = "redis://127.0.0.1:6379/14"


def status_of(principal, memory_id):
    with owner_context(principal):
        return Memory.objects.get(id=memory_id).status


def test_without_a_broker_tasks_run_inline(db):
    assert settings.CELERY_TASK_ALWAYS_EAGER and settings.CELERY_BEAT_SCHEDULE == {}
    principal, _ = make_owner()
    memory = make_memory(principal, expires_at=T0 + timedelta(days=1))
    assert tasks.expire_due_all.delay().get() == 1
    assert status_of(principal, memory.id) == "expired"


def redis_available() -> bool:
    import redis

    try:
        return redis.Redis.from_url(REDIS_URL, socket_connect_timeout=1).ping()
    except redis.exceptions.ConnectionError:
        return False


@pytest.mark.slow
def test_beat_schedules_the_expiry_sweep_on_a_real_worker(live_db, tmp_path):
    if not redis_available():
        pytest.fail("Redis is expected at 127.0.0.1:6379 on this machine kind")
    principal, _ = make_owner()
    memory = make_memory(principal, expires_at=T0 + timedelta(days=1))
    connections.close_all()
    env = {
        **os.environ,
        "CELERY_BROKER_URL": REDIS_URL,
        "VEETBOT_DB_NAME": settings.DATABASES["default"]["NAME"],
        "MEMORY_EXPIRY_SWEEP_INTERVAL_SECONDS": "1",
    }
    worker = subprocess.Popen(
        [sys.executable, "-m", "celery", "-A", "veetbot", "worker", "-B", "--pool=solo", "--loglevel=WARNING",
         "-s", str(tmp_path / "beat-schedule"), "-n", f"test-{os.getpid()}@localhost"],
        env=env, cwd=settings.BASE_DIR, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
    )
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and status_of(principal, memory.id) != "expired":
            assert worker.poll() is None, worker.stdout.read().decode()[-2000:]
            time.sleep(0.5)
        assert status_of(principal, memory.id) == "expired"
    finally:
        worker.terminate()
        try:
            worker.wait(15)
        except subprocess.TimeoutExpired:
            worker.kill()
        import redis

        redis.Redis.from_url(REDIS_URL).flushdb()  # leave no queued sweeps for the next run
