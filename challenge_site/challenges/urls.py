from django.urls import include, path

from . import participation_views, preview, views

urlpatterns = [
    path("", views.home, name="home"),
    path("formats/", views.file_formats, name="file_formats"),
    path("challenges/<slug:slug>/", views.challenge_detail, name="challenge_detail"),
    path("challenges/<slug:slug>/join/", participation_views.join, name="challenge_join"),
    path("challenges/<slug:slug>/data/", views.challenge_data, name="challenge_data"),
    path(
        "challenges/<slug:slug>/evaluation/",
        views.challenge_evaluation,
        name="challenge_evaluation",
    ),
    path("challenges/<slug:slug>/rules/", views.challenge_rules, name="challenge_rules"),
    path("challenges/<slug:slug>/preview/", preview.toggle_preview, name="challenge_preview"),
    path("preview/end/", preview.end_previews, name="end_previews"),
    path("challenges/<slug:slug>/datasets/", include("datasets.urls")),
]
