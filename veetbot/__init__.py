"""Project package: settings, URL map, Celery app, embedded-database bootstrap, owner
authentication, the row-level-security context and the API error envelope.

It holds the plumbing every app shares and no memory rules of its own.
"""
from .celery import app as celery_app

__all__ = ["celery_app"]
