from django.apps import AppConfig


class SubmissionsConfig(AppConfig):
    name = "challenge_site.submissions"
    label = "submissions"
    verbose_name = "Submissions"

    def ready(self):
        from functools import partial

        from django.db import transaction
        from django.db.models.signals import post_delete
        from django.utils import timezone

        from datasets.models import Dataset
        from datasets.signals import dataset_files_changed

        from . import checks, services, standings, tasks, terms  # noqa: F401 - registers checks and tasks
        from .entrants import Entrant
        from .models import SplitResult, Submission

        def rescore_dataset(sender, dataset, **kwargs):
            services.dataset_files_changed(dataset=dataset, now=timezone.now())

        def delete_zip(sender, instance, **kwargs):
            services.delete_stored_zip(submission=instance)

        def forget_split_result(sender, instance, **kwargs):
            # Rescored, or deleted with its submission: its terms file goes once that commits.
            transaction.on_commit(partial(terms.delete, [instance.terms]))

        def forget_submission(sender, instance, **kwargs):
            # Its splits' intervals, its participant's Ladder and final entries are
            # computed again without it (if its dataset stays), once the deletion commits.
            dataset_id, splits = instance.dataset_id, instance.splits
            entrant = Entrant.of(instance)

            def recompute():
                standings.entry_deleted(dataset_id=dataset_id, entrant=entrant, splits=splits)

            transaction.on_commit(recompute, robust=True)

        dataset_files_changed.connect(
            rescore_dataset, sender=Dataset, weak=False, dispatch_uid="submissions.rescore_dataset"
        )
        # However a submission goes (admin, a deleted user or dataset), its zip goes too.
        post_delete.connect(
            delete_zip, sender=Submission, weak=False, dispatch_uid="submissions.delete_zip"
        )
        post_delete.connect(
            forget_submission,
            sender=Submission,
            weak=False,
            dispatch_uid="submissions.forget_submission",
        )
        post_delete.connect(
            forget_split_result,
            sender=SplitResult,
            weak=False,
            dispatch_uid="submissions.forget_split_result",
        )
