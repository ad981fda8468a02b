from django.apps import AppConfig


class SubmissionsConfig(AppConfig):
    name = "challenge_site.submissions"
    label = "submissions"
    verbose_name = "Submissions"

    def ready(self):
        from django.db.models.signals import post_delete
        from django.utils import timezone

        from datasets.models import Dataset
        from datasets.signals import dataset_files_changed

        from . import checks, services, tasks  # noqa: F401 - registers checks and Celery tasks
        from .models import Submission

        def rescore_dataset(sender, dataset, **kwargs):
            services.dataset_files_changed(dataset=dataset, now=timezone.now())

        def delete_zip(sender, instance, **kwargs):
            services.delete_stored_zip(submission=instance)

        dataset_files_changed.connect(
            rescore_dataset, sender=Dataset, weak=False, dispatch_uid="submissions.rescore_dataset"
        )
        # However a submission goes (admin, a deleted user or dataset), its zip goes too.
        post_delete.connect(
            delete_zip, sender=Submission, weak=False, dispatch_uid="submissions.delete_zip"
        )
