"""Imported first by every evaluation command: Django is configured (``veetbot.settings``) and
its apps loaded before the modules below it import models, so a command run as
``python -m evals...`` imports everything at the top like any other module. Under a running
Django (tests, the shell) it does nothing."""
import os

import django
from django.apps import apps

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "veetbot.settings")
if not apps.ready:
    django.setup()
