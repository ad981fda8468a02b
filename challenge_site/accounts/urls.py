from django.urls import include, path

from . import views

urlpatterns = [
    path("signup/", views.signup, name="signup"),
    path("profile/", views.profile, name="profile"),
    path("profile/token/", views.token_regenerate, name="token_regenerate"),
    # Django's view, limited per address; found before the one of django.contrib.auth.urls.
    path("password_reset/", views.password_reset, name="password_reset"),
    # Django's view, limited per address (django-axes locks each user name and address pair).
    path("login/", views.login_view, name="login"),
    # login, logout, password change and reset, with the templates in templates/registration/
    path("", include("django.contrib.auth.urls")),
]
