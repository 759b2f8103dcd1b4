"""Inspect or stop the embedded PostgreSQL server (it outlives the processes that use it)."""
import os
import signal
from pathlib import Path

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from veetbot.database import data_dir


class Command(BaseCommand):
    help = "Show the status of, or stop, the embedded PostgreSQL server."

    def add_arguments(self, parser):
        parser.add_argument("action", choices=["status", "stop"], help="what to do")

    def handle(self, *args, **options):
        if os.environ.get("DATABASE_URL"):
            raise CommandError("DATABASE_URL is set: the embedded server is not in use")
        pid_file = data_dir(settings.BASE_DIR) / "pgdata" / "postmaster.pid"
        if not pid_file.exists():
            self.stdout.write("embedded PostgreSQL is not running")
            return
        pid = int(Path(pid_file).read_text().splitlines()[0])
        if options["action"] == "status":
            self.stdout.write(f"embedded PostgreSQL running (pid {pid}, socket {settings.DATABASES['default']['HOST']})")
            return
        # pg_ctl refuses to run as root; SIGINT is PostgreSQL's "fast shutdown".
        os.kill(pid, signal.SIGINT)
        self.stdout.write(f"sent fast shutdown to embedded PostgreSQL (pid {pid})")
