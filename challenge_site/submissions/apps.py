from django.apps import AppConfig


class SubmissionsConfig(AppConfig):
    name = "challenge_site.submissions"
    label = "submissions"
    verbose_name = "Submissions"

    def ready(self):
        from django.utils import timezone

        from datasets.models import Dataset
        from datasets.signals import dataset_files_changed

        from . import services

        def rescore_dataset(sender, dataset, **kwargs):
            services.dataset_files_changed(dataset=dataset, now=timezone.now())

        dataset_files_changed.connect(
            rescore_dataset, sender=Dataset, weak=False, dispatch_uid="submissions.rescore_dataset"
        )
