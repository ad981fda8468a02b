"""submissions.finals: which test entries count for the final ranking, the participants'
choices, and the published ranking that follows (the page and the API that take the
choices: test_final_views.py)."""

import numpy as np
import pytest
import time_machine
from django.test import Client

from challenge_site.leaderboard.models import BestEntry
from challenge_site.submissions import finals
from challenge_site.submissions.models import Score, Submission
from datasets.models import Dataset
from tests.factories import AFTER, TEST_PHASE, VALIDATION, make_dataset, make_user

N_TEST = 100
BOARD = "/challenges/demo/datasets/beta/leaderboard/"


@pytest.fixture
def beta(challenge):
    challenge.test_public_fraction = 0.4
    challenge.save()
    return make_dataset(challenge, "beta", task="classification", sizes=(40, 20, N_TEST))


def _upload(submit_zip, user, dataset, seed, *, method=None):
    p = 0.05 + 0.9 * np.random.default_rng(seed).random(N_TEST)
    files = {"beta_test_predict.txt": "".join(f"{x:.6g}\n" for x in p).encode()}
    return submit_zip(user, dataset.challenge, files, now=TEST_PHASE, method=method or f"m{seed}")


def _public(submission):
    return Score.objects.get(submission=submission, split="public", loss="nlp").value


def _post(url, data, *, user, when=TEST_PHASE, csrf=False):
    client = Client(enforce_csrf_checks=csrf)
    with time_machine.travel(when, tick=False):
        client.force_login(user)
        return client.post(url, data)


def _publish(challenge):
    with time_machine.travel(AFTER, tick=False):
        challenge.results_published = True
        challenge.save()


def _counted(user, dataset):
    return set(
        Submission.objects.filter(user=user, dataset=dataset, in_final_ranking=True).values_list(
            "pk", flat=True
        )
    )


def test_without_a_choice_the_k_best_on_the_public_part_count(beta, participant, submit_zip):
    entries = [_upload(submit_zip, participant, beta, seed) for seed in range(4)]
    best_two = sorted(entries, key=lambda s: (_public(s), s.created, s.pk))[:2]
    assert _counted(participant, beta) == {s.pk for s in best_two}


def test_a_choice_replaces_the_default_and_is_capped_at_k(beta, participant, submit_zip):
    entries = [_upload(submit_zip, participant, beta, seed) for seed in range(3)]
    worst = max(entries, key=_public)
    response = _post(f"/submissions/{worst.pk}/final/", {"final": "1"}, user=participant)
    assert response.status_code == 302
    assert _counted(participant, beta) == {worst.pk}
    others = [s for s in entries if s != worst]
    _post(f"/submissions/{others[0].pk}/final/", {"final": "1"}, user=participant)
    with time_machine.travel(TEST_PHASE, tick=False):
        client = Client()
        client.force_login(participant)
        refused = client.post(f"/submissions/{others[1].pk}/final/", {"final": "1"}, follow=True)
        page = refused.content.decode()
    assert "the most this challenge allows (2): unmark one first" in page
    assert _counted(participant, beta) == {worst.pk, others[0].pk}
    _post(f"/submissions/{worst.pk}/final/", {"final": "0"}, user=participant)
    assert _counted(participant, beta) == {others[0].pk}


def test_the_published_ranking_takes_each_participants_best_final_entry(
    beta, participant, submit_zip
):
    grace = make_user("grace")
    mine = [_upload(submit_zip, participant, beta, seed) for seed in range(3)]
    hers = [_upload(submit_zip, grace, beta, seed) for seed in (10, 11)]
    _publish(beta.challenge)
    client = Client()
    with time_machine.travel(AFTER, tick=False):
        data = client.get("/api/v1/challenges/demo/datasets/beta/leaderboard/?split=private").json()
    assert data["final_ranking"] is True
    ranked = [row for row in data["results"] if row["rank"] is not None]
    by_user = {}
    for row in ranked:
        by_user.setdefault(row["participant"], []).append(row)
    assert all(len(rows) == 1 for user, rows in by_user.items() if user)
    counted = {
        s.pk for s in mine + hers if s.pk in _counted(participant, beta) | _counted(grace, beta)
    }
    private = {
        s.pk: Score.objects.get(submission=s, split="private", loss="nlp").value
        for s in mine + hers
    }
    for entries in (mine, hers):
        pool = [s for s in entries if s.pk in counted]
        best = min(pool, key=lambda s: (private[s.pk], s.created, s.pk))
        ids = {s.pk for s in entries}
        assert [row["submission"] for row in ranked if row["submission"] in ids] == [best.pk]
    unranked = [row for row in data["results"] if row["rank"] is None]
    assert {row["submission"] for row in unranked} == {s.pk for s in mine + hers} - {
        row["submission"] for row in ranked
    }
    with time_machine.travel(AFTER, tick=False):
        page = client.get(BOARD + "?split=private").content.decode()
        results = client.get("/challenges/demo/results/").content.decode()
    assert "not ranked" in page and "Final ranking" in page
    for row in ranked:
        if row["participant"]:
            assert f"/submissions/{row['submission']}/" in results


def test_without_a_public_part_or_a_choice_every_entry_is_ranked(
    challenge, participant, submit_zip
):
    dataset = make_dataset(challenge, "beta", task="classification", sizes=(40, 20, N_TEST))
    entries = [_upload(submit_zip, participant, dataset, seed) for seed in range(3)]
    assert not finals.in_force(dataset)
    _publish(challenge)
    with time_machine.travel(AFTER, tick=False):
        data = Client().get("/api/v1/challenges/demo/datasets/beta/leaderboard/?split=test").json()
    assert data["final_ranking"] is False
    ranks = {row["submission"]: row["rank"] for row in data["results"]}
    assert all(ranks[s.pk] is not None for s in entries)
    assert sorted(ranks.values()) == list(range(1, len(ranks) + 1))


def test_validation_entries_cannot_be_final(beta, participant, submit_zip):
    files = {"beta_val_predict.txt": b"0.5\n" * 20}
    entry = submit_zip(participant, beta.challenge, files, now=VALIDATION)
    _post(f"/submissions/{entry.pk}/final/", {"final": "1"}, user=participant, when=TEST_PHASE)
    entry.refresh_from_db()
    assert entry.final is False


def test_a_moderated_final_entry_frees_its_place_and_can_be_unmarked(
    beta, participant, staff, submit_zip
):
    from challenge_site.submissions import moderation

    entries = [_upload(submit_zip, participant, beta, seed) for seed in range(4)]
    for entry in entries[:2]:
        _post(f"/submissions/{entry.pk}/final/", {"final": "1"}, user=participant)
    with time_machine.travel(TEST_PHASE, tick=False):
        moderation.hide(
            submissions=Submission.objects.filter(pk__in=[e.pk for e in entries[:2]]),
            reason="probing",
            user=staff,
            now=TEST_PHASE,
        )
    # Neither hidden entry counts nor holds a place: the K best listed ones count again.
    listed = sorted(entries[2:], key=lambda s: (_public(s), s.created, s.pk))
    assert _counted(participant, beta) == {s.pk for s in listed}
    _post(f"/submissions/{entries[2].pk}/final/", {"final": "1"}, user=participant)
    assert _counted(participant, beta) == {entries[2].pk}
    _post(f"/submissions/{entries[0].pk}/final/", {"final": "0"}, user=participant)
    entries[0].refresh_from_db()
    assert entries[0].final is False


def _kept_and_recomputed(dataset):
    from challenge_site.leaderboard import best

    def fields(row):
        return (row.split, row.loss, row.final, row.participant, row.submission_id, row.value)

    kept = sorted(fields(row) for row in BestEntry.objects.filter(dataset=dataset))
    return kept, sorted(fields(row) for row in best.recompute(dataset))


def test_a_choice_moves_the_published_ranking_and_the_kept_best_rows(beta, participant, submit_zip):
    """The final boards read the kept best-per-participant table: a choice made in the
    test phase must reach it, or the published ranking shows the default entries."""
    entries = [_upload(submit_zip, participant, beta, seed) for seed in range(3)]
    private = {
        s.pk: Score.objects.get(submission=s, split="private", loss="nlp").value for s in entries
    }
    chosen = max(entries, key=lambda s: (private[s.pk], s.pk))  # the worst privately
    generation = type(beta).objects.get(pk=beta.pk).generation
    assert _post(f"/submissions/{chosen.pk}/final/", {"final": "1"}, user=participant).status_code
    assert _counted(participant, beta) == {chosen.pk}
    kept, recomputed = _kept_and_recomputed(beta)
    assert kept == recomputed
    assert type(beta).objects.get(pk=beta.pk).generation > generation  # cached plots stale
    _publish(beta.challenge)
    with time_machine.travel(AFTER, tick=False):
        data = Client().get("/api/v1/challenges/demo/datasets/beta/leaderboard/?split=private")
    ranked = [row["submission"] for row in data.json()["results"] if row["rank"] is not None]
    assert [pk for pk in ranked if pk in private] == [chosen.pk]


def test_a_new_k_reaches_the_kept_best_rows(beta, participant, submit_zip):
    grace = make_user("grace")
    for user, seeds in ((participant, range(4)), (grace, range(10, 14))):
        for seed in seeds:
            _upload(submit_zip, user, beta, seed)
    before = _counted(participant, beta) | _counted(grace, beta)
    beta.challenge.final_entries = 1
    beta.challenge.save()
    finals.refresh_dataset(dataset=beta)
    assert _counted(participant, beta) | _counted(grace, beta) < before
    kept, recomputed = _kept_and_recomputed(beta)
    assert kept == recomputed


def test_a_new_k_moves_the_generation_once(beta, participant, submit_zip):
    """refresh_dataset rewrites each participant's final rows but moves the dataset's
    generation (the key of its cached plots) once, not once per participant."""
    grace = make_user("grace")
    for user, seeds in ((participant, range(3)), (grace, range(10, 13))):
        for seed in seeds:
            _upload(submit_zip, user, beta, seed)
    generation = Dataset.objects.get(pk=beta.pk).generation
    beta.challenge.final_entries = 1
    beta.challenge.save()
    finals.refresh_dataset(dataset=beta)
    assert Dataset.objects.get(pk=beta.pk).generation == generation + 1
    kept, recomputed = _kept_and_recomputed(beta)
    assert kept == recomputed


def test_whether_finals_are_in_force_is_read_from_their_partial_index(beta):
    """finals.in_force asks at every results page and final board whether any entry of the
    dataset is final: answered from submission_final_idx (the few chosen entries), never by
    a scan of the dataset's submissions (0.1 s at a million, where none was final)."""
    from django.db import connection, transaction

    assert "submission_final_idx" in {index.name for index in Submission._meta.indexes}
    query = Submission.objects.filter(dataset=beta, final=True).query.exists()
    sql, params = query.get_compiler(connection=connection).as_sql()
    with transaction.atomic(), connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            # (a few test rows would make a sequential scan cheapest)
            cursor.execute("SET LOCAL enable_seqscan = off")
            cursor.execute("EXPLAIN " + sql, params)
        else:
            cursor.execute("EXPLAIN QUERY PLAN " + sql, params)
        text = " ".join(str(part) for row in cursor.fetchall() for part in row)
    assert "submission_final_idx" in text, text


def _entrants(*users):
    from challenge_site.submissions.entrants import Entrant

    return [Entrant.for_user(user_id=user.pk, team_id=None) for user in users]


def test_a_batch_refreshes_each_participants_finals_in_a_few_queries(
    beta, submit_zip, django_assert_num_queries
):
    """One refresh for three participants (a batch of scoring runs): one chose an entry,
    two did not (their K best on the public part count); each gets their own answer."""
    ada, bob, cy = (make_user(name) for name in ("ada", "bob", "cy"))
    uploads = {
        user: [_upload(submit_zip, user, beta, seed) for seed in range(3 * i, 3 * i + 3)]
        for i, user in enumerate((ada, bob, cy))
    }
    chosen = uploads[ada][1]
    Submission.objects.filter(pk=chosen.pk).update(final=True)
    Submission.objects.filter(dataset=beta).update(in_final_ranking=True)
    k = beta.challenge.final_entries
    with django_assert_num_queries(5):  # the chosen; bob's and cy's K best; two UPDATEs
        finals.refresh_many(dataset=beta, entrants=_entrants(ada, bob, cy))
    assert _counted(ada, beta) == {chosen.pk}
    for user in (bob, cy):
        best = sorted(uploads[user], key=lambda s: (_public(s), s.created, s.pk))[:k]
        assert _counted(user, beta) == {s.pk for s in best}


def test_without_a_public_part_a_batch_counts_every_test_entry_in_four_queries(
    challenge, submit_zip, django_assert_num_queries
):
    dataset = make_dataset(challenge, "beta", task="classification", sizes=(40, 20, N_TEST))
    users = [make_user(name) for name in ("ada", "bob", "cy", "dan")]
    tests = {
        user: {_upload(submit_zip, user, dataset, seed).pk for seed in (1, 2)} for user in users
    }
    files = {"beta_val_predict.txt": b"0.5\n" * 20}
    validation = submit_zip(users[0], challenge, files, now=VALIDATION)
    Submission.objects.filter(dataset=dataset).update(in_final_ranking=True)
    Submission.objects.filter(pk=next(iter(tests[users[1]]))).update(in_final_ranking=False)
    with django_assert_num_queries(4):  # the chosen (none), the test entries, two UPDATEs
        finals.refresh_many(dataset=dataset, entrants=_entrants(*users))
    for user in users:
        assert _counted(user, dataset) == tests[user]
    validation.refresh_from_db()
    assert validation.in_final_ranking is False
