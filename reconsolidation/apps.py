from django.apps import AppConfig

from recall import hooks as recall_hooks


class ReconsolidationConfig(AppConfig):
    name = "reconsolidation"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self):
        # Derived operations are invalidated inside the transaction of every source change.
        from reconsolidation.writers import invalidation  # noqa: F401
        # Recall renders one member per merge set and valid summaries through this view
        # (imported here: it imports models, which load only once the app registry is ready).
        from reconsolidation import read_paths

        recall_hooks.register(read_paths.reconsolidate)
