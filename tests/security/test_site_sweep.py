"""Every public URL of the site, asked about B by people who must not see B's secrets."""

import pytest
import time_machine
from django.test import Client

from tests.factories import AFTER, TEST_PHASE, VALIDATION, make_user

from .world import SECRET_DATASET, build, client_for, leaks


def _site_urls(w):
    s, d = "theirs", SECRET_DATASET
    e, h = w["entry"].pk, w["hidden"].pk
    urls = [
        "/",
        "/leaderboards/",
        "/formats/",
        "/accounts/submissions/",
        f"/challenges/{s}/",
        f"/challenges/{s}/data/",
        f"/challenges/{s}/evaluation/",
        f"/challenges/{s}/rules/",
        f"/challenges/{s}/join/",
        f"/challenges/{s}/join/?next=/x",
        f"/challenges/{s}/news/",
        f"/challenges/{s}/results/",
        f"/challenges/{s}/statistics/",
        f"/challenges/{s}/statistics/daily.svg",
        f"/challenges/{s}/statistics/datasets.svg",
        f"/challenges/{s}/statistics/outcomes.svg",
        f"/challenges/{s}/statistics/turnaround.svg",
        f"/challenges/{s}/statistics/nope.svg",
        f"/challenges/{s}/submit/",
        f"/challenges/{s}/datasets/{d}/",
        f"/challenges/{s}/datasets/{d}.zip",
        f"/challenges/{s}/datasets/{d}/croissant.json",
        f"/challenges/{s}/datasets/{d}/files/{d}_train_inputs.txt",
        f"/challenges/{s}/datasets/{d}/files/{d}_val_targets.txt",
        f"/challenges/{s}/datasets/{d}/files/{d}_test_targets.txt",
        f"/challenges/{s}/datasets/{d}/leaderboard/?split=val",
        f"/challenges/{s}/datasets/{d}/leaderboard/?split=test",
        f"/challenges/{s}/datasets/{d}/leaderboard/?split=test&view=best",
        f"/challenges/{s}/datasets/{d}/leaderboard/?split=bogus",
        f"/challenges/{s}/datasets/{d}/leaderboard.csv?split=val",
        f"/challenges/{s}/datasets/{d}/leaderboard.csv?split=test",
        f"/challenges/{s}/datasets/{d}/leaderboard/plot.svg?split=val",
        f"/challenges/{s}/datasets/{d}/leaderboard/plot.svg?split=test",
        f"/api/v1/challenges/{s}/datasets/{d}/leaderboard/?split=val",
        f"/api/v1/challenges/{s}/datasets/{d}/leaderboard/?split=test",
        f"/challenges/{s}/export/submissions.zip",
        f"/challenges/{s}/export/scores.csv",
        f"/api/v1/challenges/{s}/export/submissions.zip",
        f"/api/v1/challenges/{s}/export/scores.csv",
        f"/submissions/{e}/",
        f"/submissions/{h}/",
        f"/submissions/{e}/file.zip",
        f"/submissions/{e}/plots/val.svg",
        f"/submissions/{e}/plots/test.svg",
        # The pictures of every task by kind (multiclass, selective prediction): the same
        # rules as the split's plot, whatever the entry's task.
        *(
            f"/submissions/{e}/plots/{split}/{kind}.svg"
            for split in ("val", "test")
            for kind in (
                "top_label",
                "classwise",
                "confusion",
                "ensemble",
                "retention",
                "risk_coverage",
                "nope",
            )
        ),
        f"/challenges/{s}/datasets/{d}/leaderboard/?split=test&slice=shifted",
        f"/challenges/{s}/datasets/{d}/leaderboard.csv?split=test&slice=shifted",
        f"/api/v1/challenges/{s}/datasets/{d}/leaderboard/?split=test&slice=shifted",
        f"/api/v1/submissions/{e}/",
        f"/api/v1/submissions/{h}/",
    ]
    return urls


def _viewers(w):
    return {
        "anonymous": Client(),
        "stranger": client_for(make_user("stranger")),
        "organiser_of_a": client_for(w["me"]),
        "plain_staff": client_for(make_user("plainstaff", is_staff=True)),
    }


@pytest.mark.django_db
@pytest.mark.parametrize("when", [VALIDATION, TEST_PHASE, AFTER])
def test_draft_b_is_404_everywhere_and_leaks_nothing(when):
    with time_machine.travel(when, tick=False):
        w = build(draft_b=True)
        problems = {}
        for who, c in _viewers(w).items():
            for url in _site_urls(w):
                r = c.get(url)
                body = b"".join(r.streaming_content) if r.streaming else r.content
                text = body.decode(errors="replace") + str(dict(r.headers))
                bad = leaks(text)
                if bad or r.status_code not in (404, 302, 301) and "/challenges/theirs" in url:
                    problems[(who, url)] = (r.status_code, bad)
        assert not problems, problems


@pytest.mark.django_db
@pytest.mark.parametrize("when", [VALIDATION, TEST_PHASE, AFTER])
def test_open_b_before_publication_never_shows_test_scores_or_hidden(when):
    with time_machine.travel(when, tick=False):
        w = build(draft_b=False)
        problems = {}
        for who, c in _viewers(w).items():
            for url in _site_urls(w):
                r = c.get(url)
                body = b"".join(r.streaming_content) if r.streaming else r.content
                text = body.decode(errors="replace") + str(dict(r.headers))
                bad = [
                    x
                    for x in leaks(text)
                    if x
                    not in (
                        w["theirs"].title,
                        SECRET_DATASET,
                        "Hush-hush-method-FROBOZZ",
                        "Embargoed announcement PLUGH",
                    )
                ]
                if bad:
                    problems[(who, url)] = (r.status_code, bad)
        assert not problems, problems
