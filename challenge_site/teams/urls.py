from django.urls import path

from . import api, views

urlpatterns = [
    path("challenges/<slug:slug>/team/", views.team_page, name="team_page"),
    path("challenges/<slug:slug>/team/join/<str:code>/", views.join_by_link, name="team_join"),
    path("api/v1/challenges/<slug:slug>/team/", api.api_team, name="api_team"),
]
