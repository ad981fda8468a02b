from django.urls import path, register_converter

from challenge_site.challenges.converters import SplitConverter

from . import api, bulk_views, final_views, views, withdrawal

register_converter(SplitConverter, "split")

urlpatterns = [
    path("challenges/<slug:slug>/submit/", views.submit, name="submit"),
    path("submissions/<int:pk>/", views.submission_detail, name="submission_detail"),
    path(
        "submissions/<int:pk>/plots/<split:split>.svg",
        views.submission_plot,
        name="submission_plot",
    ),
    path(
        "submissions/<int:pk>/plots/<split:split>/<slug:kind>.svg",
        views.submission_plot,
        name="submission_picture",
    ),
    path("submissions/<int:pk>/file.zip", views.submission_file, name="submission_file"),
    path("submissions/<int:pk>/final/", final_views.choose_final, name="submission_final"),
    path(
        "api/v1/submissions/<int:pk>/final/",
        final_views.api_choose_final,
        name="api_submission_final",
    ),
    path("submissions/<int:pk>/withdraw/", withdrawal.withdraw_view, name="submission_withdraw"),
    path(
        "api/v1/submissions/<int:pk>/withdraw/",
        withdrawal.api_withdraw,
        name="api_submission_withdraw",
    ),
    path("accounts/submissions/", views.my_submissions, name="my_submissions"),
    path("api/v1/submissions/", api.api_submissions, name="api_submission_create"),
    path("api/v1/submissions/<int:pk>/", api.api_submission, name="api_submission"),
    path(
        "challenges/<slug:slug>/export/submissions.zip",
        bulk_views.export_submissions,
        name="export_submissions",
    ),
    path(
        "challenges/<slug:slug>/export/scores.csv", bulk_views.export_scores, name="export_scores"
    ),
    path(
        "api/v1/challenges/<slug:slug>/export/submissions.zip",
        bulk_views.api_export_submissions,
        name="api_export_submissions",
    ),
    path(
        "api/v1/challenges/<slug:slug>/export/scores.csv",
        bulk_views.api_export_scores,
        name="api_export_scores",
    ),
]
