"""Send ORM traffic to the runtime role and schema changes to the owner role."""


class RuntimeRoleRouter:
    def db_for_read(self, model, **hints):
        return "default"

    def db_for_write(self, model, **hints):
        return "default"

    def allow_relation(self, obj1, obj2, **hints):
        return True

    def allow_migrate(self, db, app_label, model_name=None, **hints):
        # The runtime role owns nothing; only the owner alias may change the schema.
        return db == "owner"
