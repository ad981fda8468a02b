from django.urls import reverse


def test_healthz_answers_after_asking_the_database(client, db, django_assert_num_queries):
    with django_assert_num_queries(1):
        response = client.get(reverse("healthz"))
    assert response.status_code == 200 and response.content == b"ok"
