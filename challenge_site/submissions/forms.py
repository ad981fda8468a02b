from django import forms
from django.forms.utils import ErrorList

from .models import Status
from .uploads import oversized, too_large_message

INFER = ""


class ReportErrorList(ErrorList):
    """An upload's problems, one per item: long lines wrap in their box (site.css,
    ``.errorlist.report``)."""

    def __init__(self, initlist=None, error_class=None, **kwargs):
        super().__init__(initlist, f"report {error_class or ''}".strip(), **kwargs)


class SubmissionForm(forms.Form):
    dataset = forms.ChoiceField(
        required=False,
        help_text="Leave it to be read from the file names (NAME_val_predict.txt is for NAME).",
    )
    method = forms.CharField(max_length=200, help_text="A short name, shown in the result tables.")
    authors = forms.CharField(max_length=300, required=False)
    description = forms.CharField(
        widget=forms.Textarea(attrs={"rows": 4}),
        max_length=5000,
        required=False,
        help_text="How the predictions were made; shown on the submission's page.",
    )
    file = forms.FileField(
        label="Zip file",
        help_text="NAME_train_predict.txt, NAME_val_predict.txt and/or NAME_test_predict.txt, "
        "at the top of the zip or in one folder.",
        widget=forms.ClearableFileInput(attrs={"accept": ".zip,application/zip"}),
    )

    def __init__(self, *args, challenge, request=None, **kwargs):
        kwargs.setdefault("error_class", ReportErrorList)
        super().__init__(*args, **kwargs)
        self.request = request
        names = [dataset.name for dataset in challenge.datasets.all()]
        self.fields["dataset"].choices = [(INFER, "— from the file names —")] + [
            (name, name) for name in names
        ]

    def full_clean(self):
        super().full_clean()
        # A skipped oversized file leaves the field empty: say why rather than "required".
        if self.request is not None and oversized(self.request, "file") and self.errors.get("file"):
            self.errors["file"] = self.error_class([too_large_message()])


class MySubmissionsFilter(forms.Form):
    """The filters of "My submissions" (GET): a bad value is a field error, shown."""

    WITHDRAWN = "withdrawn"

    status = forms.ChoiceField(required=False, label="Status")
    challenge = forms.ChoiceField(required=False, label="Challenge")
    hide_invalid = forms.BooleanField(required=False, label="Hide invalid attempts")

    def __init__(self, *args, challenges, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["status"].choices = [
            ("", "Any"),
            *Status.choices,
            (self.WITHDRAWN, "Withdrawn"),
        ]
        self.fields["challenge"].choices = [("", "Any")] + [
            (slug, title) for slug, title in challenges
        ]

    def apply(self, submissions):
        """``submissions`` narrowed by the valid filters (all of them when none is)."""
        if not self.is_valid():
            return submissions
        data = self.cleaned_data
        if data["status"] == self.WITHDRAWN:
            submissions = submissions.filter(withdrawn_at__isnull=False)
        elif data["status"]:
            submissions = submissions.filter(status=data["status"])
        if data["challenge"]:
            submissions = submissions.filter(dataset__challenge__slug=data["challenge"])
        if data["hide_invalid"]:
            submissions = submissions.exclude(status=Status.INVALID)
        return submissions
