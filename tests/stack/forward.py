"""A small TCP forwarder: the stack's "hosts" (network namespaces) reach the services of
this machine's loopback (PostgreSQL, Redis, the S3 server) through it.

It runs in the root namespace as a child process of the suite (``python -m
tests.stack.forward``), listens on the root side of the suite's veth links and forwards
each connection to a port on 127.0.0.1, nowhere else. Bounded: at most ``--max-connections``
connections at once (more wait in the accept queue), ``--connect-timeout`` to reach the
service, ``--idle-timeout`` without a byte either way ends a connection, and the process
ends by itself when its parent (the test run) is gone.

Usage: python -m tests.stack.forward --listen 10.213.7.1 --listen 10.213.7.5 \
           --map 40001:5432 --map 40002:6379 [--max-connections 256]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import sys

UPSTREAM = "127.0.0.1"
CHUNK = 256 * 1024


async def _pipe(reader, writer, idle_timeout: float) -> None:
    try:
        while True:
            data = await asyncio.wait_for(reader.read(CHUNK), timeout=idle_timeout)
            if not data:
                break
            writer.write(data)
            await writer.drain()
    except (TimeoutError, ConnectionError, OSError):
        pass
    finally:
        # Half-close where possible (a client that sent everything still gets its answer);
        # the other direction closes the socket when it ends.
        with contextlib.suppress(OSError, RuntimeError):
            if writer.can_write_eof():
                writer.write_eof()


async def _close(writer) -> None:
    writer.close()
    with contextlib.suppress(OSError, ConnectionError):
        await writer.wait_closed()


def _handler(port: int, slots: asyncio.Semaphore, args):
    async def handle(client_reader, client_writer):
        async with slots:
            try:
                upstream_reader, upstream_writer = await asyncio.wait_for(
                    asyncio.open_connection(UPSTREAM, port), timeout=args.connect_timeout
                )
            except (TimeoutError, OSError):
                await _close(client_writer)
                return
            try:
                await asyncio.gather(
                    _pipe(client_reader, upstream_writer, args.idle_timeout),
                    _pipe(upstream_reader, client_writer, args.idle_timeout),
                )
            finally:
                await _close(upstream_writer)
                await _close(client_writer)

    return handle


async def _watch_parent(parent: int) -> None:
    """Stop when the test run that started this process is gone (killed: no clean-up)."""
    while os.getppid() == parent:
        await asyncio.sleep(1)


async def serve(args) -> None:
    slots = asyncio.Semaphore(args.max_connections)
    servers = []
    for mapping in args.map:
        listen_port, upstream_port = (int(part) for part in mapping.split(":"))
        for address in args.listen:
            servers.append(
                await asyncio.start_server(
                    _handler(upstream_port, slots, args), address, listen_port, backlog=128
                )
            )
    print("forwarding", " ".join(args.map), "on", " ".join(args.listen), flush=True)
    try:
        await _watch_parent(args.parent)
    finally:
        for server in servers:
            server.close()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.stack.forward")
    parser.add_argument("--listen", action="append", required=True, help="address to bind")
    parser.add_argument("--map", action="append", required=True, help="LISTEN_PORT:PORT")
    parser.add_argument("--max-connections", type=int, default=256)
    parser.add_argument("--connect-timeout", type=float, default=5.0)
    # Longer than Django's CONN_MAX_AGE (600 s): a kept database connection is not cut.
    parser.add_argument("--idle-timeout", type=float, default=900.0)
    parser.add_argument("--parent", type=int, default=os.getppid())
    args = parser.parse_args(argv)
    asyncio.run(serve(args))
    return 0


if __name__ == "__main__":
    sys.exit(main())
