from django.urls import path

from . import api, export_views, statistics_views, views

BOARD = "challenges/<slug:slug>/datasets/<slug:name>/leaderboard"

urlpatterns = [
    path("leaderboards/", views.index, name="leaderboards"),
    path("challenges/<slug:slug>/results/", views.results, name="challenge_results"),
    path(
        "challenges/<slug:slug>/statistics/",
        statistics_views.challenge_statistics,
        name="challenge_statistics",
    ),
    path(
        "challenges/<slug:slug>/statistics/<slug:kind>.svg",
        statistics_views.statistics_plot,
        name="challenge_statistics_plot",
    ),
    path(f"{BOARD}/", views.leaderboard, name="leaderboard"),
    path(f"{BOARD}.csv", export_views.leaderboard_csv, name="leaderboard_csv"),
    path(f"{BOARD}.json", export_views.leaderboard_json, name="leaderboard_json"),
    path(f"{BOARD}/export/", export_views.leaderboard_export, name="leaderboard_export"),
    path(f"{BOARD}/plot.svg", views.leaderboard_plot, name="leaderboard_plot"),
    path(f"{BOARD}/forest.svg", views.leaderboard_forest, name="leaderboard_forest"),
    path(f"api/v1/{BOARD}/", api.api_leaderboard, name="api_leaderboard"),
]
