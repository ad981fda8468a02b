"""A throwaway production stack on this machine, for the stack tests and bench/stack.py.

gunicorn (the site, DJANGO_DEBUG=0, collected static files), a Celery worker and Celery
beat run as child processes against the PostgreSQL and Redis of this machine, each run
in a database of its own (``stack_<pid>_<random>``, created, migrated and dropped again)
and an empty Redis database number, with every file (media, private, static, temporary
files, logs) below one temporary folder.

tests/stack/hoststack.py extends ``Stack`` (``prepare``/``launch``, ``launch_env`` and
``launch_prefix`` per process) to run the web process and the workers on separate hosts.

Every child runs in its own process group so that it can be stopped with its children;
``Stack.stop`` always stops them all and drops the database, whatever happened before.
The machine's services are controlled with the commands of the machine's notes
(``pg_ctlcluster``, ``redis-server``/``redis-cli``) for the fault tests.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path

import psycopg2
import redis

REPO = Path(__file__).resolve().parents[2]
PG_HOST, PG_PORT, PG_USER = "127.0.0.1", 5432, "postgres"
REDIS_HOST, REDIS_PORT = "127.0.0.1", 6379
# Redis database numbers the stack may take (0 is left to people, 5 to CI's `make test`).
REDIS_DBS = range(6, 16)
# Every Celery queue (settings.TASK_QUEUES and the default "celery"): the stack's workers
# consume them all unless a test starts one for some only (as production's scoring hosts).
ALL_QUEUES = "scoring,intervals,boards,mail,celery"
REDIS_START = [
    "redis-server",
    "--daemonize",
    "yes",
    "--bind",
    "127.0.0.1",
    "-::1",
    "--port",
    str(REDIS_PORT),
    "--save",
    "",
    "--appendonly",
    "no",
    "--dir",
    "/var/lib/redis",
    "--logfile",
    "/var/log/redis/ci.log",
]


class StackError(RuntimeError):
    """The stack could not be started or did not answer in time (the message says which)."""


def wait_until(predicate, *, timeout: float, interval: float = 0.1, what: str):
    """Poll ``predicate`` until it returns a truthy value (returned) or ``timeout`` passes."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() >= deadline:
            raise TimeoutError(f"gave up after {timeout:.0f} s waiting for {what}")
        time.sleep(interval)


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


# --- The machine's services ------------------------------------------------------------


def pg_connect(dbname: str = "postgres", *, timeout: int = 5):
    connection = psycopg2.connect(
        host=PG_HOST, port=PG_PORT, user=PG_USER, dbname=dbname, connect_timeout=timeout
    )
    connection.autocommit = True
    return connection


def postgres_ready() -> bool:
    try:
        with contextlib.closing(pg_connect(timeout=2)) as connection, connection.cursor() as cur:
            cur.execute("SELECT 1")
        return True
    except psycopg2.OperationalError:
        return False


def _pg_cluster(action: str) -> None:
    versions = sorted(os.listdir("/etc/postgresql"))
    subprocess.run(
        ["pg_ctlcluster", "--skip-systemctl-redirect", versions[-1], "main", action],
        check=True,
        capture_output=True,
        timeout=120,
    )


def postgres_restart() -> None:
    _pg_cluster("restart")


def postgres_ensure_running(timeout: float = 60) -> None:
    """Start PostgreSQL if it does not answer, and wait until it does."""
    if not postgres_ready():
        with contextlib.suppress(subprocess.CalledProcessError):
            _pg_cluster("start")
    wait_until(postgres_ready, timeout=timeout, interval=0.5, what="PostgreSQL")


def redis_client(db: int = 0) -> redis.Redis:
    return redis.Redis(host=REDIS_HOST, port=REDIS_PORT, db=db, socket_timeout=5)


def redis_ready() -> bool:
    try:
        return bool(redis_client().ping())
    except redis.RedisError:
        return False


def redis_stop() -> None:
    subprocess.run(
        ["redis-cli", "-h", REDIS_HOST, "-p", str(REDIS_PORT), "shutdown", "nosave"],
        capture_output=True,
        timeout=30,
    )
    wait_until(lambda: not redis_ready(), timeout=30, what="Redis to stop")


def redis_ensure_running(timeout: float = 30) -> None:
    """Start Redis (as the machine's notes do) if it does not answer, and wait until it does."""
    if not redis_ready():
        subprocess.run(REDIS_START, check=True, capture_output=True, timeout=30)
    wait_until(redis_ready, timeout=timeout, interval=0.2, what="Redis")


# --- The stack -------------------------------------------------------------------------


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def drop_stale_databases() -> list[str]:
    """Drop stack_<pid>_… databases whose process is gone (a run that was killed)."""
    dropped = []
    with contextlib.closing(pg_connect()) as connection, connection.cursor() as cursor:
        cursor.execute("SELECT datname FROM pg_database WHERE datname LIKE 'stack\\_%%'")
        for (name,) in cursor.fetchall():
            parts = name.split("_")
            if len(parts) == 3 and parts[1].isdigit() and not _pid_alive(int(parts[1])):
                cursor.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
                dropped.append(name)
    return dropped


class Stack:
    """One run of the stack; ``env`` is what every process of it (and the caller) uses."""

    def __init__(
        self,
        *,
        web_workers: int = 2,
        worker_concurrency: int = 2,
        scoring_timeout: int = 20,
        sweep_interval: int = 2,
        heartbeat_interval: int = 2,
        beat: bool = True,
        extra_env: dict[str, str] | None = None,
        queues: str = ALL_QUEUES,
    ):
        self.web_workers = web_workers
        self.worker_concurrency = worker_concurrency
        self.queues = queues  # what start_worker's workers consume unless told otherwise
        self.beat = beat
        self.root = Path(tempfile.mkdtemp(prefix="stack-"))
        for folder in ("media", "private", "static", "tmp", "logs"):
            (self.root / folder).mkdir()
        self.db_name = f"stack_{os.getpid()}_{secrets.token_hex(4)}"
        self.redis_db = self._free_redis_db()
        self.port = free_port()
        self.base_url = f"http://127.0.0.1:{self.port}"
        self.broker_url = f"redis://{REDIS_HOST}:{REDIS_PORT}/{self.redis_db}"
        self.worker_name = f"stack-{secrets.token_hex(3)}@{socket.gethostname()}"
        self.worker_names = [self.worker_name]  # every worker wait_worker_ready waits for
        self.web_bind = f"127.0.0.1:{self.port}"
        self.beat_schedule = self.root / "celerybeat-schedule"
        self.processes: dict[str, subprocess.Popen] = {}
        self.database_created = False
        self.env = {
            "DJANGO_SETTINGS_MODULE": "challenge_site.settings",
            "DJANGO_DEBUG": "0",
            "SECRET_KEY": secrets.token_urlsafe(50),
            "ALLOWED_HOSTS": "127.0.0.1,localhost",
            "CSRF_TRUSTED_ORIGINS": self.base_url,
            # Plain HTTP on the loopback: no TLS proxy in front of this gunicorn.
            "SECURE_SSL_REDIRECT": "0",
            "SESSION_COOKIE_SECURE": "0",
            "CSRF_COOKIE_SECURE": "0",
            "SECURE_HSTS_SECONDS": "0",
            "DATABASE_URL": f"postgres://{PG_USER}@{PG_HOST}:{PG_PORT}/{self.db_name}",
            "CELERY_BROKER_URL": self.broker_url,
            # The cache shared by gunicorn's processes (plots, counts, rate limits), in the
            # broker's database: its keys (":1:…") never meet Celery's, and go with it.
            "CACHE_URL": self.broker_url,
            "VAR_DIR": str(self.root / "var"),
            "MEDIA_ROOT": str(self.root / "media"),
            "PRIVATE_ROOT": str(self.root / "private"),
            "STATIC_ROOT": str(self.root / "static"),
            # Uploads larger than 2.5 MB are spooled here by Django: checked to stay empty.
            "TMPDIR": str(self.root / "tmp"),
            "SUBMISSION_SCORING_TIMEOUT": str(scoring_timeout),
            "SUBMISSION_SWEEP_INTERVAL": str(sweep_interval),
            # A killed worker's run is taken over 3 beats after its last (heartbeat.py).
            "SUBMISSION_HEARTBEAT_INTERVAL": str(heartbeat_interval),
            "LOG_LEVEL": "INFO",
            "PYTHONUNBUFFERED": "1",
            **(extra_env or {}),
        }

    # --- set-up and tear-down -------------------------------------------------------------

    @staticmethod
    def _free_redis_db() -> int:
        order = list(REDIS_DBS)
        start = secrets.randbelow(len(order))
        for db in order[start:] + order[:start]:
            client = redis_client(db)
            # A claim left by a run that is gone with nothing else in the database (a Stack
            # made, never started, its run killed or ended without Stack.stop): free again.
            claimed = client.get("stack:claimed")
            if (
                claimed is not None
                and client.dbsize() == 1
                and claimed.isdigit()
                and not _pid_alive(int(claimed))
            ):
                client.delete("stack:claimed")
            # Claimed with a key of its own, atomically: two stacks started at once (by
            # two test runs) never share a broker (the key goes with Stack.stop's flush).
            if client.dbsize() == 0 and client.set("stack:claimed", os.getpid(), nx=True):
                return db
        raise StackError(f"no empty Redis database among {order[0]}-{order[-1]}")

    def process_env(self) -> dict[str, str]:
        env = {
            key: value
            for key, value in os.environ.items()
            if not key.startswith(("DJANGO_", "CELERY_", "SUBMISSION_", "STORAGE", "PRIVATE_"))
            and key not in ("DATABASE_URL", "VAR_DIR", "MEDIA_ROOT", "STATIC_ROOT")
        }
        env.update(self.env)
        return env

    def launch_env(self, name: str) -> dict[str, str]:
        """The environment of the process ``name`` ("manage", "web", "worker", "beat", …);
        one for all here, one per host in hoststack.HostsStack."""
        return self.process_env()

    def launch_prefix(self, name: str) -> list[str]:
        """What the command of process ``name`` runs under (``ip netns exec`` for a host)."""
        return []

    def start(self) -> Stack:
        """Database, migrations, static files, then gunicorn, the worker and beat, ready."""
        try:
            self.prepare()
            self.launch()
        except BaseException:
            self.stop()
            raise
        return self

    def prepare(self) -> None:
        """The machine's services up, the database created and migrated, static files."""
        postgres_ensure_running()
        redis_ensure_running()
        drop_stale_databases()
        with contextlib.closing(pg_connect()) as connection, connection.cursor() as cursor:
            cursor.execute(f'CREATE DATABASE "{self.db_name}"')
        self.database_created = True
        self.manage("migrate", "--noinput")
        self.manage("collectstatic", "--noinput")

    def launch(self) -> None:
        """gunicorn, the worker and beat started, and answering."""
        self.start_web()
        self.start_worker()
        if self.beat:
            self.start_beat()
        self.wait_web_ready()
        self.wait_worker_ready()

    def stop(self, *, keep_logs_in: Path | None = None) -> None:
        """Stop every process, drop the database, empty the Redis database, remove the files."""
        for name in list(self.processes):
            self.stop_process(name)
        if keep_logs_in is not None:
            keep_logs_in.mkdir(parents=True, exist_ok=True)
            for log in (self.root / "logs").glob("*.log"):
                shutil.copy(log, keep_logs_in / log.name)
        problems = []
        if self.database_created:
            try:
                postgres_ensure_running()
                with contextlib.closing(pg_connect()) as connection, connection.cursor() as cur:
                    cur.execute(f'DROP DATABASE IF EXISTS "{self.db_name}" WITH (FORCE)')
                self.database_created = False
            except Exception as error:  # reported below, after the rest
                problems.append(f"dropping {self.db_name}: {error}")
        try:
            redis_ensure_running()
            redis_client(self.redis_db).flushdb()
        except Exception as error:
            problems.append(f"emptying Redis db {self.redis_db}: {error}")
        shutil.rmtree(self.root, ignore_errors=True)
        if problems:
            raise StackError("; ".join(problems))

    def __enter__(self) -> Stack:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    def manage(self, *args: str, timeout: float = 300) -> str:
        """Run ``manage.py`` with the stack's settings; its output, or StackError."""
        result = subprocess.run(
            [*self.launch_prefix("manage"), sys.executable, "manage.py", *args],
            cwd=REPO,
            env=self.launch_env("manage"),
            capture_output=True,
            text=True,
            timeout=timeout,
        )
        if result.returncode != 0:
            raise StackError(
                f"manage.py {' '.join(args)} exited {result.returncode}:\n"
                f"{result.stdout[-3000:]}\n{result.stderr[-3000:]}"
            )
        return result.stdout

    # --- processes ------------------------------------------------------------------------

    def _spawn(self, name: str, command: list[str]) -> subprocess.Popen:
        if (old := self.processes.get(name)) is not None and old.poll() is None:
            raise StackError(f"{name} is already running (pid {old.pid})")
        log = open(self.root / "logs" / f"{name}.log", "ab")  # noqa: SIM115 - the child's
        with log:
            log.write(f"\n=== {time.strftime('%H:%M:%S')} starting {name}\n".encode())
            log.flush()
            process = subprocess.Popen(
                [*self.launch_prefix(name), *command],
                cwd=REPO,
                env=self.launch_env(name),
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,  # its own process group, stopped as a whole
            )
        self.processes[name] = process
        return process

    def start_web(self) -> subprocess.Popen:
        return self._spawn(
            "web",
            [
                sys.executable,
                "-m",
                "gunicorn",
                "challenge_site.wsgi",
                "--bind",
                self.web_bind,
                "--workers",
                str(self.web_workers),
                "--timeout",
                "120",
                "--graceful-timeout",
                "10",
                "--access-logfile",
                "-",
            ],
        )

    def start_worker(
        self, name: str = "worker", hostname: str | None = None, *, queues: str | None = None
    ) -> subprocess.Popen:
        """A Celery worker consuming ``queues`` (comma-separated; the stack's by default)."""
        return self._spawn(
            name,
            [
                sys.executable,
                "-m",
                "celery",
                "-A",
                "challenge_site",
                "worker",
                "--loglevel=INFO",
                f"--concurrency={self.worker_concurrency}",
                f"--hostname={hostname or self.worker_name}",
                f"--queues={queues or self.queues}",
                "--without-gossip",
                "--without-mingle",
            ],
        )

    def start_beat(self) -> subprocess.Popen:
        return self._spawn(
            "beat",
            [
                sys.executable,
                "-m",
                "celery",
                "-A",
                "challenge_site",
                "beat",
                "--loglevel=INFO",
                "--schedule",
                str(self.beat_schedule),
            ],
        )

    def stop_process(self, name: str, *, timeout: float = 20) -> None:
        """SIGTERM to the process group, SIGKILL after ``timeout``; always reaped."""
        process = self.processes.pop(name, None)
        if process is None:
            return
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGTERM)
        with contextlib.suppress(subprocess.TimeoutExpired):
            process.wait(timeout=timeout)
        # The group may outlive its leader (pool children): kill whatever is left.
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
        with contextlib.suppress(subprocess.TimeoutExpired):
            process.wait(timeout=10)

    def kill_worker(self, name: str = "worker") -> None:
        """SIGKILL to the whole worker (main process and pool children), no clean-up at all."""
        process = self.processes.pop(name)
        os.killpg(process.pid, signal.SIGKILL)
        process.wait(timeout=30)
        wait_until(
            lambda: not _group_alive(process.pid), timeout=30, what="the worker's children to die"
        )

    def worker_children(self) -> list[int]:
        """Pids of the worker's pool processes."""
        parent = self.processes["worker"].pid
        return [pid for pid, state, ppid, _ in _processes() if ppid == parent and state != "Z"]

    def web_children(self) -> list[int]:
        """Pids of gunicorn's worker processes."""
        parent = self.processes["web"].pid
        return [pid for pid, state, ppid, _ in _processes() if ppid == parent and state != "Z"]

    def check_alive(self) -> None:
        for name, process in self.processes.items():
            if process.poll() is not None:
                raise StackError(f"{name} exited with {process.returncode}:\n{self.log_tail(name)}")

    def log_tail(self, name: str, size: int = 4000) -> str:
        path = self.root / "logs" / f"{name}.log"
        return path.read_bytes()[-size:].decode(errors="replace") if path.exists() else ""

    # --- readiness ------------------------------------------------------------------------

    def healthy(self) -> bool:
        try:
            with urllib.request.urlopen(f"{self.base_url}/healthz", timeout=5) as response:
                return response.status == 200
        except (urllib.error.URLError, OSError):
            return False

    def wait_web_ready(self, timeout: float = 60) -> None:
        def ready():
            self.check_alive()
            return self.healthy()

        wait_until(ready, timeout=timeout, interval=0.2, what="gunicorn to answer /healthz")

    def worker_answers(self, names: list[str] | None = None) -> bool:
        """Whether every worker of ``names`` (default: the stack's) answers a ping."""
        from celery import Celery

        names = names or self.worker_names
        app = Celery(broker=self.broker_url, set_as_current=False)
        # Celery prefers CELERY_BROKER_URL of this process's environment (another stack's,
        # in the suite) to the broker given above, but not to these two.
        app.conf.broker_read_url = app.conf.broker_write_url = self.broker_url
        try:
            replies = app.control.ping(destination=names, timeout=1.0)
        except Exception:  # the broker is not reachable yet
            return False
        finally:
            app.close()
        return set(names) <= {name for reply in replies for name in reply}

    def wait_worker_ready(self, timeout: float = 90) -> None:
        def ready():
            self.check_alive()
            return self.worker_answers()

        wait_until(ready, timeout=timeout, interval=0.5, what="the Celery workers to answer a ping")

    # --- in this process ----------------------------------------------------------------

    def setup_django(self) -> None:
        """Point this process's Django at the stack (call before django.setup())."""
        for key in list(os.environ):
            if key.startswith(("CELERY_", "SUBMISSION_")):
                del os.environ[key]
        os.environ.update(self.env)
        import django

        django.setup()

    def files(self) -> set[str]:
        """Every file below the stack's folder, relative to it."""
        return {str(path.relative_to(self.root)) for path in self.root.rglob("*") if path.is_file()}


def _processes():
    """(pid, state, parent pid, process group) of every process, from /proc."""
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        fields = stat[stat.rindex(")") + 2 :].split()
        yield int(entry.name), fields[0], int(fields[1]), int(fields[2])


def _group_alive(pgid: int) -> bool:
    """Whether a process of the group still runs (zombies left to an init that does not
    reap them do not count)."""
    return any(group == pgid and state != "Z" for _, state, _, group in _processes())
