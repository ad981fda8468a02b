from django import forms
from django.contrib.auth.forms import UserCreationForm
from django.contrib.auth.models import User
from django.db import transaction

from .models import Profile


class SignUpForm(UserCreationForm):
    email = forms.EmailField(help_text="Used only to reset your password.")
    display_name = forms.CharField(
        max_length=100, required=False, help_text="Shown in result tables; your user name if empty."
    )
    affiliation = forms.CharField(max_length=200, required=False)

    class Meta(UserCreationForm.Meta):
        model = User
        fields = ("username", "email")

    def clean_email(self):
        email = self.cleaned_data["email"]
        if User.objects.filter(email__iexact=email).exists():
            raise forms.ValidationError("An account with this e-mail address already exists.")
        return email

    @transaction.atomic
    def save(self, commit=True):
        user = super().save(commit=True)
        Profile.objects.create(
            user=user,
            display_name=self.cleaned_data["display_name"],
            affiliation=self.cleaned_data["affiliation"],
        )
        return user


class ProfileForm(forms.ModelForm):
    # Opt-in e-mails (challenge_site.notifications), shown in their own fieldset.
    NOTIFICATIONS = ("email_on_scoring_finished", "email_on_results_published")

    class Meta:
        model = Profile
        fields = (
            "display_name",
            "affiliation",
            "email_on_scoring_finished",
            "email_on_results_published",
        )

    def identity_fields(self):
        return [field for field in self.visible_fields() if field.name not in self.NOTIFICATIONS]

    def notification_fields(self):
        return [self[name] for name in self.NOTIFICATIONS]

    def clean(self):
        cleaned = super().clean()
        wanted = [name for name in self.NOTIFICATIONS if cleaned.get(name)]
        if wanted and not self.instance.user.email:
            for name in wanted:
                self.add_error(
                    name,
                    "Your account has no e-mail address to send this to; ask the organisers "
                    "to add one.",
                )
        return cleaned
