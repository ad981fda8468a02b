"""The challenges and their datasets as the API lists them (under /api/v1/challenges/)."""

from django.urls import path

from . import api

urlpatterns = [
    path("", api.api_challenges, name="api_challenges"),
    path("<slug:slug>/", api.api_challenge, name="api_challenge"),
    path("<slug:slug>/datasets/<slug:name>.zip", api.api_dataset_zip, name="api_dataset_zip"),
]
