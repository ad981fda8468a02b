from django.contrib import admin
from django.urls import include, path

from challenge_site.accounts.views import api_me

from .api_schema import api_docs, api_schema
from .views import favicon, healthz

admin.site.site_header = admin.site.site_title = "Challenge administration"

urlpatterns = [
    path("", include("challenge_site.challenges.urls")),
    path("api/v1/schema/", api_schema, name="api_schema"),
    path("api/docs/", api_docs, name="api_docs"),
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

# A JSON 404 under /api/ for paths no route matches (views.not_found).
handler404 = "challenge_site.views.not_found"
