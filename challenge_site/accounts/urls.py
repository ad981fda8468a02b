from django.urls import include, path

from . import views

urlpatterns = [
    path("signup/", views.signup, name="signup"),
    path("profile/", views.profile, name="profile"),
    path("profile/token/", views.token_regenerate, name="token_regenerate"),
    # login, logout, password change and reset, with the templates in templates/registration/
    path("", include("django.contrib.auth.urls")),
]
