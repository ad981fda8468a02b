"""challenge_site.views: the health check and /favicon.ico."""

from django.contrib.staticfiles import finders
from django.templatetags.static import static
from django.urls import reverse


def test_favicon_ico_leads_to_the_sites_svg_icon(client, db):
    response = client.get("/favicon.ico")
    assert response.status_code == 302
    assert response["Location"] == static("favicon.svg")
    assert "max-age=86400" in response["Cache-Control"]
    icon = finders.find("favicon.svg")
    assert icon is not None
    with open(icon, "rb") as svg:
        assert svg.read().startswith(b'<svg xmlns="http://www.w3.org/2000/svg"')


def test_favicon_ico_is_read_only(client, db):
    assert client.post("/favicon.ico").status_code == 405


def test_every_page_links_the_icon(client, db):
    page = client.get("/").content.decode()
    assert f'<link rel="icon" href="{static("favicon.svg")}" type="image/svg+xml">' in page


def test_healthz_answers_after_asking_the_database(client, db, django_assert_num_queries):
    with django_assert_num_queries(1):
        response = client.get(reverse("healthz"))
    assert response.status_code == 200 and response.content == b"ok"
