from django.urls import path

from . import views

urlpatterns = [
    path("<slug:name>/", views.dataset_detail, name="dataset_detail"),
    path("<slug:name>.zip", views.dataset_zip, name="dataset_zip"),
]
