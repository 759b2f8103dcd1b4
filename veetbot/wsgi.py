"""WSGI entry point (``gunicorn veetbot.wsgi``). Each serving process loads the local
encoder as it starts, so that the first semantic search does not wait for the model."""
import os

from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "veetbot.settings")
application = get_wsgi_application()

from recall.encoders import warm_up  # noqa: E402  (needs the settings configured above)

warm_up()
