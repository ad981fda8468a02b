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

        from challenge_site.challenges import signals as challenge_signals
        from challenge_site.challenges.models import Challenge
        from challenge_site.teams import signals as team_signals
        from challenge_site.teams.models import Team
        from datasets.models import Dataset
        from datasets.signals import dataset_files_changed, losses_changed, ranking_loss_changed

        from . import checks, receivers, services, standings, tasks, team_entries, terms  # noqa: F401 - registers checks and tasks
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

        challenge_signals.exposure_counted.connect(
            receivers.exposure_counted, sender=Challenge, dispatch_uid="submissions.exposure"
        )
        challenge_signals.options_changed.connect(
            receivers.options_changed, sender=Challenge, dispatch_uid="submissions.options"
        )
        ranking_loss_changed.connect(
            receivers.ranking_loss_changed, sender=Dataset, dispatch_uid="submissions.ranking"
        )
        losses_changed.connect(
            receivers.losses_changed, sender=Dataset, dispatch_uid="submissions.losses"
        )
        # A join: the joiner's quota rows locked, the limits counted, their entries moved.
        team_signals.joiner_locking.connect(
            team_entries.lock_quota_rows, sender=Team, dispatch_uid="submissions.join_lock"
        )
        team_signals.joining.connect(
            team_entries.check_limits, sender=Team, dispatch_uid="submissions.join_limits"
        )
        team_signals.joined.connect(
            team_entries.take_entries, sender=Team, dispatch_uid="submissions.join_entries"
        )
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
