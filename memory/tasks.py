"""Celery tasks: thin wrappers over the sweep services, scheduled by beat when a broker exists."""
from celery import shared_task

from memory import services


@shared_task(name="memory.tasks.expire_due_all")
def expire_due_all() -> int:
    return services.expire_due_all()


@shared_task(name="memory.tasks.decay_due_all")
def decay_due_all() -> list[int]:
    return list(services.decay_due_all())
