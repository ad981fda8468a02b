from django.contrib import admin
from django.urls import include, path

from challenge_site.accounts.views import api_me

from .views import favicon, healthz

admin.site.site_header = admin.site.site_title = "Challenge administration"

urlpatterns = [
    path("", include("challenge_site.challenges.urls")),
    path("api/v1/challenges/", include("datasets.api_urls")),
    path("", include("challenge_site.submissions.urls")),
    path("", include("challenge_site.teams.urls")),
    path("", include("challenge_site.leaderboard.urls")),
    path("", include("challenge_site.announcements.urls")),
    path("", include("challenge_site.notifications.urls")),
    path("accounts/", include("challenge_site.accounts.urls")),
    path("api/me/", api_me, name="api_me"),
    path("admin/", admin.site.urls),
    path("healthz", healthz, name="healthz"),
    path("favicon.ico", favicon, name="favicon"),
]
