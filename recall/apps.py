from django.apps import AppConfig


class RecallConfig(AppConfig):
    name = "recall"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self):
        # Vectors are invalidated inside the transaction of every content change.
        from recall import invalidation  # noqa: F401
