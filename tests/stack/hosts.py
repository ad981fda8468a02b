"""Separate "hosts" for the stack: Linux network namespaces joined to this one by veth links.

``Network.create(["web", "worker1", "worker2"])`` makes one namespace a host, named
``chstack-<pid>-<random>-<host>`` (the pid of the test run: ``drop_stale_namespaces``
removes those of runs that were killed, as harness.drop_stale_databases does for
databases), each with its loopback up and one veth link to this namespace: a /30 of
its own, ``10.213.X.(4i+1)`` here and ``10.213.X.(4i+2)`` there, X drawn per run. No
default route and no forwarding between links: a host reaches only the root side of its
own link, where ``tests/stack/forward.py`` (started by ``Network.forward``) passes
connections on to the services on 127.0.0.1 (PostgreSQL, Redis, the S3 server). The
test run reaches a host's servers at its address over the link.

``namespaces_unavailable()`` says why namespaces cannot be made here (not root, no
``ip``, refused by the kernel), or None; the stack then runs its hosts as separate
processes with separate folders on the loopback (hoststack.HostsStack).
"""

from __future__ import annotations

import contextlib
import os
import secrets
import shutil
import subprocess
import sys
from dataclasses import dataclass, field

from .harness import REPO, _pid_alive, free_port, wait_until

PREFIX = "chstack-"
SUBNET = "10.213"


def _ip(*args: str, check: bool = True) -> subprocess.CompletedProcess:
    return subprocess.run(["ip", *args], check=check, capture_output=True, text=True, timeout=30)


def namespace_names() -> list[str]:
    result = _ip("netns", "list", check=False)
    return [line.split()[0] for line in result.stdout.splitlines() if line.strip()]


def namespaces_unavailable() -> str | None:
    """Why this run cannot make network namespaces, or None when it can (tried for real)."""
    if os.environ.get("STACK_HOSTS") == "processes":
        return "STACK_HOSTS=processes asks for separate processes on the loopback"
    if not sys.platform.startswith("linux"):
        return f"network namespaces are Linux only (this is {sys.platform})"
    if shutil.which("ip") is None:
        return "no `ip` command (Debian package iproute2)"
    name = f"{PREFIX}{os.getpid()}-{secrets.token_hex(3)}-probe"
    try:
        made = _ip("netns", "add", name, check=False)
        if made.returncode != 0:
            return f"`ip netns add` failed: {made.stderr.strip() or made.returncode}"
        up = _ip("-n", name, "link", "set", "lo", "up", check=False)
        if up.returncode != 0:
            return f"cannot configure a namespace: {up.stderr.strip()}"
        return None
    finally:
        _ip("netns", "delete", name, check=False)


def drop_stale_namespaces() -> list[str]:
    """Delete chstack-<pid>-… namespaces whose test run is gone (their links go with them)."""
    dropped = []
    for name in namespace_names():
        parts = name[len(PREFIX) :].split("-") if name.startswith(PREFIX) else []
        if len(parts) == 3 and parts[0].isdigit() and not _pid_alive(int(parts[0])):
            _ip("netns", "delete", name, check=False)
            dropped.append(name)
    return dropped


def _used_subnets() -> set[str]:
    """The 10.213.X of every IPv4 address or route on this machine (not to be taken twice)."""
    text = _ip("-4", "addr", check=False).stdout + _ip("-4", "route", check=False).stdout
    return {
        ".".join(word.split(".")[:3])
        for word in text.split()
        if word.startswith(SUBNET + ".") and word.count(".") == 3
    }


@dataclass
class Host:
    """One namespace: ``address`` is the host's own, ``gateway`` the root side of its link
    (where the forwarders listen for it)."""

    name: str
    netns: str
    address: str
    gateway: str
    link: str  # the root side of the veth link

    def command(self, argv: list[str]) -> list[str]:
        """``argv`` run inside the namespace (``ip netns exec`` execs it: same pid)."""
        return ["ip", "netns", "exec", self.netns, *argv]


@dataclass
class Network:
    hosts: dict[str, Host] = field(default_factory=dict)
    forwarder: subprocess.Popen | None = None
    ports: dict[int, int] = field(default_factory=dict)  # service port -> forwarder port

    @classmethod
    def create(cls, names: list[str]) -> Network:
        drop_stale_namespaces()
        used = _used_subnets()
        free = [f"{SUBNET}.{x}" for x in range(1, 255) if f"{SUBNET}.{x}" not in used]
        if not free or len(names) > 60:
            raise RuntimeError("no free 10.213.X.0/24 for the stack's links")
        subnet = free[secrets.randbelow(len(free))]
        tag = secrets.token_hex(3)
        network = cls()
        try:
            for index, name in enumerate(names):
                network.hosts[name] = _make_host(name, index, subnet=subnet, tag=tag)
        except BaseException:
            network.delete()
            raise
        return network

    def forward(self, service_ports: list[int], *, log) -> dict[int, int]:
        """Start the forwarder: each service port of 127.0.0.1 reachable from every host at
        ``host.gateway:ports[service_port]``; returns that mapping."""
        self.ports = {port: free_port() for port in service_ports}
        command = [sys.executable, "-m", "tests.stack.forward", "--parent", str(os.getpid())]
        for host in self.hosts.values():
            command += ["--listen", host.gateway]
        for port, listen in self.ports.items():
            command += ["--map", f"{listen}:{port}"]
        self.forwarder = subprocess.Popen(
            command,
            cwd=REPO,
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        first = next(iter(self.hosts.values()))
        wait_until(
            lambda: self._forwarder_listens(first.gateway),
            timeout=30,
            what="the TCP forwarder to listen",
        )
        return self.ports

    def _forwarder_listens(self, address: str) -> bool:
        import socket

        if self.forwarder.poll() is not None:
            raise RuntimeError(f"the forwarder exited with {self.forwarder.returncode}")
        try:
            with socket.create_connection((address, next(iter(self.ports.values()))), 1):
                return True
        except OSError:
            return False

    def link_down(self, name: str) -> None:
        """Cut a host off: its side of the link goes down (no packet in or out)."""
        _ip("-n", self.hosts[name].netns, "link", "set", "eth0", "down")

    def delete(self) -> None:
        """Stop the forwarder and delete every namespace (their links go with them)."""
        if self.forwarder is not None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.forwarder.pid, 9)
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.forwarder.wait(timeout=10)
            self.forwarder = None
        for host in self.hosts.values():
            _ip("link", "delete", host.link, check=False)
            _ip("netns", "delete", host.netns, check=False)
        # The kernel removes a namespace's links a moment after the namespace itself.
        wait_until(
            lambda: (
                not any(
                    host.netns in namespace_names() or _link_exists(host.link)
                    for host in self.hosts.values()
                )
            ),
            timeout=15,
            what="the stack's namespaces and links to go",
        )


def _link_exists(name: str) -> bool:
    return _ip("link", "show", name, check=False).returncode == 0


def _make_host(name: str, index: int, *, subnet: str, tag: str) -> Host:
    netns = f"{PREFIX}{os.getpid()}-{tag}-{name}"
    outside = f"chs{tag}{index}"  # interface names: at most 15 characters
    inside = f"chs{tag}{index}n"
    gateway, address = f"{subnet}.{4 * index + 1}", f"{subnet}.{4 * index + 2}"
    _ip("netns", "add", netns)
    try:
        _ip("-n", netns, "link", "set", "lo", "up")
        _ip("link", "add", outside, "type", "veth", "peer", "name", inside)
        _ip("link", "set", inside, "netns", netns)
        _ip("-n", netns, "link", "set", inside, "name", "eth0")
        _ip("addr", "add", f"{gateway}/30", "dev", outside)
        _ip("link", "set", outside, "up")
        _ip("-n", netns, "addr", "add", f"{address}/30", "dev", "eth0")
        _ip("-n", netns, "link", "set", "eth0", "up")
    except BaseException:
        _ip("link", "delete", outside, check=False)
        _ip("netns", "delete", netns, check=False)
        raise
    return Host(name=name, netns=netns, address=address, gateway=gateway, link=outside)
