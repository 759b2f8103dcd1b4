from django.apps import AppConfig


class ReconsolidationConfig(AppConfig):
    name = "reconsolidation"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self):
        # Derived operations are invalidated inside the transaction of every source change.
        from reconsolidation.writers import invalidation  # noqa: F401
