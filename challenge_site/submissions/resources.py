"""A memory cap for one scoring run, in a Celery worker's pool process only.

The cap is an address-space limit (RLIMIT_AS) of the process's current size plus the
run's allowance, set just before the run and put back right after it: an allocation past
it raises MemoryError in the run, which then ends as failed with a plain reason. It is
set only in a prefork pool process (tasks.py marks one when it starts): never in the web
process, where tasks run eagerly without a broker, nor in a worker's main process (solo
or thread pools), where it would hold for everything else the process does.
"""

import logging
import os
import resource
from collections.abc import Iterator
from contextlib import contextmanager

logger = logging.getLogger(__name__)

# Set by tasks.py (Celery's worker_process_init) in each pool process of a prefork worker.
IN_POOL_PROCESS = False


def mark_pool_process() -> None:
    global IN_POOL_PROCESS
    IN_POOL_PROCESS = True


def address_space() -> int:
    """The process's current virtual memory size in bytes (Linux: /proc/self/statm)."""
    with open("/proc/self/statm") as statm:
        pages = int(statm.read().split()[0])
    return pages * os.sysconf("SC_PAGE_SIZE")


@contextmanager
def memory_cap(allowance: int) -> Iterator[int | None]:
    """Within the block the process may grow by at most ``allowance`` bytes of address
    space; yields the allowance, or None where no cap applies (see the module)."""
    if not IN_POOL_PROCESS:
        yield None
        return
    try:
        old = resource.getrlimit(resource.RLIMIT_AS)
        soft = address_space() + allowance
        if old[0] != resource.RLIM_INFINITY:
            soft = min(soft, old[0])
        if old[1] != resource.RLIM_INFINITY:
            soft = min(soft, old[1])
        resource.setrlimit(resource.RLIMIT_AS, (soft, old[1]))
    except (OSError, ValueError) as error:
        logger.warning("no memory cap for this scoring run: %s", error)
        yield None
        return
    try:
        yield allowance
    finally:
        resource.setrlimit(resource.RLIMIT_AS, old)
