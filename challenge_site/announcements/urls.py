from django.urls import path

from . import views

urlpatterns = [
    path("challenges/<slug:slug>/news/", views.challenge_news, name="challenge_news"),
    path(
        "announcements/unsubscribe/<str:token>/",
        views.unsubscribe,
        name="announcement_unsubscribe",
    ),
]
