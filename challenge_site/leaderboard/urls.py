from django.urls import path

from . import api, views

BOARD = "challenges/<slug:slug>/datasets/<slug:name>/leaderboard"

urlpatterns = [
    path("leaderboards/", views.index, name="leaderboards"),
    path("challenges/<slug:slug>/results/", views.results, name="challenge_results"),
    path(f"{BOARD}/", views.leaderboard, name="leaderboard"),
    path(f"{BOARD}.csv", views.leaderboard_csv, name="leaderboard_csv"),
    path(f"{BOARD}/plot.svg", views.leaderboard_plot, name="leaderboard_plot"),
    path(f"api/v1/{BOARD}/", api.api_leaderboard, name="api_leaderboard"),
]
