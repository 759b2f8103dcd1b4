"""Dreaming as Celery tasks: inline without a broker, and on a real worker with beat through
the Redis this machine runs at 127.0.0.1:6379."""
from __future__ import annotations

import os
import subprocess
import sys
import time

import pytest
from django.conf import settings
from django.db import connections

from reconsolidation import tasks
from reconsolidation.models import ReconsolidationJob, ReconsolidationOperation
from tests.factories import T0, make_owner
from evals.fixtures.bulk import bulk_originals
from tests.memory.test_celery_sweeps import REDIS_URL, redis_available
from tests.reconsolidation.helpers import snapshot
from tests.reconsolidation.slices import pairs
from veetbot.rls import owner_context


def jobs_of(principal) -> list[ReconsolidationJob]:
    with owner_context(principal):
        return list(ReconsolidationJob.objects.all())


def operations_of(principal) -> int:
    with owner_context(principal):
        return ReconsolidationOperation.objects.count()


def test_without_a_broker_the_beat_task_runs_slices_for_every_owner_inline(db, enabled):
    assert settings.CELERY_TASK_ALWAYS_EAGER and "reconsolidation-dream-due" not in settings.CELERY_BEAT_SCHEDULE
    first, _ = make_owner()
    second, _ = make_owner()
    pairs(first, 2)
    pairs(second, 3)
    assert tasks.dream_due_all.delay().get() == {"enabled": True, "owners": 2}
    for principal in (first, second):
        (job,) = jobs_of(principal)
        assert job.state == "completed" and job.lease_token is None


def test_one_owner_task_stops_at_its_slice_limit_and_the_next_run_continues(db, enabled):
    principal, _ = make_owner()
    bulk_originals(principal, 300, at=T0, clusters=300)  # three full-lane slices of 128, no neighbours
    owner = (str(principal.tenant_id), str(principal.principal_id))
    result = tasks.dream_owner.delay(*owner, 1).get()
    assert result["enabled"] and result["slices"] == 1 and result["stopped"] == "max_slices"
    assert result["anchors_scanned"] == 128 and not result["generation_complete"]
    assert set(result) == {"enabled", "slices", "stopped", "anchors_scanned", "groups_processed", "operations",
                           "spend_usd", "calls", "input_tokens", "output_tokens", "seconds", "generation_complete",
                           "coverage"}
    assert set(result["coverage"]) == {"scan", "model", "reach"}
    assert result["coverage"]["reach"] == {"groups_formed": 0, "groups_sent": 0, "reach": None}  # no neighbours
    rest = tasks.dream_owner.delay(*owner).get()
    assert rest["stopped"] == "idle" and rest["generation_complete"] and rest["anchors_scanned"] == 300 - 128


def test_with_processing_off_the_tasks_start_nothing(db, settings):
    settings.AGENT_MEMORY_RECONSOLIDATION_ENABLED = False
    principal, _ = make_owner()
    pairs(principal, 2)
    before = snapshot(principal)
    assert tasks.dream_due_all.delay().get() == {"enabled": False, "owners": 0}
    assert tasks.dream_owner.delay(str(principal.tenant_id), str(principal.principal_id)).get()["enabled"] is False
    assert snapshot(principal) == before


@pytest.mark.slow
def test_beat_runs_dreaming_slices_on_a_real_worker_through_redis(live_db, tmp_path):
    if not redis_available():
        pytest.fail("Redis is expected at 127.0.0.1:6379 on this machine kind")
    principal, _ = make_owner()
    pairs(principal, 3)
    connections.close_all()
    env = {
        **os.environ,
        "CELERY_BROKER_URL": REDIS_URL,
        "VEETBOT_DB_NAME": settings.DATABASES["default"]["NAME"],
        "AGENT_MEMORY_RECONSOLIDATION_ENABLED": "true",
        "RECON_DREAM_INTERVAL_SECONDS": "1",
        # The worker is another process: the suite's smallest-summary rule (tests/conftest.py)
        # reaches it through the environment.
        "RECON_SUMMARY_MIN_CLAUSES": "2", "RECON_SUMMARY_MIN_SESSIONS": "1",
    }
    worker = subprocess.Popen(
        [sys.executable, "-m", "celery", "-A", "veetbot", "worker", "-B", "--pool=solo", "--loglevel=WARNING",
         "-s", str(tmp_path / "beat-schedule"), "-n", f"dream-{os.getpid()}@localhost"],
        env=env, cwd=settings.BASE_DIR, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
    )
    try:
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline:
            assert worker.poll() is None, worker.stdout.read().decode()[-2000:]
            jobs = jobs_of(principal)
            if jobs and jobs[0].state == "completed" and jobs[0].lease_token is None:
                break
            time.sleep(0.5)
        (job,) = jobs_of(principal)
        assert job.state == "completed" and job.full_cursor_sequence == job.full_high_watermark == 6
        assert operations_of(principal) > 0  # the worker ran model work (rules provider), not only inventory
    finally:
        worker.terminate()
        try:
            worker.wait(15)
        except subprocess.TimeoutExpired:
            worker.kill()
        import redis

        redis.Redis.from_url(REDIS_URL).flushdb()
