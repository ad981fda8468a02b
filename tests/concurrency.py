"""Running jobs at the same moment from threads, for the PostgreSQL concurrency tests."""

import threading

from django.db import connection


def run_at_once(jobs, *, join_timeout: float) -> list[BaseException]:
    """Start every job in its own thread, released together by a barrier; the errors
    they raised (each thread closes its own database connection)."""
    barrier = threading.Barrier(len(jobs))
    failures: list[BaseException] = []

    def run(job) -> None:
        try:
            barrier.wait(timeout=30)
            job()
        except BaseException as error:  # reported in the test's thread
            failures.append(error)
        finally:
            connection.close()  # each thread had its own connection

    threads = [threading.Thread(target=run, args=(job,)) for job in jobs]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=join_timeout)
    return failures
