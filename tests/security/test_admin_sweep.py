"""An organiser of A walks every admin page with every parameter trick, looking for B."""

import pytest
import time_machine
from django.urls import reverse

from tests.factories import AFTER, make_user

from .world import build, client_for, leaks


def _admin_urls(w):
    b = w["theirs"].pk
    urls = []
    for name in [
        "challenges_challenge",
        "challenges_challengeevent",
        "challenges_participant",
        "datasets_dataset",
        "submissions_submission",
        "submissions_moderationevent",
        "announcements_announcement",
    ]:
        cl = reverse(f"admin:{name}_changelist")
        urls += [
            cl,
            cl + f"?challenge={b}",
            cl + f"?challenge__id__exact={b}",
            cl + f"?challenge__pk={b}",
            cl + "?q=quokka",
            cl + "?q=Zanzibar",
            cl + "?q=victim",
            cl + "?_facets=1",
            cl + f"?challenge={b}&_facets=1",
            cl + "?all=1",
            cl + "?_popup=1&_to_field=id",
            cl + f"?dataset={w['secret'].pk}",
            cl + f"?participant={w['victim'].pk}",
            cl + f"?dataset__challenge={b}",
            cl + f"?dataset__challenge__id__exact={b}",
            cl + f"?submission__dataset__challenge={b}",
            cl + f"?user={w['victim'].pk}",
        ]
    # autocomplete for every relation
    for app, model, field in [
        ("datasets", "dataset", "challenge"),
        ("announcements", "announcement", "challenge"),
        ("challenges", "participant", "challenge"),
        ("challenges", "participant", "user"),
        ("submissions", "submission", "dataset"),
        ("submissions", "submission", "user"),
        ("challenges", "challenge", "organisers"),
        ("challenges", "challenge", "organiser_groups"),
        ("submissions", "moderationevent", "submission"),
    ]:
        for term in ("", "quokka", "Zanzibar", "victim"):
            urls.append(
                reverse("admin:autocomplete")
                + f"?app_label={app}&model_name={model}&field_name={field}&term={term}"
            )
    # change / history / delete by id
    for name, pk in [
        ("challenges_challenge", b),
        ("datasets_dataset", w["secret"].pk),
        ("submissions_submission", w["entry"].pk),
        ("submissions_submission", w["hidden"].pk),
        ("announcements_announcement", w["ann"].pk),
    ]:
        for view in ("change", "history", "delete"):
            urls.append(reverse(f"admin:{name}_{view}", args=[pk]))
    urls += [
        reverse("admin:index"),
        reverse("admin:app_list", args=["challenges"]),
        reverse("admin:app_list", args=["auth"]),
        reverse("admin:auth_user_changelist"),
        reverse("admin:auth_user_change", args=[w["victim"].pk]),
        reverse("admin:auth_group_changelist"),
        reverse("admin:jsi18n"),
        reverse("admin:challenges_challenge_add"),
        reverse("admin:datasets_dataset_add") + f"?challenge={b}",
        reverse("admin:announcements_announcement_add") + f"?challenge={b}",
        reverse("admin:challenges_challenge_change", args=[w["mine"].pk]),
        reverse("admin:challenges_challenge_open", args=[b]),
        reverse("admin:challenges_challenge_publish", args=[b]),
        reverse("admin:challenges_challenge_withdraw", args=[b]),
        reverse("admin:submissions_submission_moderate", args=[w["hidden"].pk, "restore"]),
        reverse("admin:submissions_submission_moderate", args=[w["entry"].pk, "hide"]),
    ]
    return urls


@pytest.mark.django_db
@pytest.mark.parametrize("who", ["organiser_of_a", "plain_staff"])
@pytest.mark.parametrize("draft_b", [True, False])
def test_organiser_of_a_sees_nothing_of_b_in_any_admin_page(draft_b, who):
    from django.contrib.contenttypes.models import ContentType

    from challenge_site.challenges.models import Challenge

    with time_machine.travel(AFTER, tick=False):
        w = build(draft_b=draft_b)
        user = w["me"] if who == "organiser_of_a" else make_user("plainstaff", is_staff=True)
        c = client_for(user)
        urls = _admin_urls(w)
        ct = ContentType.objects.get_for_model(Challenge).pk
        urls.append(f"/admin/r/{ct}/{w['theirs'].pk}/")
        found = {}
        for url in urls:
            r = c.get(url, follow=True)
            body = r.content.decode(errors="replace")
            bad = leaks(body)
            if bad:
                found[url] = (r.status_code, bad)
        assert not found, found
        if who == "organiser_of_a":  # the sweep did reach the organiser's own rows
            page = c.get(reverse("admin:challenges_challenge_changelist")).content.decode()
            assert "Mine" in page
        else:  # staff organising nothing: no module, no user list, no e-mail
            index = c.get(reverse("admin:index")).content.decode()
            assert "Challenges" not in index and "Users" not in index
            assert c.get(reverse("admin:auth_user_changelist")).status_code == 403
