from django.apps import AppConfig


class RecallConfig(AppConfig):
    name = "recall"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self):
        # Vectors are invalidated inside the transaction of every content change. Imported
        # here: importing registers the listener, and it imports models, which load only now.
        from recall import invalidation  # noqa: F401
        # Conversation snapshots are withheld on erasure of what they copied, and erased with
        # their conversation (registers two memory.hooks listeners).
        from recall.snapshots import erasure  # noqa: F401
        # The role glosses context assembly matches descriptions against ("the guy who
        # repairs my car" -> mechanic) are read once per process, here: read on first use
        # they would cost the first turn up to a second of its context deadline.
        from recall.lexicon import roles
        roles.warm()
