"""`manage.py job_supervisor [worker options]`: runs `manage.py job_worker` and starts another
whenever it exits, however it died (killed, out of memory, a bug), waiting longer each time it
dies young. SIGINT/SIGTERM stop the worker, then the supervisor. `make run` and `make serve`
run this."""

import logging
import signal
import subprocess
import sys
import time

from django.conf import settings
from django.core.management.base import BaseCommand

logger = logging.getLogger(__name__)

FIRST_DELAY, MAX_DELAY = 1.0, 30.0
# A worker that ran this long before it exited died of something new: restart it at once.
HEALTHY_SECONDS = 60.0


class Command(BaseCommand):
    help = "Run the job worker and restart it whenever it exits"

    def add_arguments(self, parser):
        parser.add_argument("worker_args", nargs="*", help="options for job_worker (after --)")

    def handle(self, *, worker_args, **options):
        command = [sys.executable, str(settings.BASE_DIR / "manage.py"), "job_worker"]
        self.stopping = False
        self.child: subprocess.Popen | None = None
        for signum in (signal.SIGINT, signal.SIGTERM):
            signal.signal(signum, self._stop)
        delay = FIRST_DELAY
        while not self.stopping:
            started = time.monotonic()
            # Its own process group: a terminal's Ctrl+C or `kill 0` reaches it once, through
            # _stop (a second signal would make the worker abandon its job).
            self.child = subprocess.Popen(  # noqa: S603 (our own command)
                [*command, *worker_args], start_new_session=True
            )
            logger.info("Job worker started (pid %d)", self.child.pid)
            code = self.child.wait()
            if self.stopping:
                break
            if time.monotonic() - started > HEALTHY_SECONDS:
                delay = FIRST_DELAY
            logger.error("Job worker exited with %s; starting another in %.0f s", code, delay)
            time.sleep(delay)
            delay = min(delay * 2, MAX_DELAY)

    def _stop(self, signum, frame):
        self.stopping = True
        if self.child is not None and self.child.poll() is None:
            self.child.send_signal(signum)
