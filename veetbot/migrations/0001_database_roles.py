"""Creates the vector extension and the runtime role, and grants it row access only.

The runtime role logs in, is no superuser, cannot bypass RLS and owns nothing; the
migrating (owner) role keeps ownership, so FORCE ROW LEVEL SECURITY binds the runtime.
Roles are cluster-wide, hence the idempotent DO block.
"""
from django.conf import settings
from django.db import migrations


def _role_sql() -> list[str]:
    role = settings.VEETBOT_RUNTIME_ROLE
    password = settings.VEETBOT_RUNTIME_PASSWORD.replace("'", "''")
    login = f"LOGIN PASSWORD '{password}'" if password else "LOGIN"
    return [
        "CREATE EXTENSION IF NOT EXISTS vector",
        f"""
        DO $$
        BEGIN
          IF '{role}' = current_user THEN
            RAISE EXCEPTION 'the runtime role must not be the migrating (owner) role';
          END IF;
          IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = '{role}') THEN
            CREATE ROLE "{role}" {login} NOSUPERUSER NOBYPASSRLS NOCREATEDB NOCREATEROLE NOINHERIT;
          ELSE
            ALTER ROLE "{role}" {login} NOSUPERUSER NOBYPASSRLS NOCREATEDB NOCREATEROLE NOINHERIT;
          END IF;
        END $$
        """,
        f'GRANT USAGE ON SCHEMA public TO "{role}"',
        f'GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA public TO "{role}"',
        f'GRANT USAGE, SELECT, UPDATE ON ALL SEQUENCES IN SCHEMA public TO "{role}"',
        f'ALTER DEFAULT PRIVILEGES IN SCHEMA public GRANT SELECT, INSERT, UPDATE, DELETE ON TABLES TO "{role}"',
        f'ALTER DEFAULT PRIVILEGES IN SCHEMA public GRANT USAGE, SELECT, UPDATE ON SEQUENCES TO "{role}"',
        f'ALTER DEFAULT PRIVILEGES IN SCHEMA public GRANT EXECUTE ON FUNCTIONS TO "{role}"',
    ]


class Migration(migrations.Migration):
    initial = True
    dependencies = []
    operations = [migrations.RunSQL(_role_sql(), migrations.RunSQL.noop)]
