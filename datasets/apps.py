from django.apps import AppConfig


class DatasetsConfig(AppConfig):
    name = "datasets"
    verbose_name = "Datasets"

    def ready(self):
        from challenge_site.challenges import signals
        from challenge_site.challenges.models import Challenge

        from . import receivers

        signals.exposure_counted.connect(
            receivers.exposure_counted, sender=Challenge, dispatch_uid="datasets.exposure"
        )
