"""challenge_site.context_processors: the site's name, in every template's context."""

from challenge_site.context_processors import site


def test_the_site_name_comes_from_the_settings(rf, settings):
    settings.SITE_NAME = "Uncertainty Games"
    assert site(rf.get("/")) == {"site_name": "Uncertainty Games"}


def test_the_pages_show_it_in_their_titles(client, db, settings):
    settings.SITE_NAME = "Uncertainty Games"
    page = client.get("/").content.decode()
    assert "<title>Uncertainty Games</title>" in page
