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
        # Conversation snapshots ask what became of frozen derived items and merge sets, and
        # credit faithful citations of derived items (usage only); both import models.
        from reconsolidation.selectors import frozen  # models load only once the registry is ready
        from reconsolidation.services import derived  # models load only once the registry is ready

        recall_hooks.register_derived(recall_hooks.DerivedPort(states=frozen.frozen_states,
                                                               credit=derived.derived_record_usage))
