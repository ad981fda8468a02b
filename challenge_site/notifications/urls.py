from django.urls import path

from . import views

urlpatterns = [
    path(
        "notifications/unsubscribe/<str:token>/",
        views.unsubscribe,
        name="notification_unsubscribe",
    ),
]
