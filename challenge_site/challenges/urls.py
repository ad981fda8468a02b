from django.urls import include, path

from . import views

urlpatterns = [
    path("", views.home, name="home"),
    path("formats/", views.file_formats, name="file_formats"),
    path("challenges/<slug:slug>/", views.challenge_detail, name="challenge_detail"),
    path("challenges/<slug:slug>/datasets/", include("datasets.urls")),
]
