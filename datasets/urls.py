from django.urls import path

from . import views

urlpatterns = [
    path("<slug:name>/", views.dataset_detail, name="dataset_detail"),
    path("<slug:name>.zip", views.dataset_zip, name="dataset_zip"),
    path("<slug:name>/croissant.json", views.dataset_croissant, name="dataset_croissant"),
    path("<slug:name>/files/<str:filename>", views.dataset_file, name="dataset_file"),
]
