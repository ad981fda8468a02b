"""The stack with its web process and Celery workers on separate hosts (tests/stack/hosts.py).

Host "web" runs gunicorn, Celery beat (once for the whole site) and manage.py (migrations,
static files, imports); hosts "worker1" … "workerN" run one Celery worker each. Every host
has a folder of its own (VAR_DIR, MEDIA_ROOT, PRIVATE_ROOT, STATIC_ROOT, TMPDIR) and shares
nothing on disk with the others: with ``s3`` given, files go to the S3 server. Each host
reaches PostgreSQL, Redis and S3 at the root side of its link through the forwarder; the
test run (this process) uses them on 127.0.0.1 as before (``env``), and reaches gunicorn
at the web host's address.

Without network namespaces (hosts.namespaces_unavailable() says why, in ``isolation``),
the hosts are separate processes with separate folders on the loopback.
"""

from __future__ import annotations

import os
import secrets
import signal
import subprocess
from pathlib import Path

from .harness import PG_PORT, REDIS_PORT, Stack, _group_alive, free_port, wait_until
from .hosts import Host, Network, drop_stale_namespaces, namespaces_unavailable

# Folders each host gets; HostsStack.local_files lists what any host left in them.
HOST_FOLDERS = ("var", "media", "private", "static", "tmp")


class HostsStack(Stack):
    def __init__(self, *, workers: int = 2, s3=None, keep_logs_in: Path | None = None, **kwargs):
        kwargs.setdefault("worker_concurrency", 1)
        super().__init__(**kwargs)
        self.keep_logs_in = keep_logs_in  # where stop() copies the logs (also after a failure)
        self.s3 = s3
        if s3 is not None:
            self.env.update(s3.storage_env())
        self.host_names = ["web", *(f"worker{index}" for index in range(1, workers + 1))]
        self.tag = secrets.token_hex(3)
        self.worker_hostnames = {name: f"{name}-{self.tag}@{name}" for name in self.host_names[1:]}
        self.worker_names = list(self.worker_hostnames.values())
        self.unavailable = namespaces_unavailable()
        self.isolation = "processes" if self.unavailable else "namespaces"
        self.network: Network | None = None
        self.hosts: dict[str, Host | None] = dict.fromkeys(self.host_names)
        self.host_env: dict[str, dict[str, str]] = {}
        for name in self.host_names:
            for folder in HOST_FOLDERS:
                (self.host_root(name) / folder).mkdir(parents=True)
        self.beat_schedule = self.host_root("web") / "var" / "celerybeat-schedule"

    def host_root(self, name: str) -> Path:
        return self.root / "hosts" / name

    # --- which host runs what --------------------------------------------------------------

    @staticmethod
    def host_of(process: str) -> str:
        return process if process.startswith("worker") else "web"

    def launch_env(self, name: str) -> dict[str, str]:
        return self.host_env[self.host_of(name)]

    def launch_prefix(self, name: str) -> list[str]:
        host = self.hosts[self.host_of(name)]
        return host.command([]) if host is not None else []

    # --- set-up and tear-down --------------------------------------------------------------

    def prepare(self) -> None:
        self._make_hosts()
        super().prepare()

    def _make_hosts(self) -> None:
        service_ports = [PG_PORT, REDIS_PORT]
        endpoint = self.s3.endpoint_url if self.s3 is not None else None
        if endpoint:
            service_ports.append(int(endpoint.rsplit(":", 1)[1]))
        ports = {port: port for port in service_ports}
        if self.isolation == "namespaces":
            drop_stale_namespaces()
            self.network = Network.create(self.host_names)
            self.hosts.update(self.network.hosts)
            with open(self.root / "logs" / "forwarder.log", "ab") as log:
                ports = self.network.forward(service_ports, log=log)
            web = self.network.hosts["web"]
            self.port = free_port()  # any: the web host's ports are its own
            self.web_bind = f"{web.address}:{self.port}"
            self.base_url = f"http://{self.web_bind}"
            self.env["ALLOWED_HOSTS"] = f"{web.address},127.0.0.1,localhost"
            self.env["CSRF_TRUSTED_ORIGINS"] = self.base_url
        self.env["SITE_URL"] = self.base_url
        for name in self.host_names:
            host = self.hosts[name]
            gateway = host.gateway if host is not None else "127.0.0.1"
            self.host_env[name] = self._env_for(name, gateway, ports)

    def _env_for(self, name: str, gateway: str, ports: dict[int, int]) -> dict[str, str]:
        """The stack's environment, its services' addresses as seen from the host, and the
        host's own folders."""
        # Another stack's mail server (the suite's, in this process's environment) is not
        # reachable from a host: e-mails go to the log unless this stack was given one.
        env = {
            key: value
            for key, value in self.process_env().items()
            if not key.startswith("EMAIL_") or key in self.env
        }
        for port, forwarded in ports.items():
            old, new = f"127.0.0.1:{port}", f"{gateway}:{forwarded}"
            env = {key: value.replace(old, new) for key, value in env.items()}
        root = self.host_root(name)
        env.update(
            {
                "VAR_DIR": str(root / "var"),
                "MEDIA_ROOT": str(root / "media"),
                "PRIVATE_ROOT": str(root / "private"),
                "STATIC_ROOT": str(root / "static"),
                "TMPDIR": str(root / "tmp"),
                "STACK_HOST": name,
            }
        )
        return env

    def launch(self) -> None:
        self.start_web()
        for name in self.worker_hostnames:
            self.start_worker(name)
        self.start_beat()
        self.wait_web_ready()
        self.wait_worker_ready()

    def start_worker(
        self, name: str = "worker1", hostname: str | None = None, *, queues: str | None = None
    ):
        return super().start_worker(name, hostname or self.worker_hostnames[name], queues=queues)

    def stop(self, *, keep_logs_in: Path | None = None) -> None:
        try:
            super().stop(keep_logs_in=keep_logs_in or self.keep_logs_in)
        finally:
            if self.network is not None:
                self.network.delete()
                self.network = None

    # --- faults ----------------------------------------------------------------------------

    def kill_host(self, name: str) -> None:
        """The host dies: SIGKILL to the process group of everything it runs, no clean-up."""
        for process_name in [p for p in self.processes if self.host_of(p) == name]:
            process = self.processes.pop(process_name)
            os.killpg(process.pid, signal.SIGKILL)
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired as error:
                raise RuntimeError(f"{process_name} outlived SIGKILL") from error
            wait_until(
                lambda pid=process.pid: not _group_alive(pid),
                timeout=30,
                what=f"the processes of {process_name} to die",
            )

    # --- what the hosts left ---------------------------------------------------------------

    def local_files(self) -> dict[str, list[str]]:
        """Files each host wrote to its media, private and temporary folders (should be none
        with S3: uploads and datasets live there)."""
        found = {}
        for name in self.host_names:
            root = self.host_root(name)
            found[name] = sorted(
                str(path.relative_to(root))
                for folder in ("media", "private", "tmp")
                for path in (root / folder).rglob("*")
                if path.is_file()
            )
        return found

    def scored_by(self, task_ids: set[str]) -> dict[str, set[str]]:
        """Which worker host's log reports each scoring task as succeeded: {host: task ids}."""
        found = {}
        for name in self.worker_hostnames:
            log = self.log_tail(name, size=10**8)
            found[name] = {
                task for task in task_ids if f"submissions.score[{task}] succeeded" in log
            }
        return found
