"""The Celery app. Beat schedules live in settings (CELERY_BEAT_SCHEDULE) and exist only
when a broker is configured; without one, tasks run inline from management commands."""
import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "veetbot.settings")

app = Celery("veetbot")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()
