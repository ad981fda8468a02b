"""submissions.resources: a memory cap for one scoring run, in a Celery worker's pool
process only (never in a web process running tasks eagerly)."""

import resource

from celery.signals import worker_process_init

from challenge_site.submissions import resources


def test_the_address_space_cap_applies_only_in_a_pool_process(monkeypatch):
    before = resource.getrlimit(resource.RLIMIT_AS)
    with resources.memory_cap(100 * 1024 * 1024) as cap:
        assert cap is None  # eager, in this process: no cap
        assert resource.getrlimit(resource.RLIMIT_AS) == before
    monkeypatch.setattr(resources, "IN_POOL_PROCESS", True)
    with resources.memory_cap(100 * 1024 * 1024) as cap:
        assert cap == 100 * 1024 * 1024
        soft, hard = resource.getrlimit(resource.RLIMIT_AS)
        assert hard == before[1]
        assert 0 < soft - resources.address_space() <= cap
    assert resource.getrlimit(resource.RLIMIT_AS) == before


def test_a_pool_process_is_marked_when_it_starts(monkeypatch):
    monkeypatch.setattr(resources, "IN_POOL_PROCESS", False)
    worker_process_init.send(sender=None)  # what Celery's prefork pool sends in a child
    assert resources.IN_POOL_PROCESS is True
